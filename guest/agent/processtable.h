#pragma once

#include "guest/agent/childprocess.h"

#include <map>

namespace airlock::guest {

class ExecStream;

/// The processes the agent started, which outlive connections: each is attached to at most
/// one exec stream of the current connection, or waits detached (its output in its pipes)
/// until a host attaches again or it is evicted. Ended processes are kept until a stream
/// delivered their Exit; when the table is full, the oldest ended detached one makes room.
class ProcessTable
{
public:
    static constexpr std::size_t kMaxProcesses = 64;

    std::expected<ChildProcess *, SpawnFailure> start(const agentwire::ExecRequest &request,
                                                      const SpawnContext &context);
    ChildProcess *find(pid_t pid) const;
    ExecStream *attachedStream(pid_t pid) const;
    void attach(pid_t pid, ExecStream *stream);
    void detach(pid_t pid);
    /// Forgets a process whose Exit was delivered (or that is evicted).
    void remove(pid_t pid);

    /// waitpid() for every child that ended (after SIGCHLD).
    void reap();
    /// The earliest timeout deadline of a running process.
    std::optional<ChildProcess::Clock::time_point> nextDeadline() const;
    void checkDeadlines(ChildProcess::Clock::time_point now);
    agentwire::ProcessList list() const;

private:
    struct Entry
    {
        std::unique_ptr<ChildProcess> child;
        ExecStream *stream = nullptr;
        std::uint64_t order = 0;
    };
    bool makeRoom();

    std::map<pid_t, Entry> m_entries;
    std::uint64_t m_started = 0;
};

} // namespace airlock::guest

#pragma once

#include "guest/agent/processtable.h"
#include "guest/agent/stream.h"

namespace airlock::guest {

/// The stream of one process (Exec or Attach): Started, then Stdout/Stderr within the host's
/// credit, then Exit once the process ended and its pipes reached end of file. Output is read
/// from the pipes only while there is credit and room in the connection's queue, so a slow
/// host reader stops the reads and the process blocks on its full pipe. Stdin frames are
/// credited kStdinWindow at a time and written to the process as its pipe takes them. On a
/// Cancel or a lost connection the process detaches and runs on.
class ExecStream : public Stream
{
public:
    static constexpr std::uint32_t kStdinWindow = 64 * 1024;

    ExecStream(Connection &connection, std::uint32_t id, std::uint64_t request, ChildProcess &child,
               ProcessTable &table);
    /// Sends Started and the first stdin credit.
    void start();

    void cancel() override;
    void drop() override;
    void pollInterest(std::vector<PollInterest> &out) override;
    void ready(int fd, short revents) override;
    void poke() override;

protected:
    std::optional<agentwire::ProtocolError> onFrame(const agentwire::Frame &frame) override;

private:
    void readOutput(bool fromStderr);
    void writeInput();
    void detach();

    ChildProcess &m_child;
    ProcessTable &m_table;
    pid_t m_pid;
    agentwire::Bytes m_stdin;
    std::uint32_t m_stdinUngranted = 0; ///< bytes written to the process, not yet re-granted
    bool m_stdinEndRequested = false;
};

} // namespace airlock::guest

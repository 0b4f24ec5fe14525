#include "guest/agent/processtable.h"

#include <cerrno>
#include <sys/wait.h>

namespace airlock::guest {

using agentwire::ErrorCode;

bool ProcessTable::makeRoom()
{
    if (m_entries.size() < kMaxProcesses)
        return true;
    auto oldest = m_entries.end();
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it) {
        if (it->second.child->exited() && !it->second.stream
            && (oldest == m_entries.end() || it->second.order < oldest->second.order))
            oldest = it;
    }
    if (oldest == m_entries.end())
        return false;
    m_entries.erase(oldest);
    return true;
}

std::expected<ChildProcess *, SpawnFailure>
ProcessTable::start(const agentwire::ExecRequest &request, const SpawnContext &context)
{
    if (!makeRoom())
        return std::unexpected(SpawnFailure {ErrorCode::Limit, "64 processes are running"});
    auto child = ChildProcess::spawn(request, context);
    if (!child)
        return std::unexpected(child.error());
    ChildProcess *raw = child->get();
    m_entries[raw->pid()] = Entry {std::move(*child), nullptr, ++m_started};
    return raw;
}

ChildProcess *ProcessTable::find(pid_t pid) const
{
    const auto it = m_entries.find(pid);
    return it == m_entries.end() ? nullptr : it->second.child.get();
}

ExecStream *ProcessTable::attachedStream(pid_t pid) const
{
    const auto it = m_entries.find(pid);
    return it == m_entries.end() ? nullptr : it->second.stream;
}

void ProcessTable::attach(pid_t pid, ExecStream *stream)
{
    if (auto it = m_entries.find(pid); it != m_entries.end())
        it->second.stream = stream;
}

void ProcessTable::detach(pid_t pid)
{
    attach(pid, nullptr);
}

void ProcessTable::remove(pid_t pid)
{
    m_entries.erase(pid);
}

void ProcessTable::reap()
{
    for (;;) {
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        if (auto it = m_entries.find(pid); it != m_entries.end())
            it->second.child->setExited(status);
    }
}

std::optional<ChildProcess::Clock::time_point> ProcessTable::nextDeadline() const
{
    std::optional<ChildProcess::Clock::time_point> next;
    for (const auto &[pid, entry] : m_entries) {
        if (const auto deadline = entry.child->deadline(); deadline && (!next || *deadline < *next))
            next = deadline;
    }
    return next;
}

void ProcessTable::checkDeadlines(ChildProcess::Clock::time_point now)
{
    for (auto &[pid, entry] : m_entries)
        entry.child->checkDeadline(now);
}

agentwire::ProcessList ProcessTable::list() const
{
    agentwire::ProcessList out;
    for (const auto &[pid, entry] : m_entries) {
        agentwire::ProcessInfo info;
        info.pid = std::uint32_t(pid);
        info.running = !entry.child->exited();
        info.attached = entry.stream != nullptr;
        info.pty = entry.child->pty();
        info.user = entry.child->user();
        info.command = entry.child->command();
        out.processes.push_back(std::move(info));
    }
    return out;
}

} // namespace airlock::guest

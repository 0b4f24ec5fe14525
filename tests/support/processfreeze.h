#pragma once

#include <sys/types.h>

#include <vector>

namespace airlock::test {

/// Holds every thread of another process still in a ptrace stop (PTRACE_SEIZE +
/// PTRACE_INTERRUPT), a gate the process can neither notice nor undo, until release() or
/// destruction (PTRACE_DETACH, handing back any signal that arrived meanwhile). A plain SIGSTOP
/// does not hold a process reliably here: job-control stops can be ended by a SIGCONT from
/// elsewhere. Root only; one freeze per process at a time, used from one thread (ptrace's
/// tracer is a thread).
class ProcessFreeze
{
public:
    ProcessFreeze() = default;
    ~ProcessFreeze() { release(); }
    ProcessFreeze(const ProcessFreeze &) = delete;
    ProcessFreeze &operator=(const ProcessFreeze &) = delete;

    /// Stops all threads of `pid` and returns once each is in a ptrace stop (the fact); false
    /// (nothing held) when one cannot be traced.
    bool freeze(pid_t pid);
    /// Lets every held thread run again.
    void release();
    bool isFrozen() const { return !m_threads.empty(); }

private:
    struct Thread
    {
        pid_t tid = 0;
        int pendingSignal = 0; ///< a signal whose delivery the stop interrupted
    };
    std::vector<Thread> m_threads;
    pid_t m_pid = 0;
};

} // namespace airlock::test

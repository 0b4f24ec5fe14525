#include "processfreeze.h"

#include <QDir>
#include <QString>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <sys/ptrace.h>
#include <sys/wait.h>

namespace airlock::test {

namespace {
std::vector<pid_t> threadsOf(pid_t pid)
{
    std::vector<pid_t> tids;
    const QStringList entries =
        QDir(QStringLiteral("/proc/%1/task").arg(pid)).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries)
        tids.push_back(pid_t(entry.toInt()));
    return tids;
}
} // namespace

bool ProcessFreeze::freeze(pid_t pid)
{
    release();
    m_pid = pid;
    // Threads started while the others are being stopped are found by the next pass; once
    // every known thread stands still, none can start another.
    for (;;) {
        bool found = false;
        for (const pid_t tid : threadsOf(pid)) {
            if (std::any_of(m_threads.begin(), m_threads.end(),
                            [tid](const Thread &t) { return t.tid == tid; }))
                continue;
            found = true;
            if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
                if (errno == ESRCH)
                    continue; // the thread ended meanwhile
                release();
                return false;
            }
            ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
            Thread thread {tid, 0};
            int status = 0;
            pid_t waited;
            do {
                waited = ::waitpid(tid, &status, __WALL);
            } while (waited < 0 && errno == EINTR);
            if (waited != tid || !WIFSTOPPED(status)) {
                // Gone (exited) instead of stopped: nothing to hold.
                continue;
            }
            // Either our interrupt (PTRACE_EVENT_STOP) or a signal about to be delivered,
            // which is handed back on release.
            if ((status >> 16) != PTRACE_EVENT_STOP)
                thread.pendingSignal = WSTOPSIG(status);
            m_threads.push_back(thread);
        }
        if (!found)
            break;
    }
    return !m_threads.empty();
}

void ProcessFreeze::release()
{
    // The leader last: a dead leader is reported only once its other threads are collected.
    std::stable_partition(m_threads.begin(), m_threads.end(),
                          [this](const Thread &thread) { return thread.tid != m_pid; });
    for (const Thread &thread : m_threads) {
        if (::ptrace(PTRACE_DETACH, thread.tid, nullptr,
                     reinterpret_cast<void *>(static_cast<long>(thread.pendingSignal)))
            == 0)
            continue;
        // Killed while held: its exit is reported to us, the tracer, first; collecting it lets
        // the real parent (airlockd) see the process go.
        int status = 0;
        while (::waitpid(thread.tid, &status, __WALL) < 0 && errno == EINTR) { }
    }
    m_threads.clear();
}

} // namespace airlock::test

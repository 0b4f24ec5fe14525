#include "core/vmm/processreaper.h"

#include "core/vmm/vmmprocess.h"

#include <QLoggingCategory>
#include <QTimer>

#include <csignal>
#include <sys/wait.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcReaper, "airlock.vmm.reaper")
}

ProcessReaper::ProcessReaper(VmmProcess *process, QString what, std::function<void()> gone)
    : m_process(process), m_what(std::move(what)), m_gone(std::move(gone))
{
    m_process->setParent(this);
}

void ProcessReaper::reap(VmmProcess *process, const QString &what, int graceMs, int killWaitMs,
                         std::function<void()> gone)
{
    if (!process) {
        if (gone)
            gone();
        return;
    }
    QObject::disconnect(process, nullptr, nullptr, nullptr);
    if (process->hasExited()) {
        // Our child, unless adopted: reaped here, as its notifier will not run any more.
        ::waitpid(process->pid(), nullptr, WNOHANG);
        delete process;
        if (gone)
            gone();
        return;
    }
    // Parentless: it outlives whoever stopped the process (a network deleted right after).
    auto *reaper = new ProcessReaper(process, what, std::move(gone));
    connect(process, &VmmProcess::exited, reaper, &ProcessReaper::finish);
    QTimer::singleShot(graceMs, reaper, [reaper, killWaitMs] {
        qCWarning(lcReaper, "%s (pid %d) did not exit when asked; killing it",
                  qPrintable(reaper->m_what), int(reaper->m_process->pid()));
        reaper->m_process->sendSignal(SIGKILL);
        QTimer::singleShot(killWaitMs, reaper, [reaper] {
            qCWarning(lcReaper, "%s (pid %d) is still there after SIGKILL; giving up on it",
                      qPrintable(reaper->m_what), int(reaper->m_process->pid()));
            reaper->finish();
        });
    });
}

void ProcessReaper::finish()
{
    if (auto gone = std::exchange(m_gone, nullptr))
        gone();
    deleteLater();
}

} // namespace airlock

#pragma once

#include <QObject>

#include <functional>

namespace airlock {

class VmmProcess;

/// Sees a process out without blocking the event loop: takes a VmmProcess whose process was
/// asked to go (its control socket closed, a signal sent), kills it with SIGKILL if it is still
/// there after `graceMs`, and calls `gone` once it has exited (its descriptors, e.g. listening
/// sockets, are closed by then), or after `killWaitMs` more when even SIGKILL did not end it
/// (a process stuck in the kernel; logged). Deletes itself and the VmmProcess afterwards.
class ProcessReaper : public QObject
{
    Q_OBJECT
public:
    /// Takes ownership of `process`. `gone` may be empty; it is called at once, before this
    /// returns, when the process has exited already, else from the event loop. `what` names the
    /// process in log lines ("airlock-gateway of demo").
    static void reap(VmmProcess *process, const QString &what, int graceMs, int killWaitMs,
                     std::function<void()> gone);

private:
    ProcessReaper(VmmProcess *process, QString what, std::function<void()> gone);
    void finish();

    VmmProcess *m_process;
    QString m_what;
    std::function<void()> m_gone;
};

} // namespace airlock

#pragma once

#include "core/vmm/vmm.h"

#include <QPointer>
#include <QTimer>

class QDeadlineTimer;
class QLocalSocket;

namespace airlock {

class QmpClient;
class VmmProcess;

/// The QEMU `microvm` backend: one qemu-system-x86_64 process per guest, run as the
/// unprivileged VMM user under `-sandbox on`, controlled through QMP and with its serial
/// console on a Unix socket in the runtime directory (see QemuCommand for the command line).
/// QEMU's stderr goes to RUNDIR/qemu.log, whose last line explains an unexpected exit.
///
/// Destroying the object leaves the VMM running on purpose: a restarted helper adopts it.
class QemuMicrovm final : public Vmm
{
    Q_OBJECT
public:
    explicit QemuMicrovm(QObject *parent = nullptr);
    ~QemuMicrovm() override;

    /// Launches QEMU paused, connects QMP and the console, then lets the CPUs run. Blocks for at
    /// most a few seconds (QEMU creates its sockets within milliseconds). Errors:
    /// BackendUnavailable (QEMU, kernel or initrd missing), InvalidName, InvalidState (already
    /// running), OperationFailed (QEMU exited; the message holds its last log line). On error no
    /// QEMU process is left behind.
    Result<VmmRuntimeInfo> start(const VmmLaunchConfig &config) override;
    /// Re-attaches to a running VMM: checks pid and start time, then reconnects QMP and the
    /// console. A VMM left paused by a helper that died mid-start is resumed. Errors: NotFound
    /// (gone or pid reused), OperationFailed (sockets unusable).
    Result<void> adopt(const VmmRuntimeInfo &info) override;
    /// QMP system_powerdown (the guest's acpid powers off); after `timeoutMs` QMP quit, and
    /// SIGKILL 3 s after that. exited("") follows.
    void stop(int timeoutMs) override;
    void kill() override;
    bool waitForExit(int timeoutMs) override;
    void writeConsole(const QByteArray &bytes) override;
    Result<void> pause() override;
    Result<void> resume() override;
    Result<bool> queryRunning() override;
    /// QMP `getfd` + `migrate fd:` with x-ignore-shared, so only the device state goes to `fd`
    /// (the RAM file stays where it is); waits for `completed`.
    Result<void> saveDeviceState(int fd) override;
    VmmRuntimeInfo runtimeInfo() const override { return m_info; }
    /// The agent channel, connected before the guest's CPUs run (so the guest sees its host
    /// end open from the first instruction); nullptr for an adopted VMM that has none.
    GuestAgent *agent() override { return m_agent; }

    /// True between a successful start()/adopt() and exited().
    bool isRunning() const { return m_running; }

private:
    /// QMP, console and (unless !requireAgent and absent) the agent channel.
    Result<void> connectChannels(int timeoutMs, bool requireAgent);
    /// Connects to a socket QEMU serves in the runtime dir, retrying until `deadline`.
    Result<QLocalSocket *> connectLocal(const QString &path, const QDeadlineTimer &deadline);
    /// `migrate-incoming fd:` from `fd`; returns once QEMU left the inmigrate state.
    Result<void> loadDeviceState(int fd);
    void attachConsole(QLocalSocket *socket);
    void onProcessExited(bool statusKnown, int waitStatus);
    void onQmpEvent(const QString &name, const QJsonObject &data);
    void escalateStop();
    QString exitReason(bool statusKnown, int waitStatus) const;
    QString lastLogLine() const;
    void reset();

    VmmRuntimeInfo m_info;
    VmmProcess *m_process = nullptr;
    QmpClient *m_qmp = nullptr;
    QLocalSocket *m_console = nullptr;
    GuestAgent *m_agent = nullptr;
    QTimer m_stopTimer;
    enum class StopPhase { None, PoweringDown, Quitting, Killing };
    StopPhase m_stopPhase = StopPhase::None;
    bool m_running = false;
    bool m_memoryBacked = false; ///< RAM is a shared file (VmmLaunchConfig::memoryPath)
    bool m_stopRequested = false;
    QString m_shutdownReason; ///< `reason` of QMP's SHUTDOWN event, when one came
};

} // namespace airlock

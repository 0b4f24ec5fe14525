#pragma once

#include "core/vmm/vmm.h"

#include <QDeadlineTimer>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <optional>

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

    /// Launches QEMU paused, then from the event loop connects QMP, the console and the agent
    /// channel (as soon as QEMU has made them, for at most 10 s), loads the incoming device
    /// state, if any, and lets the CPUs run; `started` gets the outcome. Errors:
    /// BackendUnavailable (QEMU, kernel or initrd missing), InvalidName, InvalidState (already
    /// running), OperationFailed (QEMU exited; the message holds its last log line). On error no
    /// QEMU process is left behind.
    void start(const VmmLaunchConfig &config, Started started) override;
    /// Re-attaches to a running VMM: checks pid and start time at once, then from the event loop
    /// reconnects QMP and the console (for at most 10 s: a hung VMM delays only its own
    /// adoption). A VMM left paused by a helper that died mid-start is resumed. Errors:
    /// NotFound (gone or pid reused), OperationFailed (sockets unusable or silent).
    void adopt(const VmmRuntimeInfo &info, Done done) override;
    /// QMP system_powerdown (the guest's acpid powers off); after `timeoutMs` QMP quit, and
    /// SIGKILL 3 s after that. exited("") follows.
    void stop(int timeoutMs) override;
    void kill() override;
    bool waitForExit(int timeoutMs) override;
    void writeConsole(const QByteArray &bytes) override;
    void pause(Done done) override;
    void resume(Done done) override;
    void queryRunning(std::function<void(const Result<bool> &)> done) override;
    /// QMP `getfd` + `migrate fd:` with x-ignore-shared, so only the device state goes to `fd`
    /// (the RAM file stays where it is); `query-migrate` is then polled from the event loop
    /// (every 2 ms, no sleep) until `completed`.
    void saveDeviceState(int fd, Done done) override;
    VmmRuntimeInfo runtimeInfo() const override { return m_info; }
    /// The agent channel, connected before the guest's CPUs run (so the guest sees its host
    /// end open from the first instruction); nullptr for an adopted VMM that has none.
    GuestAgent *agent() override { return m_agent; }

    /// True between a successful start()/adopt() and exited().
    bool isRunning() const { return m_running; }

private:
    /// One non-blocking pass over QMP, console and (unless !requireAgent and absent) the agent
    /// channel: true once all are connected, false while QEMU has not made one yet.
    Result<bool> connectChannels(bool requireAgent);
    /// Connects to a socket QEMU serves in the runtime dir; nullptr while it is not there yet.
    Result<QLocalSocket *> connectLocal(const QString &path);
    /// The steps of start(), each from the event loop.
    void connectChannelsLater(int delayMs);
    /// The steps of adopt(): channels until `deadline`, then QEMU's status.
    void adoptChannelsLater(int delayMs, QDeadlineTimer deadline);
    void finishAdopt(const Result<void> &result);
    void channelsConnected();
    /// Polls QEMU's status until it left `inmigrate` (the device state is loaded).
    void pollIncoming();
    void runGuest();
    /// A QMP command whose answer ends a control request (pause, resume, one step of a save).
    void control(const QString &command, const QJsonObject &arguments,
                 std::function<void(const Result<QJsonValue> &)> next);
    /// Answers `done` with `error` from the event loop.
    void refuse(const Done &done, const Error &error);
    /// One `query-migrate` of saveDeviceState(), then the next one a little later.
    void pollSave(int generation, QDeadlineTimer deadline, Done done);
    /// A QMP command of the start; `next` runs after its success, any error ends the start.
    void executeForStart(const QString &command, const QJsonObject &arguments,
                         std::function<void()> next);
    /// Ends a start with `error`, leaving no QEMU process behind.
    void abandonStart(const Error &error);
    void finishStart(const Result<VmmRuntimeInfo> &result);
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
    Started m_started; ///< set while a start is under way
    Done m_adopted; ///< set while an adoption is under way
    bool m_qmpConnecting = false; ///< a QMP handshake of connectChannels() is under way
    std::optional<Error> m_qmpFailure; ///< how the last one failed, for the next pass
    int m_startGeneration = 0; ///< steps of an earlier start see another value and stop
    QDeadlineTimer m_startDeadline;
    QDeadlineTimer m_loadDeadline; ///< of loading the incoming device state
    int m_incomingStateFd = -1; ///< the caller's, while a start loads it
};

} // namespace airlock

#include "core/vmm/qemumicrovm.h"

#include "core/model/names.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/pinnedsocket.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/qmpclient.h"
#include "core/vmm/vmmprocess.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QLocalSocket>
#include <QLoggingCategory>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcQemu, "airlock.vmm.qemu")

constexpr int kStartTimeoutMs = 10000; // QEMU makes its sockets in ms; generous for loaded CI
// Per VMM, in the background: a slow one delays only its own adoption.
constexpr int kAdoptTimeoutMs = 10000;
constexpr int kQuitGraceMs = 3000; // between QMP quit and SIGKILL
constexpr int kControlTimeoutMs = 5000; // stop/cont/query: answered in ms unless QEMU hangs
constexpr int kMigrationTimeoutMs = 60000; // device state only: tens of KiB in practice
constexpr qsizetype kMaxUnixPath = 107; // sun_path minus the terminating NUL
constexpr int kSocketPollMs = 10; // until QEMU has created its sockets
constexpr int kMigrationPollMs = 2; // until QEMU has loaded or saved the device state

} // namespace

QemuMicrovm::QemuMicrovm(QObject *parent) : Vmm(parent)
{
    m_stopTimer.setSingleShot(true);
    connect(&m_stopTimer, &QTimer::timeout, this, &QemuMicrovm::escalateStop);
}

QemuMicrovm::~QemuMicrovm()
{
    // The VMM keeps running: only our ends of the sockets and the pidfd close.
    reset();
}

void QemuMicrovm::reset()
{
    m_stopTimer.stop();
    ++m_startGeneration;
    if (m_qmp) {
        // Not delete: a failed start ends inside one of its replies. Requests still waiting
        // (a pause, a device state save) get Disconnected now, not silence.
        m_qmp->disconnect(this);
        QmpClient *qmp = std::exchange(m_qmp, nullptr);
        qmp->disconnectFromServer();
        qmp->deleteLater();
    }
    if (m_console) {
        m_console->disconnect(this);
        m_console->abort();
        delete m_console;
        m_console = nullptr;
    }
    delete std::exchange(m_agent, nullptr);
    if (m_process) {
        // Not delete: reset() runs inside the process's own exit signal (from its notifier).
        m_process->disconnect(this);
        m_process->deleteLater();
        m_process = nullptr;
    }
    m_running = false;
    m_qmpConnecting = false;
    m_qmpFailure.reset();
}

void QemuMicrovm::start(const VmmLaunchConfig &config, Started started)
{
    // Errors found before anything was spawned are answered from the event loop too, like all
    // the others.
    const auto refuse = [this, &started](const Error &error) {
        QTimer::singleShot(0, this, [started, error] { started(std::unexpected(error)); });
    };
    if (m_running || m_started)
        return refuse(
            Error {ErrorKind::InvalidState, QStringLiteral("this VMM is already running")});
    if (auto name = validateName(config.sandboxName); !name)
        return refuse(name.error());
    const QString qemu = QemuCommand::findQemu();
    if (qemu.isEmpty())
        return refuse(Error {ErrorKind::BackendUnavailable,
                             QStringLiteral("qemu-system-x86_64 is not installed "
                                            "(apt-get install qemu-system-x86)")});
    QStringList files {config.kernelPath, config.initrdPath};
    if (!config.rootDiskPath.isEmpty())
        files << config.rootDiskBasePath << config.rootDiskPath;
    for (const QString &file : std::as_const(files)) {
        if (!QFileInfo(file).isFile())
            return refuse(Error {ErrorKind::BackendUnavailable,
                                 QStringLiteral("guest image file %1 is missing").arg(file)});
    }
    const QDir run(config.runtimeDir);
    if (config.runtimeDir.isEmpty() || !run.exists())
        return refuse(
            Error {ErrorKind::OperationFailed,
                   QStringLiteral("runtime directory %1 does not exist").arg(config.runtimeDir)});
    if (QFile::encodeName(run.absoluteFilePath(QemuCommand::kConsoleSocket)).size() > kMaxUnixPath)
        return refuse(Error {ErrorKind::OperationFailed,
                             QStringLiteral("runtime directory %1 is too long for a Unix socket "
                                            "path")
                                 .arg(config.runtimeDir)});
    // Leftovers of an earlier run would be taken for this run's sockets.
    for (const QLatin1StringView file : {QemuCommand::kQmpSocket, QemuCommand::kConsoleSocket,
                                         QemuCommand::kAgentSocket, QemuCommand::kPidFile})
        QFile::remove(run.filePath(file));

    VmmLaunchConfig effective = config;
    if (effective.acceleration != Acceleration::Kvm)
        effective.acceleration = Acceleration::Tcg;
    const QStringList argv = QemuCommand::arguments(qemu, effective, /*paused=*/true);
    qCInfo(lcQemu).noquote() << "starting" << config.sandboxName << "as uid" << config.vmmUid << ":"
                             << argv.join(u' ');

    VmmCredentials credentials = VmmCredentials::forUser(config.vmmUid, config.vmmGid);
    if (!config.vmmGroups.empty())
        credentials.groups = config.vmmGroups;
    SpawnOptions options;
    options.autogroupNice = kGuestAutogroupNice;
    if (config.network.tapFd >= 0)
        options.inheritedFds = {{config.network.tapFd, QemuCommand::kTapFd}};
    auto pid = VmmProcess::spawn(argv, run.filePath(QemuCommand::kLogFile), credentials, options);
    if (!pid)
        return refuse(pid.error());

    m_process = new VmmProcess(this);
    m_shutdownReason.clear();
    m_stopRequested = false;
    m_stopPhase = StopPhase::None;
    m_info = VmmRuntimeInfo {*pid, 0, config.runtimeDir};
    m_started = std::move(started);
    m_startDeadline = QDeadlineTimer(kStartTimeoutMs);
    m_memoryBacked = !config.memoryPath.isEmpty();
    m_incomingStateFd = config.incomingStateFd;
    m_qmp = new QmpClient(this);
    if (auto watched = m_process->watch(*pid); !watched)
        return abandonStart(watched.error());
    m_info.startTimeTicks = m_process->startTimeTicks();
    // QEMU that fails on its own (bad option, no memory) says why in its status and log.
    connect(m_process, &VmmProcess::exited, this, [this](bool statusKnown, int waitStatus) {
        finishStart(fail(ErrorKind::OperationFailed, exitReason(statusKnown, waitStatus)));
    });
    connectChannelsLater(0);
}

void QemuMicrovm::connectChannelsLater(int delayMs)
{
    // Polled from the event loop: QEMU gives no signal when its sockets exist.
    QTimer::singleShot(delayMs, this, [this, generation = m_startGeneration] {
        if (generation != m_startGeneration || !m_started)
            return;
        auto connected = connectChannels(/*requireAgent=*/true);
        if (!connected)
            return abandonStart(connected.error());
        if (!*connected) {
            if (m_startDeadline.hasExpired())
                return abandonStart(Error {
                    ErrorKind::Timeout,
                    QStringLiteral("QEMU did not open its sockets in %1 ms").arg(kStartTimeoutMs)});
            return connectChannelsLater(kSocketPollMs);
        }
        channelsConnected();
    });
}

void QemuMicrovm::channelsConnected()
{
    const auto loadThenRun = [this] {
        if (m_incomingStateFd < 0)
            return runGuest();
        // The descriptor is handed over at once (SCM_RIGHTS); QEMU's answer comes later.
        m_qmp->passDescriptor(
            QStringLiteral("airlock-load"), m_incomingStateFd, kControlTimeoutMs,
            [this, generation = m_startGeneration](const Result<QJsonValue> &passed) {
                if (generation != m_startGeneration || !m_started)
                    return;
                if (!passed)
                    return abandonStart(passed.error());
                executeForStart(QStringLiteral("migrate-incoming"),
                                {{QStringLiteral("uri"), QStringLiteral("fd:airlock-load")}},
                                [this] {
                                    m_loadDeadline = QDeadlineTimer(kMigrationTimeoutMs);
                                    pollIncoming();
                                });
            });
    };
    if (!m_memoryBacked)
        return loadThenRun();
    executeForStart(QStringLiteral("migrate-set-capabilities"),
                    {{QStringLiteral("capabilities"),
                      QJsonArray {QJsonObject {
                          {QStringLiteral("capability"), QStringLiteral("x-ignore-shared")},
                          {QStringLiteral("state"), true}}}}},
                    loadThenRun);
}

void QemuMicrovm::pollIncoming()
{
    m_qmp->execute(
        QStringLiteral("query-status"), {},
        [this, generation = m_startGeneration](const Result<QJsonValue> &status) {
            if (generation != m_startGeneration || !m_started)
                return;
            if (!status)
                return abandonStart(status.error());
            if (status->toObject().value(QStringLiteral("status")).toString()
                != QLatin1String("inmigrate"))
                return runGuest();
            if (m_loadDeadline.hasExpired())
                return abandonStart(
                    Error {ErrorKind::Timeout, QStringLiteral("loading the snapshot timed out")});
            QTimer::singleShot(kMigrationPollMs, this, [this, generation] {
                if (generation == m_startGeneration && m_started)
                    pollIncoming();
            });
        });
}

void QemuMicrovm::runGuest()
{
    executeForStart(QStringLiteral("cont"), {}, [this] {
        m_process->disconnect(this);
        connect(m_process, &VmmProcess::exited, this, &QemuMicrovm::onProcessExited);
        m_running = true;
        qCInfo(lcQemu) << "started pid" << m_info.pid;
        finishStart(m_info);
    });
}

void QemuMicrovm::executeForStart(const QString &command, const QJsonObject &arguments,
                                  std::function<void()> next)
{
    // A QEMU that never answers must not keep the start open.
    const int generation = m_startGeneration;
    auto answered = std::make_shared<bool>(false);
    QTimer::singleShot(kStartTimeoutMs, this, [this, generation, answered, command] {
        if (!*answered && generation == m_startGeneration && m_started)
            abandonStart(Error {ErrorKind::Timeout,
                                QStringLiteral("QEMU did not answer %1 in time").arg(command)});
    });
    m_qmp->execute(
        command, arguments,
        [this, generation, answered, next = std::move(next)](const Result<QJsonValue> &reply) {
            *answered = true;
            if (generation != m_startGeneration || !m_started)
                return;
            if (!reply)
                return abandonStart(reply.error());
            next();
        });
}

void QemuMicrovm::abandonStart(const Error &error)
{
    // Any failure during a start must not leave QEMU behind.
    if (m_process) {
        m_process->disconnect(this);
        m_process->sendSignal(SIGKILL);
        // Dead or dying of SIGKILL, which cannot be blocked: reaped at once.
        int status = 0;
        while (::waitpid(m_info.pid, &status, 0) < 0 && errno == EINTR) { }
        // QEMU that failed on its own (bad option, no memory) closes its sockets just before
        // exiting: its status and log line say more than "QMP closed".
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            return finishStart(fail(ErrorKind::OperationFailed, exitReason(true, status)));
    }
    finishStart(std::unexpected(error));
}

void QemuMicrovm::finishStart(const Result<VmmRuntimeInfo> &result)
{
    if (!m_started)
        return;
    Started started = std::exchange(m_started, {});
    ++m_startGeneration;
    m_incomingStateFd = -1;
    if (!result) {
        qCWarning(lcQemu).noquote() << "start failed:" << result.error().message;
        reset();
    }
    started(result);
}

void QemuMicrovm::adopt(const VmmRuntimeInfo &info, Done done)
{
    if (m_running || m_started || m_adopted)
        return refuse(
            done, Error {ErrorKind::InvalidState, QStringLiteral("this VMM is already running")});
    m_process = new VmmProcess(this);
    if (auto watched = m_process->watch(pid_t(info.pid), info.startTimeTicks); !watched) {
        reset();
        return refuse(done, watched.error());
    }
    m_info = info;
    m_shutdownReason.clear();
    m_stopRequested = false;
    m_stopPhase = StopPhase::None;
    m_qmp = new QmpClient(this);
    m_adopted = std::move(done);
    connect(m_process, &VmmProcess::exited, this, [this] {
        finishAdopt(fail(ErrorKind::NotFound,
                         QStringLiteral("VMM %1 exited while it was adopted").arg(m_info.pid)));
    });
    adoptChannelsLater(0, QDeadlineTimer(kAdoptTimeoutMs));
}

void QemuMicrovm::adoptChannelsLater(int delayMs, QDeadlineTimer deadline)
{
    // A running VMM has its sockets; a hung one (or one stopped by a debugger) connects late or
    // never, and the event loop serves everyone else meanwhile.
    QTimer::singleShot(delayMs, this, [this, deadline, generation = m_startGeneration] {
        if (generation != m_startGeneration || !m_adopted)
            return;
        auto connected = connectChannels(/*requireAgent=*/false);
        if (connected && !*connected && !deadline.hasExpired())
            return adoptChannelsLater(kSocketPollMs, deadline);
        if (!connected || !*connected) {
            if (!connected && connected.error().kind != ErrorKind::NotFound)
                return finishAdopt(std::unexpected(connected.error()));
            return finishAdopt(
                fail(ErrorKind::OperationFailed,
                     QStringLiteral("VMM %1 runs but its sockets are gone or do not answer%2")
                         .arg(m_info.pid)
                         .arg(connected ? QString()
                                        : QStringLiteral(": ") + connected.error().message)));
        }
        // A helper that died between launch and `cont` left the guest in prelaunch: finish the
        // job.
        m_qmp->execute(
            QStringLiteral("query-status"), {},
            [this, generation](const Result<QJsonValue> &status) {
                if (generation != m_startGeneration || !m_adopted)
                    return;
                const QString phase = status
                    ? status->toObject().value(QStringLiteral("status")).toString()
                    : QString();
                if (phase == QLatin1String("prelaunch"))
                    m_qmp->execute(QStringLiteral("cont"));
                // One that died while feeding a restore left a guest without state: it cannot
                // run.
                if (phase == QLatin1String("inmigrate")) {
                    m_process->sendSignal(SIGKILL);
                    return finishAdopt(
                        fail(ErrorKind::NotFound,
                             QStringLiteral("VMM %1 was interrupted while restoring a snapshot")
                                 .arg(m_info.pid)));
                }
                finishAdopt({});
            },
            kAdoptTimeoutMs);
    });
}

void QemuMicrovm::finishAdopt(const Result<void> &result)
{
    if (!m_adopted)
        return;
    Done done = std::exchange(m_adopted, {});
    if (!result) {
        reset();
        return done(result);
    }
    m_memoryBacked = true; // if it is not, saveDeviceState reports QEMU's refusal
    m_process->disconnect(this);
    connect(m_process, &VmmProcess::exited, this, &QemuMicrovm::onProcessExited);
    m_running = true;
    qCInfo(lcQemu) << "adopted VMM pid" << m_info.pid << "in" << m_info.runtimeDir;
    done({});
}

Result<bool> QemuMicrovm::connectChannels(bool requireAgent)
{
    const QDir run(m_info.runtimeDir);
    if (m_qmpFailure)
        return std::unexpected(*std::exchange(m_qmpFailure, std::nullopt));
    if (!m_qmp->isConnected() || m_qmpConnecting) {
        if (m_qmpConnecting)
            return false; // its handshake is under way; the next pass sees how it ended
        auto pinned = PinnedSocket::open(run.filePath(QemuCommand::kQmpSocket));
        if (!pinned) {
            // NotFound: QEMU has not created the socket yet.
            if (pinned.error().kind == ErrorKind::NotFound)
                return false;
            return std::unexpected(pinned.error());
        }
        // Asynchronous: a VMM that accepts but never greets must not hold up the event loop.
        // The pinned descriptor lives until the handshake is over.
        m_qmpConnecting = true;
        const QString path = (*pinned)->path();
        m_qmp->connectToServer(path, kControlTimeoutMs,
                               [this, generation = m_startGeneration,
                                pin = std::shared_ptr<PinnedSocket>(std::move(*pinned))](
                                   const Result<void> &connected) {
                                   // Another start's (reset() since): not this one's handshake.
                                   if (generation != m_startGeneration)
                                       return;
                                   m_qmpConnecting = false;
                                   // NotFound: QEMU has made but not yet listens on the socket; try
                                   // again.
                                   if (!connected && connected.error().kind != ErrorKind::NotFound)
                                       m_qmpFailure = connected.error();
                               });
        connect(m_qmp, &QmpClient::eventReceived, this, &QemuMicrovm::onQmpEvent,
                Qt::UniqueConnection);
        return false;
    }
    if (!m_console) {
        auto console = connectLocal(run.filePath(QemuCommand::kConsoleSocket));
        if (!console)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("cannot connect to the guest console: %1")
                            .arg(console.error().message));
        if (!*console)
            return false;
        attachConsole(*console);
    }
    if (m_agent)
        return true;
    // A VMM started by an airlockd without the agent channel has no agent socket: it runs on
    // without (a restore then cannot refresh its identity).
    if (!requireAgent && !QFileInfo::exists(run.filePath(QemuCommand::kAgentSocket)))
        return true;
    auto agent = connectLocal(run.filePath(QemuCommand::kAgentSocket));
    if (!agent)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot connect to the guest agent channel: %1")
                        .arg(agent.error().message));
    if (!*agent)
        return false;
    m_agent = new GuestAgent(*agent, this);
    return true;
}

Result<QLocalSocket *> QemuMicrovm::connectLocal(const QString &path)
{
    auto pinned = PinnedSocket::open(path);
    if (!pinned) {
        if (pinned.error().kind == ErrorKind::NotFound)
            return nullptr;
        return std::unexpected(pinned.error());
    }
    auto *socket = new QLocalSocket(this);
    socket->connectToServer((*pinned)->path());
    // A Unix socket connects inside connectToServer() or not at all; one still connecting (a
    // full backlog: QEMU does not accept) is tried again on the next pass, without waiting.
    if (socket->state() == QLocalSocket::ConnectedState)
        return socket;
    if (socket->state() == QLocalSocket::ConnectingState) {
        socket->abort();
        delete socket;
        return nullptr;
    }
    const auto error = socket->error();
    const QString why = socket->errorString();
    delete socket;
    if (error == QLocalSocket::ServerNotFoundError || error == QLocalSocket::ConnectionRefusedError)
        return nullptr;
    return fail(ErrorKind::OperationFailed, why);
}

void QemuMicrovm::attachConsole(QLocalSocket *socket)
{
    m_console = socket;
    connect(m_console, &QLocalSocket::readyRead, this, [this] {
        const QByteArray bytes = m_console->readAll();
        if (!bytes.isEmpty())
            Q_EMIT consoleOutput(bytes);
    });
}

void QemuMicrovm::stop(int timeoutMs)
{
    if (!m_running || m_stopPhase != StopPhase::None)
        return;
    m_stopRequested = true;
    m_stopPhase = StopPhase::PoweringDown;
    if (m_qmp && m_qmp->isConnected()) {
        qCInfo(lcQemu) << "powering down VMM" << m_info.pid;
        m_qmp->execute(QStringLiteral("system_powerdown"));
        m_stopTimer.start(qMax(0, timeoutMs));
    } else {
        escalateStop();
    }
}

void QemuMicrovm::escalateStop()
{
    if (!m_running)
        return;
    switch (m_stopPhase) {
    case StopPhase::None:
    case StopPhase::PoweringDown:
        qCInfo(lcQemu) << "guest did not power off in time; quitting VMM" << m_info.pid;
        m_stopPhase = StopPhase::Quitting;
        if (m_qmp && m_qmp->isConnected())
            m_qmp->execute(QStringLiteral("quit"));
        else
            m_process->sendSignal(SIGTERM);
        m_stopTimer.start(kQuitGraceMs);
        break;
    case StopPhase::Quitting:
    case StopPhase::Killing:
        qCWarning(lcQemu) << "VMM" << m_info.pid << "ignored quit; killing it";
        m_stopPhase = StopPhase::Killing;
        m_process->sendSignal(SIGKILL);
        break;
    }
}

void QemuMicrovm::kill()
{
    if (m_started && !m_running)
        return abandonStart(
            Error {ErrorKind::OperationFailed, QStringLiteral("killed during its start")});
    if (!m_running)
        return;
    m_stopRequested = true;
    m_stopPhase = StopPhase::Killing;
    m_stopTimer.stop();
    m_process->sendSignal(SIGKILL);
}

bool QemuMicrovm::waitForExit(int timeoutMs)
{
    return !m_process || m_process->waitForExit(timeoutMs);
}

void QemuMicrovm::writeConsole(const QByteArray &bytes)
{
    if (m_console && m_console->state() == QLocalSocket::ConnectedState)
        m_console->write(bytes);
}

void QemuMicrovm::refuse(const Done &done, const Error &error)
{
    if (done)
        QTimer::singleShot(0, this, [done, error] { done(std::unexpected(error)); });
}

void QemuMicrovm::control(const QString &command, const QJsonObject &arguments,
                          std::function<void(const Result<QJsonValue> &)> next)
{
    // m_qmp is set whenever m_running is (callers checked); its replies come from the loop.
    m_qmp->execute(command, arguments, std::move(next), kControlTimeoutMs);
}

void QemuMicrovm::pause(Done done)
{
    if (!m_running || !m_qmp)
        return refuse(done,
                      Error {ErrorKind::InvalidState, QStringLiteral("the VMM is not running")});
    control(QStringLiteral("stop"), {}, [done](const Result<QJsonValue> &stopped) {
        if (done)
            done(stopped ? Result<void>() : Result<void>(std::unexpected(stopped.error())));
    });
}

void QemuMicrovm::resume(Done done)
{
    if (!m_running || !m_qmp)
        return refuse(done,
                      Error {ErrorKind::InvalidState, QStringLiteral("the VMM is not running")});
    control(QStringLiteral("cont"), {}, [done](const Result<QJsonValue> &resumed) {
        if (done)
            done(resumed ? Result<void>() : Result<void>(std::unexpected(resumed.error())));
    });
}

void QemuMicrovm::queryRunning(std::function<void(const Result<bool> &)> done)
{
    if (!m_running || !m_qmp)
        return QTimer::singleShot(0, this, [done] {
            done(fail(ErrorKind::InvalidState, QStringLiteral("the VMM is not running")));
        });
    const auto askStatus = [this, done] {
        if (!m_qmp)
            return done(fail(ErrorKind::Disconnected, QStringLiteral("the VMM exited")));
        control(QStringLiteral("query-status"), {}, [done](const Result<QJsonValue> &status) {
            if (!status)
                return done(std::unexpected(status.error()));
            done(status->toObject().value(QStringLiteral("running")).toBool());
        });
    };
    // A save into a helper's memfd that never finished: `cont` is refused while it is active.
    control(QStringLiteral("query-migrate"), {},
            [this, askStatus](const Result<QJsonValue> &migration) {
                const QString phase = migration
                    ? migration->toObject().value(QStringLiteral("status")).toString()
                    : QString();
                if (!m_qmp
                    || (phase != QLatin1String("setup") && phase != QLatin1String("active")
                        && phase != QLatin1String("device")
                        && phase != QLatin1String("pre-switchover")))
                    return askStatus();
                qCWarning(lcQemu) << "cancelling an unfinished device state save of VMM"
                                  << m_info.pid;
                control(QStringLiteral("migrate_cancel"), {},
                        [askStatus](const Result<QJsonValue> &) { askStatus(); });
            });
}

void QemuMicrovm::saveDeviceState(int fd, Done done)
{
    if (!m_running || !m_qmp)
        return refuse(done,
                      Error {ErrorKind::InvalidState, QStringLiteral("the VMM is not running")});
    if (!m_memoryBacked)
        return refuse(done,
                      Error {ErrorKind::InvalidState,
                             QStringLiteral("this guest's memory is not in a file the helper can "
                                            "copy; restart it to take snapshots")});
    // Each step runs from the answer to the one before; an exit fails the step waiting
    // (reset() fails QMP's pending replies), so `done` is always called while this object lives.
    const int generation = m_startGeneration;
    control(QStringLiteral("query-status"), {},
            [this, fd, generation, done](const Result<QJsonValue> &status) {
                if (!status)
                    return done(std::unexpected(status.error()));
                if (status->toObject().value(QStringLiteral("running")).toBool())
                    return done(
                        fail(ErrorKind::InvalidState, QStringLiteral("pause the guest first")));
                m_qmp->passDescriptor(
                    QStringLiteral("airlock-save"), fd, kControlTimeoutMs,
                    [this, generation, done](const Result<QJsonValue> &passed) {
                        if (!passed)
                            return done(std::unexpected(passed.error()));
                        // No exec: migration (the seccomp sandbox forbids spawning); QEMU writes
                        // into our fd.
                        control(QStringLiteral("migrate"),
                                {{QStringLiteral("uri"), QStringLiteral("fd:airlock-save")}},
                                [this, generation, done](const Result<QJsonValue> &migrating) {
                                    if (!migrating)
                                        return done(std::unexpected(migrating.error()));
                                    pollSave(generation, QDeadlineTimer(kMigrationTimeoutMs), done);
                                });
                    });
            });
}

void QemuMicrovm::pollSave(int generation, QDeadlineTimer deadline, Done done)
{
    if (generation != m_startGeneration || !m_qmp)
        return done(fail(ErrorKind::Disconnected,
                         QStringLiteral("the VMM exited while saving its device state")));
    control(
        QStringLiteral("query-migrate"), {},
        [this, generation, deadline, done](const Result<QJsonValue> &state) {
            if (!state)
                return done(std::unexpected(state.error()));
            const QJsonObject info = state->toObject();
            const QString phase = info.value(QStringLiteral("status")).toString();
            if (phase == QLatin1String("completed"))
                return done({});
            if (phase == QLatin1String("failed") || phase == QLatin1String("cancelled"))
                return done(fail(ErrorKind::OperationFailed,
                                 QStringLiteral("QEMU could not save the device state: %1")
                                     .arg(info.value(QStringLiteral("error-desc")).toString())));
            if (deadline.hasExpired()) {
                m_qmp->execute(QStringLiteral("migrate_cancel"));
                return done(
                    fail(ErrorKind::Timeout, QStringLiteral("saving the device state timed out")));
            }
            // A timer, not a sleep: the loop serves everyone else between two polls.
            QTimer::singleShot(kMigrationPollMs, this, [this, generation, deadline, done] {
                pollSave(generation, deadline, done);
            });
        });
}

void QemuMicrovm::onQmpEvent(const QString &name, const QJsonObject &data)
{
    if (name == QLatin1String("SHUTDOWN"))
        m_shutdownReason = data.value(QStringLiteral("reason")).toString();
}

void QemuMicrovm::onProcessExited(bool statusKnown, int waitStatus)
{
    if (!m_running)
        return;
    // Console bytes written just before the exit may still sit in the socket.
    if (m_console) {
        m_console->waitForReadyRead(0);
        const QByteArray tail = m_console->readAll();
        if (!tail.isEmpty())
            Q_EMIT consoleOutput(tail);
    }
    // The pidfd can fire before QMP's SHUTDOWN event was read; it is in the socket already.
    if (m_qmp)
        m_qmp->readPending();
    const QString reason = m_stopRequested ? QString() : exitReason(statusKnown, waitStatus);
    qCInfo(lcQemu).noquote() << "VMM" << m_info.pid << "exited:"
                             << (reason.isEmpty() ? QStringLiteral("as requested") : reason);
    reset();
    Q_EMIT exited(reason);
}

QString QemuMicrovm::exitReason(bool statusKnown, int waitStatus) const
{
    if (m_shutdownReason == QLatin1String("guest-shutdown"))
        return QStringLiteral("guest powered off");
    if (m_shutdownReason == QLatin1String("guest-reset"))
        return QStringLiteral("guest rebooted (a reboot ends the VMM)");
    if (m_shutdownReason == QLatin1String("guest-panic"))
        return QStringLiteral("guest kernel panicked");
    if (m_shutdownReason == QLatin1String("host-signal"))
        return QStringLiteral("QEMU was terminated by a signal from outside Airlock");
    if (m_shutdownReason == QLatin1String("host-qmp-quit"))
        return QStringLiteral("QEMU was told to quit from outside Airlock");

    QString reason;
    if (!statusKnown)
        reason = QStringLiteral("QEMU exited");
    else if (WIFEXITED(waitStatus))
        reason = QStringLiteral("QEMU exited with status %1").arg(WEXITSTATUS(waitStatus));
    else if (WIFSIGNALED(waitStatus))
        reason = QStringLiteral("QEMU was killed by signal %1 (%2)")
                     .arg(WTERMSIG(waitStatus))
                     .arg(QString::fromLocal8Bit(::strsignal(WTERMSIG(waitStatus))));
    else
        reason = QStringLiteral("QEMU ended with wait status %1").arg(waitStatus);
    const QString log = lastLogLine();
    if (!log.isEmpty())
        reason += QStringLiteral(": ") + log;
    return reason;
}

QString QemuMicrovm::lastLogLine() const
{
    // Root reads a file in the VMM user's directory: never through a symlink, and only the log
    // the helper itself created, so a reason can never quote another file.
    const QByteArray name =
        QFile::encodeName(QDir(m_info.runtimeDir).filePath(QemuCommand::kLogFile));
    const int fd = ::open(name.constData(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return {};
    struct stat info;
    QFile log;
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()
        || !log.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        return {};
    }
    // The reason is in the last lines; a runaway log must not be read whole.
    if (log.size() > 16384)
        log.seek(log.size() - 16384);
    const QList<QByteArray> lines = log.readAll().split('\n');
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        const QByteArray line = it->trimmed();
        if (!line.isEmpty())
            return QString::fromUtf8(line).left(500);
    }
    return {};
}

} // namespace airlock

#include "core/vmm/firecrackervmm.h"

#include "core/fcctl/fcctlprotocol.h"
#include "core/model/names.h"
#include "core/model/printabletext.h"
#include "core/vmm/fcctlchannel.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/landlockscope.h"
#include "core/vmm/pinnedsocket.h"
#include "core/vmm/processreaper.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/rootdisk.h"
#include "core/vmm/seedimage.h"
#include "core/vmm/vmmprocess.h"
#include "core/vmm/vsockconnector.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QStandardPaths>
#include <QThread>

#include <atomic>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcFirecracker, "airlock.vmm.firecracker")

constexpr qsizetype kMaxUnixPath = 107; // sun_path minus the terminating NUL
/// How long a relay whose Firecracker has gone may take to see its stdout end and exit.
constexpr int kRelayReapGraceMs = 5000;
constexpr int kRelayReapKillWaitMs = 2000;

/// Copies up to `limit` bytes from `in` (from `offset`, with pread when >= 0) to `out`. Small
/// state files only (kMaxStateBytes): a bounded, brief block of the loop.
Result<void> copyFile(int in, qint64 offset, int out, qint64 limit, const QString &what)
{
    char buffer[65536];
    qint64 total = 0;
    for (;;) {
        const ssize_t got = offset >= 0 ? ::pread(in, buffer, sizeof buffer, offset + total)
                                        : ::read(in, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return failSystem(QStringLiteral("cannot read"), what, errno);
        if (got == 0)
            return {};
        total += got;
        if (total > limit)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("%1 is larger than %2 bytes").arg(what).arg(limit));
        for (ssize_t done = 0; done < got;) {
            const ssize_t put = ::write(out, buffer + done, size_t(got - done));
            if (put < 0 && errno == EINTR)
                continue;
            if (put < 0)
                return failSystem(QStringLiteral("cannot write"), what, errno);
            done += put;
        }
    }
}

/// A Done for a command whose answer carries nothing but success.
std::function<void(const Result<QJsonObject> &)>
voidReply(std::function<void(const Result<void> &)> done)
{
    return [done = std::move(done)](const Result<QJsonObject> &result) {
        if (!done)
            return;
        if (!result)
            return done(std::unexpected(result.error()));
        done({});
    };
}

/// Whether the missing cgroup was already reported: once per helper is enough.
std::atomic_bool g_cgroupWarned {false};
std::atomic_bool g_landlockWarned {false};

bool isQcow2(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) && file.read(4) == QByteArray("QFI\xfb", 4);
}
} // namespace

FirecrackerVmm::FirecrackerVmm(QString binary, QString controller, QString consoleRelay,
                               QObject *parent)
    : Vmm(parent)
    , m_binary(std::move(binary))
    , m_controller(std::move(controller))
    , m_consoleRelay(std::move(consoleRelay))
{
    m_stopTimer.setSingleShot(true);
    connect(&m_stopTimer, &QTimer::timeout, this, [this] {
        if (!m_running || !m_process)
            return;
        qCInfo(lcFirecracker) << "guest did not stop in time; killing VMM" << m_info.pid;
        m_process->sendSignal(SIGKILL);
    });
}

FirecrackerVmm::~FirecrackerVmm()
{
    // A Diff merge writes only its own files; it ends on its own, bounded by the memory size.
    if (m_merge) {
        m_merge->wait();
        delete std::exchange(m_merge, nullptr);
    }
    // The VMM keeps running, and so does its console relay: only the sockets and pidfds close.
    reset();
}

QString FirecrackerVmm::kernelCommandLine(const VmmLaunchConfig &config)
{
    // Firecracker's guests need no PCI probe, and a reboot must end the VMM (reboot=k:
    // through the keyboard controller, which Firecracker turns into its exit). Told its VMM,
    // the guest's shells make a power off a reboot too (installers/guest/files/profile).
    return QemuCommand::kernelCommandLine(config)
        + QStringLiteral(" reboot=k panic=1 pci=off airlock.vmm=firecracker");
}

QString FirecrackerVmm::findFirecracker(const QString &configured)
{
    for (const QString &candidate : {configured, qEnvironmentVariable("AIRLOCK_FIRECRACKER")}) {
        if (!candidate.isEmpty()) {
            const QFileInfo info(candidate);
            return info.isFile() && info.isExecutable() ? info.absoluteFilePath() : QString();
        }
    }
    return QStandardPaths::findExecutable(QStringLiteral("firecracker"));
}

void FirecrackerVmm::reset()
{
    m_stopTimer.stop();
    ++m_generation;
    // The channel's close ends airlock-fcctl; its pending answers are dropped with it.
    if (m_control) {
        m_control->deleteLater();
        m_control = nullptr;
    }
    delete std::exchange(m_agentConnector, nullptr);
    delete std::exchange(m_agent, nullptr);
    closeConsole();
    dropRelay();
    dropCgroup();
    m_dirtyPages = false;
    m_hasBase = false;
    if (m_process) {
        // Not delete: reset() runs inside the process's own exit signal.
        m_process->disconnect(this);
        m_process->deleteLater();
        m_process = nullptr;
    }
    m_running = false;
}

void FirecrackerVmm::dropCgroup()
{
    if (!m_cgroup)
        return;
    if ((!m_process || m_process->hasExited()) && !m_cgroup->remove())
        qCWarning(lcFirecracker).noquote() << "cannot remove the cgroup" << m_cgroup->path()
                                           << "of VMM" << m_info.pid << ":" << std::strerror(errno);
    m_cgroup.reset();
}

void FirecrackerVmm::closeConsole()
{
    if (m_console) {
        m_console->disconnect(this);
        m_console->abort();
        delete std::exchange(m_console, nullptr);
    }
}

void FirecrackerVmm::dropRelay()
{
    VmmProcess *relay = std::exchange(m_relay, nullptr);
    if (!relay)
        return;
    relay->disconnect(this);
    if (!m_process || m_process->hasExited()) {
        // Firecracker is gone, so its stdout has ended and the relay is leaving.
        relay->setParent(nullptr);
        ProcessReaper::reap(relay,
                            QStringLiteral("airlock-console of %1").arg(m_config.sandboxName),
                            kRelayReapGraceMs, kRelayReapKillWaitMs, {});
        return;
    }
    // It serves the VMM for the next helper; reaped whenever it exits, never signalled.
    relay->setParent(nullptr);
    connect(relay, &VmmProcess::exited, relay, &QObject::deleteLater);
}

Result<int> FirecrackerVmm::listenConsole(const QString &path) const
{
    const QByteArray name = QFile::encodeName(path);
    sockaddr_un address {};
    address.sun_family = AF_UNIX;
    if (name.size() >= qsizetype(sizeof address.sun_path))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("%1 is too long for a Unix socket path").arg(path));
    std::memcpy(address.sun_path, name.constData(), size_t(name.size()));
    // The directory belongs to the VMM user: whatever is planted there is removed, never used
    // (bind(2) creates a fresh entry and never follows a link).
    ::unlink(name.constData());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return failSystem(QStringLiteral("cannot create a socket for"), path, errno);
    // Linux gives the socket file the socket inode's mode (less the umask): only root, that is
    // the helper, may connect, not the VMM user, who owns the directory.
    if (::fchmod(fd, 0600) != 0
        || ::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0
        || ::listen(fd, 4) != 0) {
        const int error = errno;
        ::close(fd);
        return failSystem(QStringLiteral("cannot listen on"), path, error);
    }
    return fd;
}

Result<void> FirecrackerVmm::spawnRelay(int guestIn, int guestOut, int listener, uid_t uid,
                                        gid_t gid)
{
    SpawnOptions options;
    options.inheritedFds = {{guestIn, 3}, {guestOut, 4}, {listener, 5}};
    options.dropPrivileges = true;
    // Firecracker's uid, but not its kvm group: the relay needs the pipes only.
    const VmmCredentials credentials {uid, gid, {gid}};
    const QDir run(m_info.runtimeDir);
    auto pid = VmmProcess::spawn({m_consoleRelay, QStringLiteral("--guest-in"), QStringLiteral("3"),
                                  QStringLiteral("--guest-out"), QStringLiteral("4"),
                                  QStringLiteral("--listen"), QStringLiteral("5")},
                                 run.filePath(kConsoleLogFile), credentials, options);
    for (const int fd : {guestIn, guestOut, listener})
        ::close(fd);
    if (!pid)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot start airlock-console (%1): %2")
                        .arg(m_consoleRelay, pid.error().message));
    m_relay = new VmmProcess(this);
    if (auto watched = m_relay->watch(*pid); !watched) {
        int status;
        ::waitpid(*pid, &status, 0);
        delete std::exchange(m_relay, nullptr);
        return fail(ErrorKind::OperationFailed, QStringLiteral("airlock-console exited at once"));
    }
    connect(m_relay, &VmmProcess::exited, this, [this] {
        if (m_running)
            qCWarning(lcFirecracker) << "airlock-console of VMM" << m_info.pid
                                     << "exited before it: the console is gone";
    });
    return {};
}

bool FirecrackerVmm::connectConsole()
{
    const QString path = QDir(m_info.runtimeDir).filePath(kConsoleSocket);
    auto pinned = PinnedSocket::open(path);
    if (!pinned) {
        qCWarning(lcFirecracker).noquote()
            << "no console for VMM" << m_info.pid << ":" << pinned.error().message;
        return false;
    }
    auto *socket = new QLocalSocket(this);
    socket->connectToServer((*pinned)->path());
    // A Unix socket connects inside connectToServer() or not at all.
    if (socket->state() != QLocalSocket::ConnectedState) {
        qCWarning(lcFirecracker).noquote()
            << "no console for VMM" << m_info.pid << ":" << socket->errorString();
        socket->abort();
        delete socket;
        return false;
    }
    m_console = socket;
    connect(m_console, &QLocalSocket::readyRead, this, [this] {
        const QByteArray bytes = m_console->readAll();
        if (!bytes.isEmpty())
            Q_EMIT consoleOutput(bytes);
    });
    return true;
}

void FirecrackerVmm::writePidFile() const
{
    const QString path = QDir(m_info.runtimeDir).filePath(kPidFile);
    const QByteArray name = QFile::encodeName(path);
    // Root's file in the VMM user's directory: a planted one is removed, never followed.
    ::unlink(name.constData());
    const int fd =
        ::open(name.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    const QByteArray line =
        QByteArray::number(m_info.pid) + ' ' + QByteArray::number(m_info.startTimeTicks) + '\n';
    if (fd < 0 || ::write(fd, line.constData(), size_t(line.size())) != line.size())
        qCWarning(lcFirecracker).noquote()
            << "cannot write" << path << ":" << std::strerror(errno)
            << "(a helper killed during this start will not find the VMM)";
    if (fd >= 0)
        ::close(fd);
}

void FirecrackerVmm::refuse(const Done &done, const Error &error)
{
    if (done)
        QTimer::singleShot(0, this, [done, error] { done(std::unexpected(error)); });
}

int FirecrackerVmm::createForVmm(const QString &path) const
{
    const QByteArray name = QFile::encodeName(path);
    // The directory belongs to the VMM user: a planted file or symlink is removed, never used.
    ::unlink(name.constData());
    const int fd =
        ::open(name.constData(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (m_config.vmmUid != 0 && ::fchown(fd, m_config.vmmUid, m_config.vmmGid) != 0) {
        const int error = errno;
        ::close(fd);
        errno = error;
        return -1;
    }
    return fd;
}

Result<void> FirecrackerVmm::spawnControl(const QString &runtimeDir, uid_t uid, gid_t gid)
{
    if (m_controller.isEmpty() || !QFileInfo(m_controller).isExecutable())
        return fail(
            ErrorKind::BackendUnavailable,
            QStringLiteral("airlock-fcctl is missing%1; it is installed beside "
                           "airlock-gateway")
                .arg(m_controller.isEmpty() ? QString() : QStringLiteral(" at ") + m_controller));
    // Firecracker's own uid, but not its kvm group: airlock-fcctl needs the API socket only.
    VmmCredentials credentials {uid, gid, {gid}};
    m_control = new FcctlChannel(this);
    const QDir run(runtimeDir);
    return m_control->spawn(m_controller, run.filePath(kApiSocket), run.filePath(kFcctlLogFile),
                            credentials);
}

QString FirecrackerVmm::vmmPath(const QString &hostPath) const
{
    if (!m_jail || hostPath.isEmpty())
        return hostPath;
    return m_jail->pathInside(hostPath);
}

pid_t FirecrackerVmm::controllerPid() const
{
    return m_control ? m_control->pid() : 0;
}

pid_t FirecrackerVmm::consoleRelayPid() const
{
    return m_relay ? m_relay->pid() : 0;
}

void FirecrackerVmm::command(QLatin1StringView op, const QJsonObject &fields, int timeoutMs,
                             std::function<void(const Result<QJsonObject> &)> done)
{
    if (!m_control)
        return QTimer::singleShot(0, this, [done] {
            done(fail(ErrorKind::InvalidState, QStringLiteral("the VMM is not running")));
        });
    m_control->send(op, fields, timeoutMs, std::move(done));
}

void FirecrackerVmm::start(const VmmLaunchConfig &config, Started started)
{
    const auto refuseStart = [this, &started](const Error &error) {
        QTimer::singleShot(0, this, [started, error] { started(std::unexpected(error)); });
    };
    if (m_running || m_started)
        return refuseStart(
            Error {ErrorKind::InvalidState, QStringLiteral("this VMM is already running")});
    if (auto name = validateName(config.sandboxName); !name)
        return refuseStart(name.error());
    if (m_binary.isEmpty() || !QFileInfo(m_binary).isExecutable())
        return refuseStart(
            Error {ErrorKind::BackendUnavailable,
                   QStringLiteral("Firecracker is not installed (no firecracker "
                                  "binary%1; docs/vmm.md says how to install it)")
                       .arg(m_binary.isEmpty() ? QString() : QStringLiteral(" at ") + m_binary)});
    if (m_controller.isEmpty() || !QFileInfo(m_controller).isExecutable())
        return refuseStart(Error {
            ErrorKind::BackendUnavailable,
            QStringLiteral("airlock-fcctl is missing%1; it is installed "
                           "beside airlock-gateway")
                .arg(m_controller.isEmpty() ? QString() : QStringLiteral(" at ") + m_controller)});
    if (m_consoleRelay.isEmpty() || !QFileInfo(m_consoleRelay).isExecutable())
        return refuseStart(Error {
            ErrorKind::BackendUnavailable,
            QStringLiteral("airlock-console is missing%1; it is installed beside airlock-fcctl")
                .arg(m_consoleRelay.isEmpty() ? QString()
                                              : QStringLiteral(" at ") + m_consoleRelay)});
    if (config.acceleration != Acceleration::Kvm && m_requireKvm)
        return refuseStart(Error {ErrorKind::BackendUnavailable,
                                  QStringLiteral("Firecracker needs KVM, which this host does not "
                                                 "offer the VMM user; use the qemu backend")});
    QStringList files {config.kernelPath};
    if (!config.initrdPath.isEmpty())
        files << config.initrdPath;
    if (!config.rootDiskPath.isEmpty())
        files << config.rootDiskPath;
    if (!config.seedImagePath.isEmpty())
        files << config.seedImagePath;
    for (const QString &file : std::as_const(files)) {
        if (!QFileInfo(file).isFile())
            return refuseStart(Error {ErrorKind::BackendUnavailable,
                                      QStringLiteral("guest image file %1 is missing").arg(file)});
    }
    // Firecracker's block devices are raw files; the images' qcow2 overlays cannot work.
    if (!config.rootDiskPath.isEmpty()
        && (!config.rootDiskBasePath.isEmpty() || isQcow2(config.rootDiskPath)))
        return refuseStart(Error {ErrorKind::BackendUnavailable,
                                  QStringLiteral("Firecracker reads raw disks only; this image's "
                                                 "root disk is a qcow2 overlay (use the qemu "
                                                 "backend for it)")});
    if (config.incomingStateFd >= 0 && config.memoryPath.isEmpty())
        return refuseStart(Error {ErrorKind::InvalidParams,
                                  QStringLiteral("a restore needs the guest's memory file")});
    const QDir run(config.runtimeDir);
    if (config.runtimeDir.isEmpty() || !run.exists())
        return refuseStart(
            Error {ErrorKind::OperationFailed,
                   QStringLiteral("runtime directory %1 does not exist").arg(config.runtimeDir)});
    for (const QLatin1StringView file : {kApiSocket, kVsockSocket, kConsoleSocket})
        if (QFile::encodeName(run.absoluteFilePath(file)).size() > kMaxUnixPath)
            return refuseStart(Error {ErrorKind::OperationFailed,
                                      QStringLiteral("runtime directory %1 is too long for a Unix "
                                                     "socket path")
                                          .arg(config.runtimeDir)});
    // Firecracker refuses to start on an existing API socket; leftovers of an earlier run
    // would also be taken for this run's.
    for (const QLatin1StringView file : {kApiSocket, kVsockSocket, kStateFile, kPidFile})
        QFile::remove(run.filePath(file));

    m_config = config;
    m_config.runtimeDir = run.absolutePath();
    m_restoring = config.incomingStateFd >= 0;
    // The logger's file and a restore's device state are the helper's to create: Firecracker
    // opens them as the VMM user.
    const int logFd = createForVmm(run.filePath(kLogFile));
    if (logFd < 0)
        return refuseStart(
            failSystem(QStringLiteral("cannot create"), run.filePath(kLogFile), errno).error());
    ::close(logFd);
    if (m_restoring) {
        const QString incoming = run.filePath(kIncomingStateFile);
        const int stateFd = createForVmm(incoming);
        if (stateFd < 0)
            return refuseStart(
                failSystem(QStringLiteral("cannot create"), incoming, errno).error());
        auto copied = copyFile(config.incomingStateFd, 0, stateFd, kMaxStateBytes,
                               QStringLiteral("the incoming device state"));
        ::close(stateFd);
        if (!copied)
            return refuseStart(copied.error());
    }

    int stdinPipe[2];
    int stdoutPipe[2];
    if (::pipe2(stdinPipe, O_CLOEXEC) != 0)
        return refuseStart(
            failSystem(QStringLiteral("cannot create"), QStringLiteral("a pipe"), errno).error());
    if (::pipe2(stdoutPipe, O_CLOEXEC) != 0) {
        const int error = errno;
        ::close(stdinPipe[0]);
        ::close(stdinPipe[1]);
        return refuseStart(
            failSystem(QStringLiteral("cannot create"), QStringLiteral("a pipe"), error).error());
    }
    // A helper that may mount jails it: a mount namespace and chroot with only this sandbox's
    // files. The packaged unit may not (docs/packaging.md), and Firecracker then runs as QEMU
    // does.
    m_jail.reset();
    if (FirecrackerJail::available()) {
        FirecrackerJail jail(m_config.runtimeDir, m_binary);
        jail.addFile(m_config.kernelPath, QStringLiteral("kernel"), true);
        if (!m_config.initrdPath.isEmpty())
            jail.addFile(m_config.initrdPath, QStringLiteral("initrd"), true);
        if (!m_config.seedImagePath.isEmpty())
            jail.addFile(m_config.seedImagePath, QStringLiteral("seed"), true);
        if (!m_config.rootDiskPath.isEmpty())
            jail.addFile(m_config.rootDiskPath, QStringLiteral("rootfs"), false);
        // The directory, not the file: a snapshot writes a fresh file beside it, which the
        // helper renames over the old one.
        if (!m_config.memoryPath.isEmpty())
            jail.addDirectory(QFileInfo(m_config.memoryPath).path(), QStringLiteral("memory"));
        jail.addSharedPaths(m_jailSharedPaths);
        if (auto prepared = jail.prepare(); !prepared)
            return refuseStart(prepared.error());
        m_jail = std::move(jail);
    } else {
        qCInfo(lcFirecracker,
               "%s: Firecracker runs without a jail: the helper lacks "
               "CAP_SYS_ADMIN or CAP_SYS_CHROOT",
               qPrintable(config.sandboxName));
    }
    const QStringList argv {m_jail ? QString(FirecrackerJail::kBinary) : m_binary,
                            QStringLiteral("--api-sock"), vmmPath(run.filePath(kApiSocket)),
                            QStringLiteral("--id"), config.sandboxName};
    qCInfo(lcFirecracker).noquote()
        << "starting" << config.sandboxName << "as uid" << config.vmmUid << ":" << argv.join(u' ');
    VmmCredentials credentials = VmmCredentials::forUser(config.vmmUid, config.vmmGid);
    if (!config.vmmGroups.empty())
        credentials.groups = config.vmmGroups;
    SpawnOptions options;
    options.autogroupNice = kGuestAutogroupNice;
    m_cgroup.reset();
    if (m_jail) {
        options.jail = m_jail->spawnJail();
        // The rest of the jailer's confinement: what the helper may make as root.
        options.newPidNamespace = true;
        const VmmCgroup::Limits limits =
            VmmCgroup::firecrackerLimits(m_config.vcpus, m_config.memoryMib);
        options.beforeChildRuns = [this, limits](pid_t child) -> Result<void> {
            auto made = VmmCgroup::create(
                QStringLiteral("%1.%2").arg(m_config.sandboxName).arg(child), limits);
            if (!made) {
                if (!g_cgroupWarned.exchange(true))
                    qCWarning(lcFirecracker).noquote()
                        << "Firecracker VMMs run without a cgroup (no memory, task or CPU "
                           "limit):"
                        << made.error().message;
                return {};
            }
            m_cgroup = std::move(*made);
            return m_cgroup->attach(child);
        };
    }
    // Its network namespace is the host's (the tap is opened by name there) and its seccomp
    // filters allow AF_UNIX sockets only; the chroot hides path-named ones, a filter of ours
    // refuses connect(2) (NoConnectFilter), and Landlock's scope keeps it off abstract sockets
    // and from signalling the host's processes where the kernel has it.
    int landlockRuleset = -1;
    if (m_jail) {
        landlockRuleset = LandlockScope::createRuleset();
        if (landlockRuleset < 0 && !g_landlockWarned.exchange(true))
            qCWarning(lcFirecracker).noquote()
                << "Firecracker VMMs can reach the host's abstract Unix sockets: Landlock's "
                   "scopes need Linux 6.12 (Landlock ABI 6); this kernel has ABI"
                << LandlockScope::abiVersion();
    }
    options.landlockRuleset = landlockRuleset;
    // On every kernel: Airlock needs no connect from Firecracker (the helper connects to it).
    options.noConnect = m_jail.has_value();
    options.stdinFd = stdinPipe[0];
    options.stdoutFd = stdoutPipe[1];
    auto pid = VmmProcess::spawn(argv, run.filePath(kStderrFile), credentials, options);
    if (landlockRuleset >= 0)
        ::close(landlockRuleset);
    ::close(stdinPipe[0]);
    ::close(stdoutPipe[1]);
    if (!pid) {
        ::close(stdinPipe[1]);
        ::close(stdoutPipe[0]);
        // spawn() reaped the child: its group is empty.
        dropCgroup();
        return refuseStart(pid.error());
    }
    if (m_cgroup)
        qCInfo(lcFirecracker).noquote() << "VMM" << *pid << "runs in cgroup" << m_cgroup->path();

    m_process = new VmmProcess(this);
    m_stopRequested = false;
    m_info = VmmRuntimeInfo {*pid, 0, m_config.runtimeDir};
    m_started = std::move(started);
    m_startDeadline = QDeadlineTimer(kStartTimeoutMs);
    if (auto watched = m_process->watch(*pid); !watched) {
        ::close(stdinPipe[1]);
        ::close(stdoutPipe[0]);
        return abandonStart(watched.error());
    }
    m_info.startTimeTicks = m_process->startTimeTicks();
    writePidFile();
    // The console: airlock-console takes the pipes' other ends and serves them on a socket
    // bound here, so it listens before the relay runs and before the guest writes its first
    // byte (Firecracker's stdout is read from the start: nothing the guest writes is lost).
    auto listener = listenConsole(run.filePath(kConsoleSocket));
    if (!listener) {
        ::close(stdinPipe[1]);
        ::close(stdoutPipe[0]);
        return abandonStart(listener.error());
    }
    if (auto relay =
            spawnRelay(stdinPipe[1], stdoutPipe[0], *listener, config.vmmUid, config.vmmGid);
        !relay)
        return abandonStart(relay.error());
    if (!connectConsole())
        return abandonStart(Error {ErrorKind::OperationFailed,
                                   QStringLiteral("cannot connect to airlock-console")});
    if (auto control = spawnControl(m_config.runtimeDir, config.vmmUid, config.vmmGid); !control)
        return abandonStart(control.error());
    connect(m_process, &VmmProcess::exited, this, [this](bool statusKnown, int waitStatus) {
        finishStart(fail(ErrorKind::OperationFailed,
                         QStringLiteral("Firecracker exited during its start: %1")
                             .arg(exitReason(statusKnown, waitStatus))));
    });
    const int generation = m_generation;
    QTimer::singleShot(0, this, [this, generation] {
        if (generation == m_generation && m_started)
            configure();
    });
}

void FirecrackerVmm::configure()
{
    // airlock-fcctl waits for the API socket (Firecracker gives no signal when it exists), reads
    // the version and sends the requests the version allows; this side only says what to set.
    const QDir run(m_config.runtimeDir);
    const int waitMs = int(qMax<qint64>(0, m_startDeadline.remainingTime()));
    QJsonObject fields {{QStringLiteral("waitMs"), waitMs},
                        {QStringLiteral("logPath"), vmmPath(run.filePath(kLogFile))},
                        {QStringLiteral("tap"), m_config.network.tapName},
                        {QStringLiteral("vsockPath"), vmmPath(run.filePath(kVsockSocket))}};
    int timeoutMs = waitMs + kCommandTimeoutMs;
    if (m_restoring) {
        fields.insert(QStringLiteral("snapshotPath"), vmmPath(run.filePath(kIncomingStateFile)));
        fields.insert(QStringLiteral("memPath"), vmmPath(m_config.memoryPath));
        timeoutMs = waitMs + kSnapshotCommandTimeoutMs;
    } else {
        fields.insert(QStringLiteral("vcpus"), m_config.vcpus);
        fields.insert(QStringLiteral("memoryMib"), m_config.memoryMib);
        fields.insert(QStringLiteral("kernel"), vmmPath(m_config.kernelPath));
        fields.insert(QStringLiteral("initrd"), vmmPath(m_config.initrdPath));
        fields.insert(QStringLiteral("bootArgs"), kernelCommandLine(m_config));
        fields.insert(QStringLiteral("rootDisk"), vmmPath(m_config.rootDiskPath));
        fields.insert(QStringLiteral("seedDisk"), vmmPath(m_config.seedImagePath));
        fields.insert(QStringLiteral("mac"), m_config.network.mac);
        fields.insert(QStringLiteral("guestCid"), kGuestCid);
    }
    const int generation = m_generation;
    command(m_restoring ? fcctl::kLoad : fcctl::kConfigure, fields, timeoutMs,
            [this, generation](const Result<QJsonObject> &configured) {
                if (generation != m_generation || !m_started)
                    return;
                if (!configured)
                    return abandonStart(configured.error());
                m_version = configured->value(QStringLiteral("version")).toString().left(64);
                // A loaded guest's memory file is its first base; a cold boot has none.
                m_dirtyPages = configured->value(QStringLiteral("dirtyPages")).toBool();
                m_hasBase = m_restoring;
                qCInfo(lcFirecracker).noquote()
                    << "Firecracker" << printableText(m_version) << "pid" << m_info.pid;
                if (!m_restoring)
                    return startInstance();
                // The restored agent listened when it was saved: the start ends with its
                // channel.
                connectAgent(kStartTimeoutMs, [this, generation](const Result<void> &agent) {
                    if (generation != m_generation || !m_started)
                        return;
                    if (!agent)
                        return abandonStart(agent.error());
                    QFile::remove(QDir(m_config.runtimeDir).filePath(kIncomingStateFile));
                    finishRunning();
                });
            });
}

void FirecrackerVmm::startInstance()
{
    const int generation = m_generation;
    command(fcctl::kStart, {}, kCommandTimeoutMs,
            [this, generation](const Result<QJsonObject> &started) {
                if (generation != m_generation || !m_started)
                    return;
                if (!started)
                    return abandonStart(started.error());
                connectAgent(kAgentConnectTimeoutMs, {});
                finishRunning();
            });
}

void FirecrackerVmm::finishRunning()
{
    m_process->disconnect(this);
    connect(m_process, &VmmProcess::exited, this, &FirecrackerVmm::onProcessExited);
    m_running = true;
    qCInfo(lcFirecracker) << "started pid" << m_info.pid;
    finishStart(m_info);
}

void FirecrackerVmm::connectAgent(int timeoutMs, std::function<void(const Result<void> &)> done)
{
    delete std::exchange(m_agentConnector, nullptr);
    m_agentConnector = new VsockConnector(
        QDir(m_info.runtimeDir).filePath(kVsockSocket), kAgentVsockPort, timeoutMs,
        [this, done](const Result<QLocalSocket *> &socket) {
            m_agentConnector->deleteLater();
            m_agentConnector = nullptr;
            if (!socket) {
                qCWarning(lcFirecracker).noquote()
                    << "guest agent of VMM" << m_info.pid << ":" << socket.error().message;
                if (done)
                    done(std::unexpected(socket.error()));
                return;
            }
            delete std::exchange(m_agent, new GuestAgent(*socket, this));
            qCInfo(lcFirecracker) << "guest agent channel of VMM" << m_info.pid << "connected";
            if (done)
                done({});
            Q_EMIT agentAvailable();
        },
        this);
}

void FirecrackerVmm::abandonStart(const Error &error)
{
    // Any failure during a start must not leave Firecracker behind.
    if (m_process) {
        m_process->disconnect(this);
        m_process->sendSignal(SIGKILL);
        int status = 0;
        while (::waitpid(m_info.pid, &status, 0) < 0 && errno == EINTR) { }
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            return finishStart(fail(ErrorKind::OperationFailed,
                                    QStringLiteral("Firecracker exited during its start: %1")
                                        .arg(exitReason(true, status))));
    }
    finishStart(std::unexpected(error));
}

void FirecrackerVmm::finishStart(const Result<VmmRuntimeInfo> &result)
{
    if (!m_started)
        return;
    Started started = std::exchange(m_started, {});
    if (!result) {
        qCWarning(lcFirecracker).noquote() << "start failed:" << result.error().message;
        if (m_process && !m_process->hasExited()) {
            m_process->disconnect(this);
            m_process->sendSignal(SIGKILL);
            int status = 0;
            while (::waitpid(m_info.pid, &status, 0) < 0 && errno == EINTR) { }
        }
        if (!m_info.runtimeDir.isEmpty())
            QFile::remove(QDir(m_info.runtimeDir).filePath(kPidFile));
        reset();
    }
    started(result);
}

void FirecrackerVmm::adopt(const VmmRuntimeInfo &info, Done done)
{
    if (m_running || m_started)
        return refuse(
            done, Error {ErrorKind::InvalidState, QStringLiteral("this VMM is already running")});
    m_process = new VmmProcess(this);
    if (auto watched = m_process->watch(pid_t(info.pid), info.startTimeTicks); !watched) {
        reset();
        return refuse(done, watched.error());
    }
    m_info = info;
    m_stopRequested = false;
    // The relay kept the console while no helper was there; output of that time is gone.
    connectConsole();
    // Removed when it exits, as if this helper had made it.
    m_cgroup = VmmCgroup::ofProcess(pid_t(info.pid));
    // airlock-fcctl runs as the uid the VMM runs as, read from the process itself.
    struct stat owner;
    const QByteArray proc = QByteArrayLiteral("/proc/") + QByteArray::number(info.pid);
    if (::stat(proc.constData(), &owner) != 0) {
        reset();
        return refuse(
            done,
            failSystem(QStringLiteral("cannot stat"), QString::fromLatin1(proc), errno).error());
    }
    if (auto control = spawnControl(info.runtimeDir, owner.st_uid, owner.st_gid); !control) {
        reset();
        return refuse(done, control.error());
    }
    const int generation = m_generation;
    command(fcctl::kVersion, {}, kCommandTimeoutMs,
            [this, generation, done](const Result<QJsonObject> &version) {
                if (generation != m_generation)
                    return;
                if (!version) {
                    reset();
                    if (done)
                        done(fail(ErrorKind::OperationFailed,
                                  QStringLiteral("cannot adopt Firecracker %1: %2")
                                      .arg(m_info.pid)
                                      .arg(version.error().message)));
                    return;
                }
                m_version = version->value(QStringLiteral("version")).toString().left(64);
                connect(m_process, &VmmProcess::exited, this, &FirecrackerVmm::onProcessExited);
                m_running = true;
                connectAgent(kStartTimeoutMs, {});
                if (done)
                    done({});
            });
}

void FirecrackerVmm::stop(int timeoutMs)
{
    if (!m_running || m_stopRequested)
        return;
    m_stopRequested = true;
    qCInfo(lcFirecracker) << "sending Ctrl+Alt+Del to VMM" << m_info.pid;
    command(fcctl::kCtrlAltDel, {}, kCommandTimeoutMs,
            [pid = m_info.pid](const Result<QJsonObject> &sent) {
                if (!sent)
                    qCWarning(lcFirecracker).noquote()
                        << "VMM" << pid << ":" << sent.error().message;
            });
    m_stopTimer.start(qMax(0, timeoutMs));
}

void FirecrackerVmm::kill()
{
    if (m_started && !m_running)
        return abandonStart(
            Error {ErrorKind::OperationFailed, QStringLiteral("killed during its start")});
    if (!m_running)
        return;
    m_stopRequested = true;
    m_stopTimer.stop();
    m_process->sendSignal(SIGKILL);
}

bool FirecrackerVmm::waitForExit(int timeoutMs)
{
    return !m_process || m_process->waitForExit(timeoutMs);
}

void FirecrackerVmm::writeConsole(const QByteArray &bytes)
{
    if (!m_console || m_console->state() != QLocalSocket::ConnectedState)
        return;
    const qint64 room = kMaxConsoleInputBytes - m_console->bytesToWrite();
    if (room > 0)
        m_console->write(bytes.left(qsizetype(room)));
}

void FirecrackerVmm::pause(Done done)
{
    if (!m_running)
        return refuse(done,
                      Error {ErrorKind::InvalidState, QStringLiteral("the VMM is not running")});
    command(fcctl::kPause, {}, kCommandTimeoutMs, voidReply(std::move(done)));
}

void FirecrackerVmm::resume(Done done)
{
    if (!m_running)
        return refuse(done,
                      Error {ErrorKind::InvalidState, QStringLiteral("the VMM is not running")});
    command(fcctl::kResume, {}, kCommandTimeoutMs, voidReply(std::move(done)));
}

void FirecrackerVmm::queryRunning(std::function<void(const Result<bool> &)> done)
{
    if (!m_running)
        return QTimer::singleShot(0, this, [done] {
            done(fail(ErrorKind::InvalidState, QStringLiteral("the VMM is not running")));
        });
    command(fcctl::kState, {}, kCommandTimeoutMs, [done](const Result<QJsonObject> &state) {
        if (!state)
            return done(std::unexpected(state.error()));
        done(state->value(QStringLiteral("state")).toString() == QLatin1String("Running"));
    });
}

void FirecrackerVmm::saveDeviceState(int fd, Done done)
{
    if (!m_running)
        return refuse(done,
                      Error {ErrorKind::InvalidState, QStringLiteral("the VMM is not running")});
    if (m_config.memoryPath.isEmpty())
        return refuse(done,
                      Error {ErrorKind::InvalidState,
                             QStringLiteral("this guest has no memory file the helper can "
                                            "copy; restart it to take snapshots")});
    if (m_merge)
        return refuse(done,
                      Error {ErrorKind::InvalidState,
                             QStringLiteral("a snapshot of this guest is being taken")});
    // A Diff holds the pages dirtied since the last snapshot or load, so it needs memoryPath to
    // be exactly that memory; the first snapshot of a cold boot is Full. Until this snapshot
    // succeeds there is no base: whatever fails below, Firecracker may have reset its dirty page
    // log, so the next snapshot must be Full.
    const bool diff = m_dirtyPages && m_hasBase && m_config.memoryMib > 0;
    m_hasBase = false;
    const QString memoryTarget =
        m_config.memoryPath + (diff ? QStringLiteral(".diff") : QStringLiteral(".next"));
    const int memoryFd = createForVmm(memoryTarget);
    if (memoryFd < 0)
        return refuse(done,
                      failSystem(QStringLiteral("cannot create"), memoryTarget, errno).error());
    // The merge reads only the very file created here (Firecracker opens it, it does not
    // replace it). The descriptor stays open until the snapshot ends, so the inode cannot be
    // freed and its number given to a replacement.
    const auto identity = MemoryDiffMerge::identityOf(memoryFd);
    const std::shared_ptr<void> held(nullptr, [memoryFd](void *) { ::close(memoryFd); });
    if (!identity) {
        QFile::remove(memoryTarget);
        return refuse(done, failSystem(QStringLiteral("cannot stat"), memoryTarget, errno).error());
    }
    const QString statePath = QDir(m_info.runtimeDir).filePath(kStateFile);
    QFile::remove(statePath);
    const QLatin1StringView type = diff ? QLatin1StringView("Diff") : QLatin1StringView("Full");
    command(
        fcctl::kState, {}, kCommandTimeoutMs,
        [this, fd, done, memoryTarget, memoryFd, identity, held, statePath, diff,
         type](const Result<QJsonObject> &state) {
            if (!state
                || state->value(QStringLiteral("state")).toString() != QLatin1String("Paused")) {
                QFile::remove(memoryTarget);
                return done(
                    state ? fail(ErrorKind::InvalidState, QStringLiteral("pause the guest first"))
                          : Result<void>(std::unexpected(state.error())));
            }
            const QJsonObject params {{QStringLiteral("memPath"), vmmPath(memoryTarget)},
                                      {QStringLiteral("statePath"), vmmPath(statePath)},
                                      {QStringLiteral("type"), type}};
            command(fcctl::kSnapshot, params, kSnapshotCommandTimeoutMs,
                    [this, fd, done, memoryTarget, memoryFd, identity, held, statePath,
                     diff](const Result<QJsonObject> &created) {
                        if (!created) {
                            QFile::remove(memoryTarget);
                            if (diff)
                                qCWarning(lcFirecracker).noquote()
                                    << "Diff snapshot failed; the next one is Full:"
                                    << created.error().message;
                            return done(std::unexpected(created.error()));
                        }
                        if (diff)
                            return mergeDiff(fd, memoryTarget, *identity, held, statePath, done);
                        // The VMM user owns the file: believed only as the very file made
                        // here, exactly the guest's memory size (a huge sparse one would cost
                        // the snapshot store hours).
                        if (auto checked = checkFullMemory(memoryFd, memoryTarget, *identity);
                            !checked) {
                            QFile::remove(memoryTarget);
                            return done(checked);
                        }
                        // The new memory replaces the old by rename: a restored guest maps the old
                        // inode privately, and it stays intact for as long as Firecracker maps it.
                        if (::rename(QFile::encodeName(memoryTarget).constData(),
                                     QFile::encodeName(m_config.memoryPath).constData())
                            != 0) {
                            const int error = errno;
                            QFile::remove(memoryTarget);
                            return done(failSystem(QStringLiteral("cannot replace"),
                                                   m_config.memoryPath, error));
                        }
                        finishSnapshot(fd, statePath, false, done);
                    });
        });
}

Result<void> FirecrackerVmm::checkFullMemory(int memoryFd, const QString &path,
                                             const MemoryDiffMerge::Identity &identity) const
{
    struct stat held
    {
    };
    struct stat named
    {
    };
    const qint64 expected = qint64(m_config.memoryMib) * 1024 * 1024;
    if (::fstat(memoryFd, &held) != 0 || ::lstat(QFile::encodeName(path).constData(), &named) != 0)
        return failSystem(QStringLiteral("cannot stat"), path, errno);
    if (!S_ISREG(named.st_mode) || named.st_dev != identity.device
        || named.st_ino != identity.inode)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("Firecracker's snapshot memory %1 is not the file made for it")
                        .arg(path));
    if (m_config.memoryMib > 0 && qint64(held.st_size) != expected)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("Firecracker's snapshot memory %1 holds %2 bytes, not the "
                                   "guest's %3")
                        .arg(path)
                        .arg(qint64(held.st_size))
                        .arg(expected));
    return {};
}

void FirecrackerVmm::mergeDiff(int fd, const QString &diffPath,
                               const MemoryDiffMerge::Identity &identity,
                               const std::shared_ptr<void> &held, const QString &statePath,
                               Done done)
{
    const QString base = m_config.memoryPath;
    const QString merged = base + QStringLiteral(".next");
    const int out = createForVmm(merged);
    if (out < 0) {
        const int error = errno;
        QFile::remove(diffPath);
        return done(failSystem(QStringLiteral("cannot create"), merged, error));
    }
    const qint64 maxBytes = qint64(m_config.memoryMib) * 1024 * 1024;
    auto result = std::make_shared<std::optional<Result<MemoryDiffMerge::Stats>>>();
    QElapsedTimer timer;
    timer.start();
    // Gigabytes of dirty pages take seconds: the merge runs on a thread of its own, and the
    // answer comes back to the event loop. The destructor waits for it.
    m_merge = QThread::create([result, base, diffPath, identity, held, out, maxBytes] {
        result->emplace(MemoryDiffMerge::merge(base, diffPath, identity, out, maxBytes));
    });
    const int generation = m_generation;
    connect(m_merge, &QThread::finished, this,
            [this, fd, done, result, diffPath, merged, out, statePath, generation, timer] {
                delete std::exchange(m_merge, nullptr);
                ::close(out);
                QFile::remove(diffPath);
                const Result<MemoryDiffMerge::Stats> &stats = **result;
                if (!stats) {
                    QFile::remove(merged);
                    qCWarning(lcFirecracker).noquote()
                        << "Diff snapshot failed; the next one is Full:" << stats.error().message;
                    return done(std::unexpected(stats.error()));
                }
                if (generation != m_generation) {
                    QFile::remove(merged);
                    return done(fail(ErrorKind::InvalidState,
                                     QStringLiteral("the VMM stopped during its snapshot")));
                }
                // As for a Full snapshot: the merged copy replaces the base by rename, and a
                // guest loaded from the base keeps its private mapping of the old inode.
                if (::rename(QFile::encodeName(merged).constData(),
                             QFile::encodeName(m_config.memoryPath).constData())
                    != 0) {
                    const int error = errno;
                    QFile::remove(merged);
                    return done(
                        failSystem(QStringLiteral("cannot replace"), m_config.memoryPath, error));
                }
                qCInfo(lcFirecracker).noquote()
                    << "Diff snapshot merged:" << stats->diffBytes << "dirty bytes onto"
                    << stats->baseBytes << "bytes of base in" << timer.elapsed() << "ms";
                finishSnapshot(fd, statePath, true, done);
            });
    m_merge->start();
}

void FirecrackerVmm::finishSnapshot(int fd, const QString &statePath, bool diff, const Done &done)
{
    // Root reads a file of the VMM user's: never through a symlink, only a plain file.
    const int in = ::open(QFile::encodeName(statePath).constData(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat info;
    if (in < 0 || ::fstat(in, &info) != 0 || !S_ISREG(info.st_mode)) {
        const int error = errno;
        if (in >= 0)
            ::close(in);
        return done(fail(ErrorKind::OperationFailed,
                         QStringLiteral("Firecracker wrote no device state at %1 (%2)")
                             .arg(statePath, QString::fromLocal8Bit(std::strerror(error)))));
    }
    auto copied = copyFile(in, -1, fd, kMaxStateBytes, QStringLiteral("the device state"));
    ::close(in);
    QFile::remove(statePath);
    if (copied) {
        m_hasBase = true;
        m_lastSnapshotType = diff ? QStringLiteral("Diff") : QStringLiteral("Full");
        qCInfo(lcFirecracker).noquote()
            << m_lastSnapshotType << "snapshot of pid" << m_info.pid << "taken";
    }
    done(copied);
}

void FirecrackerVmm::onProcessExited(bool statusKnown, int waitStatus)
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
    QFile::remove(QDir(m_info.runtimeDir).filePath(kPidFile));
    const QString reason = m_stopRequested ? QString() : exitReason(statusKnown, waitStatus);
    qCInfo(lcFirecracker).noquote()
        << "VMM" << m_info.pid
        << "exited:" << (reason.isEmpty() ? QStringLiteral("as requested") : reason);
    reset();
    Q_EMIT exited(reason);
}

QString FirecrackerVmm::exitReason(bool statusKnown, int waitStatus) const
{
    QString reason;
    if (!statusKnown)
        reason = QStringLiteral("Firecracker exited");
    else if (WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0)
        // Firecracker ends when the guest reboots or powers off.
        return QStringLiteral("guest powered off or rebooted (Firecracker exited with status 0)");
    else if (WIFEXITED(waitStatus))
        reason = QStringLiteral("Firecracker exited with status %1").arg(WEXITSTATUS(waitStatus));
    else if (WIFSIGNALED(waitStatus))
        reason = QStringLiteral("Firecracker was killed by signal %1 (%2)")
                     .arg(WTERMSIG(waitStatus))
                     .arg(QString::fromLocal8Bit(::strsignal(WTERMSIG(waitStatus))));
    else
        reason = QStringLiteral("Firecracker ended with wait status %1").arg(waitStatus);
    const QString log = lastStderrLine();
    if (!log.isEmpty())
        reason += QStringLiteral(": ") + log;
    return reason;
}

QString FirecrackerVmm::lastStderrLine() const
{
    // Only the file the helper itself created (VmmProcess::spawn), never through a symlink.
    const QByteArray name = QFile::encodeName(QDir(m_info.runtimeDir).filePath(kStderrFile));
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

#include "core/vmm/vmmprocess.h"

#include "core/vmm/landlockscope.h"
#include "core/vmm/noconnectfilter.h"

#include <QByteArray>
#include <QFile>
#include <QLoggingCategory>
#include <QSocketNotifier>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcProcess, "airlock.vmm.process")

/// Steps the child reports through the exec-error pipe.
enum ChildStep : int {
    StepSetsid = 1,
    StepCredentials,
    StepStdio,
    StepExec,
    StepInherit,
    StepPrivileges,
    StepJail,
    StepLandlock,
    StepSeccomp
};

QString stepName(int step)
{
    switch (step) {
    case StepSetsid:
        return QStringLiteral("setsid");
    case StepCredentials:
        return QStringLiteral("switching to the VMM user");
    case StepStdio:
        return QStringLiteral("redirecting stdio");
    case StepExec:
        return QStringLiteral("exec");
    case StepInherit:
        return QStringLiteral("passing descriptors");
    case StepPrivileges:
        return QStringLiteral("dropping privileges");
    case StepJail:
        return QStringLiteral("entering the jail");
    case StepLandlock:
        return QStringLiteral("restricting by Landlock");
    case StepSeccomp:
        return QStringLiteral("installing the seccomp filter");
    }
    return QStringLiteral("an unknown step");
}

/// Splits /proc/<pid>/stat after the command name (which may contain spaces and ')').
std::optional<QList<QByteArray>> statFields(pid_t pid)
{
    QFile file(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QByteArray stat = file.readAll();
    const qsizetype close = stat.lastIndexOf(')');
    if (close < 0)
        return std::nullopt;
    // Fields from 3 (state) on.
    return stat.mid(close + 2).trimmed().split(' ');
}

// glibc 2.36's <sys/pidfd.h> lacks extern "C", so C++ cannot link against it; call the
// system calls directly (both exist since Linux 5.3).
int pidfdOpen(pid_t pid)
{
    return int(::syscall(SYS_pidfd_open, pid, 0));
}

int pidfdSendSignal(int pidfd, int signal)
{
    return int(::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0));
}

/// fork(), or with `newPidNamespace` clone3(2) with CLONE_NEWPID: like fork (no CLONE_VM, no
/// stack of its own; SIGCHLD to the parent at exit, so waitpid works as for a forked child),
/// but the child is pid 1 of a new pid namespace (Linux 5.3, as pidfd_open). glibc has no
/// clone3 wrapper; its state in such a child still lists the parent's threads, which is why
/// the child only makes plain system calls (VmmCredentials::apply).
pid_t forkChild(bool newPidNamespace)
{
    if (!newPidNamespace)
        return ::fork();
    struct clone_args args;
    std::memset(&args, 0, sizeof args);
    args.flags = CLONE_NEWPID;
    args.exit_signal = SIGCHLD;
    return pid_t(::syscall(SYS_clone3, &args, sizeof args));
}

[[noreturn]] void childFail(int pipeFd, int step, int error) noexcept
{
    const int report[2] = {step, error};
    ssize_t ignored = ::write(pipeFd, report, sizeof report);
    (void)ignored;
    ::_exit(127);
}
/// Best effort: a kernel without CONFIG_SCHED_AUTOGROUP has no such file, and the guest then
/// runs at the default weight, as it did before.
void setAutogroupNice(pid_t pid, int nice)
{
    const QByteArray path = "/proc/" + QByteArray::number(pid) + "/autogroup";
    const QByteArray value = QByteArray::number(nice);
    const int fd = ::open(path.constData(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, value.constData(), size_t(value.size())) != value.size())
        qCDebug(lcProcess) << "cannot set the autogroup nice value of" << pid << ":"
                           << std::strerror(errno);
    if (fd >= 0)
        ::close(fd);
}
} // namespace

VmmCredentials VmmCredentials::forUser(uid_t uid, gid_t gid)
{
    VmmCredentials credentials {uid, gid, {gid}};
    if (uid == 0)
        return credentials;
    struct passwd entry;
    struct passwd *found = nullptr;
    std::vector<char> buffer(16384);
    if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
        return credentials;
    int count = 64;
    std::vector<gid_t> groups(count);
    if (::getgrouplist(found->pw_name, gid, groups.data(), &count) < 0) {
        groups.resize(count);
        if (::getgrouplist(found->pw_name, gid, groups.data(), &count) < 0)
            return credentials;
    }
    groups.resize(count);
    credentials.groups = std::move(groups);
    return credentials;
}

int VmmCredentials::apply() const noexcept
{
    if ((uid == 0 && gid == 0) || (uid == ::geteuid() && gid == ::getegid()))
        return 0;
    // The system calls, not glibc's wrappers: those apply the change to every thread glibc
    // knows of (signalling them and taking its locks), and a child made by clone3 still lists
    // the parent's threads. Credentials are per thread, and the child has one.
    if (::syscall(SYS_setgroups, groups.size(), groups.data()) != 0)
        return errno;
    if (::syscall(SYS_setresgid, gid, gid, gid) != 0)
        return errno;
    if (::syscall(SYS_setresuid, uid, uid, uid) != 0)
        return errno;
    // Never keep a way back to root.
    if (uid != 0 && ::syscall(SYS_setuid, 0) == 0)
        return EPERM;
    return 0;
}

VmmProcess::VmmProcess(QObject *parent) : QObject(parent) { }

VmmProcess::~VmmProcess()
{
    delete m_notifier;
    if (m_pidfd >= 0)
        ::close(m_pidfd);
}

Result<pid_t> VmmProcess::spawn(const QStringList &argv, const QString &logPath,
                                const VmmCredentials &credentials, const SpawnOptions &options)
{
    if (argv.isEmpty() || !argv.first().startsWith(u'/'))
        return fail(ErrorKind::Internal, QStringLiteral("spawn needs an absolute program path"));
    const int inheritCount = int(options.inheritedFds.size());
    for (int i = 0; i < inheritCount; ++i) {
        if (options.inheritedFds[size_t(i)].second != 3 + i
            || options.inheritedFds[size_t(i)].first < 0)
            return fail(ErrorKind::Internal,
                        QStringLiteral("inherited descriptors must be numbered 3, 4, ..."));
    }
    std::vector<int> inherited;
    for (const auto &[fd, target] : options.inheritedFds)
        inherited.push_back(fd);

    // Everything the child touches is prepared here: after fork only async-signal-safe calls.
    std::vector<QByteArray> argStorage;
    argStorage.reserve(argv.size());
    for (const QString &arg : argv)
        argStorage.push_back(QFile::encodeName(arg));
    std::vector<char *> args;
    for (QByteArray &arg : argStorage)
        args.push_back(arg.data());
    args.push_back(nullptr);
    // The jail's mounts as C strings: (source, target, flags of the read-only remount or 0).
    struct JailMount
    {
        QByteArray source;
        QByteArray target;
        unsigned long remountFlags;
    };
    std::vector<JailMount> jailMounts;
    QByteArray jailRoot;
    if (options.jail) {
        jailRoot = QFile::encodeName(options.jail->root);
        for (const SpawnJail::Bind &bind : options.jail->binds) {
            unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID;
            if (!bind.device)
                flags |= MS_NODEV;
            if (bind.readOnly)
                flags |= MS_RDONLY;
            jailMounts.push_back(
                {QFile::encodeName(bind.source), QFile::encodeName(bind.target), flags});
        }
    }
    char envPath[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    char envLang[] = "LC_ALL=C";
    char *env[] = {envPath, envLang, nullptr};

    const QByteArray logName = QFile::encodeName(logPath);
    // The directory belongs to the VMM user: a planted symlink or file must not make root
    // truncate something else, so the log is always a fresh file of ours.
    ::unlink(logName.constData());
    const int logFd =
        ::open(logName.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (logFd < 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot open %1: %2")
                        .arg(logPath, QString::fromLocal8Bit(std::strerror(errno))));
    const int nullFd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int errorPipe[2] = {-1, -1};
    // The child waits on it for beforeChildRuns: one byte means go on, EOF means die.
    int releasePipe[2] = {-1, -1};
    if (nullFd < 0 || ::pipe2(errorPipe, O_CLOEXEC) != 0
        || (options.beforeChildRuns && ::pipe2(releasePipe, O_CLOEXEC) != 0)) {
        const int error = errno;
        ::close(logFd);
        if (nullFd >= 0)
            ::close(nullFd);
        if (errorPipe[0] >= 0) {
            ::close(errorPipe[0]);
            ::close(errorPipe[1]);
        }
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare the VMM's stdio: %1")
                        .arg(QString::fromLocal8Bit(std::strerror(error))));
    }

    const pid_t pid = forkChild(options.newPidNamespace);
    if (pid == 0) {
        ::close(errorPipe[0]);
        if (releasePipe[0] >= 0) {
            ::close(releasePipe[1]);
            char go = 0;
            ssize_t got;
            do {
                got = ::read(releasePipe[0], &go, 1);
            } while (got < 0 && errno == EINTR);
            if (got != 1)
                ::_exit(127);
            ::close(releasePipe[0]);
        }
        // Above the numbers inherited descriptors take, so placing them cannot close it.
        int report = errorPipe[1];
        if (inheritCount > 0
            && (report = ::fcntl(errorPipe[1], F_DUPFD_CLOEXEC, 3 + inheritCount)) < 0)
            ::_exit(127);
        int landlockRuleset = options.landlockRuleset;
        if (landlockRuleset >= 0 && inheritCount > 0
            && (landlockRuleset = ::fcntl(landlockRuleset, F_DUPFD_CLOEXEC, 3 + inheritCount)) < 0)
            childFail(report, StepLandlock, errno);
        // Own session and process group: the helper's terminal or a signal to its group must
        // not reach the VMM, which outlives helper restarts.
        if (::setsid() < 0)
            childFail(report, StepSetsid, errno);
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        struct sigaction dfl;
        std::memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; ++sig)
            ::sigaction(sig, &dfl, nullptr);
        if (::dup2(options.stdinFd >= 0 ? options.stdinFd : nullFd, STDIN_FILENO) < 0
            || ::dup2(options.stdoutFd >= 0 ? options.stdoutFd : logFd, STDOUT_FILENO) < 0
            || ::dup2(logFd, STDERR_FILENO) < 0)
            childFail(report, StepStdio, errno);
        // Inherited descriptors go to 3, 4, ...: first above that range (a source may sit on
        // a target number), then into place; dup2 clears close-on-exec on the copy.
        for (int i = 0; i < inheritCount; ++i) {
            const int moved = ::fcntl(inherited[size_t(i)], F_DUPFD_CLOEXEC, 3 + inheritCount);
            if (moved < 0)
                childFail(report, StepInherit, errno);
            inherited[size_t(i)] = moved;
        }
        for (int i = 0; i < inheritCount; ++i) {
            if (::dup2(inherited[size_t(i)], 3 + i) < 0)
                childFail(report, StepInherit, errno);
        }
        // The helper's sockets, database and other descriptors must not leak into the VMM.
        ::close_range(unsigned(3 + inheritCount), ~0U, CLOSE_RANGE_CLOEXEC);
        if (options.dropPrivileges) {
            if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
                childFail(report, StepPrivileges, errno);
            // The bounding set limits what any later exec could gain; EINVAL ends the list.
            // Without CAP_SETPCAP (airlockd confined by its unit) the drop is refused (EPERM);
            // no_new_privs and the identity switch below still leave the child no capability.
            for (int cap = 0; cap < 64; ++cap) {
                if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL
                    && errno != EPERM)
                    childFail(report, StepPrivileges, errno);
            }
        }
        if (!jailRoot.isEmpty()) {
            if (::unshare(CLONE_NEWNS) != 0
                || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
                childFail(report, StepJail, errno);
            for (const JailMount &bind : jailMounts) {
                // A bind ignores flags other than MS_REC; a remount of the bind applies them.
                if (::mount(bind.source.constData(), bind.target.constData(), nullptr, MS_BIND,
                            nullptr)
                        != 0
                    || ::mount(nullptr, bind.target.constData(), nullptr, bind.remountFlags,
                               nullptr)
                        != 0)
                    childFail(report, StepJail, errno);
            }
            if (::chroot(jailRoot.constData()) != 0)
                childFail(report, StepJail, errno);
        }
        // setresuid() away from root clears the permitted, effective and ambient sets.
        if (const int error = credentials.apply(); error != 0)
            childFail(report, StepCredentials, error);
        ::umask(0077);
        if (::chdir("/") != 0)
            childFail(report, StepStdio, errno);
        if (landlockRuleset >= 0) {
            if (const int error = LandlockScope::restrictSelf(landlockRuleset); error != 0)
                childFail(report, StepLandlock, error);
        }
        if (options.noConnect) {
            if (const int error = NoConnectFilter::install(); error != 0)
                childFail(report, StepSeccomp, error);
        }
        ::execve(args[0], args.data(), env);
        childFail(report, StepExec, errno);
    }
    const int forkError = errno;
    ::close(errorPipe[1]);
    ::close(logFd);
    ::close(nullFd);
    if (releasePipe[0] >= 0)
        ::close(releasePipe[0]);
    if (pid < 0) {
        ::close(errorPipe[0]);
        if (releasePipe[1] >= 0)
            ::close(releasePipe[1]);
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("%1 failed: %2")
                .arg(options.newPidNamespace ? QStringLiteral("clone3") : QStringLiteral("fork"),
                     QString::fromLocal8Bit(std::strerror(forkError))));
    }
    if (options.beforeChildRuns) {
        auto ready = options.beforeChildRuns(pid);
        // On error the child reads EOF and exits; SIGKILL makes sure of it.
        if (ready) {
            const char go = 1;
            while (::write(releasePipe[1], &go, 1) < 0 && errno == EINTR) { }
        } else {
            ::kill(pid, SIGKILL);
        }
        ::close(releasePipe[1]);
        if (!ready) {
            ::close(errorPipe[0]);
            int status = 0;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
            return std::unexpected(ready.error());
        }
    }

    // EOF means exec succeeded (the pipe is close-on-exec); a report means the child failed.
    int report[2] = {0, 0};
    ssize_t got;
    do {
        got = ::read(errorPipe[0], report, sizeof report);
    } while (got < 0 && errno == EINTR);
    ::close(errorPipe[0]);
    if (got == 0) {
        if (options.autogroupNice)
            setAutogroupNice(pid, *options.autogroupNice);
        return pid;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("starting %1 failed at %2: %3")
                    .arg(argv.first(), stepName(report[0]),
                         QString::fromLocal8Bit(std::strerror(report[1]))));
}

Result<void> VmmProcess::watch(pid_t pid, std::optional<qint64> expectedStartTime)
{
    if (pid <= 0)
        return fail(ErrorKind::NotFound, QStringLiteral("no VMM pid"));
    const int pidfd = pidfdOpen(pid);
    if (pidfd < 0)
        return fail(ErrorKind::NotFound, QStringLiteral("VMM process %1 is gone").arg(pid));
    // Checked after pidfd_open: if the start time matches now, the pidfd names that process.
    const auto startTime = readStartTime(pid);
    const auto state = readState(pid);
    if (!startTime || !state || (expectedStartTime && *startTime != *expectedStartTime)
        || (expectedStartTime && *state == 'Z')) {
        ::close(pidfd);
        if (state && *state == 'Z') {
            int status;
            ::waitpid(pid, &status, WNOHANG); // reap it if it is ours
            return fail(ErrorKind::NotFound, QStringLiteral("VMM process %1 has exited").arg(pid));
        }
        return fail(ErrorKind::NotFound,
                    QStringLiteral("pid %1 is no longer the VMM (it exited and the pid was reused)")
                        .arg(pid));
    }
    delete m_notifier;
    if (m_pidfd >= 0)
        ::close(m_pidfd);
    m_pid = pid;
    m_pidfd = pidfd;
    m_startTime = *startTime;
    m_exited = false;
    m_notifier = new QSocketNotifier(m_pidfd, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &VmmProcess::onPidfdReadable);
    return {};
}

bool VmmProcess::hasExited() const
{
    if (m_pidfd < 0 || m_exited)
        return true;
    pollfd fd {m_pidfd, POLLIN, 0};
    return ::poll(&fd, 1, 0) > 0;
}

bool VmmProcess::waitForExit(int timeoutMs) const
{
    if (m_pidfd < 0 || m_exited)
        return true;
    pollfd fd {m_pidfd, POLLIN, 0};
    int ready;
    do {
        ready = ::poll(&fd, 1, timeoutMs);
    } while (ready < 0 && errno == EINTR);
    return ready > 0;
}

bool VmmProcess::sendSignal(int signal)
{
    if (m_pidfd < 0 || m_exited)
        return false;
    return pidfdSendSignal(m_pidfd, signal) == 0;
}

void VmmProcess::onPidfdReadable()
{
    if (m_exited)
        return;
    m_exited = true;
    m_notifier->setEnabled(false);
    int status = 0;
    pid_t reaped;
    do {
        reaped = ::waitpid(m_pid, &status, WNOHANG);
    } while (reaped < 0 && errno == EINTR);
    // ECHILD: an adopted process whose parent is someone else; its status is not ours to know.
    const bool known = reaped == m_pid;
    qCDebug(lcProcess) << "process" << m_pid << "exited" << (known ? status : -1);
    Q_EMIT exited(known, status);
}

std::optional<qint64> VmmProcess::readStartTime(pid_t pid)
{
    const auto fields = statFields(pid);
    // Field 22 overall is index 19 when counting from field 3.
    if (!fields || fields->size() < 20)
        return std::nullopt;
    bool ok = false;
    const qint64 value = fields->at(19).toLongLong(&ok);
    return ok ? std::optional<qint64>(value) : std::nullopt;
}

std::optional<char> VmmProcess::readState(pid_t pid)
{
    const auto fields = statFields(pid);
    if (!fields || fields->isEmpty() || fields->first().isEmpty())
        return std::nullopt;
    return fields->first().at(0);
}

} // namespace airlock

#pragma once

#include "core/model/error.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <sys/types.h>
#include <utility>
#include <vector>

class QSocketNotifier;

namespace airlock {

/// The identity a VMM runs under: uid, primary gid and the user's supplementary groups (read
/// before fork, because the child may only make async-signal-safe calls; `kvm` membership is
/// what lets the VMM open /dev/kvm).
struct VmmCredentials
{
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;

    /// Credentials for `uid`/`gid` with the supplementary groups of that uid's passwd entry
    /// (just `gid` when there is none). uid 0 means "keep the caller's identity".
    static VmmCredentials forUser(uid_t uid, gid_t gid);
    /// Switches the calling (forked) process to these credentials. Async-signal-safe; returns
    /// 0 or the failing step's errno.
    int apply() const noexcept;
};

/// A mount namespace and chroot for a process started by VmmProcess::spawn() (Firecracker's
/// jail, docs/vmm.md). Before the identity switch the child unshares its mount namespace
/// (mount_namespaces(7)), makes every mount in it private so nothing propagates back to the
/// host, bind-mounts each `binds` entry onto its target inside `root` (which must exist: an empty
/// file for a file or device, a directory for a directory), and chroots into `root`. Needs
/// CAP_SYS_ADMIN and CAP_SYS_CHROOT (airlockd as root); the unprivileged process afterwards can
/// neither mount nor chroot, so it stays inside.
struct SpawnJail
{
    struct Bind
    {
        QString source; ///< absolute host path
        QString target; ///< absolute host path inside root
        bool readOnly = true;
        /// Device nodes keep working through the bind (everything else is mounted nodev).
        bool device = false;
    };
    QString root; ///< absolute host path; the child's "/"
    std::vector<Bind> binds;
};

/// Extra ways to confine a process started by VmmProcess::spawn().
struct SpawnOptions
{
    /// Descriptors the child inherits, as (descriptor in this process, number in the child);
    /// child numbers must be 3, 4, ... in order. Every other descriptor is closed on exec.
    std::vector<std::pair<int, int>> inheritedFds;
    /// PR_SET_NO_NEW_PRIVS (prctl(2)) and every capability dropped from the bounding set before
    /// the identity switch (when the caller holds CAP_SETPCAP), so neither exec nor a setuid
    /// binary can bring privileges back.
    bool dropPrivileges = false;
    /// When >= 0: the child's stdin (instead of /dev/null) and stdout (instead of the log; its
    /// stderr stays there), e.g. pipes of a VMM whose serial console is its stdio (Firecracker).
    /// The caller keeps ownership.
    int stdinFd = -1;
    int stdoutFd = -1;
    /// When set: the nice value (0..19) of the child's autogroup, written to
    /// /proc/<pid>/autogroup once exec succeeded (sched(7)). The child's setsid() gives it an
    /// autogroup of its own, and the kernel shares the CPU between autogroups before nice
    /// values count, so a plain setpriority() would not lower it against the helper.
    std::optional<int> autogroupNice;
    /// When set: the child runs in this jail; argv[0] is then a path inside it.
    std::optional<SpawnJail> jail;
    /// The child is pid 1 of a pid namespace of its own (pid_namespaces(7); the jailer's
    /// `--new-pid-ns`): created by clone3(2) with CLONE_NEWPID instead of fork, so the program
    /// exec'd is itself that pid 1 and spawn() still returns its host pid. It sees no other
    /// process; signals sent from the host (an ancestor namespace) without a handler installed
    /// are dropped except SIGKILL and SIGSTOP, and when it exits the kernel kills whatever it
    /// started (it reaps nothing itself: Firecracker forks no process). Needs CAP_SYS_ADMIN.
    bool newPidNamespace = false;
    /// When set: called here with the child's host pid once it exists and before it may go on
    /// (it waits on a pipe until this returns), e.g. to put it into a cgroup before it execs
    /// and allocates anything. An error kills and reaps the child and is spawn()'s.
    std::function<Result<void>(pid_t)> beforeChildRuns;
    /// When >= 0: a Landlock ruleset (LandlockScope::createRuleset) the child restricts itself
    /// by right before exec, after the identity switch (it also sets PR_SET_NO_NEW_PRIVS). The
    /// caller keeps ownership.
    int landlockRuleset = -1;
    /// The child installs NoConnectFilter right before exec: its connect(2) calls fail.
    bool noConnect = false;
};

/// The autogroup nice value of guest VMMs: a host full of busy guests (TCG ones, above all)
/// must not starve the helper's event loop, whose clients wait for answers (issue 16: `list`
/// took 1 s while ten sandboxes started among fifty running). Guests still share the CPU
/// equally among themselves; an idle helper takes nothing from them.
inline constexpr int kGuestAutogroupNice = 10;

/// One VMM process: started here (fork + exec as an unprivileged user, in its own session so
/// it survives a helper restart) or adopted from an earlier helper. Exit is seen through a
/// pidfd (pidfd_open(2)), which works for adopted processes that are not our children, and
/// also means signals can never hit a recycled pid.
class VmmProcess : public QObject
{
    Q_OBJECT
public:
    explicit VmmProcess(QObject *parent = nullptr);
    /// Closes the pidfd; never signals the process (it outlives the helper by design).
    ~VmmProcess() override;

    /// Forks and execs `argv` (argv[0] an absolute path) as `credentials`, in a new session,
    /// with a minimal environment, stdin on /dev/null and stdout+stderr in `logPath` (always a
    /// fresh file, mode 0640, owned by the caller: an old one is unlinked, never followed).
    /// Returns the pid once exec succeeded; OperationFailed naming the failing step otherwise
    /// (the child is then reaped).
    /// `options` passes descriptors (the gateway's listeners and control socket) and confines
    /// the child further; the gateway (GatewayProcess) is started this way too.
    static Result<pid_t> spawn(const QStringList &argv, const QString &logPath,
                               const VmmCredentials &credentials, const SpawnOptions &options = {});

    /// Watches `pid` for exit. With `expectedStartTime`, NotFound unless the process exists,
    /// is not a zombie and its start time (/proc/<pid>/stat field 22, clock ticks since boot)
    /// matches: a recycled pid is never adopted.
    Result<void> watch(pid_t pid, std::optional<qint64> expectedStartTime = std::nullopt);

    pid_t pid() const { return m_pid; }
    /// Start time of the watched process in clock ticks since boot (0 before watch()).
    qint64 startTimeTicks() const { return m_startTime; }
    /// True once the watched process has exited (polls the pidfd; never blocks).
    bool hasExited() const;
    /// Blocks up to `timeoutMs` until the watched process has exited (its descriptors, e.g. a
    /// tap queue, are closed by then). exited() still follows from the event loop.
    bool waitForExit(int timeoutMs) const;
    /// Sends `signal` through the pidfd. False when the process is gone.
    bool sendSignal(int signal);

    /// /proc/<pid>/stat field 22, or nullopt when there is no such process.
    static std::optional<qint64> readStartTime(pid_t pid);
    /// /proc/<pid>/stat field 3 ('R', 'S', 'Z', ...), or nullopt.
    static std::optional<char> readState(pid_t pid);

Q_SIGNALS:
    /// The process is gone. `statusKnown` when it was our child and we reaped it; `waitStatus`
    /// is then waitpid(2)'s status (WIFEXITED/WEXITSTATUS/WTERMSIG).
    void exited(bool statusKnown, int waitStatus);

private:
    void onPidfdReadable();

    pid_t m_pid = 0;
    qint64 m_startTime = 0;
    int m_pidfd = -1;
    bool m_exited = false;
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace airlock

#pragma once

#include "core/vmm/firecrackerjail.h"
#include "core/vmm/memorydiffmerge.h"
#include "core/vmm/vmm.h"
#include "core/vmm/vmmcgroup.h"

#include <QDeadlineTimer>
#include <QJsonObject>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <memory>

class QLocalSocket;
class QSocketNotifier;
class QThread;

namespace airlock {

class FcctlChannel;
class VmmProcess;
class VsockConnector;

/// The Firecracker backend: one `firecracker` process per guest, run as the sandbox's VMM uid
/// (VmmProcess, like QEMU), configured and controlled through its HTTP API on
/// RUNDIR/firecracker.sock by a second process of that uid, airlock-fcctl (FcctlChannel; its
/// log in RUNDIR/fcctl.log). This class, inside root's airlockd, sends airlock-fcctl typed
/// JSON commands and reads its JSON answers; it never speaks or parses HTTP (docs/vmm.md). The
/// guest's serial console is Firecracker's stdin and stdout, pipes held by a third process of
/// that uid, airlock-console (ConsoleRelay), which serves them on RUNDIR/console.sock (bound
/// here, its descriptor passed on) and outlives the helper, as QEMU's console socket does: this
/// class connects to it at the start and again on adopt(). Firecracker's stderr goes to
/// RUNDIR/firecracker.stderr and its logger (PUT /logger) to RUNDIR/firecracker.log, so the
/// console carries guest bytes only. RUNDIR/firecracker.pid (`PID STARTTIME`, root's) lets
/// CrashRecovery find a VMM whose start a dying helper never recorded.
///
/// The start: spawn Firecracker and airlock-fcctl; airlock-fcctl waits for the API socket, GET
/// /version (the features used follow from it, FirecrackerVersion), logger, machine config, boot
/// source, drives (the root disk, the seed disk), the network interface on the sandbox's tap (the
/// same tap, nftables tables and gateway as QEMU's), vsock (RUNDIR/vsock.sock), entropy, then
/// InstanceStart. A restore instead loads the snapshot (PUT /snapshot/load on the fresh process),
/// resumes it and connects the agent.
///
/// The guest agent speaks the same protocol over vsock port kAgentVsockPort (VsockConnector:
/// `CONNECT 1024`). A cold-booted guest's agent listens only seconds after InstanceStart, so the
/// agent channel is connected in the background after the start (agent() is nullptr until
/// then); a restored guest's agent listened when it was saved, so the start waits for it.
///
/// What Firecracker cannot do that QEMU does here: qcow2 disks (the root disk must be a raw
/// file: BackendUnavailable otherwise), TCG (it needs KVM: BackendUnavailable otherwise),
/// and virtio-serial.
///
/// Isolation: Firecracker runs as the per-sandbox VMM uid, in its own session, with its own
/// seccomp filters (built in, on by default), and, when the helper is root, in a jail of its
/// own (FirecrackerJail: a mount namespace and chroot holding only this sandbox's files; every
/// path it is given is then a path inside), as pid 1 of a pid namespace of its own and in a
/// cgroup of its own with memory, task and CPU limits (VmmCgroup, `airlock/NAME.PID`; without a
/// usable hierarchy it runs without one and the helper warns once). The group is removed once
/// the VMM has exited or its start failed; an adopted VMM keeps its group. Not built: the
/// jailer's network namespace (docs/vmm.md).
///
/// Destroying the object leaves the VMM running on purpose: a restarted helper adopts it.
class FirecrackerVmm final : public Vmm
{
    Q_OBJECT
public:
    /// File names inside VmmLaunchConfig::runtimeDir.
    static constexpr QLatin1StringView kApiSocket {"firecracker.sock"};
    static constexpr QLatin1StringView kVsockSocket {"vsock.sock"};
    static constexpr QLatin1StringView kLogFile {"firecracker.log"};
    static constexpr QLatin1StringView kStderrFile {"firecracker.stderr"};
    static constexpr QLatin1StringView kFcctlLogFile {"fcctl.log"};
    static constexpr QLatin1StringView kConsoleSocket {"console.sock"};
    static constexpr QLatin1StringView kConsoleLogFile {"console.log"};
    /// `PID STARTTIME\n` (start time: /proc/PID/stat field 22), written by the helper right
    /// after the spawn; CrashRecovery reads it.
    static constexpr QLatin1StringView kPidFile {"firecracker.pid"};
    static constexpr QLatin1StringView kStateFile {"vmstate"};
    static constexpr QLatin1StringView kIncomingStateFile {"vmstate.in"};
    /// The guest port the agent listens on (AF_VSOCK), and the guest's context id.
    static constexpr quint32 kAgentVsockPort = 1024;
    static constexpr int kGuestCid = 3;
    /// Largest device state file copied in or out (Firecracker's are tens of KiB).
    static constexpr qint64 kMaxStateBytes = 64 * 1024 * 1024;
    static constexpr int kStartTimeoutMs = 10000;
    /// How long a cold-booted guest's agent may take to listen on its vsock port.
    static constexpr int kAgentConnectTimeoutMs = 120000;
    /// How long airlockd waits for an answer of airlock-fcctl: longer than its own per-request
    /// timeouts (5 s; 60 s for a snapshot, which writes all guest memory first).
    static constexpr int kCommandTimeoutMs = 10000;
    static constexpr int kSnapshotCommandTimeoutMs = 70000;

    /// `binary`: the firecracker executable to run (findFirecracker()); `controller`: the
    /// airlock-fcctl executable; `consoleRelay`: the airlock-console executable.
    FirecrackerVmm(QString binary, QString controller, QString consoleRelay,
                   QObject *parent = nullptr);
    ~FirecrackerVmm() override;

    /// `configured` when it is an executable file, else $AIRLOCK_FIRECRACKER, else `firecracker`
    /// from PATH; empty when none is found.
    static QString findFirecracker(const QString &configured = {});
    /// The kernel command line of a cold boot: QEMU's (QemuCommand::kernelCommandLine, the
    /// guest contract's `airlock.*` arguments and the image's own) plus what a Firecracker guest
    /// needs: `reboot=k` (a reboot through the keyboard controller ends the VMM), `panic=1`,
    /// `pci=off`, and `airlock.vmm=firecracker` (the guest's shells make a power off a reboot,
    /// which ends Firecracker). Firecracker appends its `virtio_mmio.device=` entries to it.
    static QString kernelCommandLine(const VmmLaunchConfig &config);
    /// Host directories the jail shows at their own paths, writable (FirecrackerJail::
    /// addSharedPaths): for a `binary` that is a wrapper starting Firecracker from elsewhere.
    void setJailSharedPaths(const QStringList &dirs) { m_jailSharedPaths = dirs; }
    /// Whether start() refuses a launch whose acceleration is not KVM (default true; airlockd
    /// --firecracker-without-kvm turns it off for conformance servers, which need no KVM).
    void setRequireKvm(bool require) { m_requireKvm = require; }
    /// Whether the running VMM was started in a jail (the helper is root).
    bool isJailed() const { return m_jail.has_value(); }

    /// Spawns Firecracker and configures it from the event loop (see the class). Errors:
    /// BackendUnavailable (binary, kernel, initrd or disk missing; a qcow2 root disk; no KVM; a
    /// Firecracker older than 1.8), InvalidName, InvalidState (already running), Timeout (the
    /// API socket did not appear in kStartTimeoutMs, or a request went unanswered),
    /// OperationFailed (the process exited during the start, with its status and last stderr
    /// line; an API request refused, naming the endpoint and Firecracker's fault message). On
    /// error no Firecracker process is left behind.
    void start(const VmmLaunchConfig &config, Started started) override;
    /// Checks pid and start time, reconnects to the console (RUNDIR/console.sock; a VMM started
    /// by a helper without airlock-console runs on without one, with a warning), then GET
    /// /version; the agent channel is connected in the background.
    void adopt(const VmmRuntimeInfo &info, Done done) override;
    /// PUT /actions SendCtrlAltDel (the guest's kernel reboots, which ends Firecracker); SIGKILL
    /// after `timeoutMs`. exited("") follows.
    void stop(int timeoutMs) override;
    void kill() override;
    bool waitForExit(int timeoutMs) override;
    /// Sent to airlock-console, which queues it for Firecracker's stdin. At most
    /// kMaxConsoleInputBytes wait unsent here (a guest that reads nothing back-pressures the
    /// relay, and the relay this socket); more is dropped.
    void writeConsole(const QByteArray &bytes) override;
    /// PATCH /vm Paused.
    void pause(Done done) override;
    /// PATCH /vm Resumed.
    void resume(Done done) override;
    /// GET /: state "Running".
    void queryRunning(std::function<void(const Result<bool> &)> done) override;
    /// PUT /snapshot/create of a paused guest; the device state into RUNDIR/vmstate, copied into
    /// `fd`. Full: the memory into a fresh file beside memoryPath, which then replaces it (a
    /// restored guest's memory is a private mapping of the old file, which must not change under
    /// it). Diff, when this VMM has a base (memoryPath is its memory as of its previous snapshot
    /// or of its load) and Firecracker tracks dirty pages (FirecrackerVersion::hasDiffSnapshots):
    /// only the dirtied pages into a fresh file, merged with a copy of memoryPath on a worker
    /// thread (MemoryDiffMerge), and that copy replaces memoryPath. `done` comes from the event
    /// loop. Errors: InvalidState (not running, no memory file, not paused), OperationFailed
    /// (Firecracker's refusal, a merge error such as a hostile diff file; memoryPath is then
    /// untouched). After any failure the next snapshot is Full.
    void saveDeviceState(int fd, Done done) override;
    /// What the last successful snapshot was, for logs: "Full", "Diff" or empty (none yet).
    QString lastSnapshotType() const { return m_lastSnapshotType; }
    VmmRuntimeInfo runtimeInfo() const override { return m_info; }
    GuestAgent *agent() override { return m_agent; }

    /// The version GET /version reported at the start or adoption (airlock-fcctl's word).
    QString firecrackerVersion() const { return m_version; }
    bool isRunning() const { return m_running; }
    /// The pid of this VMM's airlock-fcctl, 0 when none runs.
    pid_t controllerPid() const;
    /// The pid of the airlock-console this object started, 0 when it started none (an adopted
    /// VMM's relay is the old helper's).
    pid_t consoleRelayPid() const;

    static constexpr qsizetype kMaxConsoleInputBytes = 64 * 1024;

private:
    void configure();
    void startInstance();
    /// The start succeeded: from now on an exit is the guest's, not the start's.
    void finishRunning();
    /// Sends one command to airlock-fcctl; errors name `what`.
    void command(QLatin1StringView op, const QJsonObject &fields, int timeoutMs,
                 std::function<void(const Result<QJsonObject> &)> done);
    void finishStart(const Result<VmmRuntimeInfo> &result);
    void abandonStart(const Error &error);
    void connectAgent(int timeoutMs, std::function<void(const Result<void> &)> done);
    /// Connects to RUNDIR/console.sock (pinned); false with a warning when nothing serves it.
    bool connectConsole();
    /// A listening socket bound at RUNDIR/console.sock (a leftover removed first), root's, mode
    /// 0600; its descriptor, or the error.
    Result<int> listenConsole(const QString &path) const;
    /// Starts airlock-console as `uid`:`gid` with the pipes' ends and the listener (which it
    /// takes over: closed here either way).
    Result<void> spawnRelay(int guestIn, int guestOut, int listener, uid_t uid, gid_t gid);
    /// RUNDIR/firecracker.pid for CrashRecovery (best effort: logged when it cannot be written).
    void writePidFile() const;
    /// Reaps the relay when the VMM is gone (it exits with its stdout); otherwise lets it run on
    /// and only reaps it whenever it exits.
    void dropRelay();
    void onProcessExited(bool statusKnown, int waitStatus);
    QString exitReason(bool statusKnown, int waitStatus) const;
    QString lastStderrLine() const;
    /// A fresh file at `path` for Firecracker to write (unlinked first, O_EXCL, owned by the VMM
    /// uid); its descriptor, or -1 with errno.
    int createForVmm(const QString &path) const;
    /// Starts airlock-fcctl for `apiSocket` as the VMM uid (without the kvm group).
    Result<void> spawnControl(const QString &runtimeDir, uid_t uid, gid_t gid);
    void refuse(const Done &done, const Error &error);
    void closeConsole();
    void reset();
    /// Removes the VMM's cgroup when the VMM is gone (or never ran); otherwise only forgets it,
    /// since a VMM left running keeps its group for the next helper.
    void dropCgroup();

    /// The path Firecracker opens for the host file `hostPath`: inside its jail, or as is.
    QString vmmPath(const QString &hostPath) const;
    /// After PUT /snapshot/create: the Diff in `diffPath` merged off the event loop into a copy
    /// of memoryPath, which replaces it; then finishSnapshot. `held` keeps the descriptor of the
    /// file created for the diff open until then (see saveDeviceState).
    /// A Full snapshot's memory file, before it replaces memoryPath: `path` is still the file
    /// `memoryFd` was made as (a regular file, same inode) and holds exactly the guest's memory.
    Result<void> checkFullMemory(int memoryFd, const QString &path,
                                 const MemoryDiffMerge::Identity &identity) const;
    void mergeDiff(int fd, const QString &diffPath, const MemoryDiffMerge::Identity &identity,
                   const std::shared_ptr<void> &held, const QString &statePath, Done done);
    /// Copies the device state Firecracker wrote at `statePath` into `fd`; on success this VMM
    /// has a base for its next Diff.
    void finishSnapshot(int fd, const QString &statePath, bool diff, const Done &done);

    QString m_binary;
    QStringList m_jailSharedPaths;
    bool m_requireKvm = true;
    std::optional<FirecrackerJail> m_jail; // set while a jailed VMM starts or runs
    std::optional<VmmCgroup> m_cgroup; // the running or adopted VMM's, when it has one
    VmmLaunchConfig m_config;
    VmmRuntimeInfo m_info;
    QString m_controller;
    QString m_consoleRelay;
    QString m_version;
    VmmProcess *m_process = nullptr;
    FcctlChannel *m_control = nullptr;
    GuestAgent *m_agent = nullptr;
    VsockConnector *m_agentConnector = nullptr;
    VmmProcess *m_relay = nullptr; ///< the airlock-console this object started
    QLocalSocket *m_console = nullptr; ///< connected to airlock-console
    QTimer m_stopTimer;
    Started m_started;
    int m_generation = 0;
    QDeadlineTimer m_startDeadline;
    bool m_running = false;
    bool m_stopRequested = false;
    bool m_restoring = false;
    /// airlock-fcctl turned dirty page tracking on (its configure or load answer).
    bool m_dirtyPages = false;
    /// memoryPath holds this VMM's memory as of its last snapshot or load: a Diff applies to it.
    bool m_hasBase = false;
    QString m_lastSnapshotType;
    QThread *m_merge = nullptr; ///< a Diff being merged; waited for by the destructor
};

} // namespace airlock

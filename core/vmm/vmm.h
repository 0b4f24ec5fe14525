#pragma once

#include "core/model/error.h"
#include "core/model/sandbox.h"

#include <QByteArray>
#include <QObject>
#include <QString>

#include <sys/types.h>

#include <functional>
#include <vector>

namespace airlock {

class GuestAgent;

/// The guest's one network interface: a virtio-net device on a tap the helper prepared.
struct VmmNetwork
{
    QString tapName; ///< persistent tap owned by the VMM's uid (TapDevice)
    /// An open queue of that tap (TapDevice::attach), passed to the VMM as its fd 3; the
    /// caller keeps ownership. -1: the VMM opens the tap by name itself.
    int tapFd = -1;
    QString mac; ///< "02:61:6c:xx:xx:xx"
    QString guestAddress; ///< "100.96.0.2"
    int prefixLength = 30;
    QString gateway; ///< the link's host side: default route and DNS server
};

/// Everything a VMM backend needs to boot one guest. All paths are host paths chosen by the
/// helper (never by a client).
struct VmmLaunchConfig
{
    QString sandboxName; ///< validated name; becomes the guest hostname (airlock.name=...)
    int vcpus = 1;
    int memoryMib = 256;
    QString kernelPath; ///< uncompressed ELF vmlinux with a PVH note
    QString initrdPath; ///< initramfs (cpio, may be compressed)
    QString kernelArgs; ///< extra kernel arguments from the image's metadata
    QString runtimeDir; ///< per-sandbox directory for QMP/console sockets and the pid file
    Acceleration acceleration = Acceleration::Tcg;
    uid_t vmmUid = 0; ///< unprivileged user the VMM runs as (0 only in unprivileged tests)
    gid_t vmmGid = 0;
    /// Supplementary groups of the VMM (e.g. `kvm` for /dev/kvm). Empty: those of vmmUid's
    /// passwd entry, or only vmmGid when it has none.
    std::vector<gid_t> vmmGroups;
    /// The network; no interface when tapName is empty (the guest then has none).
    VmmNetwork network;
    /// The sandbox's root disk (RootDisk): its qcow2 overlay, writable by vmmUid, on top of the
    /// image's read-only qcow2 base. Attached as the first virtio-blk device (serial
    /// `airlock-root`, `airlock.root=airlock-root` on the kernel command line). Empty: no disk.
    QString rootDiskPath;
    QString rootDiskBasePath;
    /// Read-only seed disk (SeedImage) attached as another virtio-blk device; empty: none.
    QString seedImagePath;
    /// When set: guest RAM is this file (memoryMib MiB, already created by the helper and owned
    /// by vmmUid), mapped shared, so the helper can copy it for a snapshot and write it for a
    /// restore (docs/snapshots.md). Empty: anonymous RAM, no snapshots.
    QString memoryPath;
    /// When >= 0: the guest is not booted but restored. The descriptor (read from offset 0)
    /// holds the device state saved by Vmm::saveDeviceState(); memoryPath must hold the
    /// matching memory. The caller keeps ownership.
    int incomingStateFd = -1;
    /// A second virtio-serial port `org.airlock.bench` on the agent's bus, its host end
    /// RUNDIR/bench.sock, which nothing in airlockd reads: the raw baseline of the agent
    /// benchmark (tests/bench/bench_agent.cpp, `airlockd --bench-port`). Off in production.
    bool benchPort = false;
};

/// What the helper records in its registry so a later helper can re-adopt a running VMM.
struct VmmRuntimeInfo
{
    qint64 pid = 0;
    qint64 startTimeTicks = 0; ///< /proc/<pid>/stat field 22; guards against pid reuse
    QString runtimeDir;
};

/// One guest's virtual machine monitor. The helper owns one per running sandbox.
/// State flows back through signals and completion callbacks; methods never block the event
/// loop for long (the few bounded exceptions say so).
class Vmm : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    ~Vmm() override = default;

    /// Called once a start is over: the VMM runs, or why it does not.
    using Started = std::function<void(const Result<VmmRuntimeInfo> &)>;
    /// Launches the VMM and returns at once; `started` is called from the event loop once the
    /// process runs and its channels are connected, or with an error (BackendUnavailable:
    /// binary/image missing; OperationFailed: it exited). The process is spawned before this
    /// returns (descriptors in `config` may be closed then), except on errors found at once.
    /// Never called once this object is destroyed.
    virtual void start(const VmmLaunchConfig &config, Started started) = 0;
    /// Reconnects to a VMM started by an earlier helper (control and console sockets) and
    /// returns at once; `done` follows from the event loop (declared below). NotFound when the
    /// process is gone or the pid now belongs to another program.
    virtual void adopt(const VmmRuntimeInfo &info,
                       std::function<void(const Result<void> &)> done) = 0;
    /// Asks the guest to power off (ACPI power button); if it has not exited after
    /// `timeoutMs`, quits the VMM and then kills it. exited() follows.
    virtual void stop(int timeoutMs) = 0;
    /// Kills the VMM at once. exited() follows; during a start, the start ends with an error
    /// instead (before this returns).
    virtual void kill() = 0;
    /// After kill(): blocks up to `timeoutMs` until the process is gone; false when it is not.
    virtual bool waitForExit(int timeoutMs)
    {
        Q_UNUSED(timeoutMs);
        return false;
    }
    /// Sends bytes to the guest's serial console.
    virtual void writeConsole(const QByteArray &bytes) = 0;
    /// Called once a control request is over, from the event loop (never inside the call that
    /// made it): success, or why not. Never called once this object is destroyed.
    using Done = std::function<void(const Result<void> &)>;
    /// Stops the guest's CPUs (QMP `stop`) and returns at once; `done` follows. InvalidState
    /// unless running; Timeout when the VMM does not answer in 5 s; Disconnected when it exits.
    virtual void pause(Done done) = 0;
    /// Lets the guest's CPUs run again (QMP `cont`); errors as for pause(). `done` may be empty.
    virtual void resume(Done done) = 0;
    /// Whether the guest's CPUs really run (QMP `query-status`), after cancelling a device
    /// state save that a dead helper left unfinished; returns at once, `done` follows from the
    /// event loop (within 15 s: three QMP answers). The helper's recorded state can be wrong
    /// after a crash: a helper killed during a snapshot leaves the guest stopped. For crash
    /// recovery (Adoption) and the rare `vm.resume` of a guest recorded as running.
    virtual void queryRunning(std::function<void(const Result<bool> &)> done) = 0;
    /// Writes the device state (CPU registers, devices; not the RAM file of memoryPath) of a
    /// paused guest into `fd`, from its current offset, and returns at once; `done` follows once
    /// QEMU reports the migration completed. `fd` must stay open until then. InvalidState unless
    /// paused and started with a memoryPath; OperationFailed when QEMU reports a failed
    /// migration; Timeout after 60 s (the migration is cancelled); Disconnected when it exits.
    virtual void saveDeviceState(int fd, Done done) = 0;
    virtual VmmRuntimeInfo runtimeInfo() const = 0;
    /// The guest agent channel (GuestAgent), owned by the VMM; nullptr when there is none.
    virtual GuestAgent *agent() { return nullptr; }

Q_SIGNALS:
    /// Bytes the guest wrote to its serial console, in order.
    void consoleOutput(const QByteArray &bytes);
    /// The VMM process is gone. `reason` is empty after a requested stop or kill, otherwise a
    /// sentence such as "QEMU exited with status 1: ..." or "guest powered off".
    void exited(const QString &reason);
    /// agent() became non-null after the start answered (Firecracker connects its vsock in the
    /// background of a cold boot; QEMU's channel exists from the start and never emits this).
    void agentAvailable();
};

} // namespace airlock

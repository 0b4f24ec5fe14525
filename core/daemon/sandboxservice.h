#pragma once

#include "core/daemon/registry.h"
#include "core/model/error.h"
#include "core/model/sandbox.h"
#include "core/vmm/vmm.h"

#include <QObject>

#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace airlock {

class ConsoleHub;
class ImageStore;

/// Host facts the service needs that main() determines once at start-up.
struct SandboxServiceConfig
{
    QString stateDir; ///< runtime dirs go to STATE/run/<name>
    Acceleration acceleration = Acceleration::Tcg; ///< chosen by KvmProbe at helper start
    QString accelerationWarning; ///< why not KVM; empty when KVM
    uid_t vmmUid = 0; ///< the `airlock-vmm` user (the KVM probe's identity)
    gid_t vmmGid = 0; ///< group of every VMM
    std::vector<gid_t> vmmGroups; ///< supplementary groups of every VMM (`kvm`)
    /// Each running VMM gets its own uid, vmmUidBase + a slot, so that a guest that escapes
    /// into its QEMU cannot signal another sandbox's QEMU or open its sockets. 0: every VMM
    /// runs as vmmUid (tests without root).
    uid_t vmmUidBase = 0;
    static constexpr uid_t kDefaultVmmUidBase = 0x7ffe0000; ///< above systemd's container range
    static constexpr int kVmmUidSlots = 65536;
    /// Where guest RAM files live (docs/snapshots.md): a root-owned directory on tmpfs. Empty:
    /// /dev/shm/airlock-<hash of stateDir>, so helpers with different state dirs never meet.
    QString memoryDir;
};

/// The sandbox lifecycle of docs/protocol.md (create/list/get/start/stop/kill/delete), backed by
/// the Registry (every change is persisted before it is announced) and one Vmm per running
/// sandbox, made by the factory so tests and other backends can supply their own. Console bytes
/// of each VMM go to the ConsoleHub. Destroying the service leaves running VMMs alone: the next
/// helper re-adopts them in restore().
class SandboxService : public QObject
{
    Q_OBJECT
public:
    using VmmFactory = std::function<std::unique_ptr<Vmm>()>;

    /// The reason recorded for a guest whose VMM died while no helper watched it.
    static QString vanishedReason();

    SandboxService(Registry &registry, ConsoleHub &consoles, const ImageStore &images,
                   VmmFactory factory, SandboxServiceConfig config, QObject *parent = nullptr);
    ~SandboxService() override;

    /// Creates STATE/run (0711), loads the registry, and re-adopts every VMM recorded as running;
    /// those that are gone become stopped with vanishedReason(). Call once before serving.
    Result<void> restore();

    QList<Sandbox> list() const; ///< ordered by name
    Result<Sandbox> get(const QString &name) const;
    /// Validates the spec, checks the image exists (NotFound) and records a stopped sandbox.
    Result<Sandbox> create(const SandboxSpec &spec);
    /// Boots the guest; returns once the VMM runs. InvalidState unless stopped. With
    /// `incomingStateFd` >= 0 the guest is restored instead: the caller has filled the memory
    /// file (createMemoryFile) and passes the saved device state (see Vmm::saveDeviceState).
    Result<Sandbox> start(const QString &name, int incomingStateFd = -1);
    /// Stops the guest's CPUs (QMP stop); InvalidState unless running. State becomes paused.
    Result<Sandbox> pause(const QString &name);
    /// Lets a paused guest run again; InvalidState unless paused.
    Result<Sandbox> resume(const QString &name);
    /// The running (or paused) sandbox's VMM, for the snapshot service; nullptr otherwise.
    Vmm *vmmOf(const QString &name) const;
    /// The guest RAM file of a sandbox (VmmLaunchConfig::memoryPath).
    QString memoryPathFor(const QString &name) const;
    /// Replaces the sandbox's RAM file by a fresh, empty (sparse) one of its memory size,
    /// owned by root until start() hands it to the VMM user. Returns its descriptor (the
    /// caller closes it). InvalidState unless the sandbox is stopped.
    Result<int> createMemoryFile(const QString &name);
    /// Graceful power-off, kill after `timeoutMs`; answers with state stopping.
    Result<Sandbox> stop(const QString &name, int timeoutMs);
    /// Kills the VMM now; answers with state stopped.
    Result<Sandbox> kill(const QString &name);
    /// Removes a stopped sandbox and its runtime dir; Busy unless stopped.
    Result<void> remove(const QString &name);
    /// Types bytes on the guest's console; InvalidState unless running.
    Result<void> writeConsole(const QString &name, const QByteArray &bytes);
    /// The sandbox's egress policy (deny-all until set). NotFound when there is no such sandbox.
    Result<EgressPolicy> policy(const QString &name) const;
    /// Replaces the sandbox's egress policy, in any state: validates it (InvalidParams, nothing
    /// changes), persists it (on failure nothing changes either), then emits policyChanged.
    /// Applying it to a running guest's connections is the gateway's job (not yet built).
    Result<void> setPolicy(const QString &name, const EgressPolicy &policy);

    const SandboxServiceConfig &config() const { return m_config; }

Q_SIGNALS:
    void sandboxChanged(const airlock::Sandbox &sandbox);
    void sandboxRemoved(const QString &name);
    /// A sandbox's egress policy was replaced (setPolicy succeeded).
    void policyChanged(const QString &name);

private:
    /// Kills a VMM that still runs for a sandbox recorded as stopped (see the .cpp for why).
    void killOrphanVmm(const QString &name) const;
    struct Entry
    {
        SandboxRecord record() const;
        Sandbox sandbox;
        VmmRuntimeInfo runtime;
        EgressPolicy policy;
        std::unique_ptr<Vmm> vmm;
        bool stopRequested = false;
        uid_t vmmUid = 0; ///< uid of the running VMM (its runtime dir's owner); 0 when none
    };

    Result<Entry *> find(const QString &name);
    Result<const Entry *> find(const QString &name) const;
    QString runtimeDirFor(const QString &name) const;
    QString memoryDir() const;
    Result<QString> prepareRuntimeDir(const QString &name, uid_t uid) const;
    /// A uid for a new VMM that no running VMM of this helper has.
    Result<uid_t> allocateVmmUid() const;
    /// The runtime dir's owner: the uid a (re-adopted) VMM runs as.
    uid_t runtimeDirOwner(const QString &name) const;
    void attachVmm(Entry &entry, std::unique_ptr<Vmm> vmm);
    /// Lets a VMM we no longer track finish on its own (its exited() deletes it).
    void releaseVmm(Entry &entry);
    void onVmmExited(const QString &name, Vmm *vmm, const QString &reason);
    void markStopped(Entry &entry, const QString &reason);
    /// Persists and announces.
    void commit(Entry &entry);

    Registry &m_registry;
    ConsoleHub &m_consoles;
    const ImageStore &m_images;
    VmmFactory m_factory;
    SandboxServiceConfig m_config;
    std::map<QString, Entry> m_entries;
};

} // namespace airlock

#pragma once

#include "core/daemon/bindingstore.h"
#include "core/daemon/registry.h"
#include "core/daemon/sandboxnetwork.h"
#include "core/model/error.h"
#include "core/model/sandbox.h"
#include "core/net/addresspool.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/seedimage.h"
#include "core/vmm/vmm.h"

#include <QObject>
#include <QTimer>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace airlock {

class ConsoleHub;

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
    /// Each gateway runs as gatewayUidBase + its VMM's slot (group `airlock-gateway`), a range
    /// of its own. 0: the gateway runs as its VMM's uid (only without vmmUidBase).
    uid_t gatewayUidBase = 0;
    static constexpr uid_t kDefaultGatewayUidBase = 0x7ffd0000;
    /// The pool sandbox links are cut from (AddressPool::create).
    QString addressPool = AddressPool::DefaultPool.toString();
    /// Gateway program, listener ports, upstream resolver and trust store.
    SandboxNetworkConfig network;
    /// Egress events kept per sandbox for egress.history.
    int egressHistory = Registry::kDefaultEgressHistory;
    /// Where guest RAM files live (docs/snapshots.md): a root-owned directory on tmpfs. Empty:
    /// /dev/shm/airlock-<hash of stateDir>, so helpers with different state dirs never meet.
    QString memoryDir;
    /// How long a guest started from a snapshot or template has to confirm its new identity
    /// through the guest agent (GuestAgent::refresh).
    int agentTimeoutMs = 10000;
    /// How often every running sandbox's nftables table is compared with what was loaded
    /// (SandboxNetwork::verifyTable): one that is gone or changed is loaded again at once, and
    /// a guest whose table cannot be restored is killed (docs/network.md). 0: never.
    int tableCheckIntervalMs = 1000;
};

/// The sandbox lifecycle of docs/protocol.md (create/list/get/start/stop/kill/delete), backed by
/// the Registry (every change is persisted before it is announced) and one Vmm per running
/// sandbox, made by the factory so tests and other backends can supply their own. Console bytes
/// of each VMM go to the ConsoleHub. Every running sandbox has a SandboxNetwork (tap, gateway,
/// table), up before its VMM starts and down only after the VMM is gone; the gateway's egress
/// decisions are stored (bounded) and announced as egressEvent(). Destroying the service leaves
/// running VMMs and their tables alone (their gateways exit): the next helper re-adopts them in
/// restore() and starts new gateways.
class SandboxService : public QObject
{
    Q_OBJECT
public:
    using VmmFactory = std::function<std::unique_ptr<Vmm>()>;
    /// Fills a stopped sandbox's memory file (createMemoryFile) from a template for its image
    /// and shape and returns a descriptor holding the matching device state (the service
    /// closes it). NotFound when there is no template; other errors are logged and the
    /// sandbox boots cold.
    using TemplateSource = std::function<Result<int>(const QString &name, const SandboxSpec &)>;
    /// Names starting with this are the helper's own guests (template preparation): clients
    /// cannot create them, and they are neither listed, stored nor announced.
    static constexpr QLatin1StringView kInternalPrefix {"airlock-template-"};

    /// The reason recorded for a guest whose VMM died while no helper watched it.
    static QString vanishedReason();

    SandboxService(Registry &registry, ConsoleHub &consoles, const ImageStore &images,
                   VmmFactory factory, SandboxServiceConfig config, QObject *parent = nullptr);
    ~SandboxService() override;

    /// Creates STATE/run (0711), loads the registry, and re-adopts every VMM recorded as running
    /// with its network (tap kept, table reloaded, a new gateway); those that are gone become
    /// stopped with vanishedReason(), and one whose network cannot be restored is killed. Then
    /// removes the taps, tables and gateways no running sandbox owns (a crash's leftovers).
    /// Call once before serving.
    Result<void> restore();

    QList<Sandbox> list() const; ///< ordered by name
    Result<Sandbox> get(const QString &name) const;
    /// Validates the spec, checks the image exists (NotFound) and records a stopped sandbox.
    /// Names with kInternalPrefix are refused (InvalidName) unless `internal`: such a sandbox
    /// lives only in memory and is never announced (a helper's template guest).
    Result<Sandbox> create(const SandboxSpec &spec, bool internal = false);
    /// Boots the guest; returns once the VMM runs. InvalidState unless stopped. A sandbox whose
    /// spec says BootMode::Template starts from the template source's state when it has one.
    /// With `incomingStateFd` >= 0 the guest is restored instead: the caller has filled the
    /// memory file (createMemoryFile) and passes the saved device state (see
    /// Vmm::saveDeviceState). A guest that did not boot is then told its identity through the
    /// guest agent; its answer comes later (whenSettled; Sandbox::identityWarning when it did
    /// not confirm; a template start that is not confirmed boots cold instead).
    Result<Sandbox> start(const QString &name, int incomingStateFd = -1,
                          StartSource source = StartSource::Snapshot);
    /// Calls `callback` once the identity refresh that followed the sandbox's last start has
    /// its answer (or the guest stopped), at once when none is pending. For answers that
    /// should say whether the guest took its identity (sandbox.start, snapshot.fork|restore).
    void whenSettled(const QString &name, std::function<void()> callback);
    /// Where template starts come from (SnapshotService); none by default.
    void setTemplateSource(TemplateSource source) { m_templates = std::move(source); }
    /// Stops the guest's CPUs (QMP stop); InvalidState unless running. State becomes paused.
    Result<Sandbox> pause(const QString &name);
    /// Lets a paused guest run again; InvalidState unless paused. Acts on the VMM's real
    /// state: a guest recorded as running whose CPUs stand still (a snapshot interrupted by a
    /// crash) is resumed too.
    Result<Sandbox> resume(const QString &name);
    /// The running (or paused) sandbox's VMM, for the snapshot service; nullptr otherwise.
    Vmm *vmmOf(const QString &name) const;
    /// The guest RAM file of a sandbox (VmmLaunchConfig::memoryPath).
    QString memoryPathFor(const QString &name) const;
    /// Makes the directory of the RAM files (root's, mode 0711) if it is gone: it is removed
    /// with its last file (docs/reviews/2026-11-30-redteam-pass.md#f7).
    Result<void> ensureMemoryDir() const;
    /// Replaces the sandbox's RAM file by a fresh, empty (sparse) one of its memory size,
    /// owned by root until start() hands it to the VMM user. Returns its descriptor (the
    /// caller closes it). InvalidState unless the sandbox is stopped; BackendUnavailable when
    /// the host cannot back that much memory (checkMemoryCapacity).
    Result<int> createMemoryFile(const QString &name);
    /// The image a sandbox was created from (its root disk, if any, included).
    Result<GuestImage> imageOf(const QString &name) const;
    /// The sandbox's root disk overlay (RootDisk), STATE/disks/NAME.qcow2: made on the first
    /// start of a sandbox whose image has a disk, kept across stops, deleted with the sandbox.
    QString diskPathFor(const QString &name) const;
    /// The identity of the image disk the sandbox's overlay was made on
    /// (GuestImage::diskIdentity, recorded beside it); empty when it has none.
    QString diskIdentityOf(const QString &name) const;
    /// Replaces the sandbox's root disk overlay by what `fill` writes into a fresh file (a
    /// restore or fork writes a snapshot's `disk:vda` back), recording that it belongs to the
    /// image's disk `identity` (GuestImage::diskIdentity). Written beside and renamed into place,
    /// so a failure or crash leaves the previous overlay. InvalidState unless stopped.
    Result<void> replaceDisk(const QString &name, const QString &identity,
                             const std::function<Result<void>(int fd)> &fill);
    /// Graceful power-off, kill after `timeoutMs`; answers with state stopping.
    Result<Sandbox> stop(const QString &name, int timeoutMs);
    /// Kills the VMM now; answers with state stopped.
    Result<Sandbox> kill(const QString &name);
    /// Records why a stopped sandbox is stopped (an interrupted or failed snapshot restore),
    /// persisted and announced. InvalidState unless stopped; NotFound, InvalidName.
    Result<void> setStateReason(const QString &name, const QString &reason);
    /// Removes a stopped sandbox, its runtime dir and RAM file; Busy unless stopped.
    Result<void> remove(const QString &name);
    /// Types bytes on the guest's console; InvalidState unless running.
    Result<void> writeConsole(const QString &name, const QByteArray &bytes);
    /// The sandbox's egress policy (deny-all until set). NotFound when there is no such sandbox.
    Result<EgressPolicy> policy(const QString &name) const;
    /// Replaces the sandbox's egress policy, in any state: validates it (InvalidParams, nothing
    /// changes), persists it (on failure nothing changes either), then emits policyChanged.
    /// A running sandbox's gateway gets it at once (new connections and DNS queries).
    Result<void> setPolicy(const QString &name, const EgressPolicy &policy);
    /// Stored egress events of a sandbox (Registry::egressHistory). NotFound, InvalidName.
    Result<QList<EgressRecord>> egressHistory(const QString &name, std::optional<qint64> since,
                                              int limit) const;
    /// The running sandbox's network (tests and diagnostics); nullptr when it has none.
    const SandboxNetwork *network(const QString &name) const;

    /// The files of the guest's seed disk, extracted into /run/airlock in the guest
    /// (installers/guest/README.md): `ca.pem` (the sandbox CA the guest trusts) and `env`, one
    /// `AIRLOCK_SECRET_<NAME>=<placeholder>` line per secret the sandbox's bindings use, sorted
    /// (docs/credentials.md; the guest's profile exports them). Never a secret value. The one
    /// list of what a guest is given at boot: start() writes it to the seed disk, and whatever
    /// re-delivers it to a running guest (after a fork or restore) must call this too.
    /// Errors: NotFound, InvalidState (no network: the CA is the running network's),
    /// OperationFailed (registry).
    Result<QList<SeedFile>> seedFiles(const QString &name);

    /// Where the gateways' credentials come from: the grants of a sandbox (its bindings with
    /// values from the vault), asked each time a gateway starts and on refreshCredentials().
    using CredentialSource = std::function<QList<GatewayCredentialGrant>(const QString &name)>;
    void setCredentialSource(CredentialSource source) { m_credentialSource = std::move(source); }
    /// Hands the running sandbox's gateway its current credentials (after a binding or a
    /// secret changed). Nothing to do (success) when the sandbox does not run.
    Result<void> refreshCredentials(const QString &name);

    const SandboxServiceConfig &config() const { return m_config; }
    /// This helper's tag in tap and table names (HelperInstance::tagFor(stateDir)).
    QString instance() const { return m_config.network.instance; }
    /// One pass of the table watch (tableCheckIntervalMs); public for tests and diagnostics.
    void checkTables();
    const ImageStore &images() const { return m_images; }

Q_SIGNALS:
    void sandboxChanged(const airlock::Sandbox &sandbox);
    void sandboxRemoved(const QString &name);
    /// A sandbox's egress policy was replaced (setPolicy succeeded).
    void policyChanged(const QString &name);
    /// An egress decision of a sandbox's gateway (or the gateway_restarted notice), stored
    /// under `seq`.
    void egressEvent(const QString &name, qint64 seq, const QJsonObject &event);

private:
    /// Kills a VMM that still runs for a sandbox recorded as stopped (see the .cpp for why).
    /// With `wait`, returns once the killed process is gone (its tap is then free).
    void killOrphanVmm(const QString &name, bool wait = false) const;
    Result<Sandbox> startOnce(const QString &name, int incomingStateFd, StartSource source,
                              bool *usedTemplate);
    struct Entry
    {
        SandboxRecord record() const;
        bool internal = false; ///< a helper's own guest: not stored, not announced
        bool refreshing = false; ///< an identity refresh awaits the guest's answer
        std::vector<std::function<void()>> settled; ///< whenSettled() callbacks
        Sandbox sandbox;
        VmmRuntimeInfo runtime;
        EgressPolicy policy;
        std::unique_ptr<Vmm> vmm;
        bool stopRequested = false;
        uid_t vmmUid = 0; ///< uid of the running VMM (its runtime dir's owner); 0 when none
        SandboxNetwork *network = nullptr; ///< owned (child of the service) while running
        qint64 linkIndex = -1; ///< AddressPool index of network's link
    };

    Result<Entry *> find(const QString &name);
    Result<const Entry *> find(const QString &name) const;
    /// find(), and `invalid_state` unless the sandbox is stopped.
    Result<Entry *> findStopped(const QString &name);
    QString runtimeDirFor(const QString &name) const;
    /// BackendUnavailable, with a message saying what is missing, when the RAM directory's free
    /// space or the host's MemAvailable (/proc/meminfo) is below `memoryMib`.
    Result<void> checkMemoryCapacity(const QString &name, int memoryMib) const;
    QString memoryDir() const;
    QString disksDir() const;
    /// Makes the overlay on the first start (or checks that it belongs to the image's current
    /// disk) and hands it to `uid`. OperationFailed when the image was rebuilt since.
    Result<void> prepareDisk(const QString &name, const GuestImage &image, uid_t uid) const;
    Result<QString> prepareRuntimeDir(const QString &name, uid_t uid) const;
    /// A uid for a new VMM that no running VMM of this helper has, and that no process on the
    /// host runs as (nor as its gateway uid): another helper's VMMs use the same range.
    Result<uid_t> allocateVmmUid() const;
    /// Every uid (real, effective, saved, fs) of every process in /proc.
    static std::vector<uid_t> uidsInUse();
    /// Hands the runtime dir (and its entries) and the root disk overlay back to root once
    /// the sandbox's VMM is gone (docs/reviews/2026-12-01-newuser-pass.md#m1).
    void returnFilesToRoot(const QString &name) const;
    /// The runtime dir's owner: the uid a (re-adopted) VMM runs as.
    uid_t runtimeDirOwner(const QString &name) const;
    void attachVmm(Entry &entry, std::unique_ptr<Vmm> vmm);
    /// Lets a VMM we no longer track finish on its own (its exited() deletes it).
    void releaseVmm(Entry &entry);
    void onVmmExited(const QString &name, Vmm *vmm, const QString &reason);
    void markStopped(Entry &entry, const QString &reason);
    uid_t gatewayUidFor(uid_t vmmUid) const;
    /// A network for `entry`'s sandbox on `link`, wired to egressEvent().
    SandboxNetwork *makeNetwork(const QString &name, const LinkAllocation &link, uid_t vmmUid,
                                const EgressPolicy &policy);
    /// Brings the network of a re-adopted guest back; false (and the VMM killed) when not.
    bool restoreNetwork(Entry &entry, qint64 linkIndex);
    /// Takes the network out of the entry and tears it down (now, or once `vmm` exits).
    void releaseNetwork(Entry &entry, Vmm *vmmStillRunning = nullptr);
    /// Taps, tables and gateways of this helper (instance()) that no running sandbox owns.
    void removeLeftovers();
    /// Deletes RAM files whose sandbox's guest does not run (at restore()).
    void removeStaleMemoryFiles();
    /// The sandbox whose running network uses tap `ifname`, other than `except`; empty if none.
    QString tapHolder(const QString &ifname, const QString &except) const;
    /// Checks one event from `name`'s gateway and queues it; flushEgress() stores the queue in
    /// one transaction on the next event-loop turn, then announces each (egressEvent).
    void recordEgress(const QString &name, const QJsonObject &object);
    void flushEgress();
    /// seedFiles() with the CA given (start() has it before the entry holds the network).
    Result<QList<SeedFile>> seedFilesWith(const QString &name, const QByteArray &caCertificatePem);
    /// Persists and announces.
    void commit(Entry &entry);
    void announce(const Entry &entry);
    /// Tells a guest that did not boot (template, restore, fork) its identity and seed files
    /// through its agent; records identityWarning when it does not confirm in time.
    void refreshIdentity(Entry &entry, StartSource from);
    void identityRefreshed(Entry &entry, StartSource from, const Result<void> &done);
    void settle(Entry &entry);
    /// Brings a re-adopted VMM's recorded run state in line with QEMU's
    /// (docs/reviews/2026-11-30-redteam-pass.md#f1).
    void reconcileRunState(Entry &entry);
    /// Kills and forgets what a crashed helper's internal guests left (runtime dirs, VMMs).
    void removeInternalLeftovers();

    Registry &m_registry;
    QList<std::pair<QString, QJsonObject>> m_pendingEgress; ///< checked, not yet stored
    bool m_egressFlushQueued = false;
    ConsoleHub &m_consoles;
    const ImageStore &m_images;
    VmmFactory m_factory;
    SandboxServiceConfig m_config;
    std::map<QString, Entry> m_entries;
    std::optional<AddressPool> m_pool;
    BindingStore m_bindings;
    CredentialSource m_credentialSource;
    TemplateSource m_templates;
    QTimer m_tableWatch;
};

} // namespace airlock

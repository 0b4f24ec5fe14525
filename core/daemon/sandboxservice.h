#pragma once

#include "core/daemon/adoption.h"
#include "core/daemon/bindingstore.h"
#include "core/daemon/crashrecovery.h"
#include "core/daemon/egressrecorder.h"
#include "core/daemon/guestmemory.h"
#include "core/daemon/guestseed.h"
#include "core/daemon/networklinks.h"
#include "core/daemon/policyhistory.h"
#include "core/daemon/registry.h"
#include "core/daemon/runtimedirectory.h"
#include "core/daemon/sandboxdisks.h"
#include "core/daemon/sandboxnetwork.h"
#include "core/daemon/sandboxserviceconfig.h"
#include "core/daemon/tablewatch.h"
#include "core/daemon/vmmuidallocator.h"
#include "core/daemon/workerjobs.h"
#include "core/model/error.h"
#include "core/model/sandbox.h"
#include "core/net/addresspool.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/seedimage.h"
#include "core/vmm/vmm.h"

#include <QObject>
#include <QPointer>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace airlock {

class ConsoleHub;

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
    /// A start from a template: the matching device state, and the fill of the sandbox's memory
    /// file, which the service runs off the event loop while the network comes up.
    struct TemplateStart
    {
        int deviceStateFd = -1; ///< a memfd; the service closes it
        /// Copies the template's memory into the sandbox's memory file; touches only
        /// descriptors it owns, so it may run on any thread. Empty when the file is filled.
        std::function<Result<void>()> fillMemory;
    };
    /// Stages a stopped sandbox's start from a template for its image and shape (its memory
    /// file made with createMemoryFile). NotFound when there is no template; other errors are
    /// logged and the sandbox boots cold.
    using TemplateSource =
        std::function<Result<TemplateStart>(const QString &name, const SandboxSpec &)>;
    /// Names starting with this are the helper's own guests (template preparation): clients
    /// cannot create them, and they are neither listed, stored nor announced.
    static constexpr QLatin1StringView kInternalPrefix {"airlock-template-"};

    /// The reason recorded for a guest whose VMM died while no helper watched it.
    static QString vanishedReason();

    /// `factory` makes the QEMU backend's VMMs; setVmmFactory() adds others.
    SandboxService(Registry &registry, ConsoleHub &consoles, const ImageStore &images,
                   VmmFactory factory, SandboxServiceConfig config, QObject *parent = nullptr);
    /// The factory of sandboxes whose spec names `kind` (before restore(): adoption needs it).
    void setVmmFactory(VmmKind kind, VmmFactory factory);
    ~SandboxService() override;

    /// Creates STATE/run (0711), loads the registry, and re-adopts every VMM recorded as running
    /// with its network (tap kept, table reloaded, a new gateway) in the background (Adoption):
    /// such a sandbox is `adopting` until then, and operations on it answer Busy. Those that are
    /// gone become stopped with vanishedReason(), and one whose network cannot be restored is
    /// killed. Removes the taps, tables and gateways no sandbox owns (a crash's leftovers).
    /// Call once before serving; returns without waiting for any VMM.
    Result<void> restore();

    QList<Sandbox> list() const; ///< ordered by name
    Result<Sandbox> get(const QString &name) const;
    /// Validates the spec, checks the image exists (NotFound) and records a stopped sandbox.
    /// Names with kInternalPrefix are refused (InvalidName) unless `internal`: such a sandbox
    /// lives only in memory and is never announced (a helper's template guest).
    Result<Sandbox> create(const SandboxSpec &spec, bool internal = false);
    /// Called once with the sandbox as it runs, or with why it did not start.
    using Started = std::function<void(const Result<Sandbox> &)>;
    /// Boots the guest; `done` is called once the VMM runs (from the event loop: one slow VMM
    /// holds up no other client), or with an error: InvalidState unless stopped (at once). The
    /// sandbox is `starting` meanwhile. A sandbox whose spec says BootMode::Template starts
    /// from the template source's state when it has one. With `incomingStateFd` >= 0 the guest
    /// is restored instead: the caller has filled the memory file (createMemoryFile) and passes
    /// the saved device state (see Vmm::saveDeviceState), which must stay open until `done`. A
    /// guest that did not boot is then told its identity through the guest agent; its answer
    /// comes later (whenSettled; Sandbox::identityWarning when it did not confirm; a template
    /// start that is not confirmed boots cold instead).
    /// `fillMemory`, when given, fills the restore's memory file instead of the caller; it runs
    /// on a worker (decompressing a snapshot's chunks takes about a second for 256 MiB, which
    /// the event loop must not wait for) while the network comes up.
    void start(const QString &name, int incomingStateFd, StartSource source, Started done,
               std::function<Result<void>()> fillMemory = {});
    /// Blocks until the memory fills running on its workers have finished: they read the
    /// snapshot store, which a shutting-down helper destroys after this service.
    void waitForWorkers() { m_jobs.waitForAll(); }
    /// A cold boot (or a template start): start(name, -1, …, done).
    void start(const QString &name, Started done)
    {
        start(name, -1, StartSource::Snapshot, std::move(done));
    }
    /// Calls `callback` once the identity refresh that followed the sandbox's last start has
    /// its answer (or the guest stopped), at once when none is pending. For answers that
    /// should say whether the guest took its identity (sandbox.start, snapshot.fork|restore).
    void whenSettled(const QString &name, std::function<void()> callback);
    /// Where template starts come from (SnapshotService); none by default.
    void setTemplateSource(TemplateSource source) { m_templates = std::move(source); }
    /// Called once with the sandbox after a pause or resume, or the error.
    using Controlled = std::function<void(const Result<Sandbox> &)>;
    /// Stops the guest's CPUs (QMP stop) and returns at once; `done` gets the sandbox (state
    /// paused) once QEMU answered. InvalidState unless running, Busy while a snapshot holds the
    /// guest (holdStill), the VMM's errors otherwise (Vmm::pause).
    void pause(const QString &name, Controlled done);
    /// Lets a paused guest run again, answered like pause(); InvalidState unless paused. Acts
    /// on the VMM's real state: a guest recorded as running whose CPUs stand still (a snapshot
    /// interrupted by a crash) is resumed too (that check blocks, Vmm::queryRunning).
    void resume(const QString &name, Controlled done);
    /// While held (by a snapshot that copies the guest's memory, from its QMP stop to its
    /// cont), pause, resume and stop of the sandbox are Busy; kill still works. Counted.
    void holdStill(const QString &name);
    void releaseStill(const QString &name);
    /// The running (or paused) sandbox's VMM, for the snapshot service; nullptr otherwise.
    Vmm *vmmOf(const QString &name) const;
    /// The guest RAM file of a sandbox (VmmLaunchConfig::memoryPath).
    QString memoryPathFor(const QString &name) const;
    /// The host's memory figures for guests (GuestMemory::hostFigures; `hello`).
    GuestMemory::HostFigures hostMemory() const;
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
    /// Kills the VMM now; answers with state stopped. A pending start ends with an error.
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
    /// A running sandbox's gateway gets it at once: every request from then on, and open
    /// connections it no longer allows are closed. `enforced` is called once when the call
    /// succeeded (GatewayProcess::PolicyAck): at once for a sandbox without a gateway, else when
    /// its gateway confirmed the policy (Timeout or OperationFailed when it did not; the policy
    /// stays stored either way).
    /// Each change is recorded with `origin` in the sandbox's policy history (PolicyHistory,
    /// STATE/policy-history) once it is stored; a record that cannot be written is logged and
    /// the change stands.
    Result<void> setPolicy(const QString &name, const EgressPolicy &policy,
                           GatewayProcess::PolicyAck enforced = {},
                           const PolicyChangeOrigin &origin = {});
    /// The newest `limit` recorded policy changes of a sandbox, newest first
    /// (PolicyHistory::entries). NotFound, InvalidName.
    Result<QJsonArray> policyHistory(const QString &name, int limit) const;
    /// Tells every running gateway to drop the values of a deleted secret.
    void forgetSecret(const QString &secret);
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
    void setCredentialSource(CredentialSource source)
    {
        m_networks.setCredentialSource(std::move(source));
    }
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
        /// The VMM of a start in progress (state starting), until it runs or failed.
        std::unique_ptr<Vmm> startingVmm;
        bool stopRequested = false;
        int heldStill = 0; ///< holdStill() count
        uid_t vmmUid = 0; ///< uid of the running VMM (its runtime dir's owner); 0 when none
        SandboxNetwork *network = nullptr; ///< owned (child of the service) while running
        /// The network of a start in progress (coming up, then up), until its VMM runs or failed.
        SandboxNetwork *startingNetwork = nullptr;
        qint64 linkIndex = -1; ///< AddressPool index of network's link
        /// A VMM killed without waiting (killNow()) that has not exited yet; the next start
        /// waits for it, since it still holds the sandbox's RAM file, uid and network.
        QPointer<Vmm> exitingVmm;
    };
    /// What start() prepared for the VMM and hands to it; released again if it fails.
    struct Launch;
    /// Called with the start's result and whether a template was tried.
    using StartedOnce = std::function<void(const Result<Sandbox> &, bool usedTemplate)>;

    /// Calls `then` once the VMM `entry` killed last is gone: at once when there is none, from
    /// the event loop otherwise; OperationFailed when it is not gone within kKillWaitMs.
    void whenExited(Entry &entry, std::function<void(const Result<void> &)> then);
    /// One start attempt; with `allowTemplate` a template start may be tried.
    void startOnce(const QString &name, int incomingStateFd, StartSource source, bool allowTemplate,
                   StartedOnce done, std::function<Result<void>()> fillMemory = {});
    /// Prepares uid, runtime dir, disk and memory (or a template's) for the start of `entry`
    /// into `launch`. The sandbox is `starting` once it succeeded; on errors after that it is
    /// stopped again.
    Result<void> prepareLaunch(Entry &entry, const GuestImage &image, int incomingStateFd,
                               StartSource source, bool allowTemplate, Launch &launch);
    /// With the network of `launch` up: the seed, the tap queue and the VMM's configuration.
    Result<void> configureLaunch(Entry &entry, const GuestImage &image, Launch &launch);
    /// The network of `launch` is up (or failed) and its memory filled (or not): configures and
    /// launches the VMM, or undoes the start.
    void networkReady(const QString &name, const GuestImage &image,
                      const std::shared_ptr<Launch> &launch,
                      const Result<SandboxNetwork *> &network, const StartedOnce &done);
    /// Starts the VMM `launch` is configured for; launched() gets the outcome.
    void launchVmm(Entry &entry, const std::shared_ptr<Launch> &launch, const StartedOnce &done);
    /// Takes down the network a start brought up before its VMM ran.
    void dropNetwork(Launch &launch);
    /// The VMM of `launch` runs (or failed to start): records it (or undoes the start).
    void launched(const QString &name, const std::shared_ptr<Launch> &launch,
                  const Result<VmmRuntimeInfo> &info, const StartedOnce &done);
    /// The end of a pause or resume of `vmm`: records `state` if `vmm` is still the sandbox's.
    void settleControl(const QString &name, const Vmm *vmm, SandboxState state,
                       const Controlled &done);
    /// Records a failed start: stopped with the error as reason.
    std::unexpected<Error> failStart(const QString &name, const Error &error);

    Result<Entry *> find(const QString &name);
    Result<const Entry *> find(const QString &name) const;
    /// find(), and `invalid_state` unless the sandbox is stopped.
    Result<Entry *> findStopped(const QString &name);
    /// The uids of this helper's running VMMs.
    std::vector<uid_t> vmmUids() const;
    /// Hands the runtime dir (and its entries) and the root disk overlay back to root once
    /// the sandbox's VMM is gone (docs/reviews/2026-12-01-newuser-pass.md#m1).
    void returnFilesToRoot(const QString &name) const;
    void attachVmm(Entry &entry, std::unique_ptr<Vmm> vmm);
    /// Lets a VMM we no longer track finish on its own (its exited() deletes it).
    void releaseVmm(Entry &entry);
    void onVmmExited(const QString &name, Vmm *vmm, const QString &reason);
    void markStopped(Entry &entry, const QString &reason);
    /// Kills `entry`'s VMM, tears its network down and marks it stopped for `reason`.
    void killNow(Entry &entry, const QString &reason);
    /// Brings the network of a re-adopted guest back (on the event loop), then records it in
    /// `adoptedState`; when that fails the VMM is killed and the sandbox stopped with the reason.
    void restoreNetwork(Entry &entry, qint64 linkIndex, SandboxState adoptedState);
    /// NetworkLinks::release()'s `superseded` for `network` of sandbox `name`: whether the
    /// sandbox runs meanwhile with a newer network of the same names.
    std::function<bool()> supersededCheck(const QString &name, const SandboxNetwork *network) const;
    /// Takes the network out of the entry and tears it down (now, or once `vmm` exits).
    void releaseNetwork(Entry &entry, Vmm *vmmStillRunning = nullptr);
    /// CrashRecovery::removeLeftovers for what no sandbox of this helper owns.
    void removeLeftovers();
    /// The sandbox whose running network uses tap `ifname`, other than `except`; empty if none.
    QString tapHolder(const QString &ifname, const QString &except) const;
    /// Queues one event from `name`'s gateway with the EgressRecorder (internal guests' are
    /// dropped).
    void recordEgress(const QString &name, const QJsonObject &object);
    /// Persists and announces.
    void commit(Entry &entry);
    void announce(const Entry &entry);
    /// Tells a guest that did not boot (template, restore, fork) its identity and seed files
    /// through its agent (IdentityRefresh); records identityWarning when it does not confirm.
    void refreshIdentity(Entry &entry, StartSource from);
    void identityRefreshed(Entry &entry, StartSource from, const Result<void> &done);
    void settle(Entry &entry);
    /// The end of a background adoption (restore()): the sandbox runs (or is paused) with its
    /// network again, or is stopped.
    void onAdopted(Adoption::Outcome &outcome);
    /// A table that TableWatch could not restore: the guest goes.
    void onTableLost(const QString &name, const QString &reason, const QJsonObject &event);

    Registry &m_registry;
    ConsoleHub &m_consoles;
    const ImageStore &m_images;
    /// A new VMM of `kind`'s backend; nullptr when this helper has none.
    std::unique_ptr<Vmm> makeVmm(VmmKind kind) const;
    /// BackendUnavailable when `kind` cannot run a guest of `image` here.
    Result<void> checkBackend(VmmKind kind, const GuestImage &image) const;

    std::map<VmmKind, VmmFactory> m_factories;
    SandboxServiceConfig m_config;
    RuntimeDirectory m_runtimeDirs;
    GuestMemory m_memory;
    SandboxDisks m_disks;
    VmmUidAllocator m_uids;
    CrashRecovery m_recovery;
    std::map<QString, Entry> m_entries;
    BindingStore m_bindings;
    GuestSeed m_seed;
    NetworkLinks m_networks;
    TemplateSource m_templates;
    EgressRecorder m_egress;
    PolicyHistory m_policyHistory;
    TableWatch m_tableWatch;
    Adoption m_adoption;
    /// Template memory fills (TemplateStart::fillMemory); last, so it waits for them first.
    WorkerJobs m_jobs;
};

} // namespace airlock

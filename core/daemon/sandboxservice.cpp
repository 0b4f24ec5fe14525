#include "core/daemon/sandboxservice.h"

#include "core/daemon/consolehub.h"
#include "core/daemon/identityrefresh.h"
#include "core/model/answerlater.h"
#include "core/model/names.h"
#include "core/net/helperinstance.h"
#include "core/net/tapdevice.h"
#include "core/vmm/firecrackerjail.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/seedimage.h"
#include "core/vmm/vmmcgroup.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QSet>
#include <QTimer>

#include <unistd.h>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcSandbox, "airlock.daemon.sandbox")

std::unexpected<Error> notFound(const QString &name)
{
    return fail(ErrorKind::NotFound, QStringLiteral("no sandbox named '%1'").arg(name));
}

/// How long kill() waits for a SIGKILLed VMM to be gone before leaving its network's teardown
/// to its exit.
constexpr int kKillWaitMs = 2000;

const QString kSeedFile = QStringLiteral("seed.tar");

SandboxServiceConfig withInstance(SandboxServiceConfig config)
{
    if (config.network.instance.isEmpty())
        config.network.instance = HelperInstance::tagFor(config.stateDir);
    return config;
}

static_assert(SandboxServiceConfig::kVmmUidSlots == VmmUidAllocator::kSlots);

/// "qemu, firecracker": an image's VMM names for a message.
QString vmmNames(const QList<VmmKind> &kinds)
{
    QStringList names;
    for (const VmmKind kind : kinds)
        names.append(vmmKindName(kind));
    return names.join(QStringLiteral(", "));
}
} // namespace

/// What start() prepared for one VMM: closed or released again when the start is over.
struct SandboxService::Launch
{
    Launch() = default;
    Launch(const Launch &) = delete;
    Launch &operator=(const Launch &) = delete;
    ~Launch()
    {
        closeTap();
        if (templateFd >= 0)
            ::close(templateFd);
    }
    void closeTap()
    {
        if (config.network.tapFd >= 0)
            ::close(std::exchange(config.network.tapFd, -1));
    }

    VmmLaunchConfig config;
    uid_t vmmUid = 0;
    StartSource from = StartSource::Boot;
    bool usedTemplate = false;
    int templateFd = -1; ///< the template source's device state
    SandboxNetwork *network = nullptr; ///< up; the entry's once the VMM runs
    /// The template's memory fill, taken by startOnce() onto a worker.
    std::function<Result<void>()> fillMemory;
    /// Set once the fill is done (or when there was none).
    std::optional<Result<void>> memoryFilled;
    /// The rest of the start, when the network came up before the fill was done.
    std::function<void()> afterMemory;
};

QString SandboxService::vanishedReason()
{
    return QStringLiteral("VMM exited while airlockd was not running");
}

SandboxRecord SandboxService::Entry::record() const
{
    return SandboxRecord {sandbox, runtime, policy, linkIndex};
}

SandboxService::SandboxService(Registry &registry, ConsoleHub &consoles, const ImageStore &images,
                               VmmFactory factory, SandboxServiceConfig config, QObject *parent)
    : QObject(parent)
    , m_registry(registry)
    , m_consoles(consoles)
    , m_images(images)
    , m_factories {{VmmKind::Qemu, std::move(factory)}}
    , m_config(withInstance(std::move(config)))
    , m_runtimeDirs(m_config.stateDir)
    , m_memory(m_config.memoryDir, m_config.stateDir)
    , m_disks(m_config.stateDir)
    , m_uids(m_config.vmmUid, m_config.vmmUidBase, m_config.gatewayUidBase,
             VmmUidAllocator::firstSlotFor(m_config.stateDir))
    , m_recovery(m_config.stateDir, m_config.network.instance, m_runtimeDirs, m_memory, m_disks)
    , m_bindings(registry)
    , m_seed(m_bindings)
    , m_networks(m_config.network, m_uids)
    , m_egress(registry, m_config.egressHistory)
    , m_policyHistory(QDir(m_config.stateDir).filePath(QStringLiteral("policy-history")))
    , m_tableWatch(m_config.network.instance,
                   [this] {
                       std::vector<std::pair<QString, SandboxNetwork *>> networks;
                       for (const auto &[name, entry] : m_entries) {
                           if (entry.network && entry.vmm
                               && (entry.sandbox.state == SandboxState::Running
                                   || entry.sandbox.state == SandboxState::Paused))
                               networks.emplace_back(name, entry.network);
                       }
                       return networks;
                   })
    , m_adoption([this](VmmKind kind) { return makeVmm(kind); },
                 [this](Adoption::Outcome &outcome) { onAdopted(outcome); })
{
    connect(&m_egress, &EgressRecorder::recorded, this, &SandboxService::egressEvent);
    connect(&m_networks, &NetworkLinks::egress, this, &SandboxService::recordEgress);
    connect(&m_tableWatch, &TableWatch::restored, this, &SandboxService::recordEgress);
    connect(&m_tableWatch, &TableWatch::lost, this, &SandboxService::onTableLost);
    connect(
        &m_adoption, &Adoption::consoleOutput, this,
        [this](const QString &name, const QByteArray &bytes) { m_consoles.append(name, bytes); });
}

SandboxService::~SandboxService()
{
    // Decisions the gateways reported last are history too (not announced: no one listens).
    QObject::disconnect(&m_egress, nullptr, this, nullptr);
    // Deliberately no stop or kill: the guests outlive this helper and are re-adopted.
    for (auto &[name, entry] : m_entries) {
        for (Vmm *vmm : {entry.vmm.get(), entry.startingVmm.get()}) {
            if (vmm)
                QObject::disconnect(vmm, nullptr, this, nullptr);
        }
    }
    // Only when no guest's RAM file is left in it (docs/reviews/2026-11-30-redteam-pass.md#f7: one
    // empty dir per run).
    if (m_networks.hasPool())
        m_memory.removeDirIfEmpty();
}

Result<void> SandboxService::restore()
{
    AIRLOCK_TRY(m_runtimeDirs.prepareRoot());
    AIRLOCK_TRY(m_networks.createPool(m_config.addressPool));
    // The RAM file directory is made by the first guest that needs it (createMemoryFile).
    m_recovery.removeInternalLeftovers(QString(kInternalPrefix));
    AIRLOCK_TRY(m_disks.prepareDir());
    AIRLOCK_TRY_INIT(records, m_registry.load());
    for (const SandboxRecord &record : *records) {
        Entry &entry = m_entries[record.sandbox.spec.name];
        entry.sandbox = record.sandbox;
        entry.runtime = record.runtime;
        entry.policy = record.policy;
        // Normally gone already: a gateway exits when its helper's control socket closes.
        SandboxNetwork::killLeftoverGateway(m_config.stateDir, record.sandbox.spec.name);
        if (entry.sandbox.state == SandboxState::Stopped) {
            // A helper killed while a VMM was starting never recorded its pid: the registry
            // says stopped while QEMU runs on, holding the runtime dir.
            m_recovery.killOrphanVmm(entry.sandbox.spec.name);
            // Also what a helper without the fix of docs/reviews/2026-12-01-newuser-pass.md#m1 left
            // with a VMM's uid.
            returnFilesToRoot(entry.sandbox.spec.name);
            continue;
        }
        if (record.runtime.pid <= 0) {
            markStopped(entry, vanishedReason());
            if (auto ok = m_registry.update(entry.record()); !ok)
                qCWarning(lcSandbox, "%s", qPrintable(ok.error().message));
            continue;
        }
        // In the background (Adoption): the helper serves before every guest is back. Its uid
        // is taken now, so no start meanwhile gets it.
        const SandboxState recorded = entry.sandbox.state == SandboxState::Paused
            ? SandboxState::Paused
            : SandboxState::Running;
        entry.sandbox.state = SandboxState::Adopting;
        entry.sandbox.vmmPid = record.runtime.pid;
        entry.vmmUid = m_runtimeDirs.owner(entry.sandbox.spec.name);
        m_adoption.add({entry.sandbox.spec.name, record.runtime, recorded, record.linkIndex,
                        entry.sandbox.spec.vmm.value_or(VmmKind::Qemu)});
    }
    removeLeftovers();
    // A guest's RAM file lives as long as its guest (docs/reviews/2026-12-01-newuser-pass.md#m2).
    const QStringList stale = m_memory.removeStale([this](const QString &name) {
        const auto it = m_entries.find(name);
        return it != m_entries.end()
            && (it->second.vmm || it->second.sandbox.state == SandboxState::Adopting);
    });
    for (const QString &file : stale)
        qCInfo(lcSandbox, "removed the leftover guest memory file %s", qPrintable(file));
    m_tableWatch.start(m_config.tableCheckIntervalMs);
    return {};
}

void SandboxService::removeLeftovers()
{
    QSet<QString> sandboxes;
    QSet<QString> taps;
    QSet<QString> tables;
    for (const auto &[name, entry] : m_entries) {
        sandboxes.insert(name);
        if (entry.network) {
            taps.insert(entry.network->tapName());
            tables.insert(name);
        } else if (entry.sandbox.state == SandboxState::Adopting) {
            // Its network comes back once its VMM is adopted (onAdopted).
            taps.insert(TapDevice::interfaceName(name, instance()));
            tables.insert(name);
        }
    }
    m_recovery.removeLeftovers(sandboxes, tables, taps);
    // Groups of VMMs that exited while no helper watched; an adopted VMM's is not empty.
    if (const int groups = VmmCgroup::removeLeftovers(); groups > 0)
        qCInfo(lcSandbox, "removed %d leftover VMM cgroups", groups);
}

void SandboxService::checkTables()
{
    m_tableWatch.check();
}

void SandboxService::onTableLost(const QString &name, const QString &reason,
                                 const QJsonObject &event)
{
    recordEgress(name, event);
    const auto it = m_entries.find(name);
    if (it == m_entries.end() || it->second.sandbox.state == SandboxState::Stopped
        || !it->second.vmm)
        return;
    killNow(it->second, reason);
    commit(it->second);
}

QString SandboxService::tapHolder(const QString &ifname, const QString &except) const
{
    for (const auto &[name, entry] : m_entries) {
        if (name != except && entry.network && entry.network->tapName() == ifname)
            return name;
    }
    return {};
}

Result<void> SandboxService::ensureMemoryDir() const
{
    return m_memory.ensureDir();
}

void SandboxService::onAdopted(Adoption::Outcome &outcome)
{
    const auto it = m_entries.find(outcome.job.name);
    if (it == m_entries.end())
        return;
    Entry &entry = it->second;
    if (outcome.vmm) {
        // Still `adopting` (Busy to every request) until its gateway and table are back.
        attachVmm(entry, std::move(outcome.vmm));
        restoreNetwork(entry, outcome.job.linkIndex, outcome.state);
        return;
    }
    qCInfo(lcSandbox, "%s: VMM pid %lld is gone (%s); marking it stopped",
           qPrintable(outcome.job.name), static_cast<long long>(outcome.job.runtime.pid),
           qPrintable(outcome.error));
    // restore() kept its tap and table for the adoption; nothing uses them now.
    m_recovery.removeLeftoversOf(outcome.job.name,
                                 TapDevice::interfaceName(outcome.job.name, instance()));
    markStopped(entry, vanishedReason());
    commit(entry);
}

void SandboxService::refreshIdentity(Entry &entry, StartSource from)
{
    const QString name = entry.sandbox.spec.name;
    QList<SeedFile> files;
    if (entry.network) {
        auto seed = m_seed.files(name, entry.network->caCertificatePem());
        if (!seed) {
            identityRefreshed(entry, from, std::unexpected(seed.error()));
            return;
        }
        files = *seed;
    }
    const GuestIdentity identity =
        IdentityRefresh::identityFor(name, entry.network ? &entry.network->link() : nullptr, files);
    Vmm *vmm = entry.vmm.get();
    entry.refreshing = true;
    IdentityRefresh::send(vmm ? vmm->agent() : nullptr, identity, m_config.agentTimeoutMs,
                          [this, name, vmm, from](const Result<void> &done) {
                              const auto it = m_entries.find(name);
                              // Stopped or started again meanwhile: markStopped() settled it.
                              if (it == m_entries.end() || it->second.vmm.get() != vmm)
                                  return;
                              identityRefreshed(it->second, from, done);
                          });
}

void SandboxService::identityRefreshed(Entry &entry, StartSource from, const Result<void> &done)
{
    const QString name = entry.sandbox.spec.name;
    entry.refreshing = false;
    if (done) {
        entry.sandbox.identityWarning.clear();
    } else {
        entry.sandbox.identityWarning = IdentityRefresh::warningFor(done.error());
        qCWarning(lcSandbox, "%s: %s", qPrintable(name), qPrintable(entry.sandbox.identityWarning));
    }
    if (!done && from == StartSource::Template) {
        // A template guest with the template's identity is of no use (unlike a fork, whose
        // state was asked for): boot this one instead; its waiters wait for that.
        qCWarning(lcSandbox, "%s: booting cold instead of the template", qPrintable(name));
        auto waiters = std::exchange(entry.settled, {});
        kill(name);
        entry.settled = std::move(waiters);
        entry.refreshing = true;
        startOnce(name, -1, StartSource::Boot, /*allowTemplate=*/false,
                  [this, name](const Result<Sandbox> &cold, bool) {
                      if (!cold)
                          qCWarning(lcSandbox, "%s: %s", qPrintable(name),
                                    qPrintable(cold.error().message));
                      if (const auto it = m_entries.find(name); it != m_entries.end())
                          settle(it->second);
                  });
        return;
    }
    commit(entry);
    settle(entry);
}

void SandboxService::settle(Entry &entry)
{
    entry.refreshing = false;
    // Waiters may call back into the service: take them out first.
    const auto waiters = std::exchange(entry.settled, {});
    for (const auto &waiter : waiters)
        waiter();
}

void SandboxService::whenSettled(const QString &name, std::function<void()> callback)
{
    const auto it = m_entries.find(name);
    if (it == m_entries.end() || !it->second.refreshing) {
        callback();
        return;
    }
    it->second.settled.push_back(std::move(callback));
}

void SandboxService::restoreNetwork(Entry &entry, qint64 linkIndex, SandboxState adoptedState)
{
    const QString name = entry.sandbox.spec.name;
    const Vmm *adopted = entry.vmm.get();
    m_networks.restore(
        name, linkIndex, entry.vmmUid, entry.policy,
        [this, name, adopted, linkIndex, adoptedState](const Result<SandboxNetwork *> &network) {
            const auto it = m_entries.find(name);
            if (it == m_entries.end() || it->second.vmm.get() != adopted) {
                // Stopped (or gone) meanwhile: its teardown already ran without this network.
                if (network)
                    m_networks.release(*network, nullptr, supersededCheck(name, *network));
                return;
            }
            Entry &adoptedEntry = it->second;
            if (network) {
                adoptedEntry.network = *network;
                adoptedEntry.linkIndex = linkIndex;
                adoptedEntry.sandbox.state = adoptedState;
                commit(adoptedEntry);
                return;
            }
            // A VM never runs without its table and gateway.
            const QString reason = QStringLiteral("its network could not be restored: %1")
                                       .arg(network.error().message);
            qCWarning(lcSandbox, "%s: killing the re-adopted VMM: %s", qPrintable(name),
                      qPrintable(reason));
            Vmm *vmm = adoptedEntry.vmm.get();
            releaseVmm(adoptedEntry);
            const QString tap = TapDevice::interfaceName(name, instance());
            connect(vmm, &Vmm::exited, this, [tap] { TapDevice::remove(tap); });
            vmm->kill();
            markStopped(adoptedEntry, reason);
            commit(adoptedEntry);
        });
}

QList<Sandbox> SandboxService::list() const
{
    QList<Sandbox> sandboxes;
    for (const auto &[name, entry] : m_entries) {
        if (!entry.internal)
            sandboxes.append(entry.sandbox);
    }
    return sandboxes;
}

Result<Sandbox> SandboxService::get(const QString &name) const
{
    AIRLOCK_TRY_INIT(entry, find(name));
    return (*entry)->sandbox;
}

void SandboxService::setVmmFactory(VmmKind kind, VmmFactory factory)
{
    m_factories[kind] = std::move(factory);
}

std::unique_ptr<Vmm> SandboxService::makeVmm(VmmKind kind) const
{
    const auto it = m_factories.find(kind);
    return it != m_factories.end() && it->second ? it->second() : nullptr;
}

Result<void> SandboxService::checkBackend(VmmKind kind, const GuestImage &image) const
{
    // The image says which VMMs boot it (its kernel, its disks' format, its guest files):
    // ImageStore never lets an image with a qcow2 root disk name Firecracker. Checked first:
    // it holds on every host.
    if (!image.supports(kind))
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1' cannot boot in %2 (its image.json lists: %3)%4; "
                                   "use vmm \"%3\" for it")
                        .arg(image.id, vmmKindName(kind), vmmNames(image.vmms),
                             image.diskPath.isEmpty()
                                 ? QString()
                                 : QStringLiteral(", and its root disk is qcow2, which "
                                                  "Firecracker cannot read")));
    if (kind == VmmKind::Firecracker
        && (!m_factories.contains(kind) || !m_config.firecrackerUnavailable.isEmpty()))
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("the Firecracker backend is unavailable: %1")
                        .arg(m_config.firecrackerUnavailable.isEmpty()
                                 ? QStringLiteral("this airlockd has no Firecracker backend")
                                 : m_config.firecrackerUnavailable));
    return {};
}

Result<Sandbox> SandboxService::create(const SandboxSpec &requested, bool internal)
{
    SandboxSpec spec = requested;
    spec.vmm = requested.vmm.value_or(m_config.defaultVmm);
    AIRLOCK_TRY(spec.validate());
    if (spec.name.startsWith(kInternalPrefix) != internal)
        return fail(ErrorKind::InvalidName,
                    QStringLiteral("sandbox names starting with '%1' are reserved for the helper")
                        .arg(kInternalPrefix));
    if (m_entries.contains(spec.name))
        return fail(ErrorKind::AlreadyExists,
                    QStringLiteral("a sandbox named '%1' already exists").arg(spec.name));
    auto image = m_images.find(spec.image);
    if (!image)
        return fail(ErrorKind::NotFound,
                    QStringLiteral("no image '%1' in the image store").arg(spec.image));
    // An image and backend that cannot work together would only fail at every start.
    AIRLOCK_TRY(checkBackend(*spec.vmm, *image));
    // A sandbox this host could never back would only fail at every start.
    AIRLOCK_TRY(m_memory.checkCeiling(spec.name, spec.memoryMib));
    Entry entry;
    entry.sandbox.spec = spec;
    entry.sandbox.createdAt = QDateTime::currentDateTimeUtc();
    entry.internal = internal;
    if (!internal) {
        AIRLOCK_TRY(m_registry.insert(entry.record()));
    }
    Entry &stored = m_entries[spec.name] = std::move(entry);
    qCInfo(lcSandbox, "created %s (%d vCPU, %d MiB, image %s, %s)", qPrintable(spec.name),
           spec.vcpus, spec.memoryMib, qPrintable(spec.image), qPrintable(vmmKindName(*spec.vmm)));
    announce(stored);
    return stored.sandbox;
}

void SandboxService::start(const QString &name, int incomingStateFd, StartSource source,
                           Started done, std::function<Result<void>()> fillMemory)
{
    // A restore kills the running VMM and starts at once: the new one waits until the old one
    // is gone, on the event loop (killNow() does not wait).
    if (const auto it = m_entries.find(name); it != m_entries.end() && it->second.exitingVmm) {
        whenExited(
            it->second,
            [this, name, incomingStateFd, source, done, fillMemory](const Result<void> &gone) {
                if (!gone)
                    return done(std::unexpected(gone.error()));
                start(name, incomingStateFd, source, done, fillMemory);
            });
        return;
    }
    startOnce(
        name, incomingStateFd, source, /*allowTemplate=*/true,
        [this, name, done](const Result<Sandbox> &started, bool usedTemplate) {
            if (started || !usedTemplate)
                return done(started);
            // A template QEMU cannot load (made by another QEMU, damaged) must not stop
            // the sandbox.
            qCWarning(lcSandbox, "%s: the template start failed (%s); booting cold",
                      qPrintable(name), qPrintable(started.error().message));
            startOnce(name, -1, StartSource::Boot, /*allowTemplate=*/false,
                      [done](const Result<Sandbox> &cold, bool) { done(cold); });
        },
        std::move(fillMemory));
}

void SandboxService::startOnce(const QString &name, int incomingStateFd, StartSource source,
                               bool allowTemplate, StartedOnce done,
                               std::function<Result<void>()> fillMemory)
{
    auto launch = std::make_shared<Launch>();
    auto found = findStopped(name);
    if (!found)
        return done(std::unexpected(found.error()), false);
    Entry *entry = *found;
    auto image = m_images.find(entry->sandbox.spec.image);
    if (!image)
        return done(fail(ErrorKind::BackendUnavailable,
                         QStringLiteral("image '%1' of sandbox '%2' is missing: %3")
                             .arg(entry->sandbox.spec.image, name, image.error().message)),
                    false);
    // Checked again: the image may have been rebuilt, or the host changed, since the create.
    if (auto usable = checkBackend(entry->sandbox.spec.vmm.value_or(VmmKind::Qemu), *image);
        !usable)
        return done(std::unexpected(usable.error()), false);
    if (!image->diskPath.isEmpty() && !QFileInfo::exists(m_disks.pathFor(name))) {
        // The first start makes the overlay (qemu-img, from the event loop), then goes on.
        m_disks.make(name, *image, this,
                     [this, name, incomingStateFd, source, allowTemplate, done,
                      fillMemory](const Result<void> &made) {
                         if (!made)
                             return done(std::unexpected(made.error()), false);
                         startOnce(name, incomingStateFd, source, allowTemplate, done, fillMemory);
                     });
        return;
    }
    if (auto prepared =
            prepareLaunch(*entry, *image, incomingStateFd, source, allowTemplate, *launch);
        !prepared)
        return done(std::unexpected(prepared.error()), launch->usedTemplate);
    // A restore's memory comes from its caller's fill (a template start has its own).
    if (incomingStateFd >= 0 && fillMemory)
        launch->fillMemory = std::move(fillMemory);
    // A template's memory (128 MiB and more) is copied on a worker while the network comes up:
    // on the event loop, ten starts at once kept every other client waiting for seconds.
    if (launch->fillMemory) {
        m_jobs.run<Result<void>>(std::exchange(launch->fillMemory, {}),
                                 [launch](const Result<void> &filled) {
                                     launch->memoryFilled = filled;
                                     if (launch->afterMemory)
                                         std::exchange(launch->afterMemory, {})();
                                 });
    } else {
        launch->memoryFilled = Result<void>();
    }
    // The network first: tap, CA, gateway ready, table loaded; only then may the VM run. The
    // gateway's "ready" is waited for on the event loop: other clients are served meanwhile.
    // A policy set while the gateway starts goes to this network (setPolicy()), which has it in
    // force before `done` runs.
    entry->startingNetwork = m_networks.bringUp(
        name, launch->vmmUid, entry->policy,
        [this, name, image = *image, launch, done](const Result<SandboxNetwork *> &network) {
            // Also on errors: a cold boot after a failed template start makes the memory file
            // anew, which must not race the fill.
            if (!launch->memoryFilled) {
                launch->afterMemory = [this, name, image, launch, done, network] {
                    networkReady(name, image, launch, network, done);
                };
                return;
            }
            networkReady(name, image, launch, network, done);
        });
}

void SandboxService::networkReady(const QString &name, const GuestImage &image,
                                  const std::shared_ptr<Launch> &launch,
                                  const Result<SandboxNetwork *> &network, const StartedOnce &done)
{
    // A starting sandbox is neither removed nor started again meanwhile (Busy).
    const auto it = m_entries.find(name);
    Q_ASSERT(it != m_entries.end());
    Entry &starting = it->second;
    if (!network) {
        starting.startingNetwork = nullptr;
        return done(failStart(name, network.error()), launch->usedTemplate);
    }
    launch->network = *network;
    if (!*launch->memoryFilled) {
        starting.startingNetwork = nullptr;
        dropNetwork(*launch);
        return done(failStart(name, launch->memoryFilled->error()), launch->usedTemplate);
    }
    if (auto configured = configureLaunch(starting, image, *launch); !configured) {
        starting.startingNetwork = nullptr;
        dropNetwork(*launch);
        return done(failStart(name, configured.error()), launch->usedTemplate);
    }
    launchVmm(starting, launch, done);
}

void SandboxService::launchVmm(Entry &entry, const std::shared_ptr<Launch> &launch,
                               const StartedOnce &done)
{
    const QString name = entry.sandbox.spec.name;
    std::unique_ptr<Vmm> vmm = makeVmm(entry.sandbox.spec.vmm.value_or(VmmKind::Qemu));
    if (!vmm) {
        launch->closeTap();
        entry.startingNetwork = nullptr;
        dropNetwork(*launch);
        return done(failStart(name,
                              Error {ErrorKind::BackendUnavailable,
                                     QStringLiteral("this airlockd cannot run %1 VMMs")
                                         .arg(vmmKindName(
                                             entry.sandbox.spec.vmm.value_or(VmmKind::Qemu)))}),
                    launch->usedTemplate);
    }
    Vmm *raw = vmm.get();
    // Connected before start(): the first console bytes may arrive before it is done.
    connect(raw, &Vmm::consoleOutput, this,
            [this, name](const QByteArray &bytes) { m_consoles.append(name, bytes); });
    entry.startingVmm = std::move(vmm);
    raw->start(launch->config, [this, name, launch, done](const Result<VmmRuntimeInfo> &info) {
        launched(name, launch, info, done);
    });
    // The VMM process has its own copy of the tap queue by now (or none: it failed).
    launch->closeTap();
}

Result<void> SandboxService::prepareLaunch(Entry &entry, const GuestImage &image,
                                           int incomingStateFd, StartSource source,
                                           bool allowTemplate, Launch &launch)
{
    const QString name = entry.sandbox.spec.name;
    AIRLOCK_TRY_INIT(vmmUid, m_uids.allocate(vmmUids()));
    AIRLOCK_TRY_INIT(runtimeDir, m_runtimeDirs.prepare(name, *vmmUid, m_config.vmmGid));
    if (!image.diskPath.isEmpty())
        AIRLOCK_TRY(m_disks.prepare(name, image, *vmmUid, m_config.vmmGid));
    launch.vmmUid = *vmmUid;
    launch.config.runtimeDir = *runtimeDir;
    launch.from = incomingStateFd >= 0 ? source : StartSource::Boot;
    // A template is its VMM's device state: the template source finds one of the sandbox's
    // VMM (TemplateService::templateKey). A Firecracker template needs the jail: its snapshot
    // names the drives by path, which only the jail makes the same for every sandbox.
    const bool templateLoads = entry.sandbox.spec.vmm.value_or(VmmKind::Qemu) == VmmKind::Qemu
        || FirecrackerJail::available();
    if (incomingStateFd < 0 && allowTemplate && entry.sandbox.spec.boot == BootMode::Template
        && m_templates && !entry.internal && image.diskPath.isEmpty() && templateLoads) {
        // Images with a root disk boot cold: a template's memory holds its own guest's page
        // cache and mounted filesystem, which a new sandbox's fresh overlay would contradict.
        // The source fills the memory file (createMemoryFile) and hands the device state.
        auto state = m_templates(name, entry.sandbox.spec);
        if (state) {
            launch.templateFd = state->deviceStateFd;
            launch.fillMemory = std::move(state->fillMemory);
            incomingStateFd = launch.templateFd;
            launch.from = StartSource::Template;
            launch.usedTemplate = true;
        } else if (state.error().kind != ErrorKind::NotFound) {
            qCWarning(lcSandbox, "%s: no template start (%s); booting cold", qPrintable(name),
                      qPrintable(state.error().message));
        }
    }
    // A cold boot gets fresh RAM; a restore brings the file its caller has filled.
    if (incomingStateFd < 0) {
        AIRLOCK_TRY_INIT(memory, createMemoryFile(name));
        ::close(*memory);
    }
    AIRLOCK_TRY(m_memory.handOver(name, *vmmUid, m_config.vmmGid));
    launch.config.incomingStateFd = incomingStateFd;

    m_consoles.clear(name);
    entry.sandbox.acceleration = m_config.acceleration;
    entry.sandbox.accelerationWarning = m_config.accelerationWarning;
    // Starting is only announced, not stored: a helper that dies now restarts with it stopped.
    // It also makes a second sandbox.start during this one an invalid_state error.
    entry.sandbox.state = SandboxState::Starting;
    entry.sandbox.stateReason.clear();
    // Taken from now on (markStopped() gives it back): another start meanwhile needs another.
    entry.vmmUid = *vmmUid;
    announce(entry);

    // Two long names may still share a hashed tap name: say who has it
    // (docs/reviews/2026-12-01-newuser-pass.md#l1).
    const QString tap = TapDevice::interfaceName(name, instance());
    if (const QString holder = tapHolder(tap, name); !holder.isEmpty())
        return failStart(name,
                         Error {ErrorKind::AlreadyExists,
                                QStringLiteral("the network device %1 of sandbox '%2' is in use "
                                               "by sandbox '%3'; rename one of them")
                                    .arg(tap, name, holder)});
    return {};
}

Result<void> SandboxService::configureLaunch(Entry &entry, const GuestImage &image, Launch &launch)
{
    const QString name = entry.sandbox.spec.name;
    const QString runtimeDir = launch.config.runtimeDir;
    const uid_t vmmUid = launch.vmmUid;
    const LinkAllocation &link = launch.network->link();
    const QString seedPath = QDir(runtimeDir).filePath(kSeedFile);
    auto seedContent = m_seed.files(name, launch.network->caCertificatePem());
    auto seed = seedContent ? SeedImage::write(seedPath, *seedContent)
                            : Result<void>(std::unexpected(seedContent.error()));
    auto tapFd = seed ? TapDevice::attach(launch.network->tapName())
                      : Result<int>(std::unexpected(seed.error()));
    AIRLOCK_TRY(tapFd);

    VmmLaunchConfig &config = launch.config;
    config.sandboxName = name;
    config.vcpus = entry.sandbox.spec.vcpus;
    config.memoryMib = entry.sandbox.spec.memoryMib;
    config.kernelPath = image.kernelPath;
    config.initrdPath = image.initrdPath;
    config.kernelArgs = image.kernelArgs;
    config.acceleration = m_config.acceleration;
    config.vmmUid = vmmUid;
    config.vmmGid = m_config.vmmGid;
    config.vmmGroups = m_config.vmmGroups;
    config.network.tapName = launch.network->tapName();
    config.network.tapFd = *tapFd;
    config.network.mac = link.macText();
    config.network.guestAddress = link.guest.toString();
    config.network.prefixLength = link.prefixLength;
    config.network.gateway = link.gateway.toString();
    config.seedImagePath = seedPath;
    if (!image.diskPath.isEmpty()) {
        config.rootDiskPath = m_disks.pathFor(name);
        config.rootDiskBasePath = image.diskPath;
    }
    config.memoryPath = m_memory.pathFor(name);
    config.benchPort = m_config.benchPort;
    return {};
}

void SandboxService::launched(const QString &name, const std::shared_ptr<Launch> &launch,
                              const Result<VmmRuntimeInfo> &info, const StartedOnce &done)
{
    launch->closeTap();
    // A starting sandbox cannot be deleted (remove() is Busy) nor killed (it has no vmm yet).
    const auto it = m_entries.find(name);
    Q_ASSERT(it != m_entries.end());
    Entry &entry = it->second;
    entry.startingNetwork = nullptr;
    std::unique_ptr<Vmm> vmm = std::move(entry.startingVmm);
    QObject::disconnect(vmm.get(), nullptr, this, nullptr);
    if (!info) {
        // Inside its own callback: deleted from the event loop.
        vmm.release()->deleteLater();
        // QemuMicrovm leaves no process behind on error, so the tap is free again.
        dropNetwork(*launch);
        return done(failStart(name, info.error()), launch->usedTemplate);
    }
    entry.network = std::exchange(launch->network, nullptr);
    entry.linkIndex = entry.network->link().index;
    entry.runtime = *info;
    entry.vmmUid = launch->vmmUid;
    entry.stopRequested = false;
    entry.sandbox.state = SandboxState::Running;
    entry.sandbox.stateReason.clear();
    entry.sandbox.startedAt = QDateTime::currentDateTimeUtc();
    entry.sandbox.vmmPid = info->pid;
    entry.sandbox.startedFrom = launch->from;
    entry.sandbox.identityWarning.clear();
    attachVmm(entry, std::move(vmm));
    qCInfo(lcSandbox, "started %s from %s (VMM pid %lld, %s)", qPrintable(name),
           qPrintable(startSourceName(launch->from)), static_cast<long long>(info->pid),
           qPrintable(accelerationName(m_config.acceleration)));
    // Recorded running first: a helper that dies during the refresh re-adopts it.
    commit(entry);
    if (launch->from != StartSource::Boot)
        refreshIdentity(entry, launch->from);
    done(entry.sandbox, launch->usedTemplate);
}

void SandboxService::dropNetwork(Launch &launch)
{
    m_networks.release(std::exchange(launch.network, nullptr));
}

std::unexpected<Error> SandboxService::failStart(const QString &name, const Error &error)
{
    qCWarning(lcSandbox, "%s: start failed: %s", qPrintable(name), qPrintable(error.message));
    if (auto current = find(name)) {
        markStopped(**current, error.message);
        commit(**current);
    }
    return std::unexpected(error);
}

Result<Sandbox> SandboxService::stop(const QString &name, int timeoutMs)
{
    AIRLOCK_TRY_INIT(found, find(name));
    Entry *entry = *found;
    if ((entry->sandbox.state != SandboxState::Running
         && entry->sandbox.state != SandboxState::Paused)
        || !entry->vmm)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2, not running")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    if (entry->heldStill > 0)
        return fail(ErrorKind::Busy,
                    QStringLiteral("a snapshot of sandbox '%1' is being taken; stop it once that "
                                   "has finished (or kill it)")
                        .arg(name));
    // A paused guest cannot see the power button. QMP answers in order: `cont` is done before
    // the power button is pressed.
    if (entry->sandbox.state == SandboxState::Paused)
        entry->vmm->resume({});
    entry->stopRequested = true;
    entry->sandbox.state = SandboxState::Stopping;
    commit(*entry);
    const Sandbox answer = entry->sandbox;
    // exited() may come synchronously from stop(); the answer is still "stopping" as documented.
    entry->vmm->stop(timeoutMs);
    return answer;
}

Result<Sandbox> SandboxService::kill(const QString &name)
{
    AIRLOCK_TRY_INIT(found, find(name));
    Entry *entry = *found;
    if (entry->startingVmm) {
        // Ends the pending start at once: launched() records the sandbox stopped.
        entry->startingVmm->kill();
        return entry->sandbox;
    }
    if (entry->sandbox.state == SandboxState::Stopped || !entry->vmm)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is already stopped").arg(name));
    killNow(*entry, QString());
    commit(*entry);
    return entry->sandbox;
}

void SandboxService::killNow(Entry &entry, const QString &reason)
{
    Vmm *vmm = entry.vmm.get();
    releaseVmm(entry);
    vmm->kill();
    // The table stays until the VMM is really gone (SIGKILL is not instant, and not waited for
    // here: the event loop serves everyone). A start that follows (a restore) waits for the
    // exit, and so for this network's teardown, which is connected first (whenExited()).
    const bool gone = vmm->waitForExit(0);
    entry.exitingVmm = gone ? nullptr : vmm;
    if (!gone) {
        // Connected before the network's teardown and any waiting start (whenExited()).
        connect(vmm, &Vmm::exited, this, [this, name = entry.sandbox.spec.name, vmm] {
            if (const auto it = m_entries.find(name);
                it != m_entries.end() && it->second.exitingVmm == vmm)
                it->second.exitingVmm = nullptr;
        });
    }
    releaseNetwork(entry, gone ? nullptr : vmm);
    markStopped(entry, reason);
}

void SandboxService::whenExited(Entry &entry, std::function<void(const Result<void> &)> then)
{
    Vmm *vmm = entry.exitingVmm.data();
    if (!vmm)
        return answerLater(this, std::move(then), Result<void>());
    const QString name = entry.sandbox.spec.name;
    // One answer: whichever comes first of the exit and the deadline.
    auto pending = std::make_shared<std::function<void(const Result<void> &)>>(std::move(then));
    auto finish = [pending](const Result<void> &result) {
        if (auto callback = std::exchange(*pending, nullptr))
            callback(result);
    };
    connect(
        vmm, &Vmm::exited, this, [finish] { finish({}); }, Qt::SingleShotConnection);
    QTimer::singleShot(kKillWaitMs, this, [this, name, finish] {
        const auto it = m_entries.find(name);
        if (it == m_entries.end() || !it->second.exitingVmm)
            return finish({});
        finish(fail(ErrorKind::OperationFailed,
                    QStringLiteral("the killed VMM of sandbox '%1' has not exited after %2 ms")
                        .arg(name)
                        .arg(kKillWaitMs)));
    });
}

Result<void> SandboxService::setStateReason(const QString &name, const QString &reason)
{
    AIRLOCK_TRY_INIT(found, findStopped(name));
    Entry *entry = *found;
    entry->sandbox.stateReason = reason;
    commit(*entry);
    return {};
}

Result<void> SandboxService::remove(const QString &name)
{
    AIRLOCK_TRY_INIT(found, find(name));
    Entry *entry = *found;
    if (entry->sandbox.state != SandboxState::Stopped)
        return fail(ErrorKind::Busy,
                    QStringLiteral("sandbox '%1' is %2; stop it before deleting it")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    const bool internal = entry->internal;
    if (!internal) {
        // Its last events go with it, not into a later sandbox of the same name.
        m_egress.forget(name);
        if (auto ok = m_registry.remove(name); !ok && ok.error().kind != ErrorKind::NotFound)
            return std::unexpected(ok.error());
        // Its policy changes too: a later sandbox of the same name starts without a past.
        m_policyHistory.remove(name);
    }
    // The name was validated on create, so this stays inside STATE/run.
    m_runtimeDirs.remove(name);
    m_disks.remove(name);
    SandboxNetwork::removeCa(m_config.stateDir, name);
    // Normally gone with its guest; one a crash left would hold RAM forever
    // (docs/reviews/2026-12-01-newuser-pass.md#m2).
    m_memory.remove(name);
    m_entries.erase(name);
    m_consoles.remove(name);
    qCInfo(lcSandbox, "deleted %s", qPrintable(name));
    if (!internal)
        Q_EMIT sandboxRemoved(name);
    return {};
}

Result<void> SandboxService::writeConsole(const QString &name, const QByteArray &bytes)
{
    AIRLOCK_TRY_INIT(found, find(name));
    Entry *entry = *found;
    // A paused guest's console buffers the keystrokes until it runs again.
    if ((entry->sandbox.state != SandboxState::Running
         && entry->sandbox.state != SandboxState::Paused)
        || !entry->vmm)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2, not running")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    entry->vmm->writeConsole(bytes);
    return {};
}

void SandboxService::holdStill(const QString &name)
{
    if (auto found = find(name))
        ++(*found)->heldStill;
}

void SandboxService::releaseStill(const QString &name)
{
    if (auto found = find(name); found && (*found)->heldStill > 0)
        --(*found)->heldStill;
}

void SandboxService::pause(const QString &name, Controlled done)
{
    auto found = find(name);
    if (!found)
        return done(std::unexpected(found.error()));
    Entry *entry = *found;
    if (entry->sandbox.state != SandboxState::Running || !entry->vmm)
        return done(fail(ErrorKind::InvalidState,
                         QStringLiteral("sandbox '%1' is %2, not running")
                             .arg(name, sandboxStateName(entry->sandbox.state))));
    if (entry->heldStill > 0)
        return done(fail(ErrorKind::Busy,
                         QStringLiteral("a snapshot of sandbox '%1' is being taken").arg(name)));
    entry->vmm->pause([this, name, vmm = entry->vmm.get(), done](const Result<void> &paused) {
        if (!paused)
            return done(std::unexpected(paused.error()));
        settleControl(name, vmm, SandboxState::Paused, done);
    });
}

void SandboxService::resume(const QString &name, Controlled done)
{
    auto found = find(name);
    if (!found)
        return done(std::unexpected(found.error()));
    Entry *entry = *found;
    const auto notPaused = [&] {
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2, not paused")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    };
    if ((entry->sandbox.state != SandboxState::Paused
         && entry->sandbox.state != SandboxState::Running)
        || !entry->vmm)
        return done(notPaused());
    if (entry->heldStill > 0)
        return done(fail(ErrorKind::Busy,
                         QStringLiteral("a snapshot of sandbox '%1' is being taken").arg(name)));
    Vmm *vmm = entry->vmm.get();
    const auto resume = [this, name, vmm, done] {
        vmm->resume([this, name, vmm, done](const Result<void> &resumed) {
            if (!resumed)
                return done(std::unexpected(resumed.error()));
            settleControl(name, vmm, SandboxState::Running, done);
        });
    };
    if (entry->sandbox.state != SandboxState::Running)
        return resume();
    // What QEMU says, not what we recorded: CPUs that stand still are resumed. The VMM calls
    // back only while it lives.
    vmm->queryRunning([name, resume, done, refused = notPaused()](const Result<bool> &running) {
        if (!running || *running)
            return done(refused);
        qCWarning(lcSandbox, "%s: recorded as running, but its CPUs stand still; resuming",
                  qPrintable(name));
        resume();
    });
}

void SandboxService::settleControl(const QString &name, const Vmm *vmm, SandboxState state,
                                   const Controlled &done)
{
    // The answer comes from the VMM's QMP socket: the sandbox may have been killed (and even
    // started again with another VMM) meanwhile. The callback itself only runs while `vmm`
    // lives, and the service owns every VMM.
    auto found = find(name);
    if (!found || (*found)->vmm.get() != vmm)
        return done(fail(ErrorKind::InvalidState,
                         QStringLiteral("sandbox '%1' stopped meanwhile").arg(name)));
    Entry *entry = *found;
    entry->sandbox.state = state;
    qCInfo(lcSandbox, "%s %s", state == SandboxState::Paused ? "paused" : "resumed",
           qPrintable(name));
    commit(*entry);
    done(entry->sandbox);
}

Vmm *SandboxService::vmmOf(const QString &name) const
{
    auto entry = find(name);
    return entry ? (*entry)->vmm.get() : nullptr;
}

GuestMemory::HostFigures SandboxService::hostMemory() const
{
    return m_memory.hostFigures();
}

QString SandboxService::memoryPathFor(const QString &name) const
{
    return m_memory.pathFor(name);
}

Result<int> SandboxService::createMemoryFile(const QString &name)
{
    AIRLOCK_TRY_INIT(found, find(name));
    const Entry *entry = *found;
    if (entry->sandbox.state != SandboxState::Stopped
        && entry->sandbox.state != SandboxState::Starting)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2; its memory is in use")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    return m_memory.create(name, entry->sandbox.spec.memoryMib);
}

Result<GuestImage> SandboxService::imageOf(const QString &name) const
{
    AIRLOCK_TRY_INIT(entry, find(name));
    auto image = m_images.find((*entry)->sandbox.spec.image);
    if (!image)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1' of sandbox '%2' is missing: %3")
                        .arg((*entry)->sandbox.spec.image, name, image.error().message));
    return image;
}

QString SandboxService::diskPathFor(const QString &name) const
{
    return m_disks.pathFor(name);
}

QString SandboxService::diskIdentityOf(const QString &name) const
{
    return m_disks.identityOf(name);
}

Result<void> SandboxService::replaceDisk(const QString &name, const QString &identity,
                                         const std::function<Result<void>(int fd)> &fill)
{
    AIRLOCK_TRY_INIT(found, find(name));
    if ((*found)->sandbox.state != SandboxState::Stopped)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2; its disk is in use")
                        .arg(name, sandboxStateName((*found)->sandbox.state)));
    return m_disks.replace(name, identity, fill);
}

Result<EgressPolicy> SandboxService::policy(const QString &name) const
{
    AIRLOCK_TRY_INIT(entry, find(name));
    return (*entry)->policy;
}

Result<void> SandboxService::setPolicy(const QString &name, const EgressPolicy &policy,
                                       GatewayProcess::PolicyAck enforced,
                                       const PolicyChangeOrigin &origin)
{
    AIRLOCK_TRY_INIT(found, find(name));
    AIRLOCK_TRY(policy.validate());
    Entry *entry = *found;
    SandboxRecord record = entry->record();
    record.policy = policy;
    // Persist first: a failed write leaves both the file and the live policy as they were.
    AIRLOCK_TRY(m_registry.update(record));
    const EgressPolicy before = std::exchange(entry->policy, policy);
    qCInfo(lcSandbox, "%s: egress policy set (%lld rules, revision %s, source %s)",
           qPrintable(name), static_cast<long long>(policy.rules.size()),
           qPrintable(policy.revision()), qPrintable(origin.source));
    if (!entry->internal) {
        if (auto recorded = m_policyHistory.append(name, before, policy, origin); !recorded)
            qCWarning(lcSandbox, "%s: policy change not recorded: %s", qPrintable(name),
                      qPrintable(recorded.error().message));
    }
    Q_EMIT policyChanged(name);
    // A starting sandbox's network has its gateway up (or coming): it gets the policy before
    // the guest runs.
    SandboxNetwork *network = entry->network ? entry->network : entry->startingNetwork;
    if (!network) {
        if (enforced)
            enforced({});
        return {};
    }
    // Stored either way: a restarting gateway is started with the stored policy.
    if (auto applied = network->setPolicy(policy, enforced); !applied) {
        qCWarning(lcSandbox, "%s: %s", qPrintable(name), qPrintable(applied.error().message));
        if (enforced)
            enforced(std::unexpected(applied.error()));
    }
    return {};
}

void SandboxService::forgetSecret(const QString &secret)
{
    for (auto &[name, entry] : m_entries) {
        if (!entry.network)
            continue;
        if (auto forgotten = entry.network->forgetSecret(secret); !forgotten)
            qCWarning(lcSandbox, "%s: %s", qPrintable(name), qPrintable(forgotten.error().message));
    }
}

Result<QJsonArray> SandboxService::policyHistory(const QString &name, int limit) const
{
    AIRLOCK_TRY(find(name));
    return m_policyHistory.entries(name, limit);
}

Result<QList<EgressRecord>>
SandboxService::egressHistory(const QString &name, std::optional<qint64> since, int limit) const
{
    AIRLOCK_TRY(find(name));
    return m_registry.egressHistory(name, since, limit);
}

Result<QList<SeedFile>> SandboxService::seedFiles(const QString &name)
{
    AIRLOCK_TRY_INIT(found, find(name));
    const Entry *entry = *found;
    if (!entry->network)
        return fail(
            ErrorKind::InvalidState,
            QStringLiteral("sandbox '%1' has no network, so no CA to give its guest").arg(name));
    return m_seed.files(name, entry->network->caCertificatePem());
}

Result<void> SandboxService::refreshCredentials(const QString &name)
{
    auto found = find(name);
    // An adopting guest's gateway asks for its credentials when it starts (onAdopted).
    if (!found && found.error().kind == ErrorKind::Busy)
        return {};
    AIRLOCK_TRY(found);
    if (!(*found)->network)
        return {};
    return (*found)->network->pushCredentials();
}

const SandboxNetwork *SandboxService::network(const QString &name) const
{
    const auto it = m_entries.find(name);
    return it == m_entries.end() ? nullptr : it->second.network;
}

void SandboxService::releaseNetwork(Entry &entry, Vmm *vmmStillRunning)
{
    SandboxNetwork *network = std::exchange(entry.network, nullptr);
    entry.linkIndex = -1;
    m_networks.release(network, vmmStillRunning, supersededCheck(entry.sandbox.spec.name, network));
}

std::function<bool()> SandboxService::supersededCheck(const QString &name,
                                                      const SandboxNetwork *network) const
{
    // Asked when a deferred teardown runs: the sandbox may run again meanwhile.
    return [this, name, network] {
        const auto it = m_entries.find(name);
        return it != m_entries.end() && it->second.network && it->second.network != network;
    };
}

void SandboxService::recordEgress(const QString &name, const QJsonObject &object)
{
    // The helper's own guests are not announced, their traffic neither.
    if (const auto it = m_entries.find(name); it != m_entries.end() && it->second.internal)
        return;
    m_egress.record(name, object);
}

Result<SandboxService::Entry *> SandboxService::find(const QString &name)
{
    AIRLOCK_TRY(validateName(name));
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        return notFound(name);
    if (it->second.sandbox.state == SandboxState::Adopting)
        return fail(ErrorKind::Busy,
                    QStringLiteral("sandbox '%1' is being re-adopted after a helper restart; "
                                   "try again once it is no longer adopting")
                        .arg(name));
    return &it->second;
}

Result<SandboxService::Entry *> SandboxService::findStopped(const QString &name)
{
    auto found = find(name);
    if (!found)
        return found;
    if ((*found)->sandbox.state != SandboxState::Stopped)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2, not stopped")
                        .arg(name, sandboxStateName((*found)->sandbox.state)));
    return found;
}

Result<const SandboxService::Entry *> SandboxService::find(const QString &name) const
{
    AIRLOCK_TRY(validateName(name));
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        return notFound(name);
    return &it->second;
}

std::vector<uid_t> SandboxService::vmmUids() const
{
    std::vector<uid_t> uids;
    for (const auto &[name, entry] : m_entries) {
        if (entry.vmmUid != 0)
            uids.push_back(entry.vmmUid);
    }
    return uids;
}

void SandboxService::returnFilesToRoot(const QString &name) const
{
    // docs/reviews/2026-12-01-newuser-pass.md#m1: VMM uids are reused. A stopped sandbox's files
    // owned by its last VMM's uid would be open to whichever VMM gets that uid next; start() hands
    // them over again.
    m_runtimeDirs.returnToRoot(name);
    m_disks.returnToRoot(name);
}

void SandboxService::attachVmm(Entry &entry, std::unique_ptr<Vmm> vmm)
{
    const QString name = entry.sandbox.spec.name;
    Vmm *raw = vmm.get();
    connect(raw, &Vmm::consoleOutput, this,
            [this, name](const QByteArray &bytes) { m_consoles.append(name, bytes); });
    connect(raw, &Vmm::exited, this,
            [this, name, raw](const QString &reason) { onVmmExited(name, raw, reason); });
    entry.vmm = std::move(vmm);
}

void SandboxService::releaseVmm(Entry &entry)
{
    if (!entry.vmm)
        return;
    Vmm *vmm = entry.vmm.release();
    QObject::disconnect(vmm, nullptr, this, nullptr);
    vmm->setParent(this);
    connect(vmm, &Vmm::exited, vmm, &QObject::deleteLater);
}

void SandboxService::onVmmExited(const QString &name, Vmm *vmm, const QString &reason)
{
    const auto it = m_entries.find(name);
    if (it == m_entries.end() || it->second.vmm.get() != vmm)
        return;
    Entry &entry = it->second;
    // Owned by the entry until now; it is still inside its own signal, so delete it later.
    entry.vmm.release()->deleteLater();
    const QString why = entry.stopRequested ? QString() : reason;
    qCInfo(lcSandbox, "%s: VMM exited%s%s", qPrintable(name), why.isEmpty() ? "" : ": ",
           qPrintable(why));
    markStopped(entry, why);
    commit(entry);
}

void SandboxService::markStopped(Entry &entry, const QString &reason)
{
    // Callers reach here once the VMM is gone (kill() has released the network already).
    releaseNetwork(entry);
    returnFilesToRoot(entry.sandbox.spec.name);
    // The guest's RAM goes with the guest (and the directory with its last file).
    m_memory.remove(entry.sandbox.spec.name);
    entry.sandbox.state = SandboxState::Stopped;
    entry.sandbox.stateReason = reason;
    entry.sandbox.startedAt = QDateTime();
    entry.sandbox.vmmPid = 0;
    entry.sandbox.startedFrom = StartSource::None;
    entry.sandbox.identityWarning.clear();
    entry.runtime = VmmRuntimeInfo {};
    // Whoever waits for an identity refresh of this guest learns that it is gone.
    settle(entry);
    entry.stopRequested = false;
    entry.vmmUid = 0;
}

void SandboxService::commit(Entry &entry)
{
    if (entry.internal)
        return;
    if (auto ok = m_registry.update(entry.record()); !ok)
        qCWarning(lcSandbox, "%s", qPrintable(ok.error().message));
    announce(entry);
}

void SandboxService::announce(const Entry &entry)
{
    if (!entry.internal)
        Q_EMIT sandboxChanged(entry.sandbox);
}

} // namespace airlock

#include "core/daemon/sandboxservice.h"

#include "core/daemon/consolehub.h"
#include "core/model/egressevent.h"
#include "core/model/names.h"
#include "core/net/helperinstance.h"
#include "core/net/nftablestable.h"
#include "core/net/tapdevice.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/rootdisk.h"
#include "core/vmm/seedimage.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QSet>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcSandbox, "airlock.daemon.sandbox")

std::unexpected<Error> notFound(const QString &name)
{
    return fail(ErrorKind::NotFound, QStringLiteral("no sandbox named '%1'").arg(name));
}

bool setMode(const QString &path, mode_t mode)
{
    return ::chmod(QFile::encodeName(path).constData(), mode) == 0;
}

/// How long kill() waits for a SIGKILLed VMM to be gone before leaving its network's teardown
/// to its exit.
constexpr int kKillWaitMs = 2000;

/// Largest egress event stored; a gateway (untrusted input parser) must not fill the registry.
constexpr qsizetype kMaxEgressEventBytes = 16 * 1024;

const QString kSeedFile = QStringLiteral("seed.tar");
/// Beside each overlay: the identity of the image disk it was made on (GuestImage::diskIdentity).
const QString kDiskIdentitySuffix = QStringLiteral(".base");

/// Writes `bytes` to a fresh `path` (replaced by rename, durably).
bool writeFileAtomically(const QString &path, const QByteArray &bytes)
{
    const QByteArray tmp = QFile::encodeName(path + QStringLiteral(".tmp"));
    ::unlink(tmp.constData());
    const int fd =
        ::open(tmp.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    const bool written = ::write(fd, bytes.constData(), size_t(bytes.size())) == bytes.size()
        && ::fdatasync(fd) == 0;
    ::close(fd);
    if (!written || ::rename(tmp.constData(), QFile::encodeName(path).constData()) != 0) {
        ::unlink(tmp.constData());
        return false;
    }
    return true;
}

} // namespace

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
    , m_factory(std::move(factory))
    , m_config(std::move(config))
    , m_bindings(registry)
{
    if (m_config.network.instance.isEmpty())
        m_config.network.instance = HelperInstance::tagFor(m_config.stateDir);
    connect(&m_tableWatch, &QTimer::timeout, this, &SandboxService::checkTables);
}

SandboxService::~SandboxService()
{
    // Decisions the gateways reported last are history too (not announced: no one listens).
    if (!m_pendingEgress.isEmpty())
        (void)m_registry.appendEgressBatch(m_pendingEgress, m_config.egressHistory);
    // Deliberately no stop or kill: the guests outlive this helper and are re-adopted.
    for (auto &[name, entry] : m_entries) {
        if (entry.vmm)
            QObject::disconnect(entry.vmm.get(), nullptr, this, nullptr);
    }
    // Only when no guest's RAM file is left in it (docs/reviews/2026-11-30-redteam-pass.md#f7: one
    // empty dir per run).
    if (m_pool)
        ::rmdir(QFile::encodeName(memoryDir()).constData());
}

Result<void> SandboxService::restore()
{
    const QString runDir = QDir(m_config.stateDir).filePath(QStringLiteral("run"));
    if (!QDir().mkpath(runDir) || !setMode(m_config.stateDir, 0711) || !setMode(runDir, 0711))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare the runtime directory %1").arg(runDir));
    auto pool = AddressPool::create(m_config.addressPool);
    if (!pool)
        return std::unexpected(pool.error());
    m_pool = std::move(*pool);
    // The RAM file directory is made by the first guest that needs it (createMemoryFile).
    removeInternalLeftovers();
    // Root's: each overlay belongs to its VMM's user, the directory never does.
    if (!QDir().mkpath(disksDir()) || !setMode(disksDir(), 0711))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare the disk directory %1").arg(disksDir()));
    auto records = m_registry.load();
    if (!records)
        return std::unexpected(records.error());
    for (const SandboxRecord &record : *records) {
        Entry &entry = m_entries[record.sandbox.spec.name];
        entry.sandbox = record.sandbox;
        entry.runtime = record.runtime;
        entry.policy = record.policy;
        // Normally gone already: a gateway exits when its helper's control socket closes.
        SandboxNetwork::killLeftoverGateway(m_config.stateDir, record.sandbox.spec.name);
        if (entry.sandbox.state == SandboxState::Stopped) {
            killOrphanVmm(entry.sandbox.spec.name);
            // Also what a helper without the fix of docs/reviews/2026-12-01-newuser-pass.md#m1 left
            // with a VMM's uid.
            returnFilesToRoot(entry.sandbox.spec.name);
            continue;
        }
        const QString &name = entry.sandbox.spec.name;
        std::unique_ptr<Vmm> vmm = m_factory();
        auto adopted = record.runtime.pid > 0 ? vmm->adopt(record.runtime)
                                              : Result<void>(fail(ErrorKind::NotFound, {}));
        if (adopted) {
            qCInfo(lcSandbox, "re-adopted %s (VMM pid %lld)", qPrintable(name),
                   static_cast<long long>(record.runtime.pid));
            if (entry.sandbox.state != SandboxState::Paused)
                entry.sandbox.state = SandboxState::Running;
            entry.sandbox.vmmPid = record.runtime.pid;
            entry.vmmUid = runtimeDirOwner(name);
            attachVmm(entry, std::move(vmm));
            if (restoreNetwork(entry, record.linkIndex))
                reconcileRunState(entry);
        } else {
            qCInfo(lcSandbox, "%s: VMM pid %lld is gone (%s); marking it stopped", qPrintable(name),
                   static_cast<long long>(record.runtime.pid), qPrintable(adopted.error().message));
            markStopped(entry, vanishedReason());
        }
        if (auto ok = m_registry.update(entry.record()); !ok)
            qCWarning(lcSandbox, "%s", qPrintable(ok.error().message));
    }
    removeLeftovers();
    removeStaleMemoryFiles();
    if (m_config.tableCheckIntervalMs > 0)
        m_tableWatch.start(m_config.tableCheckIntervalMs);
    return {};
}

void SandboxService::removeStaleMemoryFiles()
{
    // A guest's RAM file lives as long as its guest. One whose guest does not run (a helper
    // killed between filling it and starting the VMM: a fork, a restore, a template start)
    // would keep host RAM in tmpfs forever (docs/reviews/2026-12-01-newuser-pass.md#m2). Names
    // starting with '.' are the snapshot service's template caches.
    const QDir dir(memoryDir());
    for (const QString &file : dir.entryList(QDir::Files | QDir::System)) {
        if (file.startsWith(u'.'))
            continue;
        const QString name = file.section(u'.', 0, 0);
        const auto it = m_entries.find(name);
        const bool live =
            it != m_entries.end() && it->second.vmm && file == name + QStringLiteral(".ram");
        if (!live) {
            qCInfo(lcSandbox, "removing the leftover guest memory file %s", qPrintable(file));
            QFile::remove(dir.filePath(file));
        }
    }
    ::rmdir(QFile::encodeName(memoryDir()).constData());
}

void SandboxService::checkTables()
{
    // Names first: a kill below changes m_entries' values, never its keys.
    QStringList names;
    for (const auto &[name, entry] : m_entries) {
        if (entry.network && entry.vmm
            && (entry.sandbox.state == SandboxState::Running
                || entry.sandbox.state == SandboxState::Paused))
            names.append(name);
    }
    for (const QString &name : std::as_const(names)) {
        const auto it = m_entries.find(name);
        if (it == m_entries.end() || !it->second.network)
            continue;
        Entry &entry = it->second;
        const auto intact = entry.network->verifyTable();
        if (intact)
            continue;
        // docs/architecture.md: a VM never runs without its table. Whoever removed or edited it
        // (another helper's cleanup, an administrator's `nft flush ruleset`), the guest must
        // not run on unfiltered: the table is loaded again at once, or the guest goes.
        const QString table = NftablesTable::tableName(name, instance());
        qCWarning(lcSandbox, "%s: its nftables table is not as loaded (%s); loading it again",
                  qPrintable(name), qPrintable(intact.error().message));
        EgressEvent event;
        event.time = QDateTime::currentDateTimeUtc();
        event.sandbox = name;
        event.layer = EgressLayer::Tcp;
        event.allowed = false;
        if (auto reloaded = entry.network->reloadTable(); reloaded) {
            event.reason = wireName(EgressReason::FirewallRestored);
            event.detail = QStringLiteral("%1; the table %2 was loaded again. Until then the "
                                          "guest's traffic may have gone unfiltered")
                               .arg(intact.error().message, table);
            recordEgress(name, event.toJson());
            continue;
        } else {
            const QString reason =
                QStringLiteral("its nftables table %1 was removed or changed (%2) and could not "
                               "be loaded again (%3); the VMM was killed")
                    .arg(table, intact.error().message, reloaded.error().message);
            qCWarning(lcSandbox, "%s: %s", qPrintable(name), qPrintable(reason));
            event.reason = wireName(EgressReason::FirewallLost);
            event.detail = reason;
            recordEgress(name, event.toJson());
            if (entry.sandbox.state == SandboxState::Stopped || !entry.vmm)
                continue;
            Vmm *vmm = entry.vmm.get();
            releaseVmm(entry);
            vmm->kill();
            releaseNetwork(entry, vmm->waitForExit(kKillWaitMs) ? nullptr : vmm);
            markStopped(entry, reason);
            commit(entry);
        }
    }
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
    // Root's directory: a VMM may use its own RAM file but never replace or add entries.
    if (!QDir().mkpath(memoryDir()) || !setMode(memoryDir(), 0711)
        || ::chown(QFile::encodeName(memoryDir()).constData(), 0, 0) != 0)
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("cannot prepare the guest memory directory %1").arg(memoryDir()));
    return {};
}

void SandboxService::reconcileRunState(Entry &entry)
{
    const QString &name = entry.sandbox.spec.name;
    auto running = entry.vmm->queryRunning();
    if (!running) {
        qCWarning(lcSandbox, "%s: cannot query the VMM's run state: %s", qPrintable(name),
                  qPrintable(running.error().message));
        return;
    }
    if (*running) {
        if (entry.sandbox.state == SandboxState::Paused) {
            qCInfo(lcSandbox, "%s: recorded as paused, but its guest runs", qPrintable(name));
            entry.sandbox.state = SandboxState::Running;
        }
        return;
    }
    if (entry.sandbox.state == SandboxState::Paused)
        return;
    // Recorded running, CPUs stopped: the helper died between a snapshot's pause and its
    // resume (docs/reviews/2026-11-30-redteam-pass.md#f1). Nobody asked for the pause, so the guest
    // runs on.
    if (auto resumed = entry.vmm->resume(); resumed) {
        qCWarning(lcSandbox, "%s: resumed a guest left paused by an interrupted snapshot",
                  qPrintable(name));
    } else {
        qCWarning(lcSandbox,
                  "%s: its guest stands still and cannot be resumed (%s); showing it "
                  "as paused",
                  qPrintable(name), qPrintable(resumed.error().message));
        entry.sandbox.state = SandboxState::Paused;
    }
}

void SandboxService::removeInternalLeftovers()
{
    // Internal guests are never in the registry: a helper that died while preparing a template
    // left its runtime dir (and perhaps its VMM) behind. Taps and tables follow in
    // removeLeftovers().
    const QDir run(QDir(m_config.stateDir).filePath(QStringLiteral("run")));
    for (const QString &name : run.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        if (!name.startsWith(kInternalPrefix) || !validateName(name))
            continue;
        qCInfo(lcSandbox, "removing what the internal guest %s left", qPrintable(name));
        SandboxNetwork::killLeftoverGateway(m_config.stateDir, name);
        killOrphanVmm(name, /*wait=*/true);
        QDir(runtimeDirFor(name)).removeRecursively();
        SandboxNetwork::removeCa(m_config.stateDir, name);
        ::unlink(QFile::encodeName(memoryPathFor(name)).constData());
    }
}

void SandboxService::refreshIdentity(Entry &entry, StartSource from)
{
    const QString name = entry.sandbox.spec.name;
    GuestIdentity identity;
    identity.hostname = name;
    if (entry.network) {
        const LinkAllocation &link = entry.network->link();
        identity.mac = link.macText();
        identity.address = link.guest.toString();
        identity.prefixLength = link.prefixLength;
        identity.gateway = link.gateway.toString();
        identity.dns = identity.gateway;
        auto files = seedFilesWith(name, entry.network->caCertificatePem());
        if (!files) {
            identityRefreshed(entry, from, std::unexpected(files.error()));
            return;
        }
        identity.files = *files;
    }
    // Mixed into the guest's pool: the guest's RNG state is otherwise a copy of the
    // snapshot's, shared with every other guest started from it.
    identity.entropy.resize(64);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(identity.entropy.data()),
                                          identity.entropy.size() / 4);
    Vmm *vmm = entry.vmm.get();
    GuestAgent *agent = vmm ? vmm->agent() : nullptr;
    if (!agent) {
        identityRefreshed(
            entry, from,
            fail(ErrorKind::OperationFailed, QStringLiteral("the VMM has no guest agent channel")));
        return;
    }
    // Answered from the event loop: a guest that takes its time (or never answers) does not
    // hold up the helper's other clients.
    entry.refreshing = true;
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    agent->refresh(identity, m_config.agentTimeoutMs,
                   [this, name, vmm, from, timer](const Result<void> &done) {
                       const auto it = m_entries.find(name);
                       // Stopped or started again meanwhile: markStopped() settled it.
                       if (it == m_entries.end() || it->second.vmm.get() != vmm)
                           return;
                       if (done)
                           qCInfo(lcSandbox, "%s: the guest confirmed its new identity in %lld ms",
                                  qPrintable(name), static_cast<long long>(timer->elapsed()));
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
        entry.sandbox.identityWarning =
            QStringLiteral("the guest did not confirm its new identity (%1): its hostname, "
                           "addresses and CA may still be those of the snapshot, so its network "
                           "may not work until it is restarted")
                .arg(done.error().message);
        qCWarning(lcSandbox, "%s: %s", qPrintable(name), qPrintable(entry.sandbox.identityWarning));
    }
    if (!done && from == StartSource::Template) {
        // A template guest with the template's identity is of no use (unlike a fork, whose
        // state was asked for): boot this one instead; its waiters wait for that.
        qCWarning(lcSandbox, "%s: booting cold instead of the template", qPrintable(name));
        auto waiters = std::exchange(entry.settled, {});
        kill(name);
        if (auto cold = startOnce(name, -1, StartSource::Boot, nullptr); !cold)
            qCWarning(lcSandbox, "%s: %s", qPrintable(name), qPrintable(cold.error().message));
        for (const auto &waiter : waiters)
            waiter();
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

bool SandboxService::restoreNetwork(Entry &entry, qint64 linkIndex)
{
    const QString name = entry.sandbox.spec.name;
    Result<void> up = fail(ErrorKind::NotFound, QStringLiteral("no network link was recorded"));
    if (linkIndex >= 0 && linkIndex < qint64(m_pool->capacity())) {
        auto link = m_pool->reserve(quint32(linkIndex));
        if (!link) {
            up = std::unexpected(link.error());
        } else {
            SandboxNetwork *network = makeNetwork(name, *link, entry.vmmUid, entry.policy);
            up = network->up(true);
            if (up) {
                entry.network = network;
                entry.linkIndex = linkIndex;
                return true;
            }
            delete network;
            m_pool->release(quint32(linkIndex));
        }
    }
    // A VM never runs without its table and gateway.
    const QString reason =
        QStringLiteral("its network could not be restored: %1").arg(up.error().message);
    qCWarning(lcSandbox, "%s: killing the re-adopted VMM: %s", qPrintable(name),
              qPrintable(reason));
    Vmm *vmm = entry.vmm.get();
    releaseVmm(entry);
    const QString tap = TapDevice::interfaceName(name, instance());
    connect(vmm, &Vmm::exited, this, [tap] { TapDevice::remove(tap); });
    vmm->kill();
    markStopped(entry, reason);
    return false;
}

void SandboxService::removeLeftovers()
{
    // Disks of sandboxes the registry no longer has (a helper killed inside remove()), and
    // half-written ones (a restore or fork that was interrupted), and a snapshot's overlay copy
    // on a file system without O_TMPFILE that a kill caught before its unlink (DiskCopy).
    const QStringList disks = QDir(disksDir()).entryList(QDir::Files | QDir::System);
    for (const QString &file : disks) {
        const QString sandbox = file.section(u'.', 0, 0);
        if (file.endsWith(QStringLiteral(".tmp")) || !m_entries.contains(sandbox)) {
            qCInfo(lcSandbox, "removing leftover disk file %s", qPrintable(file));
            QFile::remove(QDir(disksDir()).filePath(file));
        }
    }
    QSet<QString> taps;
    QSet<QString> tables;
    for (const auto &[name, entry] : m_entries) {
        if (entry.network) {
            taps.insert(entry.network->tapName());
            tables.insert(name);
        }
    }
    // Only this helper's (its instance tag): another helper in the same namespace keeps its
    // tables and taps (docs/reviews/2026-12-01-newuser-pass.md#h1).
    if (auto leftovers = NftablesTable::listLeftoverTables(instance()); leftovers) {
        for (const QString &sandbox : *leftovers) {
            if (tables.contains(sandbox))
                continue;
            qCInfo(lcSandbox, "removing leftover nftables table of %s", qPrintable(sandbox));
            if (auto removed = NftablesTable::remove(sandbox, instance()); !removed)
                qCWarning(lcSandbox, "%s", qPrintable(removed.error().message));
        }
    } else {
        qCWarning(lcSandbox, "%s", qPrintable(leftovers.error().message));
    }
    if (auto leftovers = TapDevice::listLeftovers(instance()); leftovers) {
        for (const QString &tap : *leftovers) {
            if (taps.contains(tap))
                continue;
            qCInfo(lcSandbox, "removing leftover tap %s", qPrintable(tap));
            if (auto removed = TapDevice::remove(tap); !removed)
                qCWarning(lcSandbox, "%s", qPrintable(removed.error().message));
        }
    } else {
        qCWarning(lcSandbox, "%s", qPrintable(leftovers.error().message));
    }
}

void SandboxService::killOrphanVmm(const QString &name, bool wait) const
{
    // A helper killed while a VMM was starting never recorded its pid: the registry says stopped
    // while QEMU runs on, holding the runtime dir. Its pid file is written by the VMM user, so
    // only a process of that user whose command line names this runtime dir is believed.
    const QString runtimeDir = runtimeDirFor(name);
    QFile pidFile(QDir(runtimeDir).filePath(QemuCommand::kPidFile.toString()));
    if (!pidFile.open(QIODevice::ReadOnly))
        return;
    bool ok = false;
    const pid_t pid = pid_t(pidFile.read(32).trimmed().toLongLong(&ok));
    if (!ok || pid <= 1)
        return;
    const QString proc = QStringLiteral("/proc/%1").arg(pid);
    QFile cmdline(proc + QStringLiteral("/cmdline"));
    struct stat info
    {
    };
    const uid_t owner = runtimeDirOwner(name);
    if (owner == 0 || ::stat(QFile::encodeName(proc).constData(), &info) != 0
        || info.st_uid != owner || !cmdline.open(QIODevice::ReadOnly)
        || !cmdline.readAll().contains(QFile::encodeName(runtimeDir)))
        return;
    qCWarning(lcSandbox, "%s: killing VMM pid %d left running by an interrupted start",
              qPrintable(name), int(pid));
    ::kill(pid, SIGKILL);
    // Not our child: watch /proc until it is gone, so its tap is free for removal.
    for (int i = 0; wait && i < 200 && ::kill(pid, 0) == 0; ++i) {
        QFile state(proc + QStringLiteral("/stat"));
        if (state.open(QIODevice::ReadOnly) && state.readAll().contains(") Z "))
            break;
        ::usleep(10000);
    }
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
    auto entry = find(name);
    if (!entry)
        return std::unexpected(entry.error());
    return (*entry)->sandbox;
}

Result<Sandbox> SandboxService::create(const SandboxSpec &spec, bool internal)
{
    if (auto ok = spec.validate(); !ok)
        return std::unexpected(ok.error());
    if (spec.name.startsWith(kInternalPrefix) != internal)
        return fail(ErrorKind::InvalidName,
                    QStringLiteral("sandbox names starting with '%1' are reserved for the helper")
                        .arg(kInternalPrefix));
    if (m_entries.contains(spec.name))
        return fail(ErrorKind::AlreadyExists,
                    QStringLiteral("a sandbox named '%1' already exists").arg(spec.name));
    if (auto image = m_images.find(spec.image); !image)
        return fail(ErrorKind::NotFound,
                    QStringLiteral("no image '%1' in the image store").arg(spec.image));
    Entry entry;
    entry.sandbox.spec = spec;
    entry.sandbox.createdAt = QDateTime::currentDateTimeUtc();
    entry.internal = internal;
    if (!internal) {
        if (auto ok = m_registry.insert(entry.record()); !ok)
            return std::unexpected(ok.error());
    }
    Entry &stored = m_entries[spec.name] = std::move(entry);
    qCInfo(lcSandbox, "created %s (%d vCPU, %d MiB, image %s)", qPrintable(spec.name), spec.vcpus,
           spec.memoryMib, qPrintable(spec.image));
    announce(stored);
    return stored.sandbox;
}

Result<Sandbox> SandboxService::start(const QString &name, int incomingStateFd, StartSource source)
{
    bool usedTemplate = false;
    auto started = startOnce(name, incomingStateFd, source, &usedTemplate);
    if (started || !usedTemplate)
        return started;
    // A template QEMU cannot load (made by another QEMU, damaged) must not stop the sandbox.
    qCWarning(lcSandbox, "%s: the template start failed (%s); booting cold", qPrintable(name),
              qPrintable(started.error().message));
    return startOnce(name, -1, StartSource::Boot, nullptr);
}

Result<Sandbox> SandboxService::startOnce(const QString &name, int incomingStateFd,
                                          StartSource source, bool *usedTemplate)
{
    auto found = findStopped(name);
    if (!found)
        return std::unexpected(found.error());
    Entry *entry = *found;
    auto image = m_images.find(entry->sandbox.spec.image);
    if (!image)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1' of sandbox '%2' is missing: %3")
                        .arg(entry->sandbox.spec.image, name, image.error().message));
    auto vmmUid = allocateVmmUid();
    if (!vmmUid)
        return std::unexpected(vmmUid.error());
    auto runtimeDir = prepareRuntimeDir(name, *vmmUid);
    if (!runtimeDir)
        return std::unexpected(runtimeDir.error());
    if (!image->diskPath.isEmpty()) {
        if (auto disk = prepareDisk(name, *image, *vmmUid); !disk)
            return std::unexpected(disk.error());
    }
    StartSource from = incomingStateFd >= 0 ? source : StartSource::Boot;
    int templateFd = -1;
    const auto closeTemplate = qScopeGuard([&templateFd] {
        if (templateFd >= 0)
            ::close(templateFd);
    });
    if (incomingStateFd < 0 && usedTemplate && entry->sandbox.spec.boot == BootMode::Template
        && m_templates && !entry->internal && image->diskPath.isEmpty()) {
        // Images with a root disk boot cold: a template's memory holds its own guest's page
        // cache and mounted filesystem, which a new sandbox's fresh overlay would contradict.
        // The source fills the memory file (createMemoryFile) and hands the device state.
        auto state = m_templates(name, entry->sandbox.spec);
        if (state) {
            templateFd = *state;
            incomingStateFd = templateFd;
            from = StartSource::Template;
            *usedTemplate = true;
        } else if (state.error().kind != ErrorKind::NotFound) {
            qCWarning(lcSandbox, "%s: no template start (%s); booting cold", qPrintable(name),
                      qPrintable(state.error().message));
        }
    }
    // A cold boot gets fresh RAM; a restore brings the file its caller has filled.
    if (incomingStateFd < 0) {
        auto memory = createMemoryFile(name);
        if (!memory)
            return std::unexpected(memory.error());
        ::close(*memory);
    }
    const QByteArray memoryPath = QFile::encodeName(memoryPathFor(name));
    const int memoryFd = ::open(memoryPath.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    const bool handedOver = memoryFd >= 0 && ::fchown(memoryFd, *vmmUid, m_config.vmmGid) == 0;
    if (memoryFd >= 0)
        ::close(memoryFd);
    if (!handedOver)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot hand the guest memory file %1 to the VMM user")
                        .arg(memoryPathFor(name)));

    m_consoles.clear(name);
    entry->sandbox.acceleration = m_config.acceleration;
    entry->sandbox.accelerationWarning = m_config.accelerationWarning;
    // Starting is only announced, not stored: a helper that dies now restarts with it stopped.
    // It also makes a second sandbox.start during this one an invalid_state error.
    entry->sandbox.state = SandboxState::Starting;
    entry->sandbox.stateReason.clear();
    announce(*entry);
    auto failStart = [this, &name](const Error &error) -> Result<Sandbox> {
        qCWarning(lcSandbox, "%s: start failed: %s", qPrintable(name), qPrintable(error.message));
        if (auto current = find(name)) {
            markStopped(**current, error.message);
            commit(**current);
        }
        return std::unexpected(error);
    };

    // Two long names may still share a hashed tap name: say who has it
    // (docs/reviews/2026-12-01-newuser-pass.md#l1).
    const QString tap = TapDevice::interfaceName(name, instance());
    if (const QString holder = tapHolder(tap, name); !holder.isEmpty())
        return failStart(Error {ErrorKind::AlreadyExists,
                                QStringLiteral("the network device %1 of sandbox '%2' is in use "
                                               "by sandbox '%3'; rename one of them")
                                    .arg(tap, name, holder)});
    // The network first: tap, CA, gateway ready, table loaded; only then may the VM run.
    auto link = m_pool->allocate();
    if (!link)
        return failStart(link.error());
    SandboxNetwork *network = makeNetwork(name, *link, *vmmUid, entry->policy);
    if (auto up = network->up(false); !up) {
        delete network;
        m_pool->release(link->index);
        return failStart(up.error());
    }
    auto dropNetwork = [this, network, index = link->index] {
        network->down();
        delete network;
        m_pool->release(index);
    };
    const QString seedPath = QDir(*runtimeDir).filePath(kSeedFile);
    auto seedContent = seedFilesWith(name, network->caCertificatePem());
    if (!seedContent) {
        dropNetwork();
        return failStart(seedContent.error());
    }
    if (auto seed = SeedImage::write(seedPath, *seedContent); !seed) {
        dropNetwork();
        return failStart(seed.error());
    }

    VmmLaunchConfig launch;
    launch.sandboxName = name;
    launch.vcpus = entry->sandbox.spec.vcpus;
    launch.memoryMib = entry->sandbox.spec.memoryMib;
    launch.kernelPath = image->kernelPath;
    launch.initrdPath = image->initrdPath;
    launch.kernelArgs = image->kernelArgs;
    launch.runtimeDir = *runtimeDir;
    launch.acceleration = m_config.acceleration;
    launch.vmmUid = *vmmUid;
    launch.vmmGid = m_config.vmmGid;
    launch.vmmGroups = m_config.vmmGroups;
    launch.network.tapName = network->tapName();
    launch.network.mac = link->macText();
    launch.network.guestAddress = link->guest.toString();
    launch.network.prefixLength = link->prefixLength;
    launch.network.gateway = link->gateway.toString();
    launch.seedImagePath = seedPath;
    if (!image->diskPath.isEmpty()) {
        launch.rootDiskPath = diskPathFor(name);
        launch.rootDiskBasePath = image->diskPath;
    }
    auto tapFd = TapDevice::attach(network->tapName());
    if (!tapFd) {
        dropNetwork();
        return failStart(tapFd.error());
    }
    launch.network.tapFd = *tapFd;
    launch.memoryPath = memoryPathFor(name);
    launch.incomingStateFd = incomingStateFd;

    std::unique_ptr<Vmm> vmm = m_factory();
    Vmm *raw = vmm.get();
    // Connected before start(): the first console bytes may arrive while it returns.
    connect(raw, &Vmm::consoleOutput, this,
            [this, name](const QByteArray &bytes) { m_consoles.append(name, bytes); });
    auto info = raw->start(launch);
    // The VMM has its own copy now (or none: it failed).
    ::close(*tapFd);
    // start() may run the event loop; look the entry up again.
    found = find(name);
    if (!info || !found) {
        QObject::disconnect(raw, nullptr, this, nullptr);
        // QemuMicrovm leaves no process behind on error, so the tap is free again.
        dropNetwork();
        if (!info)
            return failStart(info.error());
        return notFound(name);
    }
    entry = *found;
    entry->network = network;
    entry->linkIndex = link->index;
    entry->runtime = *info;
    entry->vmmUid = *vmmUid;
    entry->stopRequested = false;
    entry->sandbox.state = SandboxState::Running;
    entry->sandbox.stateReason.clear();
    entry->sandbox.startedAt = QDateTime::currentDateTimeUtc();
    entry->sandbox.vmmPid = info->pid;
    entry->sandbox.startedFrom = from;
    entry->sandbox.identityWarning.clear();
    QObject::disconnect(raw, nullptr, this, nullptr);
    attachVmm(*entry, std::move(vmm));
    qCInfo(lcSandbox, "started %s from %s (VMM pid %lld, %s)", qPrintable(name),
           qPrintable(startSourceName(from)), static_cast<long long>(info->pid),
           qPrintable(accelerationName(m_config.acceleration)));
    // Recorded running first: a helper that dies during the refresh re-adopts it.
    commit(*entry);
    if (from != StartSource::Boot)
        refreshIdentity(*entry, from);
    return entry->sandbox;
}

Result<Sandbox> SandboxService::stop(const QString &name, int timeoutMs)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    Entry *entry = *found;
    if ((entry->sandbox.state != SandboxState::Running
         && entry->sandbox.state != SandboxState::Paused)
        || !entry->vmm)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2, not running")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    // A paused guest cannot see the power button.
    if (entry->sandbox.state == SandboxState::Paused)
        entry->vmm->resume();
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
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    Entry *entry = *found;
    if (entry->sandbox.state == SandboxState::Stopped || !entry->vmm)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is already stopped").arg(name));
    Vmm *vmm = entry->vmm.get();
    releaseVmm(*entry);
    vmm->kill();
    // The table stays until the VMM is really gone (SIGKILL is not instant). Usually that is a
    // matter of milliseconds: then the network goes now, and a start that follows at once (a
    // restore) builds its own without meeting this one.
    releaseNetwork(*entry, vmm->waitForExit(kKillWaitMs) ? nullptr : vmm);
    markStopped(*entry, QString());
    commit(*entry);
    return entry->sandbox;
}

Result<void> SandboxService::setStateReason(const QString &name, const QString &reason)
{
    auto found = findStopped(name);
    if (!found)
        return std::unexpected(found.error());
    Entry *entry = *found;
    entry->sandbox.stateReason = reason;
    commit(*entry);
    return {};
}

Result<void> SandboxService::remove(const QString &name)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    Entry *entry = *found;
    if (entry->sandbox.state != SandboxState::Stopped)
        return fail(ErrorKind::Busy,
                    QStringLiteral("sandbox '%1' is %2; stop it before deleting it")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    const bool internal = entry->internal;
    if (!internal) {
        // Its last events go with it, not into a later sandbox of the same name.
        m_pendingEgress.removeIf([&](const auto &pending) { return pending.first == name; });
        if (auto ok = m_registry.remove(name); !ok && ok.error().kind != ErrorKind::NotFound)
            return std::unexpected(ok.error());
    }
    // The name was validated on create, so this stays inside STATE/run.
    QDir(runtimeDirFor(name)).removeRecursively();
    for (const QString &suffix : {QString(), kDiskIdentitySuffix, QStringLiteral(".tmp")})
        QFile::remove(diskPathFor(name) + suffix);
    SandboxNetwork::removeCa(m_config.stateDir, name);
    // Normally gone with its guest; one a crash left would hold RAM forever
    // (docs/reviews/2026-12-01-newuser-pass.md#m2).
    ::unlink(QFile::encodeName(memoryPathFor(name)).constData());
    m_entries.erase(name);
    m_consoles.remove(name);
    qCInfo(lcSandbox, "deleted %s", qPrintable(name));
    if (!internal)
        Q_EMIT sandboxRemoved(name);
    return {};
}

Result<void> SandboxService::writeConsole(const QString &name, const QByteArray &bytes)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
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

Result<Sandbox> SandboxService::pause(const QString &name)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    Entry *entry = *found;
    if (entry->sandbox.state != SandboxState::Running || !entry->vmm)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2, not running")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    if (auto paused = entry->vmm->pause(); !paused)
        return std::unexpected(paused.error());
    entry->sandbox.state = SandboxState::Paused;
    qCInfo(lcSandbox, "paused %s", qPrintable(name));
    commit(*entry);
    return entry->sandbox;
}

Result<Sandbox> SandboxService::resume(const QString &name)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    Entry *entry = *found;
    const auto notPaused = [&] {
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2, not paused")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    };
    if ((entry->sandbox.state != SandboxState::Paused
         && entry->sandbox.state != SandboxState::Running)
        || !entry->vmm)
        return notPaused();
    if (entry->sandbox.state == SandboxState::Running) {
        // What QEMU says, not what we recorded: CPUs that stand still are resumed.
        auto running = entry->vmm->queryRunning();
        if (!running || *running)
            return notPaused();
        qCWarning(lcSandbox, "%s: recorded as running, but its CPUs stand still; resuming",
                  qPrintable(name));
    }
    if (auto resumed = entry->vmm->resume(); !resumed)
        return std::unexpected(resumed.error());
    entry->sandbox.state = SandboxState::Running;
    qCInfo(lcSandbox, "resumed %s", qPrintable(name));
    commit(*entry);
    return entry->sandbox;
}

Vmm *SandboxService::vmmOf(const QString &name) const
{
    auto entry = find(name);
    return entry ? (*entry)->vmm.get() : nullptr;
}

QString SandboxService::memoryDir() const
{
    if (!m_config.memoryDir.isEmpty())
        return m_config.memoryDir;
    const QByteArray hash =
        QCryptographicHash::hash(QFile::encodeName(m_config.stateDir), QCryptographicHash::Sha256);
    return QStringLiteral("/dev/shm/airlock-") + QString::fromLatin1(hash.toHex().left(12));
}

QString SandboxService::memoryPathFor(const QString &name) const
{
    return memoryDir() + u'/' + name + QStringLiteral(".ram");
}

Result<int> SandboxService::createMemoryFile(const QString &name)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    const Entry *entry = *found;
    if (entry->sandbox.state != SandboxState::Stopped
        && entry->sandbox.state != SandboxState::Starting)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2; its memory is in use")
                        .arg(name, sandboxStateName(entry->sandbox.state)));
    if (auto ready = ensureMemoryDir(); !ready)
        return std::unexpected(ready.error());
    if (auto room = checkMemoryCapacity(name, entry->sandbox.spec.memoryMib); !room)
        return std::unexpected(room.error());
    // A new inode each time: a VMM that is still dying keeps its mapping of the old one.
    const QByteArray path = QFile::encodeName(memoryPathFor(name));
    ::unlink(path.constData());
    const int fd =
        ::open(path.constData(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || ::ftruncate(fd, qint64(entry->sandbox.spec.memoryMib) * 1024 * 1024) != 0) {
        const int error = errno;
        if (fd >= 0)
            ::close(fd);
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot create the guest memory file %1: %2")
                        .arg(memoryPathFor(name), QString::fromLocal8Bit(std::strerror(error))));
    }
    return fd;
}

Result<void> SandboxService::checkMemoryCapacity(const QString &name, int memoryMib) const
{
    // docs/reviews/2026-12-01-newuser-pass.md#m4: a 64 GiB guest was accepted on a 24 GiB host; a
    // guest that touched its memory would have filled tmpfs and host RAM. The file is sparse, so
    // this is what the host could back right now, not a reservation.
    const qint64 needed = qint64(memoryMib) * 1024 * 1024;
    // Our own file of this sandbox (none for a stopped one, normally) is replaced.
    struct stat own
    {
    };
    const qint64 replaced = ::stat(QFile::encodeName(memoryPathFor(name)).constData(), &own) == 0
        ? qint64(own.st_blocks) * 512
        : 0;
    const auto mib = [](qint64 bytes) { return bytes / (1024 * 1024); };
    struct statvfs room
    {
    };
    if (::statvfs(QFile::encodeName(memoryDir()).constData(), &room) == 0) {
        const qint64 free = qint64(room.f_bavail) * qint64(room.f_frsize) + replaced;
        if (free < needed)
            return fail(ErrorKind::BackendUnavailable,
                        QStringLiteral("sandbox '%1' needs %2 MiB of guest memory, but the guest "
                                       "memory directory %3 has only %4 MiB free; stop other "
                                       "sandboxes or give this one less memory")
                            .arg(name)
                            .arg(memoryMib)
                            .arg(memoryDir())
                            .arg(mib(free)));
    }
    QFile meminfo(QStringLiteral("/proc/meminfo"));
    if (meminfo.open(QIODevice::ReadOnly)) {
        for (const QByteArray &line : meminfo.readAll().split('\n')) {
            if (!line.startsWith("MemAvailable:"))
                continue;
            const qint64 available = line.mid(13).trimmed().split(' ').first().toLongLong() * 1024;
            if (available + replaced < needed)
                return fail(ErrorKind::BackendUnavailable,
                            QStringLiteral("sandbox '%1' needs %2 MiB of guest memory, but the "
                                           "host has only %3 MiB available (MemAvailable); stop "
                                           "other sandboxes or give this one less memory")
                                .arg(name)
                                .arg(memoryMib)
                                .arg(mib(available + replaced)));
            break;
        }
    }
    return {};
}

Result<GuestImage> SandboxService::imageOf(const QString &name) const
{
    auto entry = find(name);
    if (!entry)
        return std::unexpected(entry.error());
    auto image = m_images.find((*entry)->sandbox.spec.image);
    if (!image)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("image '%1' of sandbox '%2' is missing: %3")
                        .arg((*entry)->sandbox.spec.image, name, image.error().message));
    return image;
}

QString SandboxService::disksDir() const
{
    return QDir(m_config.stateDir).filePath(QStringLiteral("disks"));
}

QString SandboxService::diskPathFor(const QString &name) const
{
    return disksDir() + u'/' + name + QStringLiteral(".qcow2");
}

QString SandboxService::diskIdentityOf(const QString &name) const
{
    QFile recorded(diskPathFor(name) + kDiskIdentitySuffix);
    if (!recorded.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(recorded.read(4096));
}

Result<void> SandboxService::prepareDisk(const QString &name, const GuestImage &image,
                                         uid_t uid) const
{
    const QString path = diskPathFor(name);
    const QString identityPath = path + kDiskIdentitySuffix;
    const QByteArray identity = image.diskIdentity().toUtf8();
    if (!QFileInfo::exists(path)) {
        if (auto made = RootDisk::createOverlay(path, image.diskPath); !made)
            return made;
        if (!writeFileAtomically(identityPath, identity))
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("cannot write %1").arg(identityPath));
        qCInfo(lcSandbox, "%s: root disk overlay %s on %s", qPrintable(name), qPrintable(path),
               qPrintable(image.diskPath));
    } else {
        // An overlay stores only what differs from its base: on a rebuilt base it would read
        // as a corrupt file system, so it is refused rather than booted.
        const QByteArray was = diskIdentityOf(name).toUtf8();
        if (was != identity)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("the disk of sandbox '%1' was made on another build of "
                                       "image '%2' (%3, now %4); it cannot be used on this one")
                            .arg(name, image.id,
                                 was.isEmpty() ? QStringLiteral("unknown") : QString::fromUtf8(was),
                                 QString::fromUtf8(identity)));
    }
    const QByteArray encoded = QFile::encodeName(path);
    const int fd = ::open(encoded.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    const bool handedOver =
        fd >= 0 && ::fchown(fd, uid, m_config.vmmGid) == 0 && ::fchmod(fd, 0600) == 0;
    if (fd >= 0)
        ::close(fd);
    if (!handedOver)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot hand the disk %1 to the VMM user").arg(path));
    return {};
}

Result<void> SandboxService::replaceDisk(const QString &name, const QString &identity,
                                         const std::function<Result<void>(int fd)> &fill)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    if ((*found)->sandbox.state != SandboxState::Stopped)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2; its disk is in use")
                        .arg(name, sandboxStateName((*found)->sandbox.state)));
    const QString path = diskPathFor(name);
    const QByteArray tmp = QFile::encodeName(path + QStringLiteral(".tmp"));
    ::unlink(tmp.constData());
    const int fd =
        ::open(tmp.constData(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("cannot create %1: %2")
                .arg(QString::fromLocal8Bit(tmp), QString::fromLocal8Bit(std::strerror(errno))));
    Result<void> filled = fill(fd);
    if (filled && ::fdatasync(fd) != 0)
        filled = fail(ErrorKind::OperationFailed,
                      QStringLiteral("cannot write %1").arg(QString::fromLocal8Bit(tmp)));
    ::close(fd);
    if (filled && ::rename(tmp.constData(), QFile::encodeName(path).constData()) != 0)
        filled = fail(ErrorKind::OperationFailed,
                      QStringLiteral("cannot move the disk into place at %1").arg(path));
    if (!filled) {
        ::unlink(tmp.constData());
        return filled;
    }
    if (!writeFileAtomically(path + kDiskIdentitySuffix, identity.toUtf8()))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot write %1%2").arg(path, kDiskIdentitySuffix));
    return {};
}

Result<EgressPolicy> SandboxService::policy(const QString &name) const
{
    auto entry = find(name);
    if (!entry)
        return std::unexpected(entry.error());
    return (*entry)->policy;
}

Result<void> SandboxService::setPolicy(const QString &name, const EgressPolicy &policy)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    if (auto ok = policy.validate(); !ok)
        return std::unexpected(ok.error());
    Entry *entry = *found;
    SandboxRecord record = entry->record();
    record.policy = policy;
    // Persist first: a failed write leaves both the file and the live policy as they were.
    if (auto ok = m_registry.update(record); !ok)
        return std::unexpected(ok.error());
    entry->policy = policy;
    qCInfo(lcSandbox, "%s: egress policy set (%lld rules)", qPrintable(name),
           static_cast<long long>(policy.rules.size()));
    if (entry->network) {
        // Stored either way: a restarting gateway is started with the stored policy.
        if (auto applied = entry->network->setPolicy(policy); !applied)
            qCWarning(lcSandbox, "%s: %s", qPrintable(name), qPrintable(applied.error().message));
    }
    Q_EMIT policyChanged(name);
    return {};
}

Result<QList<EgressRecord>>
SandboxService::egressHistory(const QString &name, std::optional<qint64> since, int limit) const
{
    if (auto entry = find(name); !entry)
        return std::unexpected(entry.error());
    return m_registry.egressHistory(name, since, limit);
}

Result<QList<SeedFile>> SandboxService::seedFiles(const QString &name)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    const Entry *entry = *found;
    if (!entry->network)
        return fail(
            ErrorKind::InvalidState,
            QStringLiteral("sandbox '%1' has no network, so no CA to give its guest").arg(name));
    return seedFilesWith(name, entry->network->caCertificatePem());
}

Result<QList<SeedFile>> SandboxService::seedFilesWith(const QString &name,
                                                      const QByteArray &caCertificatePem)
{
    auto bindings = m_bindings.list(name);
    if (!bindings)
        return std::unexpected(bindings.error());
    QStringList secrets;
    for (const CredentialBinding &binding : std::as_const(*bindings)) {
        if (!secrets.contains(binding.secret))
            secrets.append(binding.secret);
    }
    QStringList lines;
    for (const QString &secret : std::as_const(secrets)) {
        auto placeholder = m_bindings.placeholder(name, secret);
        if (!placeholder)
            return std::unexpected(placeholder.error());
        lines.append(placeholderVariable(secret) + u'=' + *placeholder);
    }
    lines.sort();
    QByteArray env;
    for (const QString &line : std::as_const(lines))
        env += line.toLatin1() + '\n';
    return QList<SeedFile> {
        SeedFile {QStringLiteral("ca.pem"), caCertificatePem, 0644},
        SeedFile {QStringLiteral("env"), env, 0644},
    };
}

Result<void> SandboxService::refreshCredentials(const QString &name)
{
    auto found = find(name);
    if (!found)
        return std::unexpected(found.error());
    if (!(*found)->network)
        return {};
    return (*found)->network->pushCredentials();
}

const SandboxNetwork *SandboxService::network(const QString &name) const
{
    const auto it = m_entries.find(name);
    return it == m_entries.end() ? nullptr : it->second.network;
}

uid_t SandboxService::gatewayUidFor(uid_t vmmUid) const
{
    if (m_config.vmmUidBase == 0 || m_config.gatewayUidBase == 0 || vmmUid < m_config.vmmUidBase)
        return vmmUid;
    return m_config.gatewayUidBase + (vmmUid - m_config.vmmUidBase);
}

SandboxNetwork *SandboxService::makeNetwork(const QString &name, const LinkAllocation &link,
                                            uid_t vmmUid, const EgressPolicy &policy)
{
    auto *network = new SandboxNetwork(m_config.network, name, link, vmmUid, gatewayUidFor(vmmUid),
                                       policy, this);
    network->setCredentialSource([this, name] {
        return m_credentialSource ? m_credentialSource(name) : QList<GatewayCredentialGrant>();
    });
    connect(network, &SandboxNetwork::egress, this,
            [this, name](const QJsonObject &event) { recordEgress(name, event); });
    connect(network, &SandboxNetwork::gatewayRestarted, this,
            [this, name](const QString &reason, int attempt) {
                // Layer tcp: while the gateway was down, guest connections were refused
                // before any protocol was seen.
                EgressEvent event;
                event.time = QDateTime::currentDateTimeUtc();
                event.sandbox = name;
                event.layer = EgressLayer::Tcp;
                event.allowed = false;
                event.reason = wireName(EgressReason::GatewayRestarted);
                event.detail = QStringLiteral("%1; guest connections were refused until the "
                                              "restart (attempt %2)")
                                   .arg(reason)
                                   .arg(attempt);
                recordEgress(name, event.toJson());
            });
    return network;
}

void SandboxService::releaseNetwork(Entry &entry, Vmm *vmmStillRunning)
{
    SandboxNetwork *network = std::exchange(entry.network, nullptr);
    const qint64 index = std::exchange(entry.linkIndex, -1);
    if (!network)
        return;
    const QString name = entry.sandbox.spec.name;
    auto teardown = [this, network, index, name] {
        // Deferred until the old VMM exited, the sandbox may run again with a new network of
        // the same names (table, tap, pid file): those are not this one's to remove.
        const auto it = m_entries.find(name);
        const bool superseded =
            it != m_entries.end() && it->second.network && it->second.network != network;
        network->down(superseded);
        network->deleteLater();
        if (index >= 0 && m_pool)
            m_pool->release(quint32(index));
    };
    if (vmmStillRunning)
        connect(vmmStillRunning, &Vmm::exited, network, teardown);
    else
        teardown();
}

void SandboxService::recordEgress(const QString &name, const QJsonObject &object)
{
    // The helper's own guests are not announced, their traffic neither.
    if (const auto it = m_entries.find(name); it != m_entries.end() && it->second.internal)
        return;
    // The gateway parses guest traffic: what it says is checked and re-serialized (unknown
    // fields dropped), bounded, and its sandbox name is ours.
    auto parsed = EgressEvent::fromJson(object);
    if (!parsed) {
        qCWarning(lcSandbox, "%s: ignoring an invalid egress event from the gateway: %s",
                  qPrintable(name), qPrintable(parsed.error().message));
        return;
    }
    parsed->sandbox = name;
    const QJsonObject event = parsed->toJson();
    if (QJsonDocument(event).toJson(QJsonDocument::Compact).size() > kMaxEgressEventBytes) {
        qCWarning(lcSandbox, "%s: dropping an egress event over %lld bytes", qPrintable(name),
                  static_cast<long long>(kMaxEgressEventBytes));
        return;
    }
    m_pendingEgress.append({name, event});
    if (!m_egressFlushQueued) {
        m_egressFlushQueued = true;
        QMetaObject::invokeMethod(this, &SandboxService::flushEgress, Qt::QueuedConnection);
    }
}

void SandboxService::flushEgress()
{
    m_egressFlushQueued = false;
    const QList<std::pair<QString, QJsonObject>> events = std::exchange(m_pendingEgress, {});
    auto seqs = m_registry.appendEgressBatch(events, m_config.egressHistory);
    if (!seqs) {
        qCWarning(lcSandbox, "%lld egress event(s) not stored: %s",
                  static_cast<long long>(events.size()), qPrintable(seqs.error().message));
        return;
    }
    for (qsizetype i = 0; i < events.size(); ++i)
        Q_EMIT egressEvent(events.at(i).first, seqs->at(i), events.at(i).second);
}

Result<SandboxService::Entry *> SandboxService::find(const QString &name)
{
    if (auto valid = validateName(name); !valid)
        return std::unexpected(valid.error());
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        return notFound(name);
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
    if (auto valid = validateName(name); !valid)
        return std::unexpected(valid.error());
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        return notFound(name);
    return &it->second;
}

QString SandboxService::runtimeDirFor(const QString &name) const
{
    return QDir(m_config.stateDir).filePath(QStringLiteral("run/") + name);
}

Result<uid_t> SandboxService::allocateVmmUid() const
{
    if (m_config.vmmUidBase == 0)
        return m_config.vmmUid;
    constexpr int slotCount = SandboxServiceConfig::kVmmUidSlots;
    std::vector<bool> taken(slotCount, false);
    const auto take = [&taken, slotCount](uid_t uid, uid_t base) {
        const qint64 slot = qint64(uid) - qint64(base);
        if (base != 0 && slot >= 0 && slot < slotCount)
            taken[size_t(slot)] = true;
    };
    for (const auto &[name, entry] : m_entries) {
        if (entry.vmmUid != 0)
            take(entry.vmmUid, m_config.vmmUidBase);
    }
    // Another helper on this host (another state dir) uses the same ranges: a uid that any
    // process has (a VMM or gateway of that helper) is not handed out again
    // (docs/reviews/2026-12-01-newuser-pass.md#m1).
    for (uid_t uid : uidsInUse()) {
        take(uid, m_config.vmmUidBase);
        take(uid, m_config.gatewayUidBase);
    }
    // Each helper starts at its own place in the range, so two helpers starting guests at
    // the same moment rarely even try the same uid.
    const int first =
        int(HelperInstance::tagFor(m_config.stateDir).toUInt(nullptr, 16) % slotCount);
    for (int i = 0; i < slotCount; ++i) {
        const int slot = (first + i) % slotCount;
        if (!taken[size_t(slot)])
            return uid_t(m_config.vmmUidBase + uid_t(slot));
    }
    return fail(ErrorKind::Busy, QStringLiteral("every VMM uid slot is in use"));
}

std::vector<uid_t> SandboxService::uidsInUse()
{
    std::vector<uid_t> uids;
    const QStringList pids = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &pid : pids) {
        if (pid.isEmpty() || !pid.at(0).isDigit())
            continue;
        QFile status(QStringLiteral("/proc/%1/status").arg(pid));
        if (!status.open(QIODevice::ReadOnly))
            continue;
        for (const QByteArray &line : status.readAll().split('\n')) {
            if (!line.startsWith("Uid:"))
                continue;
            // Real, effective, saved and file system uid.
            for (const QByteArray &field : line.mid(4).simplified().split(' ')) {
                bool ok = false;
                const uint uid = field.toUInt(&ok);
                if (ok)
                    uids.push_back(uid_t(uid));
            }
            break;
        }
    }
    return uids;
}

void SandboxService::returnFilesToRoot(const QString &name) const
{
    // docs/reviews/2026-12-01-newuser-pass.md#m1: VMM uids are reused. A stopped sandbox's files
    // owned by its last VMM's uid would be open to whichever VMM gets that uid next; start() hands
    // them over again.
    const QByteArray dir = QFile::encodeName(runtimeDirFor(name));
    struct stat info
    {
    };
    if (::lstat(dir.constData(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid != 0) {
        const QDir runtime(runtimeDirFor(name));
        for (const QString &file : runtime.entryList(QDir::AllEntries | QDir::System | QDir::Hidden
                                                     | QDir::NoDotAndDotDot))
            ::lchown(QFile::encodeName(runtime.filePath(file)).constData(), 0, 0);
        ::lchown(dir.constData(), 0, 0);
    }
    for (const QString &suffix : {QString(), kDiskIdentitySuffix}) {
        const QByteArray disk = QFile::encodeName(diskPathFor(name) + suffix);
        if (::lstat(disk.constData(), &info) == 0 && S_ISREG(info.st_mode) && info.st_uid != 0)
            ::lchown(disk.constData(), 0, 0);
    }
}

uid_t SandboxService::runtimeDirOwner(const QString &name) const
{
    struct stat info
    {
    };
    if (::stat(QFile::encodeName(runtimeDirFor(name)).constData(), &info) != 0)
        return 0;
    return info.st_uid;
}

Result<QString> SandboxService::prepareRuntimeDir(const QString &name, uid_t uid) const
{
    const QString dir = runtimeDirFor(name);
    // Leftovers of an earlier run (sockets, pid file) would confuse the new VMM.
    QDir(dir).removeRecursively();
    const QByteArray path = QFile::encodeName(dir);
    if (!QDir().mkpath(dir) || ::chmod(path.constData(), 0700) != 0
        || ::chown(path.constData(), uid, m_config.vmmGid) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare runtime directory %1").arg(dir));
    return dir;
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
    // The guest's RAM: gone with the guest (a dying VMM keeps its own mapping until it exits).
    ::unlink(QFile::encodeName(memoryPathFor(entry.sandbox.spec.name)).constData());
    // The directory goes with the last file; createMemoryFile() makes it again.
    ::rmdir(QFile::encodeName(memoryDir()).constData());
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

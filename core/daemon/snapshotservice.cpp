#include "core/daemon/snapshotservice.h"

#include "core/daemon/sandboxservice.h"
#include "core/model/names.h"
#include "core/snapshot/retention.h"
#include "core/snapshot/sparsecopy.h"
#include "core/vmm/vmm.h"

#include <QElapsedTimer>
#include <QLoggingCategory>

#include <cerrno>
#include <cstring>
#include <optional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcSnapshots, "airlock.daemon.snapshot")

const QString kMemory = QStringLiteral("memory");
const QString kDeviceState = QStringLiteral("device-state");
/// The root disk's overlay file, and the identity of the image disk it was made on
/// (GuestImage::diskIdentity): an overlay is only meaningful on that base.
const QString kDisk = QStringLiteral("disk:vda");
const QString kDiskBase = QStringLiteral("disk:vda:base");
constexpr qint64 kMaxDiskIdentityBytes = 4096;

/// A memfd: an anonymous file to hand to QEMU for its device state, in either direction.
class MemFd
{
public:
    static Result<MemFd> create(const char *name)
    {
        const int fd = ::memfd_create(name, MFD_CLOEXEC);
        if (fd < 0)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("memfd_create: %1")
                            .arg(QString::fromLocal8Bit(std::strerror(errno))));
        return MemFd(fd);
    }
    MemFd(MemFd &&other) noexcept : m_fd(std::exchange(other.m_fd, -1)) { }
    ~MemFd()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    int fd() const { return m_fd; }
    Result<QByteArray> readAll(qint64 maxBytes) const
    {
        struct stat info;
        if (::fstat(m_fd, &info) != 0 || info.st_size > maxBytes)
            return fail(
                ErrorKind::OperationFailed,
                QStringLiteral("the VMM's device state is larger than %1 bytes").arg(maxBytes));
        QByteArray bytes(qsizetype(info.st_size), Qt::Uninitialized);
        if (::pread(m_fd, bytes.data(), size_t(bytes.size()), 0) != bytes.size())
            return fail(ErrorKind::OperationFailed, QStringLiteral("cannot read the device state"));
        return bytes;
    }
    Result<void> write(const QByteArray &bytes) const
    {
        if (::pwrite(m_fd, bytes.constData(), size_t(bytes.size()), 0) != bytes.size()
            || ::lseek(m_fd, 0, SEEK_SET) != 0)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("cannot stage the device state"));
        return {};
    }

private:
    explicit MemFd(int fd) : m_fd(fd) { }
    int m_fd;
};

} // namespace

SnapshotService::SnapshotService(SandboxService &sandboxes, SnapshotArchive &archive,
                                 QObject *parent)
    : QObject(parent)
    , m_sandboxes(sandboxes)
    , m_archive(archive)
    , m_clock([] { return QDateTime::currentDateTimeUtc(); })
{
    connect(&m_sandboxes, &SandboxService::sandboxRemoved, this,
            &SnapshotService::onSandboxRemoved);
    connect(&m_timer, &QTimer::timeout, this, &SnapshotService::runSchedules);
}

Result<void> SnapshotService::restore()
{
    auto report = m_archive.reconcile();
    if (!report)
        return std::unexpected(report.error());
    qCInfo(lcSnapshots,
           "snapshot store: %lld manifests without a row removed, %lld chunks (%lld bytes) and "
           "%lld leftovers collected",
           static_cast<long long>(report->manifestsRemoved.size()),
           static_cast<long long>(report->garbage.chunksRemoved),
           static_cast<long long>(report->garbage.bytesFreed),
           static_cast<long long>(report->garbage.leftoversRemoved));
    return {};
}

void SnapshotService::startSchedules(int checkIntervalMs)
{
    m_timer.start(checkIntervalMs);
}

Result<Snapshot> SnapshotService::create(const QString &name, const QString &label,
                                         SnapshotKind kind)
{
    auto sandbox = m_sandboxes.get(name);
    if (!sandbox)
        return std::unexpected(sandbox.error());
    if (auto valid = Snapshot::validateLabel(label); !valid)
        return std::unexpected(valid.error());
    Vmm *vmm = m_sandboxes.vmmOf(name);
    const bool running = sandbox->state == SandboxState::Running;
    if ((!running && sandbox->state != SandboxState::Paused) || !vmm)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("sandbox '%1' is %2; only a running or paused guest can be "
                                   "snapshotted")
                        .arg(name, sandboxStateName(sandbox->state)));
    auto state = MemFd::create("airlock-device-state");
    if (!state)
        return std::unexpected(state.error());
    // The base this overlay was made on (recorded beside it), not the image store's current
    // build: an image rebuilt (or removed) while the guest runs must not relabel its disk.
    const QByteArray diskIdentity = m_sandboxes.diskIdentityOf(name).toUtf8();
    const bool hasDisk = !diskIdentity.isEmpty();

    // The guest stands still from here to resume(): device state, then a private copy of its
    // RAM file (data extents only). Hashing and storing happen after it runs on.
    QElapsedTimer paused;
    paused.start();
    if (running) {
        if (auto ok = vmm->pause(); !ok)
            return std::unexpected(ok.error());
    }
    auto saved = vmm->saveDeviceState(state->fd());
    const qint64 savedMs = paused.elapsed();
    auto memory = saved ? SparseCopy::of(m_sandboxes.memoryPathFor(name))
                        : Result<SparseCopy>(std::unexpected(saved.error()));
    // The disk overlay too: QMP stop drained and flushed every block device, and the migration
    // that saved the device state inactivated them (qcow2 caches written back), so the file is
    // complete and unchanging until `cont`. Copied like the RAM so the guest can run on.
    std::optional<Result<SparseCopy>> disk;
    if (hasDisk && memory)
        disk.emplace(SparseCopy::of(m_sandboxes.diskPathFor(name)));
    const qint64 copiedMs = paused.elapsed() - savedMs;
    // Resumed also after a failure: a snapshot that did not work must not stop the guest.
    const Result<void> resumed = running ? vmm->resume() : vmm->pause();
    const qint64 pauseMs = paused.elapsed();
    if (!memory)
        return std::unexpected(memory.error());
    if (disk && !*disk)
        return std::unexpected(disk->error());
    if (!resumed)
        qCWarning(lcSnapshots, "%s: resume after snapshot failed: %s", qPrintable(name),
                  qPrintable(resumed.error().message));
    auto deviceState = state->readAll(kMaxDeviceStateBytes);
    if (!deviceState)
        return std::unexpected(deviceState.error());

    Snapshot meta;
    meta.sandbox = name;
    meta.parent = m_archive.catalog().head(name);
    meta.label = label;
    meta.kind = kind;
    meta.createdAt = m_clock();
    meta.pauseMs = pauseMs;
    meta.image = sandbox->spec.image;
    meta.vcpus = sandbox->spec.vcpus;
    meta.memoryMib = sandbox->spec.memoryMib;
    std::vector<SnapshotArchive::Object> objects {{kMemory, memory->bytes()},
                                                  {kDeviceState, *deviceState}};
    if (disk) {
        objects.push_back({kDisk, (*disk)->bytes()});
        objects.push_back({kDiskBase, diskIdentity});
    }
    auto committed = m_archive.commit(meta, objects);
    if (!committed)
        return std::unexpected(committed.error());
    qCInfo(lcSnapshots,
           "%s: %s snapshot %s, guest paused %lld ms (device state %lld ms, %lld bytes of RAM "
           "and %lld of disk copied in %lld ms)",
           qPrintable(name), qPrintable(snapshotKindName(kind)), qPrintable(committed->id),
           static_cast<long long>(pauseMs), static_cast<long long>(savedMs),
           static_cast<long long>(memory->dataBytes()),
           static_cast<long long>(disk ? (*disk)->dataBytes() : 0),
           static_cast<long long>(copiedMs));
    Q_EMIT snapshotChanged(name, *committed);
    return committed;
}

Result<QList<Snapshot>> SnapshotService::list(const QString &sandbox) const
{
    if (!sandbox.isEmpty()) {
        if (auto known = m_sandboxes.get(sandbox); !known)
            return std::unexpected(known.error());
    }
    return m_archive.catalog().list(sandbox);
}

Result<Snapshot> SnapshotService::get(const QString &id) const
{
    if (auto valid = Snapshot::validateId(id); !valid)
        return std::unexpected(valid.error());
    return m_archive.catalog().get(id);
}

QString SnapshotService::head(const QString &sandbox) const
{
    return m_archive.catalog().head(sandbox);
}

Result<void> SnapshotService::startFrom(const QString &name, const Snapshot &snapshot)
{
    auto manifest = m_archive.store().manifest(snapshot.id);
    if (!manifest)
        return std::unexpected(manifest.error());
    const Manifest::Object *memory = manifest->find(kMemory);
    const Manifest::Object *device = manifest->find(kDeviceState);
    if (!memory || !device)
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("snapshot %1 lacks its memory or device state").arg(snapshot.id));
    auto sandbox = m_sandboxes.get(name);
    if (!sandbox)
        return std::unexpected(sandbox.error());
    if (qint64(sandbox->spec.memoryMib) * 1024 * 1024 != memory->size)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("snapshot %1 holds %2 MiB of memory; sandbox '%3' has %4 MiB")
                        .arg(snapshot.id)
                        .arg(memory->size / (1024 * 1024))
                        .arg(name)
                        .arg(sandbox->spec.memoryMib));
    auto deviceState = m_archive.store().readObject(*device, kMaxDeviceStateBytes);
    if (!deviceState)
        return std::unexpected(deviceState.error());
    if (auto disk = writeDisk(name, *manifest); !disk)
        return disk;
    auto state = MemFd::create("airlock-device-state");
    if (!state)
        return std::unexpected(state.error());
    if (auto ok = state->write(*deviceState); !ok)
        return ok;
    auto memoryFd = m_sandboxes.createMemoryFile(name);
    if (!memoryFd)
        return std::unexpected(memoryFd.error());
    const Result<void> written = m_archive.store().writeObjectTo(*memory, *memoryFd);
    ::close(*memoryFd);
    if (!written)
        return written;
    auto started = m_sandboxes.start(name, state->fd());
    if (!started)
        return std::unexpected(started.error());
    return m_archive.catalog().setHead(name, snapshot.id);
}

Result<const Manifest::Object *> SnapshotService::diskToRestore(const QString &name,
                                                                const Manifest &manifest) const
{
    auto image = m_sandboxes.imageOf(name);
    if (!image)
        return std::unexpected(image.error());
    const Manifest::Object *disk = manifest.find(kDisk);
    const Manifest::Object *base = manifest.find(kDiskBase);
    if (image->diskPath.isEmpty()) {
        if (disk)
            return fail(
                ErrorKind::InvalidParams,
                QStringLiteral("the snapshot holds a disk; image '%1' has none").arg(image->id));
        return nullptr;
    }
    if (!disk || !base)
        return fail(
            ErrorKind::InvalidParams,
            QStringLiteral("the snapshot holds no disk; image '%1' needs one").arg(image->id));
    auto identity = m_archive.store().readObject(*base, kMaxDiskIdentityBytes);
    if (!identity)
        return std::unexpected(identity.error());
    const QString current = image->diskIdentity();
    if (QString::fromUtf8(*identity) != current)
        return fail(ErrorKind::InvalidState,
                    QStringLiteral("the snapshot's disk was made on another build of image '%1' "
                                   "(%2, now %3)")
                        .arg(image->id, QString::fromUtf8(*identity), current));
    return disk;
}

Result<void> SnapshotService::writeDisk(const QString &name, const Manifest &manifest)
{
    auto disk = diskToRestore(name, manifest);
    if (!disk)
        return std::unexpected(disk.error());
    if (!*disk)
        return {};
    auto image = m_sandboxes.imageOf(name);
    if (!image)
        return std::unexpected(image.error());
    const Manifest::Object *object = *disk;
    return m_sandboxes.replaceDisk(name, image->diskIdentity(), [this, object](int fd) {
        return m_archive.store().writeObjectTo(*object, fd);
    });
}

Result<std::optional<Snapshot>> SnapshotService::restoreSnapshot(const QString &name,
                                                                 const QString &id)
{
    auto snapshot = get(id);
    if (!snapshot)
        return std::unexpected(snapshot.error());
    auto sandbox = m_sandboxes.get(name);
    if (!sandbox)
        return std::unexpected(sandbox.error());
    // Another sandbox's memory carries that sandbox's hostname, addresses and CA: restoring it
    // here would run a guest with a borrowed identity on a link that expects another.
    if (snapshot->sandbox != name)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("snapshot %1 was taken of %2, not of sandbox '%3'; start a new "
                                   "sandbox from it with snapshot.fork")
                        .arg(id,
                             snapshot->sandbox.isEmpty()
                                 ? QStringLiteral("no sandbox (a template)")
                                 : QStringLiteral("sandbox '%1'").arg(snapshot->sandbox),
                             name));
    // A disk that cannot be restored is refused before the running guest is stopped for it.
    auto manifest = m_archive.store().manifest(id);
    if (!manifest)
        return std::unexpected(manifest.error());
    if (auto disk = diskToRestore(name, *manifest); !disk)
        return std::unexpected(disk.error());
    std::optional<Snapshot> safety;
    if (sandbox->state == SandboxState::Running || sandbox->state == SandboxState::Paused) {
        auto taken =
            create(name, QStringLiteral("before restoring %1").arg(id), SnapshotKind::Safety);
        if (!taken)
            return fail(taken.error().kind,
                        QStringLiteral("the safety snapshot failed, nothing was restored: %1")
                            .arg(taken.error().message));
        safety = *taken;
        if (auto killed = m_sandboxes.kill(name); !killed)
            return std::unexpected(killed.error());
    } else if (sandbox->state != SandboxState::Stopped) {
        return fail(
            ErrorKind::InvalidState,
            QStringLiteral("sandbox '%1' is %2").arg(name, sandboxStateName(sandbox->state)));
    }
    if (auto started = startFrom(name, *snapshot); !started)
        return std::unexpected(started.error());
    qCInfo(lcSnapshots, "%s: restored snapshot %s", qPrintable(name), qPrintable(id));
    return safety;
}

Result<QString> SnapshotService::fork(const QString &id, const QString &name)
{
    auto snapshot = get(id);
    if (!snapshot)
        return std::unexpected(snapshot.error());
    if (auto valid = validateName(name); !valid)
        return std::unexpected(valid.error());
    SandboxSpec spec;
    spec.name = name;
    spec.image = snapshot->image;
    spec.vcpus = snapshot->vcpus;
    spec.memoryMib = snapshot->memoryMib;
    if (auto created = m_sandboxes.create(spec); !created)
        return std::unexpected(created.error());
    if (!snapshot->sandbox.isEmpty()) {
        if (auto policy = m_sandboxes.policy(snapshot->sandbox))
            m_sandboxes.setPolicy(name, *policy);
    }
    if (auto started = startFrom(name, *snapshot); !started) {
        // No half-made fork: the new sandbox goes again.
        m_sandboxes.kill(name);
        m_sandboxes.remove(name);
        return std::unexpected(started.error());
    }
    qCInfo(lcSnapshots, "forked %s from snapshot %s of %s", qPrintable(name), qPrintable(id),
           qPrintable(snapshot->sandbox));
    return name;
}

Result<void> SnapshotService::remove(const QString &id)
{
    auto snapshot = get(id);
    if (!snapshot)
        return std::unexpected(snapshot.error());
    if (auto removed = m_archive.remove(id); !removed)
        return removed;
    if (auto collected = m_archive.collectGarbage(); !collected)
        qCWarning(lcSnapshots, "garbage collection: %s", qPrintable(collected.error().message));
    Q_EMIT snapshotRemoved(snapshot->sandbox, id);
    return {};
}

Result<Snapshot> SnapshotService::setPinned(const QString &id, bool pinned)
{
    auto snapshot = get(id);
    if (!snapshot)
        return std::unexpected(snapshot.error());
    snapshot->pinned = pinned;
    if (auto ok = m_archive.catalog().update(*snapshot); !ok)
        return std::unexpected(ok.error());
    Q_EMIT snapshotChanged(snapshot->sandbox, *snapshot);
    return snapshot;
}

Result<Snapshot> SnapshotService::rename(const QString &id, const QString &label)
{
    auto snapshot = get(id);
    if (!snapshot)
        return std::unexpected(snapshot.error());
    if (auto valid = Snapshot::validateLabel(label); !valid)
        return std::unexpected(valid.error());
    snapshot->label = label;
    if (auto ok = m_archive.catalog().update(*snapshot); !ok)
        return std::unexpected(ok.error());
    Q_EMIT snapshotChanged(snapshot->sandbox, *snapshot);
    return snapshot;
}

Result<SnapshotSchedule> SnapshotService::schedule(const QString &sandbox) const
{
    if (auto known = m_sandboxes.get(sandbox); !known)
        return std::unexpected(known.error());
    return m_archive.catalog().schedule(sandbox);
}

Result<SnapshotSchedule> SnapshotService::setSchedule(const QString &sandbox,
                                                      const SnapshotSchedule &schedule)
{
    if (auto known = m_sandboxes.get(sandbox); !known)
        return std::unexpected(known.error());
    if (auto ok = m_archive.catalog().setSchedule(sandbox, schedule); !ok)
        return std::unexpected(ok.error());
    return schedule;
}

void SnapshotService::runSchedules()
{
    const QDateTime now = m_clock();
    for (const Sandbox &sandbox : m_sandboxes.list()) {
        const QString &name = sandbox.spec.name;
        const SnapshotSchedule schedule = m_archive.catalog().schedule(name);
        if (schedule.intervalMinutes <= 0)
            continue;
        auto snapshots = m_archive.catalog().list(name);
        if (!snapshots)
            continue;
        QDateTime last;
        for (const Snapshot &snapshot : *snapshots) {
            if (snapshot.kind == SnapshotKind::Automatic && snapshot.createdAt > last)
                last = snapshot.createdAt;
        }
        const bool due = !last.isValid() || last.secsTo(now) >= schedule.intervalMinutes * 60LL;
        if (due && sandbox.state == SandboxState::Running) {
            if (auto taken = create(name, QString(), SnapshotKind::Automatic))
                snapshots->append(*taken);
            else
                qCWarning(lcSnapshots, "%s: automatic snapshot failed: %s", qPrintable(name),
                          qPrintable(taken.error().message));
        }
        for (const QString &id : Retention::expired(*snapshots, schedule, now)) {
            if (auto removed = m_archive.remove(id); removed)
                Q_EMIT snapshotRemoved(name, id);
        }
    }
    m_archive.collectGarbage();
}

void SnapshotService::onSandboxRemoved(const QString &sandbox)
{
    // A sandbox's history goes with it; forks of it keep their own snapshots.
    if (auto snapshots = m_archive.catalog().list(sandbox)) {
        for (const Snapshot &snapshot : *snapshots) {
            if (m_archive.remove(snapshot.id))
                Q_EMIT snapshotRemoved(sandbox, snapshot.id);
        }
    }
    m_archive.catalog().forgetSandbox(sandbox);
    m_archive.collectGarbage();
}

} // namespace airlock

#include "core/daemon/snapshotservice.h"

#include "core/daemon/bindingstore.h"
#include "core/daemon/sandboxservice.h"
#include "core/daemon/snapshotcapture.h"
#include "core/model/names.h"
#include "core/snapshot/diskcopy.h"
#include "core/vmm/firecrackerjail.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/vmm.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QPointer>
#include <QScopeGuard>
#include <QThread>

#include <cerrno>
#include <cstring>
#include <optional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcSnapshots, "airlock.daemon.snapshot")

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
    /// Hands the descriptor to the caller.
    int release() { return std::exchange(m_fd, -1); }
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
    , m_journal(sandboxes.config().stateDir)
{
    connect(&m_sandboxes, &SandboxService::sandboxRemoved, this,
            &SnapshotService::onSandboxRemoved);
    connect(&m_sandboxes, &SandboxService::sandboxChanged, this,
            &SnapshotService::onSandboxChanged);
}

SnapshotService::~SnapshotService()
{
    // A store in flight finishes its manifest (m_jobs waits); its row is never recorded, so
    // the next helper's reconcile() removes it.
}

Result<void> SnapshotService::restore()
{
    auto report = m_archive.reconcile();
    AIRLOCK_TRY(report);
    qCInfo(lcSnapshots,
           "snapshot store: %lld manifests without a row removed, %lld chunks (%lld bytes) and "
           "%lld leftovers collected",
           static_cast<long long>(report->manifestsRemoved.size()),
           static_cast<long long>(report->garbage.chunksRemoved),
           static_cast<long long>(report->garbage.bytesFreed),
           static_cast<long long>(report->garbage.leftoversRemoved));
    finishInterruptedOperations();
    return {};
}

void SnapshotService::finishInterruptedOperations()
{
    for (const OperationJournal::Entry &entry : m_journal.pending()) {
        const QString snapshot = entry.data.value(QStringLiteral("snapshot")).toString();
        auto sandbox = m_sandboxes.get(entry.sandbox);
        // A guest that runs was started: only the helper's answer was lost.
        if (sandbox && sandbox->state == SandboxState::Stopped) {
            if (entry.kind == u"fork") {
                // docs/protocol.md, snapshot.fork: a fork that did not start is removed again
                // (its copied bindings go with it); it never had the snapshot's state.
                qCWarning(lcSnapshots,
                          "%s: removing the fork of snapshot %s that an interrupted helper left "
                          "unstarted",
                          qPrintable(entry.sandbox), qPrintable(snapshot));
                if (auto removed = m_sandboxes.remove(entry.sandbox); !removed)
                    qCWarning(lcSnapshots, "%s: %s", qPrintable(entry.sandbox),
                              qPrintable(removed.error().message));
            } else if (entry.kind == u"restore") {
                const QString safety = entry.data.value(QStringLiteral("safety")).toString();
                const QString reason =
                    QStringLiteral("the helper stopped while restoring snapshot %1; the state "
                                   "before the restore is in safety snapshot %2")
                        .arg(snapshot, safety);
                qCWarning(lcSnapshots, "%s: %s", qPrintable(entry.sandbox), qPrintable(reason));
                m_sandboxes.setStateReason(entry.sandbox, reason);
            }
        }
        m_journal.end(entry.kind, entry.sandbox);
    }
}

/// A guest's state taken while it stood still, waiting to be stored.
struct SnapshotService::Capture
{
    Snapshot meta;
    std::shared_ptr<SnapshotCapture::State> state;
    /// The root disk's overlay goes into memory while the helper's budget for that allows
    /// (kDiskBytesInMemory), else into an unnamed file
    /// (docs/reviews/2026-12-01-guest-channels-round4.md#f3). Reserved before the copy.
    std::shared_ptr<std::atomic<qint64>> budget; ///< where the in-memory overlay is counted
    qint64 budgetBytes = 0;
    ~Capture()
    {
        if (budget)
            budget->fetch_sub(budgetBytes);
    }
    QByteArray diskIdentity; ///< the base the overlay was made on (disk:vda:base)
};

void SnapshotService::createAsync(const QString &name, const QString &label, SnapshotKind kind,
                                  std::function<void(const Result<Snapshot> &)> done)
{
    if (kind == SnapshotKind::Template) {
        done(fail(ErrorKind::InvalidParams,
                  QStringLiteral("templates are made by prepareTemplate()")));
        return;
    }
    takeSnapshot(name, label, kind, QString(), std::move(done));
}

void SnapshotService::createTemplate(const QString &guest, const QString &label,
                                     const QString &templateKey,
                                     std::function<void(const Result<Snapshot> &)> done)
{
    takeSnapshot(guest, label, SnapshotKind::Template, templateKey, std::move(done));
}

void SnapshotService::takeSnapshot(const QString &name, const QString &label, SnapshotKind kind,
                                   const QString &templateKey,
                                   std::function<void(const Result<Snapshot> &)> done)
{
    captureState(name, label, kind, templateKey,
                 [this, name, done](const Result<std::shared_ptr<Capture>> &taken) {
                     if (!taken)
                         return done(std::unexpected(taken.error()));
                     storeAsync(name, *taken, done);
                 });
}

void SnapshotService::storeAsync(const QString &name, const std::shared_ptr<Capture> &capture,
                                 std::function<void(const Result<Snapshot> &)> done)
{
    // Hashing, compressing and writing the chunks (about a second for a booted 256 MiB guest)
    // on a worker; the row is recorded back on this thread, which owns the registry.
    SnapshotArchive *archive = &m_archive;
    m_jobs.run<Result<Snapshot>>(
        [archive, capture] { return archive->stage(capture->meta, objectsOf(*capture)); },
        [this, capture, name, done](const Result<Snapshot> &staged) {
            m_storing.remove(name);
            if (!staged)
                return done(std::unexpected(staged.error()));
            done(record(name, *capture, *staged));
        });
}

std::vector<SnapshotArchive::Object> SnapshotService::objectsOf(const Capture &capture)
{
    const SnapshotCapture::State &state = *capture.state;
    std::vector<SnapshotArchive::Object> objects {
        {kMemoryObject, state.memory->bytes()},
        {kDeviceState,
         std::span<const char>(state.deviceState.constData(), size_t(state.deviceState.size()))}};
    if (state.diskInMemory || state.disk) {
        // A file copy is read in bounded windows: the overlay's size is the guest's.
        if (state.diskInMemory)
            objects.push_back({kDisk, state.diskInMemory->bytes()});
        else
            objects.push_back({kDisk, {}, state.disk->fd()});
        objects.push_back({kDiskBase,
                           std::span<const char>(capture.diskIdentity.constData(),
                                                 size_t(capture.diskIdentity.size()))});
    }
    return objects;
}

Result<Snapshot> SnapshotService::record(const QString &name, const Capture &capture,
                                         const Snapshot &staged)
{
    // A sandbox deleted while its snapshot was stored takes that snapshot with it.
    if (!staged.sandbox.isEmpty() && !m_sandboxes.get(name)) {
        m_archive.store().removeManifest(staged.id);
        return fail(
            ErrorKind::NotFound,
            QStringLiteral("sandbox '%1' was deleted while its snapshot was stored").arg(name));
    }
    auto committed = m_archive.record(staged);
    if (!committed)
        return committed;
    const SnapshotCapture::State &state = *capture.state;
    qCInfo(lcSnapshots,
           "%s: %s snapshot %s, guest paused %lld ms (device state %lld ms, %lld bytes of RAM "
           "and %lld of disk%s copied in %lld ms)",
           qPrintable(name), qPrintable(snapshotKindName(committed->kind)),
           qPrintable(committed->id), static_cast<long long>(committed->pauseMs),
           static_cast<long long>(state.savedMs), static_cast<long long>(state.memory->dataBytes()),
           static_cast<long long>(state.diskInMemory ? state.diskInMemory->dataBytes()
                                      : state.disk   ? state.disk->dataBytes()
                                                     : 0),
           state.disk ? (state.disk->cloned() ? " (a reflink)" : " (into a file)") : "",
           static_cast<long long>(state.copiedMs));
    Q_EMIT snapshotChanged(committed->sandbox, *committed);
    return committed;
}

void SnapshotService::captureState(const QString &name, const QString &label, SnapshotKind kind,
                                   const QString &templateKey, Captured done)
{
    const auto refuse = [&done](const Error &error) { done(std::unexpected(error)); };
    auto sandbox = m_sandboxes.get(name);
    if (!sandbox)
        return refuse(sandbox.error());
    if (auto valid = Snapshot::validateLabel(label); !valid)
        return refuse(valid.error());
    if (m_storing.contains(name))
        return refuse(Error {
            ErrorKind::Busy,
            QStringLiteral("a snapshot of sandbox '%1' is still being taken or stored").arg(name)});
    Vmm *vmm = m_sandboxes.vmmOf(name);
    const bool running = sandbox->state == SandboxState::Running;
    if ((!running && sandbox->state != SandboxState::Paused) || !vmm)
        return refuse(Error {ErrorKind::InvalidState,
                             QStringLiteral("sandbox '%1' is %2; only a running or paused guest "
                                            "can be snapshotted")
                                 .arg(name, sandboxStateName(sandbox->state))});
    // From here until done: a second snapshot is Busy, and so are pause, resume and stop.
    m_storing.insert(name);
    auto capture = std::make_shared<Capture>();
    // The base this overlay was made on (recorded beside it), not the image store's current
    // build: an image rebuilt (or removed) while the guest runs must not relabel its disk.
    capture->diskIdentity = m_sandboxes.diskIdentityOf(name).toUtf8();
    SnapshotCapture::Source source;
    source.sandbox = name;
    source.vmm = vmm;
    source.running = running;
    source.memoryPath = m_sandboxes.memoryPathFor(name);
    // The overlay is copied so the guest can run on, but into an unnamed file beside it, not
    // into memory: the guest decides how much of its disk holds data
    // (docs/reviews/2026-12-01-guest-channels-round4.md#f3). Refused when the state file system
    // lacks the room. Small overlays (the usual case) still go to memory, within a budget
    // shared by every capture not yet stored: a copy to disk dirties the page cache, which cost
    // a loaded host 200-300 ms more pause for a 35 MiB overlay (docs/snapshots.md).
    if (!capture->diskIdentity.isEmpty()) {
        source.diskPath = m_sandboxes.diskPathFor(name);
        struct stat info;
        const qint64 allocated = ::stat(QFile::encodeName(source.diskPath).constData(), &info) == 0
                && S_ISREG(info.st_mode)
            ? qint64(info.st_blocks) * 512
            : kDiskBytesInMemory + 1;
        if (m_diskBytesInMemory->load() + allocated <= kDiskBytesInMemory) {
            m_diskBytesInMemory->fetch_add(allocated);
            capture->budget = m_diskBytesInMemory;
            capture->budgetBytes = allocated;
            source.diskInMemory = true;
        }
    }
    m_sandboxes.holdStill(name);
    auto *taking = new SnapshotCapture(source, this);
    // The metadata as of the moment the guest stood still (the head cannot move meanwhile: a
    // restore of a running sandbox needs a safety snapshot, which is Busy).
    Snapshot &meta = capture->meta;
    // A template belongs to no sandbox and starts no tree.
    const bool isTemplate = kind == SnapshotKind::Template;
    meta.id = Snapshot::newId();
    meta.sandbox = isTemplate ? QString() : name;
    meta.parent = isTemplate ? QString() : m_archive.catalog().head(name);
    meta.templateKey = templateKey;
    meta.label = label;
    meta.kind = kind;
    meta.createdAt = m_clock();
    meta.image = sandbox->spec.image;
    meta.vcpus = sandbox->spec.vcpus;
    meta.memoryMib = sandbox->spec.memoryMib;
    meta.vmm = sandbox->spec.vmm.value_or(VmmKind::Qemu);
    taking->start([this, name, capture, taking,
                   done](const Result<std::shared_ptr<SnapshotCapture::State>> &state) {
        taking->deleteLater();
        m_sandboxes.releaseStill(name);
        if (!state) {
            m_storing.remove(name);
            return done(std::unexpected(state.error()));
        }
        capture->state = *state;
        capture->meta.pauseMs = (*state)->pauseMs;
        done(capture);
    });
}

Result<QList<Snapshot>> SnapshotService::list(const QString &sandbox) const
{
    if (!sandbox.isEmpty()) {
        AIRLOCK_TRY(m_sandboxes.get(sandbox));
    }
    return m_archive.catalog().list(sandbox);
}

Result<Snapshot> SnapshotService::get(const QString &id) const
{
    AIRLOCK_TRY(Snapshot::validateId(id));
    return m_archive.catalog().get(id);
}

QString SnapshotService::head(const QString &sandbox) const
{
    return m_archive.catalog().head(sandbox);
}

Result<SnapshotService::StagedState> SnapshotService::stageWithoutMemory(const QString &name,
                                                                         const Snapshot &snapshot,
                                                                         Manifest *manifestOut)
{
    auto manifest = m_archive.store().manifest(snapshot.id);
    AIRLOCK_TRY(manifest);
    const Manifest::Object *memory = manifest->find(kMemoryObject);
    const Manifest::Object *device = manifest->find(kDeviceState);
    if (!memory || !device)
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("snapshot %1 lacks its memory or device state").arg(snapshot.id));
    auto sandbox = m_sandboxes.get(name);
    AIRLOCK_TRY(sandbox);
    if (qint64(sandbox->spec.memoryMib) * 1024 * 1024 != memory->size)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("snapshot %1 holds %2 MiB of memory; sandbox '%3' has %4 MiB")
                        .arg(snapshot.id)
                        .arg(memory->size / (1024 * 1024))
                        .arg(name)
                        .arg(sandbox->spec.memoryMib));
    auto deviceState = m_archive.store().readObject(*device, kMaxDeviceStateBytes);
    AIRLOCK_TRY(deviceState);
    AIRLOCK_TRY(writeDisk(name, *manifest));
    auto state = MemFd::create("airlock-device-state");
    AIRLOCK_TRY(state);
    AIRLOCK_TRY(state->write(*deviceState));
    auto memoryFd = m_sandboxes.createMemoryFile(name);
    AIRLOCK_TRY(memoryFd);
    if (manifestOut)
        *manifestOut = std::move(*manifest);
    return StagedState {state->release(), *memoryFd};
}

Result<SnapshotService::StagedRestore> SnapshotService::stageState(const QString &name,
                                                                   const Snapshot &snapshot)
{
    Manifest manifest;
    auto staged = stageWithoutMemory(name, snapshot, &manifest);
    AIRLOCK_TRY(staged);
    const std::shared_ptr<int> memory(new int(staged->memory), [](int *fd) {
        ::close(*fd);
        delete fd;
    });
    const SnapshotStore *store = &m_archive.store();
    return StagedRestore {staged->deviceState,
                          [store, object = *manifest.find(kMemoryObject), memory] {
                              return store->writeObjectTo(object, *memory);
                          }};
}

void SnapshotService::startFrom(const QString &name, const Snapshot &snapshot,
                                std::function<void(const Result<void> &)> done)
{
    auto state = stageState(name, snapshot);
    if (!state)
        return done(std::unexpected(state.error()));
    m_sandboxes.start(
        name, state->deviceState, StartSource::Snapshot,
        [this, name, snapshot, fd = state->deviceState, done](const Result<Sandbox> &ran) {
            ::close(fd);
            if (!ran)
                return done(std::unexpected(ran.error()));
            auto headed = m_archive.catalog().setHead(name, snapshot.id);
            // The sandbox runs from it now: clients that drew the head (a timeline)
            // re-read it.
            if (headed)
                Q_EMIT snapshotChanged(name, snapshot);
            done(headed);
        },
        std::move(state->fillMemory));
}

Result<const Manifest::Object *> SnapshotService::diskToRestore(const QString &name,
                                                                const Manifest &manifest) const
{
    auto image = m_sandboxes.imageOf(name);
    AIRLOCK_TRY(image);
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
    AIRLOCK_TRY(identity);
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
    AIRLOCK_TRY(disk);
    if (!*disk)
        return {};
    auto image = m_sandboxes.imageOf(name);
    AIRLOCK_TRY(image);
    const Manifest::Object *object = *disk;
    return m_sandboxes.replaceDisk(name, image->diskIdentity(), [this, object](int fd) {
        return m_archive.store().writeObjectTo(*object, fd);
    });
}

void SnapshotService::restoreSnapshot(
    const QString &name, const QString &id,
    std::function<void(const Result<std::optional<Snapshot>> &)> answer)
{
    auto snapshot = get(id);
    if (!snapshot)
        return answer(std::unexpected(snapshot.error()));
    // Held until the answer: snapshot.delete of it is busy meanwhile
    // (docs/reviews/2026-12-01-newuser-pass.md#m6).
    hold(id);
    const auto done = [this, id, answer](const Result<std::optional<Snapshot>> &result) {
        release(id);
        answer(result);
    };
    auto sandbox = m_sandboxes.get(name);
    if (!sandbox)
        return done(std::unexpected(sandbox.error()));
    // Another sandbox's memory carries that sandbox's hostname, addresses and CA: restoring it
    // here would run a guest with a borrowed identity on a link that expects another.
    if (snapshot->sandbox != name)
        return done(fail(ErrorKind::InvalidParams,
                         QStringLiteral("snapshot %1 was taken of %2, not of sandbox '%3'; start "
                                        "a new sandbox from it with snapshot.fork")
                             .arg(id,
                                  snapshot->sandbox.isEmpty()
                                      ? QStringLiteral("no sandbox (a template)")
                                      : QStringLiteral("sandbox '%1'").arg(snapshot->sandbox),
                                  name)));
    // A disk that cannot be restored is refused before the running guest is stopped for it.
    auto manifest = m_archive.store().manifest(id);
    if (!manifest)
        return done(std::unexpected(manifest.error()));
    if (auto disk = diskToRestore(name, *manifest); !disk)
        return done(std::unexpected(disk.error()));
    const auto restore = [this, name, target = *snapshot, done](std::optional<Snapshot> safety) {
        if (safety) {
            // Once more, now that the safety snapshot is stored: nothing is torn down for a
            // snapshot that cannot be read back.
            if (auto still = m_archive.store().manifest(target.id); !still)
                return done(fail(still.error().kind,
                                 QStringLiteral("nothing was restored (the guest runs on; its "
                                                "state is also in safety snapshot %1): %2")
                                     .arg(safety->id, still.error().message)));
            // A helper killed from here on leaves the sandbox stopped: the next one says why
            // and where the state went (docs/reviews/2026-12-01-newuser-pass.md#m3).
            if (auto noted = m_journal.begin(QStringLiteral("restore"), name,
                                             {{QStringLiteral("snapshot"), target.id},
                                              {QStringLiteral("safety"), safety->id}});
                !noted)
                return done(std::unexpected(noted.error()));
            // Stopped meanwhile (by a client) is fine: the restore starts it.
            if (auto killed = m_sandboxes.kill(name);
                !killed && killed.error().kind != ErrorKind::InvalidState) {
                m_journal.end(QStringLiteral("restore"), name);
                return done(std::unexpected(killed.error()));
            }
        }
        startFrom(name, target, [this, name, target, safety, done](const Result<void> &started) {
            m_journal.end(QStringLiteral("restore"), name);
            if (!started) {
                if (safety)
                    m_sandboxes.setStateReason(
                        name,
                        QStringLiteral("restoring snapshot %1 failed (%2); the state before "
                                       "the restore is in safety snapshot %3")
                            .arg(target.id, started.error().message, safety->id));
                return done(std::unexpected(started.error()));
            }
            qCInfo(lcSnapshots, "%s: restored snapshot %s", qPrintable(name),
                   qPrintable(target.id));
            done(safety);
        });
    };
    if (sandbox->state == SandboxState::Running || sandbox->state == SandboxState::Paused) {
        // The safety snapshot is stored (on a worker) before anything is replaced.
        createAsync(name, QStringLiteral("before restoring %1").arg(id), SnapshotKind::Safety,
                    [restore, done](const Result<Snapshot> &taken) {
                        if (!taken)
                            return done(fail(taken.error().kind,
                                             QStringLiteral("the safety snapshot failed, nothing "
                                                            "was restored: %1")
                                                 .arg(taken.error().message)));
                        restore(*taken);
                    });
        return;
    }
    if (sandbox->state != SandboxState::Stopped)
        return done(
            fail(ErrorKind::InvalidState,
                 QStringLiteral("sandbox '%1' is %2").arg(name, sandboxStateName(sandbox->state))));
    restore(std::nullopt);
}

void SnapshotService::fork(const QString &id, const QString &name, ForkBindings forkBindings,
                           ForkDone done, const std::optional<QMap<QString, QString>> &labels)
{
    forkBindings.copied.clear();
    forkBindings.leftOut.clear();
    auto started = beginFork(id, name, forkBindings, labels);
    if (!started)
        return done(std::unexpected(started.error()), forkBindings);
    const Snapshot snapshot = *started;
    startFrom(name, snapshot,
              [this, id, name, snapshot, forkBindings, done](const Result<void> &ran) {
                  release(id);
                  m_journal.end(QStringLiteral("fork"), name);
                  if (!ran) {
                      // No half-made fork: the new sandbox goes again (its bindings with it).
                      m_sandboxes.kill(name);
                      m_sandboxes.remove(name);
                      return done(std::unexpected(ran.error()), forkBindings);
                  }
                  qCInfo(lcSnapshots, "forked %s from snapshot %s of %s", qPrintable(name),
                         qPrintable(id), qPrintable(snapshot.sandbox));
                  done(name, forkBindings);
              });
}

Result<Snapshot> SnapshotService::beginFork(const QString &id, const QString &name,
                                            ForkBindings &forkBindings,
                                            const std::optional<QMap<QString, QString>> &labels)
{
    auto snapshot = get(id);
    AIRLOCK_TRY(snapshot);
    AIRLOCK_TRY(validateName(name));
    SandboxSpec spec;
    spec.name = name;
    spec.image = snapshot->image;
    spec.vcpus = snapshot->vcpus;
    spec.memoryMib = snapshot->memoryMib;
    // The device state is the VMM's own format: the fork boots the VMM that saved it.
    spec.vmm = snapshot->vmm;
    // Firecracker's snapshot names the drives by the paths it opened them by, and its API has
    // no override for them: only a jail, where every sandbox's disks have the same paths
    // (/rootfs, /seed), makes a loaded copy open the fork's own files, not the original's.
    if (snapshot->vmm == VmmKind::Firecracker && !FirecrackerJail::available())
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("a fork of a Firecracker snapshot needs Firecracker's jail, "
                                   "which this airlockd cannot make (it lacks CAP_SYS_ADMIN or "
                                   "CAP_SYS_CHROOT): its snapshot would open the original "
                                   "sandbox's disks (docs/vmm.md)"));
    // The caller's labels (E2B's Sandbox.create from a snapshot has its own metadata), or the
    // source sandbox's (E2B's fork keeps the metadata), while that sandbox exists.
    if (labels)
        spec.labels = *labels;
    else if (auto source = m_sandboxes.get(snapshot->sandbox))
        spec.labels = source->spec.labels;
    if (m_sandboxes.get(name))
        return fail(ErrorKind::AlreadyExists,
                    QStringLiteral("a sandbox named '%1' already exists").arg(name));
    // Held while the fork is made: snapshot.delete of it is busy meanwhile
    // (docs/reviews/2026-12-01-newuser-pass.md#m6).
    hold(id);
    auto unhold = qScopeGuard([this, id] { release(id); });
    // Before the sandbox exists: a helper killed before the fork's guest runs leaves this
    // entry, and the next helper removes the half-made fork
    // (docs/reviews/2026-12-01-newuser-pass.md#m2).
    AIRLOCK_TRY(m_journal.begin(QStringLiteral("fork"), name, {{QStringLiteral("snapshot"), id}}));
    auto unjournal = qScopeGuard([this, name] { m_journal.end(QStringLiteral("fork"), name); });
    AIRLOCK_TRY(m_sandboxes.create(spec));
    // No half-made fork: on any failure the new sandbox goes again (its bindings with it).
    const auto undo = [this, &name](const Error &error) -> Result<Snapshot> {
        m_sandboxes.kill(name);
        m_sandboxes.remove(name);
        return std::unexpected(error);
    };
    if (!snapshot->sandbox.isEmpty()) {
        if (auto policy = m_sandboxes.policy(snapshot->sandbox))
            m_sandboxes.setPolicy(name, *policy, {},
                                  PolicyChangeOrigin {std::nullopt, QStringLiteral("fork")});
    }
    if (forkBindings.copy && !snapshot->sandbox.isEmpty()) {
        if (!m_bindings)
            return undo(Error {ErrorKind::BackendUnavailable,
                               QStringLiteral("credential bindings are not available")});
        auto bindings = m_bindings->list(snapshot->sandbox);
        if (!bindings)
            return undo(bindings.error());
        for (CredentialBinding binding : *bindings) {
            if (forkBindings.refuse) {
                if (const QString why = forkBindings.refuse(binding); !why.isEmpty()) {
                    forkBindings.leftOut.append(why);
                    continue;
                }
            }
            // Placeholders are per sandbox and made on first use: the fork gets its own.
            binding.id = 0;
            binding.sandbox = name;
            binding.stats = {};
            auto added = m_bindings->add(binding);
            if (!added)
                return undo(added.error());
            forkBindings.copied.append(*added);
        }
    }
    // Held and journalled until the fork's guest runs (fork()).
    unhold.dismiss();
    unjournal.dismiss();
    return *snapshot;
}

Result<void> SnapshotService::remove(const QString &id)
{
    auto snapshot = get(id);
    AIRLOCK_TRY(snapshot);
    // Deleting it under a restore or fork would kill the running guest for a restore that can
    // no longer happen, and leave the safety snapshot with a parent that is gone
    // (docs/reviews/2026-12-01-newuser-pass.md#m6).
    if (m_inUse.contains(id))
        return fail(ErrorKind::Busy,
                    QStringLiteral("snapshot %1 is being restored or forked; delete it once that "
                                   "has finished")
                        .arg(id));
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
    AIRLOCK_TRY(snapshot);
    snapshot->pinned = pinned;
    AIRLOCK_TRY(m_archive.catalog().update(*snapshot));
    Q_EMIT snapshotChanged(snapshot->sandbox, *snapshot);
    return snapshot;
}

Result<Snapshot> SnapshotService::rename(const QString &id, const QString &label)
{
    auto snapshot = get(id);
    AIRLOCK_TRY(snapshot);
    AIRLOCK_TRY(Snapshot::validateLabel(label));
    snapshot->label = label;
    AIRLOCK_TRY(m_archive.catalog().update(*snapshot));
    Q_EMIT snapshotChanged(snapshot->sandbox, *snapshot);
    return snapshot;
}

void SnapshotService::onSandboxChanged(const Sandbox &sandbox)
{
    const QString name = sandbox.spec.name;
    const SandboxState before = std::exchange(m_lastState[name], sandbox.state);
    if (before != SandboxState::Starting || sandbox.state != SandboxState::Running)
        return;
    // startFrom() sets the head of a start from a snapshot. A template start, or a cold boot of
    // a sandbox without a root disk, keeps nothing of the head's state: snapshots taken from now
    // on are no children of it (a cold boot with a disk keeps the disk, and so its lineage).
    if (sandbox.startedFrom == StartSource::Snapshot)
        return;
    if (sandbox.startedFrom == StartSource::Boot) {
        const auto image = m_sandboxes.imageOf(name);
        if (!image || !image->diskPath.isEmpty())
            return;
    }
    const QString old = head(name);
    if (old.isEmpty())
        return;
    if (auto cleared = m_archive.catalog().setHead(name, QString()); !cleared) {
        qCWarning(lcSnapshots, "%s: %s", qPrintable(name), qPrintable(cleared.error().message));
        return;
    }
    qCInfo(lcSnapshots, "%s: started from %s, so no longer from snapshot %s", qPrintable(name),
           qPrintable(startSourceName(sandbox.startedFrom)), qPrintable(old));
    // Clients that drew the head (a timeline) re-read it.
    if (auto snapshot = m_archive.catalog().get(old))
        Q_EMIT snapshotChanged(name, *snapshot);
}

void SnapshotService::onSandboxRemoved(const QString &sandbox)
{
    m_lastState.remove(sandbox);
    // A sandbox's history goes with it; forks of it keep their own snapshots.
    if (auto snapshots = m_archive.catalog().list(sandbox)) {
        for (const Snapshot &snapshot : *snapshots)
            discard(sandbox, snapshot.id);
    }
    m_archive.catalog().forgetSandbox(sandbox);
    m_archive.collectGarbage();
}

bool SnapshotService::discard(const QString &sandbox, const QString &id)
{
    if (!m_archive.remove(id))
        return false;
    Q_EMIT snapshotRemoved(sandbox, id);
    return true;
}

} // namespace airlock

#include "core/daemon/templateservice.h"

#include "core/daemon/sandboxservice.h"
#include "core/daemon/snapshotservice.h"
#include "core/snapshot/snapshotarchive.h"
#include "core/snapshot/sparsecopy.h"
#include "core/vmm/firecrackerjail.h"
#include "core/vmm/guestagent.h"
#include "core/vmm/imagestore.h"
#include "core/vmm/qemucommand.h"
#include "core/vmm/vmm.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QPointer>
#include <QRandomGenerator>
#include <QTimer>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcSnapshots, "airlock.daemon.snapshot")

/// The two descriptors of a template's memory copy, closed when the copy (run on a worker) and
/// its start are both done with them.
struct ExtentCopy
{
    ExtentCopy() = default;
    ExtentCopy(const ExtentCopy &) = delete;
    ExtentCopy &operator=(const ExtentCopy &) = delete;
    ~ExtentCopy()
    {
        for (const int fd : {from, to}) {
            if (fd >= 0)
                ::close(fd);
        }
    }
    int from = -1; ///< the template's cached memory file
    int to = -1; ///< the sandbox's memory file
};

} // namespace

TemplateService::TemplateService(SandboxService &sandboxes, SnapshotService &snapshots,
                                 SnapshotArchive &archive, const Options &options, QObject *parent)
    : QObject(parent)
    , m_sandboxes(sandboxes)
    , m_snapshots(snapshots)
    , m_archive(archive)
    , m_options(options)
{
    m_sandboxes.setTemplateSource(
        [this](const QString &name, const SandboxSpec &spec) { return templateState(name, spec); });
    // However a template goes (snapshot.delete, the cap, a newer one of its shape), its cache
    // goes with it. Templates are the only snapshots of no sandbox.
    connect(&m_snapshots, &SnapshotService::snapshotRemoved, this,
            [this](const QString &sandbox, const QString &id) {
                if (!sandbox.isEmpty())
                    return;
                dropTemplateCache(id);
                m_templateUsed.remove(id);
            });
}

TemplateService::~TemplateService()
{
    m_sandboxes.setTemplateSource({});
    // Unlike sandboxes, a half-prepared template guest is of no use to the next helper.
    for (const QString &guest : std::as_const(m_preparing))
        m_sandboxes.kill(guest);
    // The caches live in tmpfs (RAM): they go with the helper and come back on demand.
    if (auto all = m_archive.catalog().list()) {
        for (const Snapshot &snapshot : *all) {
            if (snapshot.kind == SnapshotKind::Template)
                dropTemplateCache(snapshot.id);
        }
    }
}

void TemplateService::start()
{
    removeStaleTemplateCaches();
    if (m_options.automatic) {
        // The default image's template, unless it has a current one (docs/snapshots.md).
        QTimer::singleShot(0, this, [this] {
            const SandboxSpec shape;
            if (!m_sandboxes.images().find(shape.image))
                return;
            if (auto prepared = prepareTemplate(shape, /*automatic=*/true); !prepared)
                qCWarning(lcSnapshots, "template of image %s: %s", qPrintable(shape.image),
                          qPrintable(prepared.error().message));
        });
    }
}

Result<QString> TemplateService::templateKey(const SandboxSpec &shape) const
{
    auto image = m_sandboxes.images().find(shape.image);
    AIRLOCK_TRY(image);
    QCryptographicHash hash(QCryptographicHash::Sha256);
    const auto add = [&hash](const QString &text) {
        hash.addData(text.toUtf8());
        hash.addData(QByteArrayView("\n", 1));
    };
    // The device state is the VMM's own: a template loads only into the VMM (and the build of
    // it) that saved it. QEMU's keys read as before Firecracker had templates, so its
    // templates stay current across the upgrade.
    const VmmKind vmm = shape.vmm.value_or(m_sandboxes.config().defaultVmm);
    QString vmmBinary = QemuCommand::findQemu();
    if (vmm == VmmKind::Firecracker) {
        add(QStringLiteral("firecracker"));
        // Its snapshot names the drives by path: jail paths (/seed) and host paths differ.
        add(FirecrackerJail::available() ? QStringLiteral("jailed") : QStringLiteral("unjailed"));
        vmmBinary = m_sandboxes.config().firecrackerBinary;
    }
    add(QStringLiteral("airlock-template-%1").arg(QemuCommand::kDeviceLayoutVersion));
    if (m_sandboxes.config().benchPort)
        add(QStringLiteral("bench-port")); // one more device: a state that loads only there
    add(image->id);
    add(image->kernelArgs);
    for (const QString &path : {image->kernelPath, image->initrdPath, vmmBinary}) {
        const QFileInfo file(path);
        add(path);
        add(QString::number(file.size()));
        add(QString::number(file.lastModified().toMSecsSinceEpoch()));
    }
    add(accelerationName(m_sandboxes.config().acceleration));
    add(QString::number(shape.vcpus));
    add(QString::number(shape.memoryMib));
    return QString::fromLatin1(hash.result().toHex().left(32));
}

std::optional<Snapshot> TemplateService::currentTemplate(const SandboxSpec &shape) const
{
    auto key = templateKey(shape);
    auto all = m_archive.catalog().list();
    if (!key || !all)
        return std::nullopt;
    std::optional<Snapshot> newest;
    for (const Snapshot &snapshot : *all) {
        if (snapshot.kind == SnapshotKind::Template && snapshot.templateKey == *key
            && (!newest || snapshot.createdAt > newest->createdAt))
            newest = snapshot;
    }
    return newest;
}

bool TemplateService::isPreparing(const SandboxSpec &shape) const
{
    auto key = templateKey(shape);
    return key && m_preparing.contains(*key);
}

Result<std::optional<Snapshot>> TemplateService::prepareTemplate(const SandboxSpec &shape,
                                                                 bool automatic)
{
    SandboxSpec spec = shape;
    spec.name = QStringLiteral("x"); // validated below with the guest's own name
    AIRLOCK_TRY(spec.validate());
    auto key = templateKey(shape);
    AIRLOCK_TRY(key);
    // Its memory would hold the template guest's page cache and mounted root filesystem, which
    // no new sandbox's fresh overlay matches (SandboxService boots those cold).
    if (auto image = m_sandboxes.images().find(shape.image); image && !image->diskPath.isEmpty())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("image '%1' has a root disk; its sandboxes always boot cold")
                        .arg(shape.image));
    spec.vmm = shape.vmm.value_or(m_sandboxes.config().defaultVmm);
    // Firecracker's snapshot names the drives by the paths it opened them by: only in the jail
    // are those the same for every sandbox (a template start would open the template guest's
    // seed otherwise, which is removed with it).
    if (*spec.vmm == VmmKind::Firecracker && !FirecrackerJail::available())
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("templates of Firecracker sandboxes need Firecracker's jail, "
                                   "which this airlockd cannot make (it lacks CAP_SYS_ADMIN or "
                                   "CAP_SYS_CHROOT); its sandboxes boot cold"));
    if (auto existing = currentTemplate(shape))
        return existing;
    if (m_preparing.contains(*key))
        return std::optional<Snapshot>();
    // An image whose guest never gets ready (no agent, a broken init) is not booted again and
    // again by every start that misses its template; a request (template.prepare) still is.
    if (automatic && m_failedKeys.contains(*key))
        return std::optional<Snapshot>();
    m_failedKeys.remove(*key);
    const QString guest = QString(SandboxService::kInternalPrefix)
        + QString::number(QRandomGenerator::system()->generate(), 16).rightJustified(8, u'0');
    spec.name = guest;
    spec.boot = BootMode::Cold;
    AIRLOCK_TRY(m_sandboxes.create(spec, /*internal=*/true));
    m_preparing.insert(*key, guest);
    qCInfo(lcSnapshots, "preparing a template of image %s (%d vCPU, %d MiB) in %s",
           qPrintable(shape.image), shape.vcpus, shape.memoryMib, qPrintable(guest));
    const QString id = *key;
    m_sandboxes.start(guest, [self = QPointer(this), id, guest, shape](const Result<Sandbox> &ran) {
        if (self)
            self->templateGuestStarted(id, guest, shape, ran);
    });
    return std::optional<Snapshot>();
}

void TemplateService::templateGuestStarted(const QString &id, const QString &guest,
                                           const SandboxSpec &shape, const Result<Sandbox> &ran)
{
    const auto stillPreparing = [this, id, guest] { return m_preparing.value(id) == guest; };
    if (!stillPreparing()) {
        // Given up meanwhile: the guest is of no use.
        m_sandboxes.kill(guest);
        m_sandboxes.remove(guest);
        return;
    }
    if (!ran)
        return endTemplateGuest(id, guest, ran.error().message);
    Vmm *vmm = m_sandboxes.vmmOf(guest);
    if (!vmm)
        return endTemplateGuest(id, guest, QStringLiteral("the template guest has no VMM"));
    connect(vmm, &Vmm::exited, this, [this, id, guest, stillPreparing](const QString &reason) {
        if (stillPreparing())
            endTemplateGuest(id, guest, QStringLiteral("its guest exited: %1").arg(reason));
    });
    if (vmm->agent())
        return awaitTemplateGuest(id, guest, shape, vmm);
    // Firecracker's channel (vsock) comes once the guest's agent listens; the ready timeout
    // covers the wait for it too.
    QTimer::singleShot(m_options.readyTimeoutMs, this, [this, id, guest, stillPreparing, vmm] {
        if (stillPreparing() && m_sandboxes.vmmOf(guest) == vmm && !vmm->agent())
            endTemplateGuest(id, guest,
                             QStringLiteral("the template guest's agent channel did "
                                            "not come up"));
    });
    connect(vmm, &Vmm::agentAvailable, this, [this, id, guest, shape, stillPreparing, vmm] {
        if (stillPreparing() && m_sandboxes.vmmOf(guest) == vmm)
            awaitTemplateGuest(id, guest, shape, vmm);
    });
}

void TemplateService::awaitTemplateGuest(const QString &id, const QString &guest,
                                         const SandboxSpec &shape, Vmm *vmm)
{
    const auto stillPreparing = [this, id, guest] { return m_preparing.value(id) == guest; };
    GuestAgent *agent = vmm->agent();
    const auto onReady = [this, id, guest, shape, stillPreparing] {
        // The init goes on to start the console shell; let it, so a template start has one.
        QTimer::singleShot(m_options.settleMs, this, [this, id, guest, shape, stillPreparing] {
            if (stillPreparing())
                captureTemplate(id, guest, shape);
        });
    };
    // The agent channel is read within AgentClient's bounds (GuestAgent::awaitReady): a guest
    // that floods it or breaks the protocol instead of answering the handshake fails like one
    // that never starts.
    agent->awaitReady(
        m_options.readyTimeoutMs,
        [self = QPointer(this), id, guest, onReady, stillPreparing](const Result<void> &ready) {
            if (!self || !stillPreparing())
                return;
            if (ready)
                onReady();
            else
                self->endTemplateGuest(id, guest, ready.error().message);
        });
}

void TemplateService::captureTemplate(const QString &key, const QString &guest,
                                      const SandboxSpec &shape)
{
    // Answered once the snapshot is stored; the event loop serves others meanwhile.
    m_snapshots.createTemplate(
        guest,
        QStringLiteral("template of image %1 (%2 vCPU, %3 MiB)")
            .arg(shape.image)
            .arg(shape.vcpus)
            .arg(shape.memoryMib),
        key, [self = QPointer(this), key, guest, shape](const Result<Snapshot> &made) {
            if (self)
                self->templateCaptured(key, guest, shape, made);
        });
}

void TemplateService::templateCaptured(const QString &key, const QString &guest,
                                       const SandboxSpec &shape, const Result<Snapshot> &made)
{
    // Its guest exited during the capture: endTemplateGuest() has run for it already.
    if (m_preparing.value(key) != guest)
        return;
    endTemplateGuest(key, guest, made ? QString() : made.error().message);
    if (!made)
        return;
    // One template per image and shape: older ones (a rebuilt image, another QEMU) go.
    if (auto all = m_archive.catalog().list()) {
        for (const Snapshot &old : *all) {
            if (old.kind == SnapshotKind::Template && old.id != made->id && old.image == shape.image
                && old.vcpus == shape.vcpus && old.memoryMib == shape.memoryMib
                && old.vmm == made->vmm && m_snapshots.discard(QString(), old.id))
                qCInfo(lcSnapshots, "removed the stale template %s", qPrintable(old.id));
        }
        enforceTemplateCap(made->id);
        m_archive.collectGarbage();
    }
    cacheTemplateInBackground(*made);
    qCInfo(lcSnapshots, "template %s of image %s ready", qPrintable(made->id),
           qPrintable(shape.image));
}

void TemplateService::endTemplateGuest(const QString &key, const QString &guest,
                                       const QString &failure)
{
    m_preparing.remove(key);
    if (!failure.isEmpty())
        m_failedKeys.insert(key);
    m_sandboxes.kill(guest);
    if (auto removed = m_sandboxes.remove(guest); !removed)
        qCWarning(lcSnapshots, "%s: %s", qPrintable(guest), qPrintable(removed.error().message));
    if (!failure.isEmpty()) {
        qCWarning(lcSnapshots, "no template from %s: %s", qPrintable(guest), qPrintable(failure));
        Q_EMIT templateFailed(key, failure);
    }
}

Result<SandboxService::TemplateStart> TemplateService::templateState(const QString &name,
                                                                     const SandboxSpec &spec)
{
    auto current = currentTemplate(spec);
    if (!current) {
        if (m_options.automatic && !isPreparing(spec)) {
            // After this start (which boots cold): the next one of this shape is fast.
            QTimer::singleShot(0, this, [this, spec] {
                if (auto prepared = prepareTemplate(spec, /*automatic=*/true); !prepared)
                    qCWarning(lcSnapshots, "template of image %s: %s", qPrintable(spec.image),
                              qPrintable(prepared.error().message));
            });
        }
        return fail(ErrorKind::NotFound,
                    QStringLiteral("no template of image %1 with %2 vCPU and %3 MiB")
                        .arg(spec.image)
                        .arg(spec.vcpus)
                        .arg(spec.memoryMib));
    }
    m_templateUsed.insert(current->id, m_snapshots.now());
    // The template's memory, decompressed once into tmpfs: a start then copies only its data
    // extents in the kernel (SandboxService runs the copy off the event loop) instead of
    // reading thousands of chunks. Until a worker has made it, starts read the chunks (also off
    // the event loop).
    const QByteArray cachePath = QFile::encodeName(templateCachePath(current->id));
    struct stat cacheInfo;
    if (::stat(cachePath.constData(), &cacheInfo) == 0 && S_ISREG(cacheInfo.st_mode)) {
        auto copy = std::make_shared<ExtentCopy>();
        copy->from = ::open(QFile::encodeName(templateCachePath(current->id)).constData(),
                            O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (copy->from >= 0) {
            auto staged = m_snapshots.stageWithoutMemory(name, *current);
            if (staged) {
                copy->to = staged->memory;
                return SandboxService::TemplateStart {
                    staged->deviceState, [copy]() -> Result<void> {
                        AIRLOCK_TRY(SparseCopy::copyExtents(copy->from, copy->to));
                        return {};
                    }};
            }
            qCWarning(lcSnapshots, "%s: %s", qPrintable(name), qPrintable(staged.error().message));
        }
    } else {
        cacheTemplateInBackground(*current);
    }
    AIRLOCK_TRY_INIT(state, m_snapshots.stageState(name, *current));
    return SandboxService::TemplateStart {state->deviceState, std::move(state->fillMemory)};
}

QString TemplateService::templateCachePath(const QString &id) const
{
    // Beside the guests' RAM files (tmpfs, root's directory); no sandbox name starts with '.'.
    return m_sandboxes.memoryPathFor(QStringLiteral(".template-") + id);
}

void TemplateService::cacheTemplateInBackground(const Snapshot &snapshot)
{
    const QString id = snapshot.id;
    const QByteArray path = QFile::encodeName(templateCachePath(id));
    struct stat info;
    if (m_caching.contains(id) || (::stat(path.constData(), &info) == 0 && S_ISREG(info.st_mode)))
        return;
    const auto warn = [id](const QString &why) {
        qCWarning(lcSnapshots, "template %s: no cache: %s", qPrintable(id), qPrintable(why));
    };
    auto manifest = m_archive.store().manifest(id);
    if (!manifest)
        return warn(manifest.error().message);
    const Manifest::Object *memory = manifest->find(SnapshotService::kMemoryObject);
    if (!memory)
        return warn(QStringLiteral("it holds no memory"));
    if (auto ready = m_sandboxes.ensureMemoryDir(); !ready)
        return warn(ready.error().message);
    m_caching.insert(id);
    const SnapshotStore *store = &m_archive.store();
    m_jobs.run<Result<void>>(
        [store, object = *memory, path]() -> Result<void> {
            const QByteArray temporary = path + ".tmp";
            ::unlink(temporary.constData());
            const int fd = ::open(temporary.constData(),
                                  O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            if (fd < 0)
                return fail(ErrorKind::OperationFailed,
                            QStringLiteral("cannot create %1: %2")
                                .arg(QFile::decodeName(temporary),
                                     QString::fromLocal8Bit(std::strerror(errno))));
            const Result<void> written = store->writeObjectTo(object, fd);
            ::close(fd);
            if (!written || ::rename(temporary.constData(), path.constData()) != 0) {
                ::unlink(temporary.constData());
                return written
                    ? fail(ErrorKind::OperationFailed,
                           QStringLiteral("cannot rename %1").arg(QFile::decodeName(temporary)))
                    : written;
            }
            return {};
        },
        [this, id, warn](const Result<void> &cached) {
            m_caching.remove(id);
            if (!cached)
                return warn(cached.error().message);
            // Discarded while the worker wrote: the cache would hold RAM for nothing.
            if (!m_archive.catalog().get(id))
                dropTemplateCache(id);
        });
}

void TemplateService::dropTemplateCache(const QString &id)
{
    ::unlink(QFile::encodeName(templateCachePath(id)).constData());
}

void TemplateService::removeStaleTemplateCaches()
{
    // Kept in tmpfs across a helper killed with -9 (the destructor drops them otherwise): a
    // cache whose template is gone would hold RAM forever (review 2026-12-01, M2).
    QSet<QString> templates;
    if (auto all = m_archive.catalog().list()) {
        for (const Snapshot &snapshot : *all) {
            if (snapshot.kind == SnapshotKind::Template)
                templates.insert(snapshot.id);
        }
    }
    const QFileInfo probe(templateCachePath(QStringLiteral("x")));
    const QDir dir = probe.dir();
    const QString prefix = QStringLiteral(".template-");
    for (const QString &file : dir.entryList(QDir::Files | QDir::Hidden | QDir::System)) {
        if (!file.startsWith(prefix))
            continue;
        const QString id = file.mid(prefix.size()).section(u'.', 0, 0);
        if (!templates.contains(id) || !file.endsWith(QStringLiteral(".ram"))) {
            qCInfo(lcSnapshots, "removing the stale template cache %s", qPrintable(file));
            QFile::remove(dir.filePath(file));
        }
    }
}

void TemplateService::enforceTemplateCap(const QString &keep)
{
    auto all = m_archive.catalog().list();
    if (!all)
        return;
    QList<Snapshot> templates;
    for (const Snapshot &snapshot : *all) {
        if (snapshot.kind == SnapshotKind::Template)
            templates.append(snapshot);
    }
    const auto lastUse = [this](const Snapshot &snapshot) {
        return std::max(snapshot.createdAt, m_templateUsed.value(snapshot.id));
    };
    // Oldest use first.
    std::sort(templates.begin(), templates.end(),
              [&](const Snapshot &a, const Snapshot &b) { return lastUse(a) < lastUse(b); });
    const qsizetype cap = std::max(1, m_options.maxTemplates);
    for (qsizetype i = 0; i < templates.size() && templates.size() - i > cap; ++i) {
        const Snapshot &old = templates.at(i);
        if (old.id == keep || m_snapshots.isInUse(old.id))
            continue;
        // Its cache and last use go with it (the snapshotRemoved handler).
        if (m_snapshots.discard(QString(), old.id))
            qCInfo(lcSnapshots,
                   "removed template %s (%s, %d vCPU, %d MiB): more than %lld templates, and it "
                   "was used least recently",
                   qPrintable(old.id), qPrintable(old.image), old.vcpus, old.memoryMib,
                   static_cast<long long>(cap));
    }
}

} // namespace airlock

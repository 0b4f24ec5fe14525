#include "core/snapshot/snapshotstore.h"

#include "core/snapshot/durablefile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSet>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace airlock {

namespace {

const QString kChunks = QStringLiteral("chunks");
const QString kManifests = QStringLiteral("manifests");
const QString kPending = QStringLiteral("pending");
const QString kTmp = QStringLiteral("tmp");
const QString kLock = QStringLiteral("lock");

bool validId(const QString &id)
{
    static const QRegularExpression pattern(QStringLiteral("^[a-z0-9-]{1,64}$"));
    return pattern.match(id).hasMatch();
}

std::unexpected<Error> errnoFailure(const QString &what)
{
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("%1: %2").arg(what, QString::fromLocal8Bit(std::strerror(errno))));
}

/// Opens the store's lock file and takes `operation` (LOCK_SH / LOCK_EX, maybe LOCK_NB).
Result<int> lockStore(const QString &path, int operation)
{
    const int fd = ::open(QFile::encodeName(path).constData(),
                          O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errnoFailure(QStringLiteral("cannot open %1").arg(path));
    int result;
    do {
        result = ::flock(fd, operation);
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
        const bool busy = errno == EWOULDBLOCK;
        ::close(fd);
        if (busy)
            return fail(ErrorKind::Busy,
                        QStringLiteral("the snapshot store is in use by a snapshot being written"));
        return errnoFailure(QStringLiteral("cannot lock %1").arg(path));
    }
    return fd;
}

bool writeAllAt(int fd, const char *data, qint64 size, qint64 offset)
{
    qint64 done = 0;
    while (done < size) {
        const ssize_t n = ::pwrite(fd, data + done, size_t(size - done), offset + done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        done += n;
    }
    return true;
}

} // namespace

SnapshotStore::SnapshotStore(QString root)
    : m_root(root), m_chunks(root + u'/' + kChunks, root + u'/' + kTmp)
{ }

SnapshotStore::~SnapshotStore() = default;

Result<std::unique_ptr<SnapshotStore>> SnapshotStore::open(const QString &root)
{
    const QString absolute = QDir(root).absolutePath();
    for (const QString &dir : {QString(), kChunks, kManifests, kPending, kTmp}) {
        const QString path = dir.isEmpty() ? absolute : absolute + u'/' + dir;
        if (!QDir().mkpath(path) || ::chmod(QFile::encodeName(path).constData(), 0700) != 0)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("cannot create the snapshot store directory %1").arg(path));
    }
    return std::unique_ptr<SnapshotStore>(new SnapshotStore(absolute));
}

QString SnapshotStore::manifestPath(const QString &id) const
{
    return m_root + u'/' + kManifests + u'/' + id;
}

QString SnapshotStore::markerPath(const QString &id) const
{
    return m_root + u'/' + kPending + u'/' + id;
}

Result<std::unique_ptr<SnapshotStore::Writer>> SnapshotStore::begin(const QString &id)
{
    if (!validId(id))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("snapshot id '%1' is not [a-z0-9-]{1,64}").arg(id));
    if (hasManifest(id) || QFileInfo::exists(markerPath(id)))
        return fail(ErrorKind::AlreadyExists,
                    QStringLiteral("snapshot '%1' already exists in the store").arg(id));
    auto lock = lockStore(m_root + u'/' + kLock, LOCK_SH);
    AIRLOCK_TRY(lock);
    if (auto marker =
            DurableFile::write(m_root + u'/' + kTmp + u'/' + id + QStringLiteral(".pending"),
                               markerPath(id), {}, true);
        !marker) {
        ::close(*lock);
        return std::unexpected(marker.error());
    }
    return std::unique_ptr<Writer>(new Writer(*this, id, *lock));
}

bool SnapshotStore::hasManifest(const QString &id) const
{
    return validId(id) && QFileInfo::exists(manifestPath(id));
}

QStringList SnapshotStore::manifestIds() const
{
    QStringList ids;
    const QStringList names =
        QDir(m_root + u'/' + kManifests).entryList(QDir::Files | QDir::System, QDir::Name);
    for (const QString &name : names) {
        if (validId(name))
            ids.append(name);
    }
    return ids;
}

Result<Manifest> SnapshotStore::manifest(const QString &id) const
{
    if (!validId(id))
        return fail(ErrorKind::InvalidParams, QStringLiteral("bad snapshot id '%1'").arg(id));
    auto bytes = DurableFile::read(manifestPath(id), Manifest::kMaxBodyBytes + 4096);
    if (!bytes) {
        if (bytes.error().kind == ErrorKind::NotFound)
            return fail(ErrorKind::NotFound,
                        QStringLiteral("snapshot '%1' has no manifest in the store").arg(id));
        return std::unexpected(bytes.error());
    }
    auto parsed = Manifest::parse(*bytes);
    if (!parsed)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("snapshot '%1': %2").arg(id, parsed.error().message));
    return parsed;
}

Result<void> SnapshotStore::removeManifest(const QString &id)
{
    if (!validId(id))
        return fail(ErrorKind::InvalidParams, QStringLiteral("bad snapshot id '%1'").arg(id));
    if (auto removed = DurableFile::remove(manifestPath(id)); !removed)
        return removed;
    if (auto synced = DurableFile::syncDirectory(m_root + u'/' + kManifests); !synced)
        return synced;
    step(Step::ManifestRemoved);
    return {};
}

Result<void> SnapshotStore::writeObjectTo(const Manifest::Object &object, int fd) const
{
    if (::ftruncate(fd, 0) != 0 || ::ftruncate(fd, object.size) != 0)
        return errnoFailure(QStringLiteral("cannot size the restore target"));
    for (size_t i = 0; i < object.chunks.size(); ++i) {
        const ChunkDigest &digest = object.chunks[i];
        if (digest.isZero())
            continue;
        auto data = m_chunks.read(digest);
        AIRLOCK_TRY(data);
        const qint64 offset = qint64(i) * object.chunkSize;
        const qint64 expected = qMin<qint64>(object.chunkSize, object.size - offset);
        if (data->size() != expected)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("object '%1': chunk %2 has %3 bytes, expected %4")
                            .arg(object.name)
                            .arg(i)
                            .arg(data->size())
                            .arg(expected));
        if (!writeAllAt(fd, data->constData(), data->size(), offset))
            return errnoFailure(QStringLiteral("cannot write object '%1'").arg(object.name));
    }
    return {};
}

Result<QByteArray> SnapshotStore::readObject(const Manifest::Object &object, qint64 maxBytes) const
{
    if (object.size > maxBytes)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("object '%1' has %2 bytes, more than %3")
                        .arg(object.name)
                        .arg(object.size)
                        .arg(maxBytes));
    QByteArray bytes(qsizetype(object.size), '\0');
    for (size_t i = 0; i < object.chunks.size(); ++i) {
        if (object.chunks[i].isZero())
            continue;
        auto data = m_chunks.read(object.chunks[i]);
        AIRLOCK_TRY(data);
        const qint64 offset = qint64(i) * object.chunkSize;
        if (data->size() != qMin<qint64>(object.chunkSize, object.size - offset))
            return fail(
                ErrorKind::OperationFailed,
                QStringLiteral("object '%1': chunk %2 has the wrong size").arg(object.name).arg(i));
        std::memcpy(bytes.data() + offset, data->constData(), size_t(data->size()));
    }
    return bytes;
}

Result<SnapshotStore::GarbageReport> SnapshotStore::collectGarbage()
{
    auto lock = lockStore(m_root + u'/' + kLock, LOCK_EX | LOCK_NB);
    AIRLOCK_TRY(lock);
    const auto unlock = qScopeGuard([fd = *lock] { ::close(fd); });

    std::set<ChunkDigest> referenced;
    for (const QString &id : manifestIds()) {
        auto parsed = manifest(id);
        if (!parsed)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("garbage collection stopped, nothing deleted: %1")
                            .arg(parsed.error().message));
        for (const Manifest::Object &object : parsed->objects)
            referenced.insert(object.chunks.begin(), object.chunks.end());
    }
    GarbageReport report;
    // No writer holds the lock: markers and temporary files belong to writers that died.
    for (const QString &dir : {kPending, kTmp}) {
        const QDir leftovers(m_root + u'/' + dir);
        for (const QString &name : leftovers.entryList(QDir::Files | QDir::System | QDir::Hidden)) {
            if (DurableFile::remove(leftovers.filePath(name)))
                ++report.leftoversRemoved;
        }
    }
    std::vector<ChunkDigest> garbage;
    m_chunks.forEach([&](const ChunkDigest &digest) {
        if (!referenced.contains(digest))
            garbage.push_back(digest);
    });
    for (const ChunkDigest &digest : garbage) {
        const qint64 size = m_chunks.storedSize(digest);
        AIRLOCK_TRY(m_chunks.remove(digest));
        ++report.chunksRemoved;
        report.bytesFreed += size;
        step(Step::ChunkCollected);
    }
    return report;
}

SnapshotStore::VerifyReport SnapshotStore::verify() const
{
    VerifyReport report;
    std::set<ChunkDigest> referenced;
    for (const QString &id : manifestIds()) {
        ++report.manifests;
        auto parsed = manifest(id);
        if (!parsed) {
            report.problems.append(parsed.error().message);
            continue;
        }
        for (const Manifest::Object &object : parsed->objects) {
            for (const ChunkDigest &digest : object.chunks) {
                if (digest.isZero())
                    continue;
                if (referenced.insert(digest).second && !m_chunks.contains(digest))
                    report.problems.append(
                        QStringLiteral("snapshot '%1': object '%2' needs chunk %3, which is "
                                       "missing")
                            .arg(id, object.name, digest.hex()));
            }
        }
    }
    m_chunks.forEach(
        [&](const ChunkDigest &digest) {
            ++report.chunks;
            if (!referenced.contains(digest))
                ++report.unreferencedChunks;
            if (auto data = m_chunks.read(digest); !data)
                report.problems.append(data.error().message);
        },
        [&](const QString &path) {
            report.problems.append(QStringLiteral("stray file %1 in the chunk store").arg(path));
        });
    return report;
}

qint64 SnapshotStore::storedBytes() const
{
    qint64 total = 0;
    m_chunks.forEach([&](const ChunkDigest &digest) { total += m_chunks.storedSize(digest); });
    return total;
}

SnapshotStore::Writer::Writer(SnapshotStore &store, QString id, int lockFd)
    : m_store(store), m_id(std::move(id)), m_lockFd(lockFd)
{ }

SnapshotStore::Writer::~Writer()
{
    if (!m_done)
        discard();
    ::close(m_lockFd);
}

void SnapshotStore::Writer::discard()
{
    for (const auto &[digest, staged] : m_staged)
        DurableFile::remove(m_store.m_root + u'/' + kTmp + u'/' + staged);
    DurableFile::remove(m_store.markerPath(m_id));
    m_done = true;
}

Result<void> SnapshotStore::Writer::checkFreeSpace()
{
    struct statvfs room
    {
    };
    if (::statvfs(QFile::encodeName(m_store.m_root).constData(), &room) != 0)
        return errnoFailure(QStringLiteral("cannot read the free space of %1").arg(m_store.m_root));
    const qint64 free = qint64(room.f_bavail) * qint64(room.f_frsize);
    // One more window of chunks may follow before the next check.
    if (free < m_store.m_minimumFreeBytes + kFreeSpaceCheckBytes)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("the snapshot store's file system (%1) has %2 MiB free; a "
                                   "snapshot leaves at least %3 MiB free, so none is stored (free "
                                   "space, or delete snapshots)")
                        .arg(m_store.m_root)
                        .arg(free / (1024 * 1024))
                        .arg((m_store.m_minimumFreeBytes + kFreeSpaceCheckBytes) / (1024 * 1024)));
    return {};
}

Result<void> SnapshotStore::Writer::addChunk(std::span<const char> chunk, Manifest::Object &object,
                                             ObjectStats &stats)
{
    if (isAllZero(chunk)) {
        object.chunks.push_back(ChunkDigest::zero());
        stats.zeroBytes += qint64(chunk.size());
        return {};
    }
    const ChunkDigest digest = ChunkDigest::of(chunk);
    object.chunks.push_back(digest);
    if (m_staged.contains(digest) || m_store.m_chunks.contains(digest))
        return {};
    // Checked before the first new chunk, then once per kFreeSpaceCheckBytes staged.
    if (!m_checkedOnce || m_stagedSinceCheck >= kFreeSpaceCheckBytes) {
        if (auto room = checkFreeSpace(); !room)
            return room;
        m_checkedOnce = true;
        m_stagedSinceCheck = 0;
    }
    const QString staged = QStringLiteral("%1.%2").arg(m_id).arg(m_staged.size());
    auto written = m_store.m_chunks.stage(digest, chunk, staged);
    AIRLOCK_TRY(written);
    m_staged.emplace(digest, staged);
    stats.newBytes += qint64(chunk.size());
    stats.newStoredBytes += *written;
    m_stagedSinceCheck += qint64(chunk.size());
    m_store.step(Step::ChunkStaged);
    return {};
}

Result<SnapshotStore::ObjectStats> SnapshotStore::Writer::finishObject(Manifest::Object object,
                                                                       const ObjectStats &stats)
{
    Manifest candidate = m_manifest;
    candidate.objects.push_back(std::move(object));
    AIRLOCK_TRY(candidate.validate());
    m_manifest = std::move(candidate);
    return stats;
}

Result<SnapshotStore::ObjectStats>
SnapshotStore::Writer::addObject(const QString &name, std::span<const char> data, quint32 chunkSize)
{
    if (m_done)
        return fail(ErrorKind::InvalidState, QStringLiteral("snapshot already committed"));
    Manifest::Object object {name, qint64(data.size()), chunkSize, {}};
    object.chunks.reserve((data.size() + chunkSize - 1) / chunkSize);
    ObjectStats stats;
    stats.logicalBytes = qint64(data.size());
    for (size_t offset = 0; offset < data.size(); offset += chunkSize) {
        const std::span<const char> chunk =
            data.subspan(offset, qMin<size_t>(chunkSize, data.size() - offset));
        AIRLOCK_TRY(addChunk(chunk, object, stats));
    }
    return finishObject(std::move(object), stats);
}

Result<SnapshotStore::ObjectStats>
SnapshotStore::Writer::addObjectFromFile(const QString &name, int fd, quint32 chunkSize)
{
    if (m_done)
        return fail(ErrorKind::InvalidState, QStringLiteral("snapshot already committed"));
    struct stat info;
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("object %1 is not read from a regular file").arg(name));
    if (chunkSize == 0 || chunkSize > kReadWindowBytes)
        return fail(ErrorKind::InvalidParams, QStringLiteral("bad chunk size %1").arg(chunkSize));
    const qint64 size = info.st_size;
    Manifest::Object object {name, size, chunkSize, {}};
    object.chunks.reserve(size_t((size + chunkSize - 1) / chunkSize));
    ObjectStats stats;
    stats.logicalBytes = size;
    // A whole number of chunks per window, so chunk boundaries match addObject()'s.
    const qint64 window = kReadWindowBytes / chunkSize * chunkSize;
    QByteArray buffer(qsizetype(qMin(window, size)), Qt::Uninitialized);
    for (qint64 offset = 0; offset < size; offset += window) {
        const qint64 wanted = qMin(window, size - offset);
        qint64 got = 0;
        while (got < wanted) {
            const ssize_t n = ::pread(fd, buffer.data() + got, size_t(wanted - got), offset + got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) // the file shrank under us, or an I/O error
                return fail(ErrorKind::OperationFailed,
                            QStringLiteral("cannot read object %1 at %2: %3")
                                .arg(name)
                                .arg(offset + got)
                                .arg(QString::fromLocal8Bit(n < 0 ? std::strerror(errno)
                                                                  : "unexpected end of file")));
            got += n;
        }
        const std::span<const char> bytes(buffer.constData(), size_t(wanted));
        for (size_t at = 0; at < bytes.size(); at += chunkSize) {
            const auto chunk = bytes.subspan(at, qMin<size_t>(chunkSize, bytes.size() - at));
            AIRLOCK_TRY(addChunk(chunk, object, stats));
        }
    }
    return finishObject(std::move(object), stats);
}

Result<Manifest> SnapshotStore::Writer::commit()
{
    if (m_done)
        return fail(ErrorKind::InvalidState, QStringLiteral("snapshot already committed"));
    const QString &root = m_store.m_root;
    if (!m_staged.empty()) {
        // 1. Every staged chunk's bytes on disk before any of them gets its name.
        AIRLOCK_TRY(DurableFile::syncFilesystem(root));
        m_store.step(Step::ChunksFlushed);
        // 2. Names: a chunk file that exists is complete.
        QSet<QString> directories;
        for (auto it = m_staged.begin(); it != m_staged.end();) {
            AIRLOCK_TRY(m_store.m_chunks.publish(it->first, it->second));
            directories.insert(m_store.m_chunks.directoryOf(it->first));
            it = m_staged.erase(it);
            m_store.step(Step::ChunkPublished);
        }
        // 3. The renames themselves durable before the manifest can name the chunks.
        for (const QString &dir : std::as_const(directories)) {
            AIRLOCK_TRY(DurableFile::syncDirectory(dir));
        }
        m_store.step(Step::ChunkDirectoriesSynced);
    }
    // 4. The manifest: the snapshot exists from its rename on.
    const QByteArray bytes = m_manifest.serialize();
    AIRLOCK_TRY(DurableFile::write(root + u'/' + kTmp + u'/' + m_id + QStringLiteral(".manifest"),
                                   m_store.manifestPath(m_id), bytes, true));
    AIRLOCK_TRY(DurableFile::syncDirectory(root + u'/' + kManifests));
    m_store.step(Step::ManifestWritten);
    // 5. No longer in progress.
    DurableFile::remove(m_store.markerPath(m_id));
    m_done = true;
    m_store.step(Step::MarkerRemoved);
    return m_manifest;
}

} // namespace airlock

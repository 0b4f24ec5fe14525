#include "core/snapshot/chunkstore.h"

#include "core/snapshot/durablefile.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <zstd.h>

#include <sys/stat.h>

namespace airlock {

namespace {
/// zstd level 3 (its default): ~300 MB/s per core here, which keeps a snapshot's store time
/// below its hashing time; higher levels gain little on memory pages.
constexpr int kCompressionLevel = 3;
} // namespace

ChunkStore::ChunkStore(QString root, QString tempDir)
    : m_root(std::move(root)), m_tempDir(std::move(tempDir))
{ }

QString ChunkStore::directoryOf(const ChunkDigest &digest) const
{
    return m_root + u'/' + digest.hex().left(2);
}

QString ChunkStore::pathOf(const ChunkDigest &digest) const
{
    return directoryOf(digest) + u'/' + digest.hex();
}

Result<qint64> ChunkStore::stage(const ChunkDigest &digest, std::span<const char> data,
                                 const QString &stagedName) const
{
    if (qint64(data.size()) > kMaxChunkBytes)
        return fail(ErrorKind::Internal, QStringLiteral("chunk over %1 bytes").arg(kMaxChunkBytes));
    QByteArray compressed(qsizetype(ZSTD_compressBound(data.size())), Qt::Uninitialized);
    const size_t size = ZSTD_compress(compressed.data(), size_t(compressed.size()), data.data(),
                                      data.size(), kCompressionLevel);
    if (ZSTD_isError(size))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("zstd: %1").arg(QString::fromLatin1(ZSTD_getErrorName(size))));
    if (!QDir().mkpath(directoryOf(digest)))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot create %1").arg(directoryOf(digest)));
    AIRLOCK_TRY(DurableFile::writeTemporary(m_tempDir + u'/' + stagedName,
                                            std::span<const char>(compressed.constData(), size)));
    return qint64(size);
}

Result<void> ChunkStore::publish(const ChunkDigest &digest, const QString &stagedName) const
{
    return DurableFile::rename(m_tempDir + u'/' + stagedName, pathOf(digest));
}

bool ChunkStore::contains(const ChunkDigest &digest) const
{
    struct stat info;
    return ::lstat(QFile::encodeName(pathOf(digest)).constData(), &info) == 0
        && S_ISREG(info.st_mode);
}

Result<QByteArray> ChunkStore::read(const ChunkDigest &digest) const
{
    const QString path = pathOf(digest);
    // A zstd frame of at most kMaxChunkBytes is never much larger than that.
    auto compressed = DurableFile::read(path, kMaxChunkBytes + 65536);
    if (!compressed)
        return compressed;
    const unsigned long long size =
        ZSTD_getFrameContentSize(compressed->constData(), size_t(compressed->size()));
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN
        || size > quint64(kMaxChunkBytes))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("chunk %1 is damaged (no valid zstd frame)").arg(path));
    QByteArray data(qsizetype(size), Qt::Uninitialized);
    const size_t got = ZSTD_decompress(data.data(), size_t(data.size()), compressed->constData(),
                                       size_t(compressed->size()));
    if (ZSTD_isError(got) || got != size)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("chunk %1 is damaged (zstd: %2)")
                        .arg(path, QString::fromLatin1(ZSTD_getErrorName(got))));
    if (ChunkDigest::of(data) != digest)
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("chunk %1 is damaged (its SHA-256 differs from its name)").arg(path));
    return data;
}

qint64 ChunkStore::storedSize(const ChunkDigest &digest) const
{
    struct stat info;
    if (::lstat(QFile::encodeName(pathOf(digest)).constData(), &info) != 0)
        return 0;
    return info.st_size;
}

Result<void> ChunkStore::remove(const ChunkDigest &digest) const
{
    return DurableFile::remove(pathOf(digest));
}

void ChunkStore::forEach(const std::function<void(const ChunkDigest &)> &visit,
                         const std::function<void(const QString &)> &stray) const
{
    QDirIterator dirs(m_root, QDir::Dirs | QDir::NoDotAndDotDot);
    while (dirs.hasNext()) {
        const QString dir = dirs.next();
        QDirIterator files(dir, QDir::Files | QDir::System | QDir::Hidden);
        while (files.hasNext()) {
            const QString path = files.next();
            const QString name = QFileInfo(path).fileName();
            const auto digest = ChunkDigest::fromHex(name);
            if (digest && name.left(2) == QFileInfo(dir).fileName())
                visit(*digest);
            else if (stray)
                stray(path);
        }
    }
}

} // namespace airlock

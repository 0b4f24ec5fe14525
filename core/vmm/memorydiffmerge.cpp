#include "core/vmm/memorydiffmerge.h"

#include <QFile>
#include <QScopeGuard>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace airlock {

namespace {

Error mergeError(const QString &what, const QString &path, int error)
{
    return Error {ErrorKind::OperationFailed,
                  QStringLiteral("cannot merge the Diff snapshot: %1 %2 (%3)")
                      .arg(what, path, QString::fromLocal8Bit(std::strerror(error)))};
}

Error mergeError(const QString &what, const QString &path)
{
    return Error {ErrorKind::OperationFailed,
                  QStringLiteral("cannot merge the Diff snapshot: %1 %2").arg(what, path)};
}

/// Opens `path` read-only without following a link or blocking, as a regular file of at most
/// `maxBytes`; its size in `size`.
Result<int> openPlain(const QString &path, qint64 maxBytes, qint64 &size, struct stat &info)
{
    const int fd = ::open(QFile::encodeName(path).constData(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return std::unexpected(mergeError(QStringLiteral("cannot open"), path, errno));
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        return std::unexpected(mergeError(QStringLiteral("cannot stat"), path, error));
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        return std::unexpected(mergeError(QStringLiteral("not a regular file:"), path));
    }
    if (info.st_size > maxBytes) {
        ::close(fd);
        return std::unexpected(
            mergeError(QStringLiteral("larger than the guest's memory (%1 > %2 bytes):")
                           .arg(info.st_size)
                           .arg(maxBytes),
                       path));
    }
    size = info.st_size;
    return fd;
}

/// Copies [offset, offset + length) of `in` to the same offsets of `out`: copy_file_range(2)
/// (in the kernel; tmpfs to tmpfs), else pread/pwrite where it is not offered.
Result<void> copyRange(int in, int out, off_t offset, qint64 length, const QString &path)
{
    static thread_local std::vector<char> buffer;
    bool useSplice = true;
    while (length > 0) {
        const size_t want = size_t(std::min<qint64>(length, 8 << 20));
        ssize_t done = -1;
        if (useSplice) {
            loff_t from = offset;
            loff_t to = offset;
            done = ::copy_file_range(in, &from, out, &to, want, 0);
            if (done < 0
                && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
                useSplice = false;
                continue;
            }
        } else {
            buffer.resize(1 << 20);
            done = ::pread(in, buffer.data(), std::min(want, buffer.size()), offset);
            if (done > 0) {
                for (ssize_t written = 0; written < done;) {
                    const ssize_t put = ::pwrite(out, buffer.data() + written,
                                                 size_t(done - written), offset + written);
                    if (put < 0 && errno == EINTR)
                        continue;
                    if (put <= 0)
                        return std::unexpected(mergeError(
                            QStringLiteral("cannot write the merged copy of"), path, errno));
                    written += put;
                }
            }
        }
        if (done < 0 && errno == EINTR)
            continue;
        if (done < 0)
            return std::unexpected(mergeError(QStringLiteral("cannot copy"), path, errno));
        // The VMM user may truncate its file meanwhile: a short file is refused, not waited on.
        if (done == 0)
            return std::unexpected(mergeError(QStringLiteral("shrank while it was read:"), path));
        offset += done;
        length -= done;
    }
    return {};
}

/// Copies every data extent of `in` below `size` to the same offset of `out`; the bytes copied.
Result<qint64> copyExtents(int in, int out, qint64 size, const QString &path)
{
    qint64 copied = 0;
    off_t offset = 0;
    while (offset < size) {
        const off_t data = ::lseek(in, offset, SEEK_DATA);
        if (data < 0 && errno == ENXIO)
            break; // only a hole is left
        if (data < 0)
            return std::unexpected(mergeError(QStringLiteral("cannot seek in"), path, errno));
        if (data >= size)
            break;
        off_t hole = ::lseek(in, data, SEEK_HOLE);
        if (hole < 0)
            return std::unexpected(mergeError(QStringLiteral("cannot seek in"), path, errno));
        hole = std::min<off_t>(hole, size);
        if (auto done = copyRange(in, out, data, hole - data, path); !done)
            return std::unexpected(done.error());
        copied += hole - data;
        offset = hole;
    }
    return copied;
}

} // namespace

std::optional<MemoryDiffMerge::Identity> MemoryDiffMerge::identityOf(int fd)
{
    struct stat info;
    if (::fstat(fd, &info) != 0)
        return std::nullopt;
    return Identity {info.st_dev, info.st_ino};
}

Result<MemoryDiffMerge::Stats> MemoryDiffMerge::merge(const QString &basePath,
                                                      const QString &diffPath,
                                                      const Identity &diffIdentity, int outFd,
                                                      qint64 maxBytes)
{
    struct stat diffInfo;
    qint64 diffSize = 0;
    auto diff = openPlain(diffPath, maxBytes, diffSize, diffInfo);
    if (!diff)
        return std::unexpected(diff.error());
    const int diffFd = *diff;
    const auto closeDiff = qScopeGuard([diffFd] { ::close(diffFd); });
    if (diffInfo.st_dev != diffIdentity.device || diffInfo.st_ino != diffIdentity.inode)
        return std::unexpected(
            mergeError(QStringLiteral("not the file created for the diff:"), diffPath));

    struct stat baseInfo;
    qint64 baseSize = 0;
    auto base = openPlain(basePath, maxBytes, baseSize, baseInfo);
    if (!base)
        return std::unexpected(base.error());
    const int baseFd = *base;
    const auto closeBase = qScopeGuard([baseFd] { ::close(baseFd); });

    Stats stats;
    stats.sizeBytes = std::max(baseSize, diffSize);
    if (::ftruncate(outFd, stats.sizeBytes) != 0)
        return std::unexpected(
            mergeError(QStringLiteral("cannot size the merged copy of"), basePath, errno));
    auto fromBase = copyExtents(baseFd, outFd, baseSize, basePath);
    if (!fromBase)
        return std::unexpected(fromBase.error());
    stats.baseBytes = *fromBase;
    // The diff's pages replace the base's: the dirty pages are the newer memory.
    auto fromDiff = copyExtents(diffFd, outFd, diffSize, diffPath);
    if (!fromDiff)
        return std::unexpected(fromDiff.error());
    stats.diffBytes = *fromDiff;
    return stats;
}

} // namespace airlock

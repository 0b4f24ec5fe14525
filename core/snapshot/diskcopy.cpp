#include "core/snapshot/diskcopy.h"

#include "core/snapshot/sparsecopy.h"

#include <QFile>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <utility>

namespace airlock {

namespace {

/// An unnamed file in `directory`, or a named one unlinked at once.
int openUnnamed(const QString &directory)
{
    const QByteArray dir = QFile::encodeName(directory);
    const int fd = ::open(dir.constData(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    QByteArray name = dir + "/airlock-copy-XXXXXX.tmp";
    const int named = ::mkostemps(name.data(), 4, O_CLOEXEC);
    if (named >= 0)
        ::unlink(name.constData());
    return named;
}

/// Sum of the data extents of `fd` (SEEK_DATA/SEEK_HOLE); the size on errors.
qint64 dataExtentBytes(int fd, qint64 size)
{
    qint64 bytes = 0;
    off_t position = 0;
    while (position < size) {
        const off_t start = ::lseek(fd, position, SEEK_DATA);
        if (start < 0)
            return errno == ENXIO ? bytes : size;
        const off_t end = ::lseek(fd, start, SEEK_HOLE);
        if (end < 0)
            return size;
        bytes += end - start;
        position = end;
    }
    return bytes;
}

} // namespace

Result<DiskCopy> DiskCopy::of(const QString &path, const QString &directory, qint64 freeMarginBytes)
{
    const int source =
        ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (source < 0)
        return failSystem(QStringLiteral("cannot open"), path, errno);
    const auto closeSource = [source] { ::close(source); };
    struct stat info;
    if (::fstat(source, &info) != 0 || !S_ISREG(info.st_mode)) {
        closeSource();
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("%1 is not a regular file").arg(path));
    }
    // Checked before anything is written: the copy must not fill the file system that holds
    // every sandbox's overlay, the registry and the snapshot store.
    const qint64 needed = qint64(info.st_blocks) * 512;
    struct statvfs room
    {
    };
    if (::statvfs(QFile::encodeName(directory).constData(), &room) != 0) {
        const int error = errno;
        closeSource();
        return failSystem(QStringLiteral("cannot read the free space of"), directory, error);
    }
    const qint64 free = qint64(room.f_bavail) * qint64(room.f_frsize);
    const auto mib = [](qint64 bytes) { return bytes / (1024 * 1024); };
    if (free < needed + freeMarginBytes) {
        closeSource();
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("a copy of %1 needs %2 MiB, but %3 has only %4 MiB free and "
                                   "keeps %5 MiB free; free space or delete snapshots")
                        .arg(path)
                        .arg(mib(needed))
                        .arg(directory)
                        .arg(mib(free))
                        .arg(mib(freeMarginBytes)));
    }
    DiskCopy copy;
    copy.m_fd = openUnnamed(directory);
    if (copy.m_fd < 0) {
        const int error = errno;
        closeSource();
        return failSystem(QStringLiteral("cannot create a private file in"), directory, error);
    }
    copy.m_size = info.st_size;
    if (::ioctl(copy.m_fd, FICLONE, source) == 0) {
        copy.m_cloned = true;
        copy.m_dataBytes = dataExtentBytes(source, info.st_size);
        closeSource();
        return copy;
    }
    auto copied = SparseCopy::copyExtents(source, copy.m_fd);
    closeSource();
    if (!copied)
        return fail(copied.error().kind,
                    QStringLiteral("cannot copy %1: %2").arg(path, copied.error().message));
    copy.m_dataBytes = *copied;
    return copy;
}

DiskCopy::DiskCopy(DiskCopy &&other) noexcept
    : m_fd(std::exchange(other.m_fd, -1))
    , m_size(other.m_size)
    , m_dataBytes(other.m_dataBytes)
    , m_cloned(other.m_cloned)
{ }

DiskCopy::~DiskCopy()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

} // namespace airlock

#include "core/snapshot/sparsecopy.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

Result<SparseCopy> SparseCopy::of(const QString &path)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return failSystem(QStringLiteral("cannot open"), path, errno);
    struct stat info;
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("%1 is not a regular file").arg(path));
    }
    SparseCopy copy;
    copy.m_size = size_t(info.st_size);
    if (copy.m_size > 0) {
        void *mapping = ::mmap(nullptr, copy.m_size, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mapping == MAP_FAILED) {
            const int error = errno;
            ::close(fd);
            return failSystem(QStringLiteral("cannot map memory for a copy of"), path, error);
        }
        copy.m_data = static_cast<char *>(mapping);
        // 2 MiB pages where the kernel allows: one fault per 512 pages of the copy (faults
        // dominated the copy time of a 256 MiB guest under nested virtualisation).
        ::madvise(mapping, copy.m_size, MADV_HUGEPAGE);
    }
    off_t offset = 0;
    while (offset < info.st_size) {
        const off_t data = ::lseek(fd, offset, SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO)
                break; // only a hole remains
            const int error = errno;
            ::close(fd);
            return failSystem(QStringLiteral("cannot seek in"), path, error);
        }
        off_t hole = ::lseek(fd, data, SEEK_HOLE);
        if (hole < 0)
            hole = info.st_size;
        for (off_t at = data; at < hole;) {
            const ssize_t n = ::pread(fd, copy.m_data + at, size_t(hole - at), at);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                const int error = n < 0 ? errno : EIO;
                ::close(fd);
                return failSystem(QStringLiteral("cannot read"), path, error);
            }
            at += n;
            copy.m_dataBytes += n;
        }
        offset = hole;
    }
    ::close(fd);
    return copy;
}

SparseCopy::SparseCopy(SparseCopy &&other) noexcept
    : m_data(std::exchange(other.m_data, nullptr))
    , m_size(std::exchange(other.m_size, 0))
    , m_dataBytes(other.m_dataBytes)
{ }

SparseCopy::~SparseCopy()
{
    if (m_data)
        ::munmap(m_data, m_size);
}

Result<qint64> SparseCopy::copyExtents(int from, int to)
{
    struct stat info;
    if (::fstat(from, &info) != 0 || ::ftruncate(to, 0) != 0 || ::ftruncate(to, info.st_size) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot size the copy: %1")
                        .arg(QString::fromLocal8Bit(std::strerror(errno))));
    qint64 copied = 0;
    off_t position = 0;
    while (position < info.st_size) {
        off_t start = ::lseek(from, position, SEEK_DATA);
        if (start < 0) {
            if (errno == ENXIO) // only a hole is left
                break;
            return fail(
                ErrorKind::OperationFailed,
                QStringLiteral("SEEK_DATA: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
        }
        const off_t end = ::lseek(from, start, SEEK_HOLE);
        if (end < 0)
            return fail(
                ErrorKind::OperationFailed,
                QStringLiteral("SEEK_HOLE: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
        loff_t in = start;
        loff_t out = start;
        while (in < end) {
            const ssize_t n = ::copy_file_range(from, &in, to, &out, size_t(end - in), 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return fail(ErrorKind::OperationFailed,
                            QStringLiteral("copy_file_range: %1")
                                .arg(QString::fromLocal8Bit(std::strerror(n < 0 ? errno : EIO))));
            copied += n;
        }
        position = end;
    }
    return copied;
}

} // namespace airlock

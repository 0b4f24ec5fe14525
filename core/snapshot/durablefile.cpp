#include "core/snapshot/durablefile.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {

bool writeAll(int fd, std::span<const char> data)
{
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        done += size_t(n);
    }
    return true;
}

} // namespace

Result<void> DurableFile::writeTemporary(const QString &tempPath, std::span<const char> data)
{
    const QByteArray name = QFile::encodeName(tempPath);
    const int fd =
        ::open(name.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return failSystem(QStringLiteral("cannot create"), tempPath, errno);
    if (!writeAll(fd, data)) {
        const int error = errno;
        ::close(fd);
        ::unlink(name.constData());
        return failSystem(QStringLiteral("cannot write"), tempPath, error);
    }
    ::close(fd);
    return {};
}

Result<void> DurableFile::write(const QString &tempPath, const QString &finalPath,
                                std::span<const char> data, bool sync)
{
    const QByteArray name = QFile::encodeName(tempPath);
    const int fd =
        ::open(name.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return failSystem(QStringLiteral("cannot create"), tempPath, errno);
    if (!writeAll(fd, data) || (sync && ::fsync(fd) != 0)) {
        const int error = errno;
        ::close(fd);
        ::unlink(name.constData());
        return failSystem(QStringLiteral("cannot write"), tempPath, error);
    }
    ::close(fd);
    if (auto renamed = rename(tempPath, finalPath); !renamed) {
        ::unlink(name.constData());
        return renamed;
    }
    return {};
}

Result<void> DurableFile::rename(const QString &from, const QString &to)
{
    if (::rename(QFile::encodeName(from).constData(), QFile::encodeName(to).constData()) != 0)
        return failSystem(QStringLiteral("cannot rename %1 to").arg(from), to, errno);
    return {};
}

Result<void> DurableFile::syncDirectory(const QString &dir)
{
    const int fd = ::open(QFile::encodeName(dir).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return failSystem(QStringLiteral("cannot open directory"), dir, errno);
    const int result = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    if (result != 0)
        return failSystem(QStringLiteral("cannot fsync directory"), dir, error);
    return {};
}

Result<void> DurableFile::syncFilesystem(const QString &path)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return failSystem(QStringLiteral("cannot open"), path, errno);
    const int result = ::syncfs(fd);
    const int error = errno;
    ::close(fd);
    if (result != 0)
        return failSystem(QStringLiteral("syncfs failed for"), path, error);
    return {};
}

Result<QByteArray> DurableFile::read(const QString &path, qint64 maxBytes)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return fail(ErrorKind::NotFound, QStringLiteral("%1 does not exist").arg(path));
        return failSystem(QStringLiteral("cannot open"), path, errno);
    }
    struct stat info;
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > maxBytes) {
        ::close(fd);
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("%1 is not a regular file of at most %2 bytes").arg(path).arg(maxBytes));
    }
    QByteArray bytes(qsizetype(info.st_size), Qt::Uninitialized);
    qsizetype done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::read(fd, bytes.data() + done, size_t(bytes.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const int error = n < 0 ? errno : EIO;
            ::close(fd);
            return failSystem(QStringLiteral("cannot read"), path, error);
        }
        done += n;
    }
    ::close(fd);
    return bytes;
}

Result<void> DurableFile::remove(const QString &path)
{
    if (::unlink(QFile::encodeName(path).constData()) != 0 && errno != ENOENT)
        return failSystem(QStringLiteral("cannot remove"), path, errno);
    return {};
}

} // namespace airlock

#include "core/io/privatefile.h"

#include <QFile>
#include <QFileInfo>

#include <openssl/crypto.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::io {

namespace {

QString errnoText()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

std::unexpected<Error> ioError(const char *what, const QString &path)
{
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("%1 %2: %3").arg(QString::fromLatin1(what), path, errnoText()));
}

// Makes a completed rename durable: the directory entry lives in the parent directory.
void syncDirectoryOf(const QByteArray &path)
{
    const QByteArray directory = QFile::encodeName(QFileInfo(QFile::decodeName(path)).path());
    const int fd = ::open(directory.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    ::fsync(fd);
    ::close(fd);
}

Result<QByteArray> readFile(const QString &path, qint64 maxBytes, QStringView what,
                            bool requirePrivate)
{
    const QByteArray name = QFile::encodeName(path);
    const int fd = ::open(name.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return fail(ErrorKind::NotFound, QStringLiteral("no %1 at %2").arg(what, path));
        if (errno == ELOOP)
            return fail(ErrorKind::PermissionDenied,
                        QStringLiteral("%1 %2 is a symbolic link").arg(what, path));
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot open %1 %2: %3").arg(what, path, errnoText()));
    }
    struct stat status = {};
    if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)
        || (requirePrivate && (status.st_mode & 077) != 0)) {
        ::close(fd);
        return fail(ErrorKind::PermissionDenied,
                    requirePrivate
                        ? QStringLiteral("%1 %2 must be a regular file with mode 0600 or stricter")
                              .arg(what, path)
                        : QStringLiteral("%1 %2 is not a regular file").arg(what, path));
    }
    if (status.st_size > maxBytes) {
        ::close(fd);
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("%1 %2 is larger than %3 bytes").arg(what, path).arg(maxBytes));
    }
    QByteArray data;
    data.reserve(qsizetype(status.st_size));
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            const auto error =
                fail(ErrorKind::OperationFailed,
                     QStringLiteral("cannot read %1 %2: %3").arg(what, path, errnoText()));
            ::close(fd);
            OPENSSL_cleanse(data.data(), size_t(data.size()));
            return error;
        }
        if (n == 0)
            break;
        if (data.size() + n > maxBytes) {
            ::close(fd);
            OPENSSL_cleanse(data.data(), size_t(data.size()));
            return fail(
                ErrorKind::OperationFailed,
                QStringLiteral("%1 %2 is larger than %3 bytes").arg(what, path).arg(maxBytes));
        }
        data.append(buffer, n);
    }
    OPENSSL_cleanse(buffer, sizeof buffer);
    ::close(fd);
    return data;
}

} // namespace

Result<void> writeFileAtomically(const QString &path, QByteArrayView data, mode_t mode)
{
    const QByteArray target = QFile::encodeName(path);
    const QByteArray temporary = target + ".tmp";
    ::unlink(temporary.constData());
    const int fd =
        ::open(temporary.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return ioError("cannot create", path);
    auto abandon = [&](const char *what) {
        const auto error = ioError(what, path);
        ::close(fd);
        ::unlink(temporary.constData());
        return error;
    };
    // The umask may have narrowed the mode further; never widen it beyond `mode`.
    if (::fchmod(fd, mode) != 0)
        return abandon("cannot chmod");
    qsizetype written = 0;
    while (written < data.size()) {
        const ssize_t n = ::write(fd, data.data() + written, size_t(data.size() - written));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return abandon("cannot write");
        written += n;
    }
    if (::fsync(fd) != 0)
        return abandon("cannot sync");
    if (::close(fd) != 0) {
        const auto error = ioError("cannot close", path);
        ::unlink(temporary.constData());
        return error;
    }
    if (::rename(temporary.constData(), target.constData()) != 0) {
        const auto error = ioError("cannot rename into", path);
        ::unlink(temporary.constData());
        return error;
    }
    syncDirectoryOf(target);
    return {};
}

Result<QByteArray> readPrivateFile(const QString &path, qint64 maxBytes, QStringView what)
{
    return readFile(path, maxBytes, what, true);
}

Result<QByteArray> readSmallFile(const QString &path, qint64 maxBytes, QStringView what)
{
    return readFile(path, maxBytes, what, false);
}

} // namespace airlock::io

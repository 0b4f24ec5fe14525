#include "core/e2b/apikeystore.h"

#include <QDir>
#include <QRandomGenerator>
#include <QStandardPaths>

#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::e2b {

namespace {

constexpr qsizetype kMaxKeyFileBytes = 256;

} // namespace

QString ApiKeyStore::defaultDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation)
        + QStringLiteral("/airlock");
}

QByteArray ApiKeyStore::randomToken(const QByteArray &prefix, int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator::system()->generate(reinterpret_cast<quint32 *>(raw.data()),
                                         reinterpret_cast<quint32 *>(raw.data()) + bytes / 4);
    return prefix + raw.toHex();
}

bool ApiKeyStore::equalKeys(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

Result<QByteArray> ApiKeyStore::loadOrCreate(const QString &directory)
{
    if (!QDir().mkpath(directory))
        return failSystem(QStringLiteral("cannot create"), directory, errno);
    ::chmod(QFile::encodeName(directory).constData(), 0700);
    const QString path = directory + QStringLiteral("/e2b-api-key");
    const QByteArray native = QFile::encodeName(path);
    int fd = ::open(native.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        const QByteArray key = randomToken("e2b_");
        fd = ::open(native.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return failSystem(QStringLiteral("cannot create"), path, errno);
        const QByteArray line = key + '\n';
        const bool written = ::write(fd, line.constData(), size_t(line.size())) == line.size();
        const int error = errno;
        ::close(fd);
        if (!written)
            return failSystem(QStringLiteral("cannot write"), path, error);
        return key;
    }
    if (fd < 0)
        return failSystem(QStringLiteral("cannot open"), path, errno);
    struct stat st
    {
    };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) != 0
        || st.st_uid != ::geteuid()) {
        ::close(fd);
        return fail(ErrorKind::PermissionDenied,
                    QStringLiteral("%1 must be a regular file of yours with mode 0600").arg(path));
    }
    QByteArray content(kMaxKeyFileBytes, Qt::Uninitialized);
    const ssize_t got = ::read(fd, content.data(), size_t(content.size()));
    ::close(fd);
    if (got <= 0)
        return fail(ErrorKind::OperationFailed, QStringLiteral("%1 is empty").arg(path));
    content.truncate(got);
    const QByteArray key = content.trimmed();
    if (key.size() < 20)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("%1 holds no key; remove it to get a new one").arg(path));
    return key;
}

} // namespace airlock::e2b

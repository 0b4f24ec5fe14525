#include "core/vmm/pinnedsocket.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

Result<std::unique_ptr<PinnedSocket>> PinnedSocket::open(const QString &path)
{
    const QByteArray name = QFile::encodeName(path);
    const int fd = ::open(name.constData(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return fail(ErrorKind::NotFound, QStringLiteral("%1 does not exist yet").arg(path));
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("%1: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno))));
    }
    auto pinned = std::unique_ptr<PinnedSocket>(new PinnedSocket(fd));
    struct stat info;
    if (::fstat(fd, &info) != 0 || !S_ISSOCK(info.st_mode))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("%1 is not a socket; refusing to connect").arg(path));
    return pinned;
}

PinnedSocket::~PinnedSocket()
{
    ::close(m_fd);
}

QString PinnedSocket::path() const
{
    return QStringLiteral("/proc/self/fd/%1").arg(m_fd);
}

} // namespace airlock

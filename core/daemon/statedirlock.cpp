#include "core/daemon/statedirlock.h"

#include <QDir>
#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace airlock {

Result<StateDirLock> StateDirLock::acquire(const QString &stateDir)
{
    const QString path = QDir(stateDir).filePath(QStringLiteral("airlockd.lock"));
    const int fd = ::open(QFile::encodeName(path).constData(),
                          O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot open %1: %2")
                        .arg(path, QString::fromLocal8Bit(std::strerror(errno))));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int error = errno;
        ::close(fd);
        if (error == EWOULDBLOCK)
            return fail(ErrorKind::Busy,
                        QStringLiteral("another airlockd is already using the state directory %1")
                            .arg(stateDir));
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot lock %1: %2")
                        .arg(path, QString::fromLocal8Bit(std::strerror(error))));
    }
    return StateDirLock(fd);
}

StateDirLock::StateDirLock(int fd) : m_fd(fd) { }

StateDirLock::StateDirLock(StateDirLock &&other) noexcept : m_fd(other.m_fd)
{
    other.m_fd = -1;
}

StateDirLock::~StateDirLock()
{
    if (m_fd >= 0)
        ::close(m_fd);
}

} // namespace airlock

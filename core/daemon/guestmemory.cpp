#include "core/daemon/guestmemory.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace airlock {

namespace {
const QString kSuffix = QStringLiteral(".ram");
}

GuestMemory::GuestMemory(const QString &dir, const QString &stateDir) : m_dir(dir)
{
    if (m_dir.isEmpty()) {
        const QByteArray hash =
            QCryptographicHash::hash(QFile::encodeName(stateDir), QCryptographicHash::Sha256);
        m_dir = QStringLiteral("/dev/shm/airlock-") + QString::fromLatin1(hash.toHex().left(12));
    }
}

QString GuestMemory::pathFor(const QString &name) const
{
    return m_dir + u'/' + name + kSuffix;
}

Result<void> GuestMemory::ensureDir() const
{
    // Root's directory: a VMM may use its own RAM file but never replace or add entries.
    const QByteArray path = QFile::encodeName(m_dir);
    if (!QDir().mkpath(m_dir) || ::chmod(path.constData(), 0711) != 0
        || ::chown(path.constData(), 0, 0) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare the guest memory directory %1").arg(m_dir));
    return {};
}

Result<int> GuestMemory::create(const QString &name, int memoryMib) const
{
    AIRLOCK_TRY(ensureDir());
    AIRLOCK_TRY(checkCapacity(name, memoryMib));
    // A new inode each time: a VMM that is still dying keeps its mapping of the old one.
    const QByteArray path = QFile::encodeName(pathFor(name));
    ::unlink(path.constData());
    const int fd =
        ::open(path.constData(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || ::ftruncate(fd, qint64(memoryMib) * 1024 * 1024) != 0) {
        const int error = errno;
        if (fd >= 0)
            ::close(fd);
        return failSystem(QStringLiteral("cannot create the guest memory file"), pathFor(name),
                          error);
    }
    return fd;
}

namespace {
/// A /proc/meminfo field ("MemAvailable") in KiB, or -1 when the file or the field is missing.
qint64 meminfoKib(const QString &meminfoPath, const QByteArray &field)
{
    QFile meminfo(meminfoPath);
    if (!meminfo.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : meminfo.readAll().split('\n')) {
        if (line.startsWith(field) && line.size() > field.size() && line[field.size()] == ':')
            return line.mid(field.size() + 1).trimmed().split(' ').first().toLongLong();
    }
    return -1;
}
} // namespace

Result<void> GuestMemory::checkCapacity(const QString &name, int memoryMib,
                                        const QString &meminfoPath) const
{
    // docs/reviews/2026-12-01-newuser-pass.md#m4: a 64 GiB guest was accepted on a 24 GiB host; a
    // guest that touched its memory would have filled tmpfs and host RAM. The file is sparse, so
    // this is what the host could back right now, not a reservation.
    const qint64 needed = qint64(memoryMib) * 1024 * 1024;
    // Our own file of this sandbox (none for a stopped one, normally) is replaced.
    struct stat own
    {
    };
    const qint64 replaced = ::stat(QFile::encodeName(pathFor(name)).constData(), &own) == 0
        ? qint64(own.st_blocks) * 512
        : 0;
    const auto mib = [](qint64 bytes) { return bytes / (1024 * 1024); };
    struct statvfs room
    {
    };
    if (::statvfs(QFile::encodeName(m_dir).constData(), &room) == 0) {
        const qint64 free = qint64(room.f_bavail) * qint64(room.f_frsize) + replaced;
        if (free < needed)
            return fail(ErrorKind::BackendUnavailable,
                        QStringLiteral("sandbox '%1' needs %2 MiB of guest memory, but the guest "
                                       "memory directory %3 has only %4 MiB free; stop other "
                                       "sandboxes or give this one less memory")
                            .arg(name)
                            .arg(memoryMib)
                            .arg(m_dir)
                            .arg(mib(free)));
    }
    if (const qint64 kib = meminfoKib(meminfoPath, "MemAvailable"); kib >= 0) {
        const qint64 available = kib * 1024;
        if (available + replaced < needed)
            return fail(ErrorKind::BackendUnavailable,
                        QStringLiteral("sandbox '%1' needs %2 MiB of guest memory, but the host "
                                       "has only %3 MiB available (MemAvailable); stop other "
                                       "sandboxes or give this one less memory")
                            .arg(name)
                            .arg(memoryMib)
                            .arg(mib(available + replaced)));
    }
    return {};
}

GuestMemory::HostFigures GuestMemory::hostFigures(const QString &meminfoPath) const
{
    HostFigures figures;
    const auto mib = [](qint64 kib) { return kib < 0 ? kib : kib / 1024; };
    figures.totalMib = mib(meminfoKib(meminfoPath, "MemTotal"));
    figures.availableMib = mib(meminfoKib(meminfoPath, "MemAvailable"));
    // The directory is made by the first guest; before that its file system is its parent's.
    QString dir = m_dir;
    while (!dir.isEmpty() && !QFileInfo::exists(dir) && dir != QLatin1String("/"))
        dir = QFileInfo(dir).path();
    struct statvfs room
    {
    };
    if (::statvfs(QFile::encodeName(dir).constData(), &room) == 0)
        figures.tmpfsMib = qint64(room.f_blocks) * qint64(room.f_frsize) / (1024 * 1024);
    if (figures.totalMib >= 0 && figures.tmpfsMib >= 0)
        figures.ceilingMib = std::min(figures.totalMib, figures.tmpfsMib);
    else
        figures.ceilingMib = std::max(figures.totalMib, figures.tmpfsMib);
    return figures;
}

Result<void> GuestMemory::checkCeiling(const QString &name, int memoryMib,
                                       const QString &meminfoPath) const
{
    const HostFigures host = hostFigures(meminfoPath);
    if (host.ceilingMib < 0 || memoryMib <= host.ceilingMib)
        return {};
    QString why;
    if (host.tmpfsMib >= 0 && host.tmpfsMib < host.totalMib)
        why = QStringLiteral("the guest memory file system %1 holds %2 MiB")
                  .arg(m_dir)
                  .arg(host.tmpfsMib);
    else
        why = QStringLiteral("the host has %1 MiB of memory in all (MemTotal)").arg(host.totalMib);
    return fail(ErrorKind::InvalidParams,
                QStringLiteral("sandbox '%1' asks for %2 MiB of guest memory, but this host can "
                               "back at most %3 MiB: %4; give it at most %3 MiB")
                    .arg(name)
                    .arg(memoryMib)
                    .arg(host.ceilingMib)
                    .arg(why));
}

Result<void> GuestMemory::handOver(const QString &name, uid_t uid, gid_t gid) const
{
    const QByteArray path = QFile::encodeName(pathFor(name));
    const int fd = ::open(path.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    const bool handedOver = fd >= 0 && ::fchown(fd, uid, gid) == 0;
    if (fd >= 0)
        ::close(fd);
    if (!handedOver)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot hand the guest memory file %1 to the VMM user")
                        .arg(pathFor(name)));
    return {};
}

void GuestMemory::remove(const QString &name) const
{
    // A dying VMM keeps its own mapping until it exits.
    ::unlink(QFile::encodeName(pathFor(name)).constData());
    // The directory goes with the last file; ensureDir() makes it again.
    removeDirIfEmpty();
}

void GuestMemory::removeDirIfEmpty() const
{
    ::rmdir(QFile::encodeName(m_dir).constData());
}

QStringList GuestMemory::removeStale(const std::function<bool(const QString &name)> &isLive) const
{
    QStringList removed;
    const QDir dir(m_dir);
    for (const QString &file : dir.entryList(QDir::Files | QDir::System)) {
        if (file.startsWith(u'.'))
            continue;
        const QString name = file.section(u'.', 0, 0);
        if (file == name + kSuffix && isLive(name))
            continue;
        QFile::remove(dir.filePath(file));
        removed.append(file);
    }
    removeDirIfEmpty();
    return removed;
}

} // namespace airlock

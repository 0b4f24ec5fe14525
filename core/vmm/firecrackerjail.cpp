#include "core/vmm/firecrackerjail.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {

Error failAt(const QString &what, const QString &path, int error)
{
    return Error {ErrorKind::OperationFailed,
                  QStringLiteral("cannot prepare the Firecracker jail: %1 %2: %3")
                      .arg(what, path, QString::fromLocal8Bit(std::strerror(error)))};
}

/// Removes whatever `path` is (never following a link): the runtime directory is the VMM
/// user's, so an entry of a mount point's name may have been planted there.
void removeEntry(const QString &path)
{
    const QByteArray name = QFile::encodeName(path);
    struct stat info;
    if (::lstat(name.constData(), &info) != 0)
        return;
    if (S_ISDIR(info.st_mode))
        QDir(path).removeRecursively();
    else
        ::unlink(name.constData());
}

} // namespace

bool FirecrackerJail::available()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return false;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (!line.startsWith("CapEff:"))
            continue;
        bool ok = false;
        const quint64 effective = line.mid(7).trimmed().toULongLong(&ok, 16);
        constexpr quint64 kSysChroot = quint64(1) << 18; // capability.h: CAP_SYS_CHROOT
        constexpr quint64 kSysAdmin = quint64(1) << 21; // CAP_SYS_ADMIN
        return ok && (effective & kSysChroot) && (effective & kSysAdmin);
    }
    return false;
}

FirecrackerJail::FirecrackerJail(const QString &runtimeDir, const QString &binary)
    : m_root(QDir(runtimeDir).absolutePath())
{
    add({binary, QString(kBinary), false, true, false});
    // The devices Firecracker opens itself (its jailer makes the same nodes); a missing one is
    // left out, and Firecracker's own error then names it.
    for (const char *device : {"/dev/kvm", "/dev/net/tun", "/dev/urandom", "/dev/null"}) {
        const QString path = QString::fromLatin1(device);
        if (QFileInfo::exists(path))
            add({path, path, false, false, true});
    }
    // System libraries for a dynamically linked build or an interpreter (read-only: nothing in
    // /usr is a sandbox's). Debian 12 merges /usr: /lib and the rest are links into it.
    add({QStringLiteral("/usr"), QStringLiteral("/usr"), true, true, false});
    for (const char *top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64"}) {
        const QString path = QString::fromLatin1(top);
        const QFileInfo info(path);
        if (info.isSymLink())
            m_links.append(path);
        else if (info.isDir())
            add({path, path, true, true, false});
    }
}

void FirecrackerJail::add(Entry entry)
{
    m_entries.push_back(std::move(entry));
}

QString FirecrackerJail::addFile(const QString &hostPath, const QString &name, bool readOnly)
{
    if (const QString inside = pathInside(hostPath); !inside.isEmpty())
        return inside;
    const QString inside = u'/' + name;
    add({QFileInfo(hostPath).absoluteFilePath(), inside, false, readOnly, false});
    return inside;
}

QString FirecrackerJail::addDirectory(const QString &hostDir, const QString &name)
{
    const QString inside = u'/' + name;
    add({QDir(hostDir).absolutePath(), inside, true, false, false});
    return inside;
}

void FirecrackerJail::addSharedPaths(const QStringList &hostDirs)
{
    for (const QString &dir : hostDirs) {
        const QString path = QDir(dir).absolutePath();
        add({path, path, true, false, false});
    }
}

QString FirecrackerJail::pathInside(const QString &hostPath) const
{
    if (hostPath.isEmpty())
        return {};
    const QString path = QDir::cleanPath(QFileInfo(hostPath).absoluteFilePath());
    if (path.startsWith(m_root + u'/'))
        return path.mid(m_root.size());
    // Files first, then the most specific directory.
    const Entry *best = nullptr;
    for (const Entry &entry : m_entries) {
        if (!entry.directory && !entry.device && entry.host == path)
            return entry.inside;
        if (entry.directory && path.startsWith(entry.host + u'/')
            && (!best || entry.host.size() > best->host.size()))
            best = &entry;
    }
    if (best)
        return best->inside + path.mid(best->host.size());
    return {};
}

Result<void> FirecrackerJail::prepare() const
{
    for (const QString &link : m_links) {
        const QString at = m_root + link;
        removeEntry(at);
        // The link as the host has it ("usr/lib"), relative, so it resolves inside the jail.
        char value[4096];
        const ssize_t size =
            ::readlink(QFile::encodeName(link).constData(), value, sizeof value - 1);
        if (size <= 0)
            return std::unexpected(failAt(QStringLiteral("cannot read the link"), link, errno));
        value[size] = '\0';
        if (::symlink(value, QFile::encodeName(at).constData()) != 0)
            return std::unexpected(failAt(QStringLiteral("cannot link"), at, errno));
    }
    for (const Entry &entry : m_entries) {
        const QString at = m_root + entry.inside;
        // Parents are root's directories, searchable by the VMM user.
        const QString parent = QFileInfo(at).path();
        for (QString dir = parent; dir.size() > m_root.size(); dir = QFileInfo(dir).path()) {
            struct stat info;
            if (::lstat(QFile::encodeName(dir).constData(), &info) == 0 && !S_ISDIR(info.st_mode))
                removeEntry(dir);
        }
        if (!QDir().mkpath(parent))
            return std::unexpected(failAt(QStringLiteral("cannot create"), parent, errno));
        // The helper's umask (0077) made them root's alone: the VMM user must pass through
        // /dev and /dev/net to its device nodes.
        for (QString dir = parent; dir.size() > m_root.size(); dir = QFileInfo(dir).path()) {
            if (::chmod(QFile::encodeName(dir).constData(), 0755) != 0)
                return std::unexpected(failAt(QStringLiteral("cannot chmod"), dir, errno));
        }
        removeEntry(at);
        const QByteArray name = QFile::encodeName(at);
        if (entry.directory) {
            if (::mkdir(name.constData(), 0755) != 0 || ::chmod(name.constData(), 0755) != 0)
                return std::unexpected(failAt(QStringLiteral("cannot create"), at, errno));
            continue;
        }
        const int fd =
            ::open(name.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return std::unexpected(failAt(QStringLiteral("cannot create"), at, errno));
        ::close(fd);
    }
    return {};
}

SpawnJail FirecrackerJail::spawnJail() const
{
    SpawnJail jail;
    jail.root = m_root;
    for (const Entry &entry : m_entries)
        jail.binds.push_back({entry.host, m_root + entry.inside, entry.readOnly, entry.device});
    return jail;
}

} // namespace airlock

#include "core/vmm/firecrackerjail.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QScopeGuard>

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace airlock {

namespace {

Error failAt(const QString &what, const QString &path, int error)
{
    return Error {ErrorKind::OperationFailed,
                  QStringLiteral("cannot prepare the Firecracker jail: %1 %2: %3")
                      .arg(what, path, QString::fromLocal8Bit(std::strerror(error)))};
}

/// Removes whatever `name` is in `dir` (a descriptor), never following a link: the runtime
/// directory is the VMM user's, so an entry of a mount point's name may have been planted
/// there, and it may be swapped while root works in it. Every step is relative to a descriptor
/// opened without following links, so a swap can only make a step fail, never reach outside.
void removeAt(int dir, const char *name)
{
    if (::unlinkat(dir, name, 0) == 0 || errno == ENOENT)
        return;
    const int sub = ::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
        return;
    if (DIR *entries = ::fdopendir(::dup(sub))) {
        std::vector<std::string> names;
        while (const dirent *entry = ::readdir(entries)) {
            const std::string_view child(entry->d_name);
            if (child != "." && child != "..")
                names.emplace_back(child);
        }
        ::closedir(entries);
        for (const std::string &child : names)
            removeAt(sub, child.c_str());
    }
    ::close(sub);
    ::unlinkat(dir, name, AT_REMOVEDIR);
}

/// A descriptor of the directory `name` in `dir`: made (root's, mode 0755: the VMM user must
/// pass through to its device nodes) or, when something else stands there, replaced; an
/// existing directory must be root's and is set to 0755 through its descriptor. -1 with errno.
int directoryAt(int dir, const char *name)
{
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (::mkdirat(dir, name, 0755) != 0 && errno != EEXIST)
            return -1;
        const int fd = ::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            if (errno != ENOTDIR && errno != ELOOP)
                return -1;
            removeAt(dir, name); // a planted file or link
            continue;
        }
        struct stat info;
        if (::fstat(fd, &info) != 0 || info.st_uid != ::geteuid()) {
            // The VMM user's own directory (planted): nothing in it is believed.
            ::close(fd);
            removeAt(dir, name);
            continue;
        }
        if (::fchmod(fd, 0755) != 0) {
            const int error = errno;
            ::close(fd);
            errno = error;
            return -1;
        }
        return fd;
    }
    errno = EEXIST;
    return -1;
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
    const int root = ::open(QFile::encodeName(m_root).constData(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root < 0)
        return std::unexpected(failAt(QStringLiteral("cannot open"), m_root, errno));
    const auto closeRoot = qScopeGuard([root] { ::close(root); });
    for (const QString &link : m_links) {
        const QByteArray at = QFile::encodeName(link.mid(1));
        removeAt(root, at.constData());
        // The link as the host has it ("usr/lib"), relative, so it resolves inside the jail.
        char value[4096];
        const ssize_t size =
            ::readlink(QFile::encodeName(link).constData(), value, sizeof value - 1);
        if (size <= 0)
            return std::unexpected(failAt(QStringLiteral("cannot read the link"), link, errno));
        value[size] = '\0';
        if (::symlinkat(value, root, at.constData()) != 0)
            return std::unexpected(failAt(QStringLiteral("cannot link"), m_root + link, errno));
    }
    for (const Entry &entry : m_entries) {
        // "/dev/net/tun": the parents are made and walked by descriptor, the last is the mount
        // point itself.
        const QStringList parts = entry.inside.mid(1).split(u'/');
        int parent = ::dup(root);
        QString walked = m_root;
        for (qsizetype i = 0; parent >= 0 && i + 1 < parts.size(); ++i) {
            walked += u'/' + parts[i];
            const int next = directoryAt(parent, QFile::encodeName(parts[i]).constData());
            const int error = errno;
            ::close(parent);
            parent = next;
            if (parent < 0)
                return std::unexpected(failAt(QStringLiteral("cannot create"), walked, error));
        }
        if (parent < 0)
            return std::unexpected(failAt(QStringLiteral("cannot open"), m_root, errno));
        const auto closeParent = qScopeGuard([parent] { ::close(parent); });
        const QByteArray last = QFile::encodeName(parts.last());
        const QString at = m_root + entry.inside;
        removeAt(parent, last.constData());
        if (entry.directory) {
            const int fd = directoryAt(parent, last.constData());
            if (fd < 0)
                return std::unexpected(failAt(QStringLiteral("cannot create"), at, errno));
            ::close(fd);
            continue;
        }
        const int fd = ::openat(parent, last.constData(),
                                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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

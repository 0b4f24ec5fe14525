#include "core/vmm/vmmcgroup.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {

const QStringList kControllers {QStringLiteral("memory"), QStringLiteral("pids"),
                                QStringLiteral("cpu")};

QString errorText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

/// One write(2), as the kernel wants a control file written: a short write is an error too.
Result<void> writeControl(const QString &path, const QByteArray &value)
{
    const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return failSystem(QStringLiteral("cannot open"), path, errno);
    const ssize_t put = ::write(fd, value.constData(), size_t(value.size()));
    const int error = errno;
    ::close(fd);
    if (put != value.size())
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot write \"%1\" to %2: %3")
                        .arg(QString::fromLatin1(value), path,
                             put < 0 ? errorText(error) : QStringLiteral("short write")));
    return {};
}

QByteArray readSmall(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.read(65536) : QByteArray();
}

/// mkdir(2) that accepts an existing directory.
bool makeDirectory(const QString &path)
{
    return ::mkdir(QFile::encodeName(path).constData(), 0755) == 0 || errno == EEXIST;
}

bool pidIsLive(pid_t pid)
{
    return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

} // namespace

QStringList VmmCgroup::Hierarchy::parents() const
{
    QStringList dirs;
    for (const QString &dir : {memory, pids, cpu}) {
        if (!dirs.contains(dir))
            dirs.append(dir);
    }
    return dirs;
}

VmmCgroup::Limits VmmCgroup::firecrackerLimits(int vcpus, int memoryMib)
{
    Limits limits;
    limits.memoryBytes = (2 * qint64(qMax(0, memoryMib)) + kVmmOverheadMib) * 1024 * 1024;
    limits.maxTasks = qMax(1, vcpus) + kExtraTasks;
    limits.cpus = qMax(1, vcpus);
    return limits;
}

std::optional<VmmCgroup::Hierarchy> VmmCgroup::findHierarchy(const QString &mounts)
{
    std::optional<Hierarchy> v1;
    Hierarchy found;
    found.version = Version::V1;
    for (const QByteArray &line : readSmall(mounts).split('\n')) {
        const QList<QByteArray> fields = line.split(' ');
        if (fields.size() < 4)
            continue;
        const QString point = QString::fromUtf8(fields[1]);
        const QString parent = point + u'/' + kParent;
        if (fields[2] == "cgroup2") {
            const QList<QByteArray> offered =
                readSmall(point + QStringLiteral("/cgroup.controllers")).trimmed().split(' ');
            if (offered.contains("memory") && offered.contains("pids") && offered.contains("cpu"))
                return Hierarchy {Version::V2, parent, parent, parent};
        } else if (fields[2] == "cgroup") {
            const QList<QByteArray> options = fields[3].split(',');
            if (options.contains("memory") && found.memory.isEmpty())
                found.memory = parent;
            if (options.contains("pids") && found.pids.isEmpty())
                found.pids = parent;
            if (options.contains("cpu") && found.cpu.isEmpty())
                found.cpu = parent;
        }
    }
    if (found.memory.isEmpty() || found.pids.isEmpty() || found.cpu.isEmpty())
        return std::nullopt;
    return found;
}

Result<VmmCgroup> VmmCgroup::create(const QString &name, const Limits &limits,
                                    const QString &mounts)
{
    if (name.isEmpty() || name.contains(u'/') || name.startsWith(u'.'))
        return fail(ErrorKind::Internal, QStringLiteral("bad cgroup name %1").arg(name));
    const auto hierarchy = findHierarchy(mounts);
    if (!hierarchy)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("no cgroup hierarchy offers the memory, pids and cpu "
                                   "controllers"));
    VmmCgroup group(*hierarchy, name);
    const auto unavailable = [&group](const Error &error) -> Result<VmmCgroup> {
        group.remove();
        return fail(ErrorKind::BackendUnavailable, error.message);
    };
    const QByteArray enable = "+memory +pids +cpu";
    for (const QString &parent : hierarchy->parents()) {
        if (!makeDirectory(parent))
            return unavailable(failSystem(QStringLiteral("cannot create"), parent, errno).error());
        if (hierarchy->version == Version::V2) {
            // A controller reaches a group only when every ancestor enables it for its children
            // (cgroup-v2.rst, "Enabling and Disabling"); systemd enables them in the root.
            for (const QString &dir : {QFileInfo(parent).path(), parent}) {
                if (auto enabled =
                        writeControl(dir + QStringLiteral("/cgroup.subtree_control"), enable);
                    !enabled)
                    return unavailable(enabled.error());
            }
        }
    }
    for (const QString &dir : group.directories()) {
        const QByteArray path = QFile::encodeName(dir);
        // A leftover of the same name (the pid was reused) goes if it is empty.
        if (::mkdir(path.constData(), 0755) != 0
            && (errno != EEXIST || ::rmdir(path.constData()) != 0
                || ::mkdir(path.constData(), 0755) != 0))
            return unavailable(failSystem(QStringLiteral("cannot create"), dir, errno).error());
    }
    const QByteArray memory = QByteArray::number(limits.memoryBytes);
    const QByteArray tasks = QByteArray::number(limits.maxTasks);
    const QByteArray quota = QByteArray::number(limits.cpus * kCpuPeriodUs);
    const QByteArray period = QByteArray::number(kCpuPeriodUs);
    std::vector<std::pair<QString, QByteArray>> writes;
    if (hierarchy->version == Version::V2) {
        writes = {
            {group.directory(QStringLiteral("memory")) + QStringLiteral("/memory.max"), memory},
            {group.directory(QStringLiteral("pids")) + QStringLiteral("/pids.max"), tasks},
            {group.directory(QStringLiteral("cpu")) + QStringLiteral("/cpu.max"),
             quota + ' ' + period}};
    } else {
        const QString cpu = group.directory(QStringLiteral("cpu"));
        writes = {
            {group.directory(QStringLiteral("memory")) + QStringLiteral("/memory.limit_in_bytes"),
             memory},
            {group.directory(QStringLiteral("pids")) + QStringLiteral("/pids.max"), tasks},
            // The period first: the quota is checked against it.
            {cpu + QStringLiteral("/cpu.cfs_period_us"), period},
            {cpu + QStringLiteral("/cpu.cfs_quota_us"), quota}};
    }
    for (const auto &[file, value] : writes) {
        if (auto written = writeControl(file, value); !written)
            return unavailable(written.error());
    }
    return group;
}

std::optional<VmmCgroup> VmmCgroup::ofProcess(pid_t pid, const QString &mounts)
{
    const auto hierarchy = findHierarchy(mounts);
    if (!hierarchy || pid <= 0)
        return std::nullopt;
    // Lines "ID:CONTROLLERS:PATH" (cgroups(7)); v2's is "0::PATH".
    const QByteArray table = readSmall(QStringLiteral("/proc/%1/cgroup").arg(pid));
    const QString prefix = QStringLiteral("/") + kParent + u'/';
    QString name;
    const QStringList wanted =
        hierarchy->version == Version::V2 ? QStringList {QString()} : kControllers;
    for (const QString &controller : wanted) {
        QString path;
        for (const QByteArray &line : table.split('\n')) {
            const qsizetype first = line.indexOf(':');
            const qsizetype second = line.indexOf(':', first + 1);
            if (first < 0 || second < 0)
                continue;
            const QList<QByteArray> listed = line.mid(first + 1, second - first - 1).split(',');
            const bool matches = controller.isEmpty()
                ? line.left(first) == "0" && listed == QList<QByteArray> {QByteArray()}
                : listed.contains(controller.toLatin1());
            if (matches)
                path = QString::fromUtf8(line.mid(second + 1));
        }
        if (!path.startsWith(prefix))
            return std::nullopt;
        const QString found = path.mid(prefix.size());
        if (found.isEmpty() || found.contains(u'/') || (!name.isEmpty() && found != name))
            return std::nullopt;
        name = found;
    }
    return VmmCgroup(*hierarchy, name);
}

Result<void> VmmCgroup::attach(pid_t pid) const
{
    for (const QString &dir : directories())
        AIRLOCK_TRY(writeControl(dir + QStringLiteral("/cgroup.procs"), QByteArray::number(pid)));
    return {};
}

bool VmmCgroup::remove() const
{
    bool gone = true;
    for (const QString &dir : directories()) {
        if (::rmdir(QFile::encodeName(dir).constData()) != 0 && errno != ENOENT)
            gone = false;
    }
    return gone;
}

int VmmCgroup::removeLeftovers(const QString &mounts)
{
    const auto hierarchy = findHierarchy(mounts);
    if (!hierarchy)
        return 0;
    int removed = 0;
    for (const QString &parent : hierarchy->parents()) {
        const QDir dir(parent);
        for (const QString &name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            bool isPid = false;
            const pid_t pid = pid_t(name.section(u'.', -1).toInt(&isPid));
            if (isPid && name.contains(u'.') && pidIsLive(pid))
                continue;
            if (::rmdir(QFile::encodeName(dir.filePath(name)).constData()) == 0)
                ++removed;
        }
    }
    return removed;
}

QString VmmCgroup::path() const
{
    return QStringLiteral("/") + kParent + u'/' + m_name;
}

QString VmmCgroup::directory(const QString &controller) const
{
    const QString &parent = controller == u"memory" ? m_hierarchy.memory
        : controller == u"pids"                     ? m_hierarchy.pids
                                                    : m_hierarchy.cpu;
    return parent + u'/' + m_name;
}

QStringList VmmCgroup::directories() const
{
    QStringList dirs;
    for (const QString &parent : m_hierarchy.parents())
        dirs.append(parent + u'/' + m_name);
    return dirs;
}

} // namespace airlock

#include "core/daemon/sandboxdisks.h"

#include "core/io/privatefile.h"
#include "core/model/answerlater.h"
#include "core/vmm/rootdisk.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QTimer>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcDisks, "airlock.daemon.sandbox")

const QString kIdentitySuffix = QStringLiteral(".base");
const QString kTemporarySuffix = QStringLiteral(".tmp");
} // namespace

SandboxDisks::SandboxDisks(const QString &stateDir)
    : m_dir(QDir(stateDir).filePath(QStringLiteral("disks")))
{ }

Result<void> SandboxDisks::prepareDir() const
{
    // Root's: each overlay belongs to its VMM's user, the directory never does.
    if (!QDir().mkpath(m_dir) || ::chmod(QFile::encodeName(m_dir).constData(), 0711) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare the disk directory %1").arg(m_dir));
    return {};
}

QString SandboxDisks::pathFor(const QString &name) const
{
    return m_dir + u'/' + name + QStringLiteral(".qcow2");
}

QString SandboxDisks::identityOf(const QString &name) const
{
    QFile recorded(pathFor(name) + kIdentitySuffix);
    if (!recorded.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(recorded.read(4096));
}

void SandboxDisks::make(const QString &name, const GuestImage &image, QObject *context, Made done)
{
    const QString path = pathFor(name);
    if (QFileInfo::exists(path) && !m_making.contains(name)) {
        answerLater(context, std::move(done), Result<void>());
        return;
    }
    auto &waiting = m_making[name];
    waiting.push_back(std::move(done));
    if (waiting.size() > 1)
        return;
    const QByteArray identity = image.diskIdentity().toUtf8();
    RootDisk::createOverlay(
        path, image.diskPath, context,
        [this, name, path, identity, base = image.diskPath](Result<void> made) {
            if (made) {
                made = io::writeFileAtomically(path + kIdentitySuffix, identity, 0600);
                if (made)
                    qCInfo(lcDisks, "%s: root disk overlay %s on %s", qPrintable(name),
                           qPrintable(path), qPrintable(base));
            }
            // Waiters may call make() again: take them out first.
            const auto waiters = std::move(m_making[name]);
            m_making.erase(name);
            for (const Made &waiter : waiters)
                waiter(made);
        });
}

Result<void> SandboxDisks::prepare(const QString &name, const GuestImage &image, uid_t uid,
                                   gid_t gid) const
{
    const QString path = pathFor(name);
    const QByteArray identity = image.diskIdentity().toUtf8();
    if (!QFileInfo::exists(path)) {
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("the disk of sandbox '%1' has not been made").arg(name));
    } else {
        // An overlay stores only what differs from its base: on a rebuilt base it would read
        // as a corrupt file system, so it is refused rather than booted.
        const QByteArray was = identityOf(name).toUtf8();
        if (was != identity)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("the disk of sandbox '%1' was made on another build of "
                                       "image '%2' (%3, now %4); it cannot be used on this one")
                            .arg(name, image.id,
                                 was.isEmpty() ? QStringLiteral("unknown") : QString::fromUtf8(was),
                                 QString::fromUtf8(identity)));
    }
    const QByteArray encoded = QFile::encodeName(path);
    const int fd = ::open(encoded.constData(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    const bool handedOver = fd >= 0 && ::fchown(fd, uid, gid) == 0 && ::fchmod(fd, 0600) == 0;
    if (fd >= 0)
        ::close(fd);
    if (!handedOver)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot hand the disk %1 to the VMM user").arg(path));
    return {};
}

Result<void> SandboxDisks::replace(const QString &name, const QString &identity,
                                   const std::function<Result<void>(int fd)> &fill) const
{
    const QString path = pathFor(name);
    const QByteArray tmp = QFile::encodeName(path + kTemporarySuffix);
    ::unlink(tmp.constData());
    const int fd =
        ::open(tmp.constData(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return failSystem(QStringLiteral("cannot create"), QString::fromLocal8Bit(tmp), errno);
    Result<void> filled = fill(fd);
    if (filled && ::fdatasync(fd) != 0)
        filled = fail(ErrorKind::OperationFailed,
                      QStringLiteral("cannot write %1").arg(QString::fromLocal8Bit(tmp)));
    ::close(fd);
    if (filled && ::rename(tmp.constData(), QFile::encodeName(path).constData()) != 0)
        filled = fail(ErrorKind::OperationFailed,
                      QStringLiteral("cannot move the disk into place at %1").arg(path));
    if (!filled) {
        ::unlink(tmp.constData());
        return filled;
    }
    return io::writeFileAtomically(path + kIdentitySuffix, identity.toUtf8(), 0600);
}

void SandboxDisks::remove(const QString &name) const
{
    for (const QString &suffix : {QString(), kIdentitySuffix, kTemporarySuffix})
        QFile::remove(pathFor(name) + suffix);
}

void SandboxDisks::returnToRoot(const QString &name) const
{
    for (const QString &suffix : {QString(), kIdentitySuffix}) {
        struct stat info
        {
        };
        const QByteArray disk = QFile::encodeName(pathFor(name) + suffix);
        if (::lstat(disk.constData(), &info) == 0 && S_ISREG(info.st_mode) && info.st_uid != 0)
            ::lchown(disk.constData(), 0, 0);
    }
}

QStringList SandboxDisks::removeLeftovers(const QSet<QString> &known) const
{
    QStringList removed;
    const QDir dir(m_dir);
    for (const QString &file : dir.entryList(QDir::Files | QDir::System)) {
        if (file.endsWith(kTemporarySuffix) || !known.contains(file.section(u'.', 0, 0))) {
            QFile::remove(dir.filePath(file));
            removed.append(file);
        }
    }
    return removed;
}

} // namespace airlock

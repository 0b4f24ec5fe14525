#include "core/daemon/runtimedirectory.h"

#include "core/model/names.h"

#include <QDir>
#include <QFile>

#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

RuntimeDirectory::RuntimeDirectory(const QString &stateDir)
    : m_stateDir(stateDir), m_root(QDir(stateDir).filePath(QStringLiteral("run")))
{ }

Result<void> RuntimeDirectory::prepareRoot() const
{
    if (!QDir().mkpath(m_root) || ::chmod(QFile::encodeName(m_stateDir).constData(), 0711) != 0
        || ::chmod(QFile::encodeName(m_root).constData(), 0711) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare the runtime directory %1").arg(m_root));
    return {};
}

QString RuntimeDirectory::pathFor(const QString &name) const
{
    // Names are validated on create, so this stays inside STATE/run.
    return m_root + u'/' + name;
}

Result<QString> RuntimeDirectory::prepare(const QString &name, uid_t uid, gid_t gid) const
{
    const QString dir = pathFor(name);
    QDir(dir).removeRecursively();
    const QByteArray path = QFile::encodeName(dir);
    if (!QDir().mkpath(dir) || ::chmod(path.constData(), 0700) != 0
        || ::chown(path.constData(), uid, gid) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare runtime directory %1").arg(dir));
    return dir;
}

uid_t RuntimeDirectory::owner(const QString &name) const
{
    struct stat info
    {
    };
    if (::stat(QFile::encodeName(pathFor(name)).constData(), &info) != 0)
        return 0;
    return info.st_uid;
}

void RuntimeDirectory::returnToRoot(const QString &name) const
{
    // Never through a link the VMM user may have put there: lstat and lchown only.
    const QByteArray dir = QFile::encodeName(pathFor(name));
    struct stat info
    {
    };
    if (::lstat(dir.constData(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid == 0)
        return;
    const QDir runtime(pathFor(name));
    for (const QString &file :
         runtime.entryList(QDir::AllEntries | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot))
        ::lchown(QFile::encodeName(runtime.filePath(file)).constData(), 0, 0);
    ::lchown(dir.constData(), 0, 0);
}

void RuntimeDirectory::remove(const QString &name) const
{
    QDir(pathFor(name)).removeRecursively();
}

QStringList RuntimeDirectory::names() const
{
    QStringList names;
    for (const QString &name : QDir(m_root).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        if (validateName(name))
            names.append(name);
    }
    return names;
}

} // namespace airlock

#include "core/daemon/operationjournal.h"

#include "core/model/names.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QLoggingCategory>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcJournal, "airlock.daemon.journal")

const QString kSuffix = QStringLiteral(".json");

} // namespace

OperationJournal::OperationJournal(QString stateDir)
    : m_dir(QDir(stateDir).filePath(QStringLiteral("journal")))
{ }

QString OperationJournal::pathFor(const QString &kind, const QString &sandbox) const
{
    return QDir(m_dir).filePath(kind + u'.' + sandbox + kSuffix);
}

Result<void> OperationJournal::begin(const QString &kind, const QString &sandbox,
                                     const QJsonObject &data)
{
    AIRLOCK_TRY(validateName(sandbox));
    if (!QDir().mkpath(m_dir) || ::chmod(QFile::encodeName(m_dir).constData(), 0700) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot prepare the journal directory %1").arg(m_dir));
    QJsonObject object = data;
    object.insert(QStringLiteral("kind"), kind);
    object.insert(QStringLiteral("sandbox"), sandbox);
    const QByteArray bytes = QJsonDocument(object).toJson(QJsonDocument::Compact);
    const QByteArray path = QFile::encodeName(pathFor(kind, sandbox));
    const QByteArray tmp = path + ".tmp";
    ::unlink(tmp.constData());
    const int fd =
        ::open(tmp.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool written = fd >= 0 && ::write(fd, bytes.constData(), size_t(bytes.size())) == bytes.size()
        && ::fdatasync(fd) == 0;
    if (fd >= 0)
        ::close(fd);
    written = written && ::rename(tmp.constData(), path.constData()) == 0;
    if (!written) {
        ::unlink(tmp.constData());
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("cannot write the journal entry %1").arg(QFile::decodeName(path)));
    }
    return {};
}

void OperationJournal::end(const QString &kind, const QString &sandbox)
{
    if (validateName(sandbox))
        QFile::remove(pathFor(kind, sandbox));
}

QList<OperationJournal::Entry> OperationJournal::pending() const
{
    QList<Entry> entries;
    const QDir dir(m_dir);
    for (const QString &file :
         dir.entryList({QStringLiteral("*") + kSuffix}, QDir::Files, QDir::Name)) {
        QFile in(dir.filePath(file));
        const QJsonObject object = in.open(QIODevice::ReadOnly)
            ? QJsonDocument::fromJson(in.read(64 * 1024)).object()
            : QJsonObject();
        Entry entry {object.value(QStringLiteral("kind")).toString(),
                     object.value(QStringLiteral("sandbox")).toString(), object};
        if (entry.kind.isEmpty() || !validateName(entry.sandbox)
            || file != entry.kind + u'.' + entry.sandbox + kSuffix) {
            qCWarning(lcJournal, "removing the unreadable journal entry %s", qPrintable(file));
            QFile::remove(dir.filePath(file));
            continue;
        }
        entries.append(entry);
    }
    return entries;
}

} // namespace airlock

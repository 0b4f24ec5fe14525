#include "ui/refusaltext.h"

#include <QHash>

namespace airlock {

QString RefusalText::describe(const QString &reason)
{
    // The names of core/agentwire/archivepolicy.h and archiveextractor.cpp.
    static const QHash<QString, const char *> words {
        {QStringLiteral("absolute_path"), QT_TR_NOOP("an absolute path")},
        {QStringLiteral("parent_path"), QT_TR_NOOP("a path through “..”")},
        {QStringLiteral("bad_path"), QT_TR_NOOP("an empty or “.” path component")},
        {QStringLiteral("symlink"), QT_TR_NOOP("a link")},
        {QStringLiteral("symlink_escapes"), QT_TR_NOOP("a link pointing outside the folder")},
        {QStringLiteral("hardlink"), QT_TR_NOOP("a hard link")},
        {QStringLiteral("fifo"), QT_TR_NOOP("a named pipe")},
        {QStringLiteral("socket"), QT_TR_NOOP("a socket")},
        {QStringLiteral("device"), QT_TR_NOOP("a device")},
        {QStringLiteral("setuid"), QT_TR_NOOP("a setuid file")},
        {QStringLiteral("setgid"), QT_TR_NOOP("a setgid file")},
        {QStringLiteral("symlink_in_path"), QT_TR_NOOP("a link inside its path")},
        {QStringLiteral("not_a_directory"), QT_TR_NOOP("a file where a folder is needed")},
        {QStringLiteral("exists"), QT_TR_NOOP("something of another kind is already there")},
        {QStringLiteral("permission"), QT_TR_NOOP("permission denied")},
        {QStringLiteral("io"), QT_TR_NOOP("an input/output error")},
    };
    const auto found = words.constFind(reason.trimmed());
    if (found == words.constEnd())
        return reason;
    return tr("%1 (%2)").arg(tr(found.value()), reason.trimmed());
}

} // namespace airlock

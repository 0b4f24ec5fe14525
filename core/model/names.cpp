#include "core/model/names.h"

namespace airlock {

Result<QString> validateName(const QString &name, QStringView what)
{
    const QString label = what.toString();
    if (name.isEmpty())
        return fail(ErrorKind::InvalidName, QStringLiteral("%1 is empty").arg(label));
    if (name.size() > 63)
        return fail(ErrorKind::InvalidName,
                    QStringLiteral("%1 is %2 characters long; at most 63 are allowed")
                        .arg(label)
                        .arg(name.size()));
    for (qsizetype i = 0; i < name.size(); ++i) {
        const QChar c = name.at(i);
        const bool lowerOrDigit = (c >= u'a' && c <= u'z') || (c >= u'0' && c <= u'9');
        if (lowerOrDigit)
            continue;
        if (c == u'-' && i > 0)
            continue;
        if (c == u'-')
            return fail(
                ErrorKind::InvalidName,
                QStringLiteral("%1 must start with a lower-case letter or digit").arg(label));
        return fail(
            ErrorKind::InvalidName,
            QStringLiteral("%1 may only contain a-z, 0-9 and '-' (found U+%2 at position %3)")
                .arg(label)
                .arg(c.unicode(), 4, 16, QLatin1Char('0'))
                .arg(i + 1));
    }
    return name;
}

} // namespace airlock

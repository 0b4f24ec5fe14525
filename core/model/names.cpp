#include "core/model/names.h"

namespace airlock {

namespace {

/// A refused character as a reader can see it: 'B', 'é' (U+00E9), a space, U+000A.
QString describe(QChar c)
{
    const QString code = QStringLiteral("U+%1").arg(c.unicode(), 4, 16, QLatin1Char('0')).toUpper();
    if (c == u' ')
        return QStringLiteral("a space");
    if (!c.isPrint() || c.isSpace())
        return code;
    if (c.unicode() > 0x7e)
        return QStringLiteral("'%1' (%2)").arg(QString(c), code);
    return QStringLiteral("'%1'").arg(QString(c));
}

} // namespace

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
        const bool upper = c >= u'A' && c <= u'Z';
        return fail(ErrorKind::InvalidName,
                    QStringLiteral("%1 may only contain a-z, 0-9 and '-': %2 at position %3%4")
                        .arg(label, describe(c), QString::number(i + 1),
                             upper ? QStringLiteral(" (upper case is not allowed)") : QString()));
    }
    return name;
}

} // namespace airlock

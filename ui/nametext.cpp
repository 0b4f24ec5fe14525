#include "ui/nametext.h"

#include "core/model/names.h"

namespace airlock {

QString NameText::character(QChar c)
{
    if (c == u' ')
        return tr("a space");
    if (c == u'\t')
        return tr("a tab");
    const QString code = QStringLiteral("U+%1").arg(c.unicode(), 4, 16, QLatin1Char('0')).toUpper();
    // Control, format (bidirectional overrides), surrogate and space characters show nothing
    // or mislead: their code instead.
    if (!c.isPrint() || c.isSpace())
        return tr("an invisible character (%1)").arg(code);
    if (c.unicode() > 0x7e)
        return tr("“%1” (%2)").arg(QString(c), code);
    return tr("“%1”").arg(c);
}

namespace {

/// The first letter upper case: sentences may begin with "a space".
QString sentence(QString text)
{
    if (!text.isEmpty())
        text[0] = text.at(0).toUpper();
    return text;
}

} // namespace

QString NameText::problem(const QString &name)
{
    const auto valid = validateName(name);
    if (valid)
        return {};
    const QString rule = tr("A name may only contain a–z, 0–9 and “-”.");
    if (name.isEmpty())
        return tr("Enter a name.");
    if (name.size() > 63)
        return tr("The name is %1 characters long; at most 63 are allowed.").arg(name.size());
    for (qsizetype i = 0; i < name.size(); ++i) {
        const QChar c = name.at(i);
        if ((c >= u'a' && c <= u'z') || (c >= u'0' && c <= u'9') || (c == u'-' && i > 0))
            continue;
        if (c == u'-')
            return tr("The name must start with a lower-case letter or a digit, not “-”.");
        if (c >= u'A' && c <= u'Z')
            return sentence(tr("%1 at position %2: upper case is not allowed (use “%3”).")
                                .arg(character(c), QString::number(i + 1), QString(c.toLower())))
                + u' ' + rule;
        return sentence(tr("%1 at position %2 is not allowed.")
                            .arg(character(c), QString::number(i + 1)))
            + u' ' + rule;
    }
    // A rule of validateName's this text does not know yet: its own words.
    return valid.error().message;
}

} // namespace airlock

#include "ui/guesttext.h"

namespace airlock {

QString GuestText::shown(const QString &text)
{
    QString out;
    out.reserve(text.size());
    for (const QChar c : text) {
        if (c == u'\n' || c == u'\t')
            out.append(c);
        else if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format)
            out.append(QChar(0xfffd));
        else
            out.append(c);
    }
    return out;
}

} // namespace airlock

#include "core/model/printabletext.h"

#include <QList>

namespace airlock {

namespace {

bool isFormatting(uint c)
{
    return c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e)
        || (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f || c == 0x061c;
}

} // namespace

QString printableText(QStringView text, bool asciiOnly)
{
    QString out;
    out.reserve(text.size());
    for (const uint c : text.toUcs4()) {
        const bool control = c < 0x20 || (c >= 0x7f && c <= 0x9f);
        if (control)
            out += QStringLiteral("\\%1").arg(uint(c), 3, 10, QLatin1Char('0'));
        else if (isFormatting(c) || (asciiOnly && c > 0x7e))
            out += QStringLiteral("\\u{%1}").arg(uint(c), 4, 16, QLatin1Char('0'));
        else {
            const char32_t character = c;
            out += QString::fromUcs4(&character, 1);
        }
    }
    return out;
}

} // namespace airlock

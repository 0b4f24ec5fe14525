#include "core/model/printabletext.h"

#include <algorithm>

namespace airlock {

namespace {

bool isFormatting(char32_t c)
{
    return c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e)
        || (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f || c == 0x061c;
}

bool isControl(char32_t c)
{
    return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

} // namespace

QString printableText(QStringView text, bool asciiOnly)
{
    // Most text needs nothing: one pass to find out, and no copy then.
    const auto needsEscape = [asciiOnly](QChar unit) {
        const char16_t c = unit.unicode();
        return isControl(c) || isFormatting(c) || (asciiOnly && c > 0x7e);
    };
    if (std::none_of(text.begin(), text.end(), needsEscape))
        return text.toString();
    QString out;
    out.reserve(text.size() + 16);
    for (qsizetype i = 0; i < text.size();) {
        // A surrogate pair is one code point: escaped whole, or copied whole.
        const bool pair =
            text[i].isHighSurrogate() && i + 1 < text.size() && text[i + 1].isLowSurrogate();
        const qsizetype units = pair ? 2 : 1;
        const char32_t c =
            pair ? QChar::surrogateToUcs4(text[i], text[i + 1]) : char32_t(text[i].unicode());
        if (isControl(c))
            out += QStringLiteral("\\%1").arg(uint(c), 3, 10, QLatin1Char('0'));
        else if (isFormatting(c) || (asciiOnly && c > 0x7e))
            out += QStringLiteral("\\u{%1}").arg(uint(c), 4, 16, QLatin1Char('0'));
        else
            out += text.sliced(i, units);
        i += units;
    }
    return out;
}

} // namespace airlock

#include "core/gateway/credentials/credentialpatterns.h"
#include "core/gateway/credentials/wipe.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>

namespace airlock::gateway {

namespace {

// The base64 characters of `value` that are independent of the bytes around it when it starts
// `offset` bytes (0..2) into an encoded stream. Character i covers bits [6i, 6i + 6) of the
// stream; the value occupies bits [8 * offset, 8 * (offset + n)).
QByteArray alignedBase64(const QByteArray &value, int offset, QByteArray::Base64Options options)
{
    QByteArray padded = QByteArray(offset, '\0') + value;
    QByteArray encoded = padded.toBase64(options | QByteArray::OmitTrailingEquals);
    wipe(padded);
    const qsizetype firstBit = 8 * qsizetype(offset);
    const qsizetype endBit = 8 * (qsizetype(offset) + value.size());
    const qsizetype first = (firstBit + 5) / 6; // first character starting inside the value
    const qsizetype last = endBit / 6; // characters ending at or before endBit
    QByteArray form = last > first ? encoded.mid(first, last - first) : QByteArray();
    wipe(encoded);
    return form;
}

bool isAlnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

char hexDigit(int nibble, bool upper)
{
    return (upper ? "0123456789ABCDEF" : "0123456789abcdef")[nibble & 0xf];
}

// `value` with every byte but ALPHA, DIGIT and `keep` as %XX; space as '+' with `plus`.
QByteArray percentEncoded(const QByteArray &value, const char *keep, bool plus, bool upperHex)
{
    QByteArray out;
    out.reserve(3 * value.size());
    for (const char c : value) {
        if (isAlnum(c) || (c != '\0' && std::strchr(keep, c))) {
            out.append(c);
        } else if (c == ' ' && plus) {
            out.append('+');
        } else {
            const auto byte = static_cast<unsigned char>(c);
            out.append('%');
            out.append(hexDigit(byte >> 4, upperHex));
            out.append(hexDigit(byte, upperHex));
        }
    }
    return out;
}

void appendUnicodeEscape(QByteArray &out, uint unit, bool upperHex)
{
    out.append("\\u");
    for (int shift = 12; shift >= 0; shift -= 4)
        out.append(hexDigit(int(unit >> shift), upperHex));
}

// The JSON string body of `value`: '"', '\\' and tab escaped as every encoder does (\" \\ \t),
// the characters in `asUnicode` as \u00XX ('/' alone in `asUnicode` means "\/", PHP's style).
QByteArray jsonEscaped(const QByteArray &value, const char *asUnicode, bool upperHex)
{
    const bool slashOnly = std::strcmp(asUnicode, "/") == 0;
    QByteArray out;
    out.reserve(6 * value.size());
    for (const char c : value) {
        if (slashOnly && c == '/') {
            out.append("\\/");
        } else if (c != '\0' && !slashOnly && std::strchr(asUnicode, c)) {
            appendUnicodeEscape(out, static_cast<unsigned char>(c), upperHex);
        } else if (c == '"') {
            out.append("\\\"");
        } else if (c == '\\') {
            out.append("\\\\");
        } else if (c == '\t') {
            out.append("\\t");
        } else {
            out.append(c);
        }
    }
    return out;
}

// Every character of `value` (UTF-8) as a \uXXXX escape, surrogate pairs above U+FFFF; empty
// when `value` is not UTF-8 (no JSON encoder would have produced it from a string).
QByteArray jsonAllEscaped(const QByteArray &value, bool upperHex)
{
    QString text = QString::fromUtf8(value);
    QByteArray back = text.toUtf8();
    const bool utf8 = back == value;
    wipe(back);
    QByteArray out;
    if (utf8) {
        out.reserve(6 * text.size());
        for (const QChar unit : std::as_const(text))
            appendUnicodeEscape(out, unit.unicode(), upperHex);
    }
    // The decoded copy held the secret too.
    OPENSSL_cleanse(text.data(), std::size_t(text.size()) * sizeof(QChar));
    return out;
}

// `value` with & < > " ' as HTML character references (`apostrophe` for ').
QByteArray htmlEscaped(const QByteArray &value, const char *apostrophe)
{
    QByteArray out;
    out.reserve(6 * value.size());
    for (const char c : value) {
        switch (c) {
        case '&':
            out.append("&amp;");
            break;
        case '<':
            out.append("&lt;");
            break;
        case '>':
            out.append("&gt;");
            break;
        case '"':
            out.append("&quot;");
            break;
        case '\'':
            out.append(apostrophe);
            break;
        default:
            out.append(c);
        }
    }
    return out;
}

} // namespace

QList<QByteArray> credentialForms(const QByteArray &value)
{
    QList<QByteArray> forms;
    if (value.isEmpty())
        return forms;
    forms.append(value);
    // Percent-encodings (RFC 3986 §2.1) as common stacks write them, each with upper- and
    // lower-case hex digits: which characters stay literal, and whether space becomes '+'.
    static const char kUnreserved[] = "-._~";
    struct Percent
    {
        const char *keep; ///< kept literal besides ALPHA / DIGIT
        bool plus; ///< space as '+' (application/x-www-form-urlencoded)
    };
    static const Percent kPercent[] = {
        {kUnreserved, false}, // RFC 3986 unreserved: Qt, Python quote(safe=""), Go PathEscape
        {"-._~/", false}, // Python quote() default: '/' left alone
        {kUnreserved, true}, // Python quote_plus
        {"*-._", true}, // Java URLEncoder, WHATWG form encoding ('~' encoded, '*' not)
        {"-_.!~*'()", false}, // JavaScript encodeURIComponent
        {"-_.!~*'();,/?:@&=+$#", false}, // JavaScript encodeURI
    };
    for (const Percent &style : kPercent) {
        for (const bool upperHex : {true, false})
            forms.append(percentEncoded(value, style.keep, style.plus, upperHex));
    }
    // JSON string escapes (RFC 8259 §7) as encoders write a reflected token.
    forms.append(jsonEscaped(value, "", false)); // \" \\ \t only: every encoder
    forms.append(jsonEscaped(value, "/", false)); // PHP json_encode: "\/"
    forms.append(jsonEscaped(value, "<>&", false)); // Go encoding/json: \u003c \u003e \u0026
    forms.append(jsonEscaped(value, "<>&'+\"", true)); // .NET System.Text.Json: \u002B ...
    forms.append(jsonAllEscaped(value, false)); // every character as \uxxxx
    forms.append(jsonAllEscaped(value, true)); // ... as \uXXXX
    // HTML character references of the five special characters (Python html.escape, PHP
    // htmlspecialchars, Go html/template variants).
    forms.append(htmlEscaped(value, "&#39;"));
    forms.append(htmlEscaped(value, "&#x27;"));
    for (int offset = 0; offset < 3; ++offset) {
        forms.append(alignedBase64(value, offset, QByteArray::Base64Encoding));
        forms.append(alignedBase64(value, offset, QByteArray::Base64UrlEncoding));
    }
    for (QByteArray &form : forms) {
        if (form.size() < kMinFormBytes)
            wipe(form);
    }
    forms.removeIf([](const QByteArray &form) { return form.isEmpty(); });
    std::sort(forms.begin(), forms.end(), [](const QByteArray &a, const QByteArray &b) {
        return a.size() != b.size() ? a.size() > b.size() : a < b;
    });
    const auto duplicates = std::unique(forms.begin(), forms.end());
    for (auto it = duplicates; it != forms.end(); ++it)
        wipe(*it);
    forms.erase(duplicates, forms.end());
    return forms;
}

} // namespace airlock::gateway

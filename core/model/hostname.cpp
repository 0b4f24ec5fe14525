#include "core/model/hostname.h"

#include <libpsl.h>

namespace airlock {

namespace {

constexpr qsizetype kMaxLabel = 63; // RFC 1035 §2.3.4
constexpr qsizetype kMaxName = 253; // RFC 1035 §2.3.4: 255 octets on the wire, 253 in text

std::unexpected<HostnameError> reject(HostnameReason reason, QString message)
{
    return std::unexpected(HostnameError {reason, std::move(message)});
}

QString codePoint(QChar c)
{
    return QStringLiteral("U+%1").arg(c.unicode(), 4, 16, QLatin1Char('0'));
}

bool isAsciiDigit(QChar c)
{
    return c >= u'0' && c <= u'9';
}

bool isAsciiHexDigit(QChar c)
{
    return isAsciiDigit(c) || (c >= u'a' && c <= u'f') || (c >= u'A' && c <= u'F');
}

bool isLdh(QChar c)
{
    return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || isAsciiDigit(c) || c == u'-';
}

// WHATWG URL "ends in a number": all decimal digits, or 0x/0X followed by hex digits (maybe
// none). Such a last label makes the whole name an IPv4 literal for inet_aton and browsers.
bool isNumericLabel(QStringView label)
{
    if (label.isEmpty())
        return false;
    if (label.size() >= 2 && label.at(0) == u'0' && (label.at(1) == u'x' || label.at(1) == u'X')) {
        for (QChar c : label.mid(2)) {
            if (!isAsciiHexDigit(c))
                return false;
        }
        return true;
    }
    for (QChar c : label) {
        if (!isAsciiDigit(c))
            return false;
    }
    return true;
}

// Character-level checks in a fixed order so the reason is stable for a given input.
HostnameResult<void> checkCharacters(QStringView input)
{
    for (qsizetype i = 0; i < input.size(); ++i) {
        const QChar c = input.at(i);
        if (c.unicode() > 0x7f)
            return reject(HostnameReason::NonAscii,
                          QStringLiteral("non-ASCII character %1 at position %2; names must be "
                                         "written in ASCII (A-labels), nothing is mapped")
                              .arg(codePoint(c))
                              .arg(i + 1));
    }
    for (qsizetype i = 0; i < input.size(); ++i) {
        const QChar c = input.at(i);
        if (c.unicode() <= 0x20 || c.unicode() == 0x7f)
            return reject(HostnameReason::ControlCharacter,
                          QStringLiteral("space or control character %1 at position %2")
                              .arg(codePoint(c))
                              .arg(i + 1));
    }
    if (input.contains(u'@'))
        return reject(HostnameReason::Userinfo,
                      QStringLiteral("'@' (userinfo) is not allowed in a host name"));
    // Brackets enclose IPv6 literals only (RFC 3986 §3.2.2): "[pkg.test]" is a malformed name,
    // not an address (docs/reviews/2026-11-30-redteam-pass.md#f8).
    if (input.startsWith(u'[') || input.contains(u']')) {
        const qsizetype close = input.indexOf(u']');
        const QStringView inside =
            input.startsWith(u'[') && close > 0 ? input.sliced(1, close - 1) : QStringView();
        if (!inside.contains(u':'))
            return reject(HostnameReason::BadCharacter,
                          QStringLiteral("'[' and ']' only enclose IPv6 address literals"));
    }
    if (input.startsWith(u'[') || input.contains(u']') || input.count(u':') >= 2)
        return reject(HostnameReason::IpLiteral,
                      QStringLiteral("IPv6 address literals are not allowed; use a host name"));
    if (input.contains(u'%'))
        return reject(HostnameReason::Percent, QStringLiteral("'%' is not allowed in a host name"));
    if (input.contains(u'\\'))
        return reject(HostnameReason::Backslash,
                      QStringLiteral("'\\' is not allowed in a host name"));
    if (input.contains(u':'))
        return reject(HostnameReason::Port,
                      QStringLiteral("a port (':') is not part of a host name"));
    if (input.contains(u'*'))
        return reject(HostnameReason::Wildcard,
                      QStringLiteral("'*' is only allowed as \"*.\" at the start of a policy "
                                     "pattern"));
    for (qsizetype i = 0; i < input.size(); ++i) {
        const QChar c = input.at(i);
        if (!isLdh(c) && c != u'.')
            return reject(HostnameReason::BadCharacter,
                          QStringLiteral("character '%1' at position %2 is not a letter, digit, "
                                         "'-' or '.'")
                              .arg(c)
                              .arg(i + 1));
    }
    return {};
}

} // namespace

bool isPublicSuffix(const QString &name)
{
    // The newest of libpsl's built-in list and the publicsuffix package's file; loaded once.
    static psl_ctx_t *const list = [] {
        psl_ctx_t *latest = psl_latest(nullptr);
        return latest ? latest : const_cast<psl_ctx_t *>(psl_builtin());
    }();
    if (!list)
        return false;
    const QByteArray ascii = name.toLatin1();
    // PSL_TYPE_ANY: ICANN suffixes (co.uk) and private ones (github.io, s3.amazonaws.com).
    // The implicit "*" rule makes every unknown TLD a suffix; single labels are refused
    // before this is asked, and names under an unknown TLD (pkg.test) are not suffixes.
    return psl_is_public_suffix2(list, ascii.constData(), PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE)
        != 0;
}

QString hostnameReasonName(HostnameReason reason)
{
    switch (reason) {
    case HostnameReason::Empty:
        return QStringLiteral("empty");
    case HostnameReason::NonAscii:
        return QStringLiteral("non_ascii");
    case HostnameReason::ControlCharacter:
        return QStringLiteral("control_character");
    case HostnameReason::Userinfo:
        return QStringLiteral("userinfo");
    case HostnameReason::IpLiteral:
        return QStringLiteral("ip_literal");
    case HostnameReason::Percent:
        return QStringLiteral("percent");
    case HostnameReason::Backslash:
        return QStringLiteral("backslash");
    case HostnameReason::Port:
        return QStringLiteral("port");
    case HostnameReason::Wildcard:
        return QStringLiteral("wildcard");
    case HostnameReason::BadCharacter:
        return QStringLiteral("bad_character");
    case HostnameReason::TrailingDots:
        return QStringLiteral("trailing_dots");
    case HostnameReason::EmptyLabel:
        return QStringLiteral("empty_label");
    case HostnameReason::LabelTooLong:
        return QStringLiteral("label_too_long");
    case HostnameReason::TooLong:
        return QStringLiteral("too_long");
    case HostnameReason::BadHyphen:
        return QStringLiteral("bad_hyphen");
    case HostnameReason::BadPort:
        return QStringLiteral("bad_port");
    case HostnameReason::MissingPort:
        return QStringLiteral("missing_port");
    case HostnameReason::BadPattern:
        return QStringLiteral("bad_pattern");
    case HostnameReason::PatternTooBroad:
        return QStringLiteral("pattern_too_broad");
    }
    return QStringLiteral("bad_character");
}

Error HostnameError::toError() const
{
    return Error {ErrorKind::InvalidParams,
                  QStringLiteral("%1: %2").arg(hostnameReasonName(reason), message)};
}

HostnameResult<QString> canonicalizeHostname(QStringView input)
{
    if (input.isEmpty())
        return reject(HostnameReason::Empty, QStringLiteral("the host name is empty"));
    AIRLOCK_TRY(checkCharacters(input));

    QStringView name = input;
    if (name.endsWith(u".."))
        return reject(HostnameReason::TrailingDots,
                      QStringLiteral("at most one trailing dot is allowed"));
    if (name.endsWith(u'.'))
        name.chop(1);
    if (name.isEmpty())
        return reject(HostnameReason::Empty, QStringLiteral("the host name is empty"));
    if (name.size() > kMaxName)
        return reject(HostnameReason::TooLong,
                      QStringLiteral("the name is %1 characters long; at most %2 are allowed")
                          .arg(name.size())
                          .arg(kMaxName));

    QStringView lastLabel;
    qsizetype labelNumber = 0;
    for (QStringView label : name.tokenize(u'.')) {
        ++labelNumber;
        if (label.isEmpty())
            return reject(HostnameReason::EmptyLabel,
                          QStringLiteral("label %1 is empty").arg(labelNumber));
        if (label.size() > kMaxLabel)
            return reject(HostnameReason::LabelTooLong,
                          QStringLiteral("label %1 is %2 characters long; at most %3 are allowed")
                              .arg(labelNumber)
                              .arg(label.size())
                              .arg(kMaxLabel));
        if (label.startsWith(u'-') || label.endsWith(u'-'))
            return reject(HostnameReason::BadHyphen,
                          QStringLiteral("label %1 starts or ends with '-'").arg(labelNumber));
        lastLabel = label;
    }
    if (isNumericLabel(lastLabel))
        return reject(HostnameReason::IpLiteral,
                      QStringLiteral("the name ends in a number and would be read as an IPv4 "
                                     "address; use a host name"));
    return name.toString().toLower();
}

Result<QString> canonicalHostname(QStringView input)
{
    auto name = canonicalizeHostname(input);
    if (!name)
        return std::unexpected(name.error().toError());
    return *name;
}

HostnameResult<Authority> parseAuthority(QStringView input, std::optional<quint16> defaultPort)
{
    if (input.isEmpty())
        return reject(HostnameReason::Empty, QStringLiteral("the authority is empty"));
    // Classify the authority as a whole before splitting so "u@h:1" and "[::1]:443" are
    // reported as what they are, not as a bad port.
    if (auto ok = checkCharacters(input); !ok) {
        if (ok.error().reason != HostnameReason::Port)
            return std::unexpected(ok.error());
    }

    QStringView hostPart = input;
    Authority authority;
    const qsizetype colon = input.indexOf(u':');
    if (colon >= 0) {
        const QStringView digits = input.mid(colon + 1);
        hostPart = input.first(colon);
        const auto badPort = [&](const QString &why) {
            return reject(HostnameReason::BadPort,
                          QStringLiteral("port '%1' %2").arg(digits.toString(), why));
        };
        if (digits.isEmpty())
            return badPort(QStringLiteral("is empty"));
        for (QChar c : digits) {
            if (!isAsciiDigit(c))
                return badPort(QStringLiteral("must be decimal digits"));
        }
        if (digits.at(0) == u'0')
            return badPort(QStringLiteral("must be 1..65535 without leading zeros"));
        if (digits.size() > 5 || digits.toInt() > 65535)
            return badPort(QStringLiteral("must be 1..65535"));
        authority.port = quint16(digits.toInt());
        authority.portGiven = true;
    } else if (defaultPort) {
        authority.port = *defaultPort;
    } else {
        return reject(HostnameReason::MissingPort,
                      QStringLiteral("the authority must name a port (host:port)"));
    }

    auto host = canonicalizeHostname(hostPart);
    AIRLOCK_TRY(host);
    authority.host = *host;
    return authority;
}

HostnameResult<QString> canonicalHostPattern(QStringView pattern)
{
    if (!pattern.startsWith(u"*.")) {
        auto exact = canonicalizeHostname(pattern);
        if (!exact && exact.error().reason == HostnameReason::Wildcard)
            return reject(HostnameReason::BadPattern,
                          QStringLiteral("'*' is only allowed as a leading \"*.\""));
        return exact;
    }
    const QStringView suffix = pattern.mid(2);
    if (suffix.contains(u'*'))
        return reject(HostnameReason::BadPattern,
                      QStringLiteral("only one leading \"*.\" is allowed in a pattern"));
    if (suffix.isEmpty() || suffix == u".")
        return reject(HostnameReason::BadPattern,
                      QStringLiteral("\"*.\" must be followed by a domain name"));
    auto canonical = canonicalizeHostname(suffix);
    AIRLOCK_TRY(canonical);
    if (!canonical->contains(u'.'))
        return reject(HostnameReason::PatternTooBroad,
                      QStringLiteral("\"*.%1\" would allow a whole top-level domain; name at "
                                     "least two labels after \"*.\"")
                          .arg(*canonical));
    // Also when the names right below the suffix are public suffixes (a wildcard rule such as
    // "*.compute.amazonaws.com" or "*.ck"): a label no rule names as an exception stands in.
    if (isPublicSuffix(*canonical)
        || isPublicSuffix(QStringLiteral("airlock-psl-probe.") + *canonical))
        return reject(HostnameReason::PatternTooBroad,
                      QStringLiteral("\"%1\" is a public suffix (Public Suffix List): \"*.%1\" "
                                     "would allow every domain registered under it; name the "
                                     "hosts, or a domain below it")
                          .arg(*canonical));
    return QStringLiteral("*.") + *canonical;
}

} // namespace airlock

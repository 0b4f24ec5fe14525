#pragma once

#include "core/model/error.h"

#include <QString>

#include <expected>
#include <optional>

namespace airlock {

/// Why a host name (or an authority holding one) was rejected. Each value has a stable
/// snake_case name (hostnameReasonName) that travels in egress events and policy errors;
/// docs/policy.md lists them. Names are rejected, never repaired
/// (docs/redteam-cases.md principle 2).
enum class HostnameReason {
    Empty, ///< "empty": nothing, or only the root "."
    NonAscii, ///< "non_ascii": a code point above U+007F; no IDNA mapping is attempted
    ControlCharacter, ///< "control_character": space, tab, CR, LF, NUL, other C0 or DEL
    Userinfo, ///< "userinfo": an '@' (RFC 3986 §3.2.1 userinfo has no place in a name)
    IpLiteral, ///< "ip_literal": IPv4 in any inet_aton spelling, or IPv6 with/without brackets
    Percent, ///< "percent": a '%' (percent-encoding or an IPv6 zone id)
    Backslash, ///< "backslash": a '\'
    Port, ///< "port": a ':' in a bare host name (use parseAuthority for host[:port])
    Wildcard, ///< "wildcard": a '*'; wildcards exist only in policy patterns ("*.suffix")
    BadCharacter, ///< "bad_character": anything else outside letters, digits, '-' and '.'
    TrailingDots, ///< "trailing_dots": more than one trailing dot ("pkg.test..")
    EmptyLabel, ///< "empty_label": a leading dot or two dots in a row ("a..b", ".a")
    LabelTooLong, ///< "label_too_long": a label over 63 octets (RFC 1035 §2.3.4)
    TooLong, ///< "too_long": over 253 octets without the trailing dot (RFC 1035 §2.3.4)
    BadHyphen, ///< "bad_hyphen": a label starting or ending with '-' (RFC 1123 §2.1)
    BadPort, ///< "bad_port": authority port empty, not digits, leading zero, 0 or > 65535
    MissingPort, ///< "missing_port": authority-form without a port (CONNECT, RFC 9110 §9.3.6)
    BadPattern, ///< "bad_pattern": a policy pattern with '*' other than one leading "*."
    PatternTooBroad, ///< "pattern_too_broad": "*.suffix" where suffix is a single label
};

/// Stable name of a reason, e.g. "ip_literal".
QString hostnameReasonName(HostnameReason reason);

/// A rejected name: the typed reason plus an English sentence naming the offending part.
struct HostnameError
{
    HostnameReason reason = HostnameReason::Empty;
    QString message;

    /// As an airlock::Error: kind InvalidParams, message "<reason name>: <message>".
    Error toError() const;
};

/// A value or the typed rejection.
template<typename T>
using HostnameResult = std::expected<T, HostnameError>;

/// THE canonicalization of a DNS host name (docs/redteam-cases.md principle 2). Every name the
/// gateway sees (SNI, Host, absolute-form and CONNECT authorities, DNS questions) and every policy
/// entry goes through this one function, so that equal names compare equal as QStrings.
///
/// Accepts a name made of LDH labels (letters, digits, hyphen; RFC 1035 §2.3.1 as relaxed by
/// RFC 1123 §2.1) separated by dots. Returns it with ASCII upper case lowered and at most one
/// trailing dot removed: "Pkg.TEST." -> "pkg.test". Rejected, with the reason in brackets:
/// empty or "." [empty]; any code point > U+007F, including fullwidth dots and U-labels [non_ascii]
/// (A-labels "xn--..." are ordinary LDH labels and pass unchanged); space and control
/// characters [control_character]; '@' [userinfo]; anything bracketed or with two or more ':'
/// [ip_literal]; '%' [percent]; '\' [backslash]; one ':' [port]; '*' [wildcard]; '_' and all
/// other characters [bad_character]; two or more trailing dots [trailing_dots]; empty labels
/// [empty_label]; labels over 63 [label_too_long] or names over 253 octets [too_long]; a label
/// starting or ending with '-' [bad_hyphen]; a name whose last label is numeric (all decimal
/// digits, or "0x" followed by hex digits) [ip_literal]: this covers every inet_aton spelling of
/// IPv4 (127.0.0.1, 127.1, 0x7f.1, 0177.0.0.1, 2130706433) and follows the WHATWG URL
/// "ends in a number" rule; no top-level domain is numeric (RFC 3696 §2).
HostnameResult<QString> canonicalizeHostname(QStringView input);

/// The same canonicalization as an airlock::Result (see canonicalizeHostname); the error is
/// InvalidParams with the message "<reason name>: <detail>".
Result<QString> canonicalHostname(QStringView input);

/// A host and port from an authority (RFC 3986 §3.2, RFC 9110 §7.2 Host, §9.3.6 CONNECT).
struct Authority
{
    QString host; ///< canonical (canonicalizeHostname)
    quint16 port = 0; ///< 1..65535
    bool portGiven = false; ///< false when the port came from the default

    friend bool operator==(const Authority &, const Authority &) = default;
};

/// Parses "host[:port]" as found in a Host header field value (OWS already trimmed by the HTTP
/// parser, RFC 9110 §5.5), an absolute-form URI's authority or a CONNECT target.
/// `defaultPort`: the port to use when none is written (443 for https, 80 for http); pass
/// std::nullopt where a port is required (CONNECT authority-form) to get [missing_port].
/// The port is 1..65535 written in decimal digits without a leading zero: "pkg.test:",
/// "pkg.test:0443", "pkg.test:+443", "pkg.test:0" and "pkg.test:65536" are [bad_port]
/// (docs/redteam-cases.md B3: malformed, not repaired). '@' anywhere is [userinfo] (B4); "[...]" or
/// two or more ':' are [ip_literal] (D1); the host part then goes through canonicalizeHostname.
HostnameResult<Authority> parseAuthority(QStringView input, std::optional<quint16> defaultPort);

/// Canonicalizes a policy host pattern: an exact name (canonicalizeHostname) or "*.suffix"
/// where suffix is a canonical name of at least two labels. Returns "pkg.test" or
/// "*.pkg.test" in canonical spelling ("*.PKG.test." -> "*.pkg.test"). Rejected: "*", "*.",
/// "**.a.b", "a*.b.c", "a.*.c" [bad_pattern]; "*.test" [pattern_too_broad]; any reason of
/// canonicalizeHostname for the suffix; a suffix that is itself a public suffix, or whose
/// children are ("*.co.uk", "*.github.io", "*.compute.amazonaws.com": the Public Suffix List
/// through libpsl, ICANN and private sections) [pattern_too_broad]
/// (docs/reviews/2026-11-30-redteam-pass.md#f6). docs/redteam-cases.md C2; the truth table is in
/// docs/policy.md.
HostnameResult<QString> canonicalHostPattern(QStringView pattern);

/// True when the canonical `name` is a public suffix of the Public Suffix List
/// (https://publicsuffix.org; libpsl's psl_latest(): the newer of its built-in list and
/// /usr/share/publicsuffix), counting ICANN and private entries, without the implicit "*" rule
/// (a name under an unlisted TLD such as "pkg.test" is not a suffix).
bool isPublicSuffix(const QString &name);

} // namespace airlock

#pragma once

#include <QByteArray>
#include <QList>

namespace airlock::gateway {

/// The byte strings under which a credential can appear in HTTP traffic (docs/redteam-cases.md
/// I2-I4), for detection and replacement: the encodings common server stacks produce when they
/// reflect a token (docs/reviews/2026-12-01-credentials-redteam.md#f2), each generated from the
/// value:
///  - the raw bytes;
///  - percent-encoded (RFC 3986 §2.1) in six styles, each with upper- and lower-case hex:
///    everything but unreserved encoded (Qt, Python `quote(safe="")`), `/` left alone (Python
///    `quote`), `+` for space (Python `quote_plus`), Java `URLEncoder`/WHATWG form encoding
///    (`*` literal, `~` encoded, `+` for space), JavaScript `encodeURIComponent` and
///    `encodeURI`;
///  - JSON string escapes (RFC 8259 §7): `\"` `\\` `\t` alone, with `\/` (PHP), with `<>&` as
///    `\u003c` (Go), with `<>&'+"` as `\u003C` (.NET), and every character as `\uxxxx` or
///    `\uXXXX`;
///  - HTML character references of `& < > " '` (`&#39;` and `&#x27;`);
///  - base64 and base64url (RFC 4648 §4, §5) at each of the three byte alignments the value can
///    have inside a larger encoded blob: only the characters that depend on the value's bytes
///    alone, so `base64("{\"t\":\"" + value + "\"}")` is found too.
/// At most 27 forms; most coincide (a value of letters and digits has the raw form and its
/// base64 ones). Other transformations (hex, reversal, case changes, line-wrapped base64, an
/// encoding of an encoding, any computation) are out of reach by design: the guest never holds
/// the value, and scrubbing is the second line behind the binding's host/path/method scope
/// (docs/credentials.md, "What scrubbing covers").
/// Forms shorter than kMinFormBytes are left out (too likely to occur by chance). Duplicates
/// are removed; the list is ordered longest first so a replacer prefers the longest match.
/// Temporaries are wiped; the caller wipes the returned forms (CredentialInjector moves them
/// into locked memory at once).
QList<QByteArray> credentialForms(const QByteArray &value);

/// Forms shorter than this many bytes are not searched for.
inline constexpr qsizetype kMinFormBytes = 6;

} // namespace airlock::gateway

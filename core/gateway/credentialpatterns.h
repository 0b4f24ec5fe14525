#pragma once

#include <QByteArray>
#include <QList>

namespace airlock::gateway {

/// The byte strings under which a credential can appear in HTTP traffic (CASES.md I2-I4:
/// "raw, base64 and URL-encoded forms"), for detection and replacement:
///  - the raw bytes;
///  - percent-encoded (RFC 3986 §2.1), with upper- and lower-case hex digits;
///  - base64 and base64url (RFC 4648 §4, §5) at each of the three byte alignments the value can
///    have inside a larger encoded blob: only the characters that depend on the value's bytes
///    alone, so `base64("{\"t\":\"" + value + "\"}")` is found too.
/// Forms shorter than kMinFormBytes are left out (too likely to occur by chance). Duplicates
/// are removed; the list is ordered longest first so a replacer prefers the longest match.
/// Temporaries are wiped; the caller wipes the returned forms (CredentialInjector moves them
/// into locked memory at once).
QList<QByteArray> credentialForms(const QByteArray &value);

/// Forms shorter than this many bytes are not searched for.
inline constexpr qsizetype kMinFormBytes = 6;

} // namespace airlock::gateway

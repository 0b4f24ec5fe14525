#pragma once

#include <QString>
#include <QStringView>

namespace airlock {

/// What a guest may put into text that people read (egress events in the window, in
/// airlockctl's terminal output, in logs): the same text with every character that could move
/// a terminal's cursor, end a line or reorder what is shown replaced by a visible escape.
/// Escaped are C0 controls, DEL and C1 controls (`\DDD`, the decimal byte as in DNS
/// presentation format, RFC 1035 §5.1), line and paragraph separators and the bidirectional
/// formatting characters U+202A..U+202E, U+2066..U+2069, U+200E, U+200F and U+061C
/// (`\u{XXXX}`; Unicode Technical Report 36 §2.4). With `asciiOnly` (host names: SNI, Host,
/// DNS names) every character outside printable ASCII is escaped. The backslash itself stays:
/// ldns already escapes DNS names that way, and a second pass must not change them.
QString printableText(QStringView text, bool asciiOnly = false);

} // namespace airlock

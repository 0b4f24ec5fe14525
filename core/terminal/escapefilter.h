#pragma once

#include <QByteArray>

namespace airlock {

/// Removes the escape sequences a hostile guest could use against the terminal of a person who
/// watches its console (`airlockctl console`), and passes everything else through unchanged:
/// - OSC (ESC ]): clipboard writes (OSC 52), window titles, hyperlinks (OSC 8), palette changes;
/// - DCS (ESC P), SOS (ESC X), PM (ESC ^) and APC (ESC _): terminal-specific control strings;
/// - CSI ... t: window manipulation and reports (move, resize, report title: XTWINOPS).
/// Strings end at BEL or ST (ESC \), as in ECMA-48 8.3.89 and xterm's ctlseqs. Sequences may be
/// split across feed() calls; state is kept. Colours, cursor movement and the rest of CSI pass.
class EscapeFilter
{
public:
    /// The filtered bytes of `input` (possibly fewer, never reordered).
    QByteArray feed(const QByteArray &input);

private:
    enum class State { Text, Escape, Csi, String, StringEscape };
    State m_state = State::Text;
    QByteArray m_csi; ///< a CSI sequence held back until its final byte decides its fate
};

} // namespace airlock

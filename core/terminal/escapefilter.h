#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace airlock {

/// Removes what a hostile guest could use against the terminal of a person who watches its
/// console (`airlockctl console`), and passes harmless output on. Input is any bytes; output is
/// valid UTF-8 made of text, C0 controls and complete, allowed escape sequences only, so the
/// operator's terminal is back in its ground state after every chunk.
///
/// The input is parsed as a terminal parses it (the DEC VT parser of vt100.net/emu/dec_ansi_parser,
/// ECMA-48 5.3-5.6, xterm's ctlseqs), after incremental UTF-8 decoding:
/// - dropped: OSC (ESC ]: clipboard writes OSC 52, titles, hyperlinks OSC 8, palette), DCS (ESC P),
///   SOS (ESC X), PM (ESC ^) and APC (ESC _) strings up to BEL, ST (ESC \ or U+009C), CAN, SUB
///   or an ESC that starts the next sequence; unterminated, to the end of the stream. No byte of
///   a string is held, so their length costs nothing;
/// - dropped: CSI ... t (XTWINOPS: window moves, resizes, title reports), CSI ... i (media copy,
///   printer controller mode), ESC % (select another coding system than UTF-8), malformed CSIs
///   and CSIs longer than kMaxSequenceBytes (all of it, up to its final byte);
/// - an ESC, CAN or SUB inside a sequence aborts it (the sequence is dropped; the ESC starts a
///   new one), as in the terminal;
/// - C1 controls U+0080..U+009F (UTF-8 C2 80..C2 9F) are dropped, and the 8-bit forms of CSI,
///   OSC, DCS, SOS, PM, APC and ST start or end sequences like their 7-bit forms, so a terminal
///   that acts on them cannot be reached either. Invalid UTF-8 (a raw 0x9b, overlong forms,
///   surrogates, truncated sequences) becomes U+FFFD, one per maximal subpart (Unicode 15, 3.9);
///   a raw byte 0x80..0x9F is also parsed as the C1 control it is in 8-bit mode;
/// - passed: text, C0 controls (executed in the middle of a sequence by a terminal, they are
///   passed at once, before the sequence they interrupt), SGR colours, cursor movement, erasing,
///   scrolling regions, modes and the other CSI and ESC sequences.
/// State is kept between feed() calls: a sequence or a UTF-8 character may be split anywhere.
class EscapeFilter
{
public:
    /// A CSI or ESC sequence longer than this (introducer included) is not a real one; it is
    /// dropped whole, so a guest can neither make us buffer nor smuggle a long one through.
    static constexpr qsizetype kMaxSequenceBytes = 256;

    /// The filtered bytes of `input`.
    QByteArray feed(const QByteArray &input);
    /// True: also drop the sequences that ask the terminal for an answer (DSR `CSI n` such as
    /// the cursor position query `ESC [ 6 n`, DA `CSI c`/`CSI > c`, DECREQTPARM `CSI x`,
    /// DECRQM `CSI ? Ps $ p`, XTVERSION `CSI > q`, `CSI ? u`, DECID `ESC Z`). For a reader
    /// whose answer cannot reach the guest (piped `airlockctl console`): the terminal would
    /// type its reply into the user's shell instead.
    void setDropTerminalQueries(bool drop) { m_dropQueries = drop; }

private:
    enum class State {
        Ground,
        Escape, ///< after ESC
        EscapeIntermediate, ///< ESC and 0x20..0x2f bytes, waiting for the final byte
        Csi, ///< a CSI held in m_sequence until its final byte decides its fate
        CsiIgnore, ///< a dropped CSI, swallowed up to its final byte
        String, ///< OSC/DCS/SOS/PM/APC body, swallowed
    };

    void decode(unsigned char byte, QByteArray &out);
    void flushInvalidUtf8(QByteArray &out);
    void codePoint(char32_t cp, QByteArrayView text, QByteArray &out);
    void c1Control(char32_t cp, bool rawByte, QByteArray &out);
    void escape(char32_t cp, QByteArrayView text, QByteArray &out);
    void csi(char32_t cp, QByteArrayView text, QByteArray &out);
    void enter(State state, QByteArrayView sequence = {});
    static bool isTerminalQuery(QByteArrayView sequence, char final);

    State m_state = State::Ground;
    QByteArray m_sequence; ///< the ESC or CSI sequence held back
    bool m_csiIntermediate = false; ///< the held CSI has intermediate bytes (no more parameters)
    bool m_dropQueries = false;

    // UTF-8 decoding (Unicode 15, table 3-7): the bytes of a character not yet complete.
    unsigned char m_utf8[4] = {};
    int m_utf8Have = 0;
    int m_utf8Need = 0;
    unsigned char m_utf8Low = 0x80; ///< allowed range of the next continuation byte
    unsigned char m_utf8High = 0xbf;
    char32_t m_utf8Cp = 0;
};

} // namespace airlock

#include "core/terminal/escapefilter.h"

namespace airlock {

namespace {

constexpr char32_t kBel = 0x07;
constexpr char32_t kCan = 0x18;
constexpr char32_t kSub = 0x1a;
constexpr char32_t kEsc = 0x1b;
constexpr char32_t kDel = 0x7f;
constexpr char32_t kReplacementCharacter = 0xfffd;
const QByteArrayView kReplacement("\xef\xbf\xbd");

// ECMA-48 5.4: CSI P...P I...I F, parameter bytes 0x30..0x3f, intermediate bytes 0x20..0x2f,
// final bytes 0x40..0x7e. ESC sequences (5.3, ECMA-35 13.2): ESC I...I F, F in 0x30..0x7e.
bool isIntermediate(char32_t cp)
{
    return cp >= 0x20 && cp <= 0x2f;
}

bool isCsiFinal(char32_t cp)
{
    return cp >= 0x40 && cp <= 0x7e;
}

bool isC0(char32_t cp)
{
    return cp < 0x20;
}

} // namespace

QByteArray EscapeFilter::feed(const QByteArray &input)
{
    QByteArray out;
    out.reserve(input.size());
    for (const char c : input)
        decode(static_cast<unsigned char>(c), out);
    return out;
}

void EscapeFilter::decode(unsigned char byte, QByteArray &out)
{
    if (m_utf8Need > 0) {
        if (byte < m_utf8Low || byte > m_utf8High) {
            // The character ends early: its bytes so far are one maximal subpart, and this
            // byte starts afresh.
            flushInvalidUtf8(out);
            decode(byte, out);
            return;
        }
        m_utf8[m_utf8Have++] = byte;
        m_utf8Cp = (m_utf8Cp << 6) | (byte & 0x3f);
        m_utf8Low = 0x80;
        m_utf8High = 0xbf;
        if (--m_utf8Need > 0)
            return;
        const int length = m_utf8Have;
        m_utf8Have = 0;
        if (m_utf8Cp <= 0x9f)
            c1Control(m_utf8Cp, false, out);
        else
            codePoint(m_utf8Cp, QByteArrayView(reinterpret_cast<const char *>(m_utf8), length),
                      out);
        return;
    }
    if (byte < 0x80) {
        const char c = static_cast<char>(byte);
        codePoint(byte, QByteArrayView(&c, 1), out);
        return;
    }
    // Unicode 15, table 3-7 (well-formed UTF-8): the lead byte fixes the length and the range
    // of the first continuation byte, which excludes overlong forms, surrogates and values above
    // U+10FFFF.
    auto start = [this, byte](int need, unsigned char low, unsigned char high, char32_t bits) {
        m_utf8[0] = byte;
        m_utf8Have = 1;
        m_utf8Need = need;
        m_utf8Low = low;
        m_utf8High = high;
        m_utf8Cp = bits;
    };
    if (byte >= 0xc2 && byte <= 0xdf)
        start(1, 0x80, 0xbf, byte & 0x1f);
    else if (byte == 0xe0)
        start(2, 0xa0, 0xbf, 0);
    else if (byte == 0xed)
        start(2, 0x80, 0x9f, byte & 0x0f);
    else if (byte >= 0xe1 && byte <= 0xef)
        start(2, 0x80, 0xbf, byte & 0x0f);
    else if (byte == 0xf0)
        start(3, 0x90, 0xbf, 0);
    else if (byte >= 0xf1 && byte <= 0xf3)
        start(3, 0x80, 0xbf, byte & 0x07);
    else if (byte == 0xf4)
        start(3, 0x80, 0x8f, byte & 0x07);
    else if (byte <= 0x9f)
        c1Control(byte, true, out); // what a terminal in 8-bit mode takes it for
    else
        codePoint(kReplacementCharacter, kReplacement, out); // 0xa0..0xc1, 0xf5..0xff
}

void EscapeFilter::flushInvalidUtf8(QByteArray &out)
{
    m_utf8Have = 0;
    m_utf8Need = 0;
    m_utf8Low = 0x80;
    m_utf8High = 0xbf;
    codePoint(kReplacementCharacter, kReplacement, out);
}

bool EscapeFilter::isTerminalQuery(QByteArrayView sequence, char final)
{
    // After "ESC [": the private marker (if any) and the intermediate bytes decide.
    const QByteArrayView body = sequence.sliced(qMin<qsizetype>(2, sequence.size()));
    const char marker = body.isEmpty() ? 0 : body.front();
    switch (final) {
    case 'n': // DSR: status and cursor position reports (5n, 6n, ?6n, ...)
    case 'c': // DA1, DA2 (>c), DA3 (=c)
    case 'x': // DECREQTPARM
        return true;
    case 'p': // DECRQM (CSI ? Ps $ p)
        return body.endsWith('$');
    case 'q': // XTVERSION (CSI > q)
        return marker == '>';
    case 'u': // kitty keyboard protocol query (CSI ? u)
        return marker == '?';
    default:
        return false;
    }
}

void EscapeFilter::enter(State state, QByteArrayView sequence)
{
    m_state = state;
    m_sequence = sequence.toByteArray();
    m_csiIntermediate = false;
}

void EscapeFilter::c1Control(char32_t cp, bool rawByte, QByteArray &out)
{
    // A raw byte is invalid UTF-8: shown as U+FFFD where it would have been printed.
    if (rawByte && m_state == State::Ground)
        out.append(kReplacement);
    // The DEC parser's "anywhere" transitions: C1 controls end any sequence.
    switch (cp) {
    case 0x9b: // CSI
        enter(State::Csi, "\x1b[");
        break;
    case 0x90: // DCS
    case 0x98: // SOS
    case 0x9d: // OSC
    case 0x9e: // PM
    case 0x9f: // APC
        enter(State::String);
        break;
    default: // ST (0x9c) ends a string; every other C1 control is dropped
        enter(State::Ground);
        break;
    }
}

void EscapeFilter::codePoint(char32_t cp, QByteArrayView text, QByteArray &out)
{
    if (cp == kCan || cp == kSub) {
        if (m_state == State::Ground)
            out.append(text);
        else
            enter(State::Ground); // aborts the sequence; the terminal would show nothing either
        return;
    }
    if (cp == kEsc) {
        // Ends whatever was going on, a string included (ESC \ is its ST, handled in Escape).
        enter(State::Escape, "\x1b");
        return;
    }
    switch (m_state) {
    case State::Ground:
        out.append(text);
        break;
    case State::Escape:
    case State::EscapeIntermediate:
        escape(cp, text, out);
        break;
    case State::Csi:
        csi(cp, text, out);
        break;
    case State::CsiIgnore:
        if (isC0(cp))
            out.append(text);
        else if (isCsiFinal(cp))
            enter(State::Ground);
        break;
    case State::String:
        if (cp == kBel)
            enter(State::Ground);
        break;
    }
}

void EscapeFilter::escape(char32_t cp, QByteArrayView text, QByteArray &out)
{
    if (isC0(cp)) {
        out.append(text); // executed by the terminal without leaving the sequence
        return;
    }
    if (cp == kDel)
        return;
    if (cp > kDel) {
        // Not part of any escape sequence: the ESC is dropped, the character printed.
        enter(State::Ground);
        out.append(text);
        return;
    }
    const char c = static_cast<char>(cp);
    if (isIntermediate(cp)) {
        if (m_sequence.size() >= kMaxSequenceBytes - 1) {
            enter(State::Ground);
            return;
        }
        m_sequence.append(c);
        m_state = State::EscapeIntermediate;
        return;
    }
    if (m_state == State::Escape) {
        switch (c) {
        case '[':
            enter(State::Csi, "\x1b[");
            return;
        case ']':
        case 'P':
        case 'X':
        case '^':
        case '_':
            enter(State::String);
            return;
        case '\\': // ST: ends a string, means nothing outside one
            enter(State::Ground);
            return;
        default:
            break;
        }
    }
    // ESC % selects a coding system (ECMA-35 15.4, DOCS): leaving UTF-8 would make the
    // terminal read continuation bytes 0x80..0x9f of valid text as C1 controls.
    // ESC Z (DECID) asks the terminal to identify itself, like DA.
    const bool query = m_dropQueries && m_sequence == "\x1b" && c == 'Z';
    if (!m_sequence.startsWith("\x1b%") && !query) {
        out.append(m_sequence);
        out.append(c);
    }
    enter(State::Ground);
}

void EscapeFilter::csi(char32_t cp, QByteArrayView text, QByteArray &out)
{
    if (isC0(cp)) {
        out.append(text); // executed by the terminal without leaving the sequence
        return;
    }
    if (cp == kDel)
        return;
    if (cp > kDel) {
        enter(State::CsiIgnore);
        return;
    }
    const char c = static_cast<char>(cp);
    if (isCsiFinal(cp)) {
        // t: XTWINOPS (window moves, resizes, iconify, title and size reports);
        // i: media copy (printing, printer controller mode sends what follows to a printer).
        if (c != 't' && c != 'i' && !(m_dropQueries && isTerminalQuery(m_sequence, c))) {
            out.append(m_sequence);
            out.append(c);
        }
        enter(State::Ground);
        return;
    }
    const bool parameter = !isIntermediate(cp);
    const bool privateMarker = cp >= 0x3c; // < = > ?, only first (DEC parser: csi_ignore)
    if ((parameter && m_csiIntermediate) || (privateMarker && m_sequence.size() > 2)
        || m_sequence.size() >= kMaxSequenceBytes - 1) {
        enter(State::CsiIgnore);
        return;
    }
    if (!parameter)
        m_csiIntermediate = true;
    m_sequence.append(c);
}

} // namespace airlock

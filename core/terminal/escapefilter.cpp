#include "core/terminal/escapefilter.h"

namespace airlock {

namespace {

constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';
// A CSI longer than this is not a real control sequence; it is passed on as it is so that a
// guest cannot make us buffer without bound.
constexpr qsizetype kMaxCsiBytes = 64;

bool startsString(char c)
{
    return c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_';
}

} // namespace

QByteArray EscapeFilter::feed(const QByteArray &input)
{
    QByteArray out;
    out.reserve(input.size());
    for (const char c : input) {
        switch (m_state) {
        case State::Text:
            if (c == kEsc)
                m_state = State::Escape;
            else
                out.append(c);
            break;
        case State::Escape:
            if (startsString(c)) {
                m_state = State::String;
            } else if (c == '[') {
                m_state = State::Csi;
                m_csi = QByteArray("\x1b[");
            } else {
                out.append(kEsc);
                if (c == kEsc) {
                    // ESC ESC: the first is plain, the second may start a sequence.
                    break;
                }
                out.append(c);
                m_state = State::Text;
            }
            break;
        case State::Csi:
            m_csi.append(c);
            // ECMA-48 5.4: final bytes are 0x40..0x7e.
            if (c >= 0x40 && c <= 0x7e) {
                if (c != 't')
                    out.append(m_csi);
                m_csi.clear();
                m_state = State::Text;
            } else if (m_csi.size() > kMaxCsiBytes) {
                out.append(m_csi);
                m_csi.clear();
                m_state = State::Text;
            }
            break;
        case State::String:
            if (c == kBel)
                m_state = State::Text;
            else if (c == kEsc)
                m_state = State::StringEscape;
            break;
        case State::StringEscape:
            // ST is ESC \; any other ESC inside a string is swallowed with the string.
            m_state = c == '\\' ? State::Text : State::String;
            break;
        }
    }
    return out;
}

} // namespace airlock

#include "core/terminal/terminalsession.h"

#include <vterm.h>

#include <algorithm>
#include <deque>
#include <vector>

namespace airlock {

namespace {

constexpr TerminalRgb kDefaultForeground = terminalRgb(0xd0, 0xd0, 0xd0);
constexpr TerminalRgb kDefaultBackground = terminalRgb(0x1e, 0x1e, 0x1e);

// libvterm marks the right half of a wide character with this value in chars[0].
constexpr uint32_t kWideContinuation = 0xffffffffu;

// The Tango palette for the 16 ANSI colours: libvterm's own (pure #0000e0 blue and so on) is
// hard to read on a dark background.
constexpr TerminalRgb kPalette[16] = {
    terminalRgb(0x00, 0x00, 0x00), terminalRgb(0xcc, 0x00, 0x00), terminalRgb(0x4e, 0x9a, 0x06),
    terminalRgb(0xc4, 0xa0, 0x00), terminalRgb(0x34, 0x65, 0xa4), terminalRgb(0x75, 0x50, 0x7b),
    terminalRgb(0x06, 0x98, 0x9a), terminalRgb(0xd3, 0xd7, 0xcf), terminalRgb(0x55, 0x57, 0x53),
    terminalRgb(0xef, 0x29, 0x29), terminalRgb(0x8a, 0xe2, 0x34), terminalRgb(0xfc, 0xe9, 0x4f),
    terminalRgb(0x72, 0x9f, 0xcf), terminalRgb(0xad, 0x7f, 0xa8), terminalRgb(0x34, 0xe2, 0xe2),
    terminalRgb(0xee, 0xee, 0xec),
};

bool isBlank(const VTermScreenCell &cell)
{
    return cell.chars[0] == 0 && VTERM_COLOR_IS_DEFAULT_BG(&cell.bg) && !cell.attrs.reverse;
}

QString cellText(const VTermScreenCell &cell)
{
    QString text;
    if (cell.chars[0] == kWideContinuation)
        return text;
    for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i] != 0; ++i) {
        const char32_t ch = cell.chars[i];
        text.append(QString::fromUcs4(&ch, 1));
    }
    return text;
}

QString trimmedRight(QString text)
{
    qsizetype end = text.size();
    while (end > 0 && text.at(end - 1) == QLatin1Char(' '))
        --end;
    text.truncate(end);
    return text;
}

// Maps the Qt keys that have a terminal escape sequence; the rest are typed as text.
VTermKey vtermKeyFor(int key)
{
    switch (key) {
    case Qt::Key_Return:
    case Qt::Key_Enter:
        return VTERM_KEY_ENTER;
    case Qt::Key_Tab:
    case Qt::Key_Backtab:
        return VTERM_KEY_TAB;
    case Qt::Key_Backspace:
        return VTERM_KEY_BACKSPACE;
    case Qt::Key_Escape:
        return VTERM_KEY_ESCAPE;
    case Qt::Key_Up:
        return VTERM_KEY_UP;
    case Qt::Key_Down:
        return VTERM_KEY_DOWN;
    case Qt::Key_Left:
        return VTERM_KEY_LEFT;
    case Qt::Key_Right:
        return VTERM_KEY_RIGHT;
    case Qt::Key_Insert:
        return VTERM_KEY_INS;
    case Qt::Key_Delete:
        return VTERM_KEY_DEL;
    case Qt::Key_Home:
        return VTERM_KEY_HOME;
    case Qt::Key_End:
        return VTERM_KEY_END;
    case Qt::Key_PageUp:
        return VTERM_KEY_PAGEUP;
    case Qt::Key_PageDown:
        return VTERM_KEY_PAGEDOWN;
    default:
        break;
    }
    if (key >= Qt::Key_F1 && key <= Qt::Key_F35)
        return VTermKey(VTERM_KEY_FUNCTION(key - Qt::Key_F1 + 1));
    return VTERM_KEY_NONE;
}

VTermModifier vtermModifiers(Qt::KeyboardModifiers modifiers)
{
    int mod = VTERM_MOD_NONE;
    if (modifiers & Qt::ShiftModifier)
        mod |= VTERM_MOD_SHIFT;
    if (modifiers & Qt::ControlModifier)
        mod |= VTERM_MOD_CTRL;
    if (modifiers & Qt::AltModifier)
        mod |= VTERM_MOD_ALT;
    return VTermModifier(mod);
}

} // namespace

struct TerminalSession::Private
{
    TerminalSession *q = nullptr;
    VTerm *vt = nullptr;
    VTermScreen *screen = nullptr;
    VTermState *state = nullptr;
    VTermScreenCallbacks callbacks {};

    std::deque<std::vector<VTermScreenCell>> scrollback;
    int scrollbackLimit = kDefaultScrollbackLines;
    qint64 pushedTotal = 0;

    bool cursorVisible = true;
    QString title;
    QByteArray pendingOutput;
    bool damaged = false;

    TerminalRgb resolve(VTermColor color, bool foreground) const
    {
        if (foreground && VTERM_COLOR_IS_DEFAULT_FG(&color))
            return kDefaultForeground;
        if (!foreground && VTERM_COLOR_IS_DEFAULT_BG(&color))
            return kDefaultBackground;
        vterm_screen_convert_color_to_rgb(screen, &color);
        return terminalRgb(color.rgb.red, color.rgb.green, color.rgb.blue);
    }

    TerminalCell convert(const VTermScreenCell &cell) const
    {
        TerminalCell out;
        out.text = cellText(cell);
        out.foreground = resolve(cell.fg, true);
        out.background = resolve(cell.bg, false);
        out.width = cell.chars[0] == kWideContinuation ? 0 : cell.width;
        out.bold = cell.attrs.bold;
        out.italic = cell.attrs.italic;
        out.underline = cell.attrs.underline != VTERM_UNDERLINE_OFF;
        out.reverse = cell.attrs.reverse;
        return out;
    }

    TerminalCell blank() const
    {
        TerminalCell out;
        out.foreground = kDefaultForeground;
        out.background = kDefaultBackground;
        return out;
    }

    VTermScreenCell blankVTermCell() const
    {
        VTermScreenCell cell {};
        cell.width = 1;
        vterm_state_get_default_colors(state, &cell.fg, &cell.bg);
        return cell;
    }

    void flushOutput()
    {
        if (pendingOutput.isEmpty())
            return;
        const QByteArray bytes = std::exchange(pendingOutput, {});
        Q_EMIT q->outputReady(bytes);
    }

    void flushDamage()
    {
        if (!damaged)
            return;
        damaged = false;
        Q_EMIT q->screenChanged();
    }

    static int onDamage(VTermRect, void *user)
    {
        static_cast<Private *>(user)->damaged = true;
        return 1;
    }

    static int onMoveCursor(VTermPos, VTermPos, int visible, void *user)
    {
        auto *self = static_cast<Private *>(user);
        self->cursorVisible = visible;
        self->damaged = true;
        return 1;
    }

    static int onSetTermProp(VTermProp prop, VTermValue *value, void *user)
    {
        auto *self = static_cast<Private *>(user);
        switch (prop) {
        case VTERM_PROP_CURSORVISIBLE:
            self->cursorVisible = value->boolean;
            self->damaged = true;
            break;
        case VTERM_PROP_TITLE:
            self->title = QString::fromUtf8(value->string);
            Q_EMIT self->q->titleChanged(self->title);
            break;
        default:
            break;
        }
        return 1;
    }

    static int onBell(void *user)
    {
        Q_EMIT static_cast<Private *>(user)->q->bell();
        return 1;
    }

    static int onPushLine(int cols, const VTermScreenCell *cells, void *user)
    {
        auto *self = static_cast<Private *>(user);
        // Trailing blanks are not stored: most console lines are short, and 5000 full-width
        // lines of cells would otherwise cost tens of MiB per console.
        int used = cols;
        while (used > 0 && isBlank(cells[used - 1]))
            --used;
        self->scrollback.emplace_back(cells, cells + used);
        ++self->pushedTotal;
        while (int(self->scrollback.size()) > self->scrollbackLimit)
            self->scrollback.pop_front();
        self->damaged = true;
        return 1;
    }

    static int onPopLine(int cols, VTermScreenCell *cells, void *user)
    {
        auto *self = static_cast<Private *>(user);
        if (self->scrollback.empty())
            return 0;
        const std::vector<VTermScreenCell> line = std::move(self->scrollback.back());
        self->scrollback.pop_back();
        --self->pushedTotal;
        const VTermScreenCell blankCell = self->blankVTermCell();
        for (int col = 0; col < cols; ++col)
            cells[col] = col < int(line.size()) ? line[size_t(col)] : blankCell;
        self->damaged = true;
        return 1;
    }

    static void onOutput(const char *bytes, size_t len, void *user)
    {
        static_cast<Private *>(user)->pendingOutput.append(bytes, qsizetype(len));
    }
};

TerminalSession::TerminalSession(int rows, int cols, QObject *parent)
    : QObject(parent), d(std::make_unique<Private>())
{
    d->q = this;
    d->vt = vterm_new(std::max(rows, 1), std::max(cols, 1));
    vterm_set_utf8(d->vt, 1);
    vterm_output_set_callback(d->vt, &Private::onOutput, d.get());
    d->state = vterm_obtain_state(d->vt);
    d->screen = vterm_obtain_screen(d->vt);

    d->callbacks.damage = &Private::onDamage;
    d->callbacks.movecursor = &Private::onMoveCursor;
    d->callbacks.settermprop = &Private::onSetTermProp;
    d->callbacks.bell = &Private::onBell;
    d->callbacks.sb_pushline = &Private::onPushLine;
    d->callbacks.sb_popline = &Private::onPopLine;
    vterm_screen_set_callbacks(d->screen, &d->callbacks, d.get());
    // Whole-screen damage merging: the view repaints on a timer anyway, and per-cell damage
    // callbacks would only cost time during a flood.
    vterm_screen_set_damage_merge(d->screen, VTERM_DAMAGE_SCROLL);
    vterm_screen_enable_altscreen(d->screen, 1);
    vterm_state_set_bold_highbright(d->state, 1);
    for (int i = 0; i < 16; ++i) {
        VTermColor color;
        vterm_color_rgb(&color, uint8_t(kPalette[i] >> 16), uint8_t(kPalette[i] >> 8),
                        uint8_t(kPalette[i]));
        vterm_state_set_palette_color(d->state, i, &color);
    }
    vterm_screen_reset(d->screen, 1);
}

TerminalSession::~TerminalSession()
{
    vterm_free(d->vt);
}

void TerminalSession::feed(const QByteArray &bytes)
{
    if (!bytes.isEmpty())
        vterm_input_write(d->vt, bytes.constData(), size_t(bytes.size()));
    vterm_screen_flush_damage(d->screen);
    d->flushDamage();
    d->flushOutput();
}

void TerminalSession::reset()
{
    vterm_screen_reset(d->screen, 1);
    d->cursorVisible = true;
    d->scrollback.clear();
    d->pushedTotal = 0;
    d->damaged = true;
    vterm_screen_flush_damage(d->screen);
    d->flushDamage();
    d->pendingOutput.clear();
}

int TerminalSession::rows() const
{
    int rows = 0;
    int cols = 0;
    vterm_get_size(d->vt, &rows, &cols);
    return rows;
}

int TerminalSession::cols() const
{
    int rows = 0;
    int cols = 0;
    vterm_get_size(d->vt, &rows, &cols);
    return cols;
}

void TerminalSession::resize(int rows, int cols)
{
    rows = std::max(rows, 1);
    cols = std::max(cols, 1);
    if (rows == this->rows() && cols == this->cols())
        return;
    vterm_set_size(d->vt, rows, cols);
    vterm_screen_flush_damage(d->screen);
    d->damaged = true;
    d->flushDamage();
}

TerminalCell TerminalSession::cell(int row, int col) const
{
    if (row < 0 || col < 0 || row >= rows() || col >= cols())
        return d->blank();
    VTermScreenCell cell {};
    vterm_screen_get_cell(d->screen, VTermPos {row, col}, &cell);
    return d->convert(cell);
}

QString TerminalSession::lineText(int row) const
{
    QString text;
    const int columns = cols();
    for (int col = 0; col < columns; ++col) {
        const TerminalCell c = cell(row, col);
        if (c.width == 0)
            continue;
        text += c.text.isEmpty() ? QStringLiteral(" ") : c.text;
    }
    return trimmedRight(text);
}

QString TerminalSession::screenText() const
{
    QStringList lines;
    const int count = rows();
    for (int row = 0; row < count; ++row)
        lines.append(lineText(row));
    while (!lines.isEmpty() && lines.constLast().isEmpty())
        lines.removeLast();
    return lines.join(QLatin1Char('\n'));
}

QPoint TerminalSession::cursorPosition() const
{
    VTermPos pos {0, 0};
    vterm_state_get_cursorpos(d->state, &pos);
    return QPoint(pos.col, pos.row);
}

bool TerminalSession::cursorVisible() const
{
    return d->cursorVisible;
}

QString TerminalSession::title() const
{
    return d->title;
}

int TerminalSession::scrollbackCount() const
{
    return int(d->scrollback.size());
}

int TerminalSession::scrollbackLimit() const
{
    return d->scrollbackLimit;
}

void TerminalSession::setScrollbackLimit(int lines)
{
    d->scrollbackLimit = std::max(lines, 0);
    while (int(d->scrollback.size()) > d->scrollbackLimit)
        d->scrollback.pop_front();
}

TerminalCell TerminalSession::scrollbackCell(int line, int col) const
{
    if (line < 0 || line >= scrollbackCount() || col < 0)
        return d->blank();
    const std::vector<VTermScreenCell> &cells = d->scrollback[size_t(line)];
    if (col >= int(cells.size()))
        return d->blank();
    return d->convert(cells[size_t(col)]);
}

QString TerminalSession::scrollbackLineText(int line) const
{
    if (line < 0 || line >= scrollbackCount())
        return {};
    QString text;
    const std::vector<VTermScreenCell> &cells = d->scrollback[size_t(line)];
    for (size_t col = 0; col < cells.size(); ++col) {
        if (cells[col].chars[0] == kWideContinuation)
            continue;
        const QString t = cellText(cells[col]);
        text += t.isEmpty() ? QStringLiteral(" ") : t;
    }
    return trimmedRight(text);
}

QString TerminalSession::allText() const
{
    QStringList lines;
    for (int line = 0; line < scrollbackCount(); ++line)
        lines.append(scrollbackLineText(line));
    const QString screen = screenText();
    if (!screen.isEmpty())
        lines.append(screen);
    return lines.join(QLatin1Char('\n'));
}

qint64 TerminalSession::scrollbackPushedTotal() const
{
    return d->pushedTotal;
}

TerminalRgb TerminalSession::defaultForeground() const
{
    return kDefaultForeground;
}

TerminalRgb TerminalSession::defaultBackground() const
{
    return kDefaultBackground;
}

bool TerminalSession::sendKey(int key, Qt::KeyboardModifiers modifiers, const QString &text)
{
    VTermModifier mod = vtermModifiers(modifiers);
    const VTermKey vkey = vtermKeyFor(key);
    if (vkey != VTERM_KEY_NONE) {
        if (key == Qt::Key_Backtab)
            mod = VTermModifier(mod | VTERM_MOD_SHIFT);
        vterm_keyboard_key(d->vt, vkey, mod);
    } else {
        QString typed = text;
        // With Ctrl held the platform hands us a control character (or nothing); libvterm wants
        // the key's own character plus the modifier so it can pick the right encoding.
        const bool controlText =
            typed.isEmpty() || typed.at(0).unicode() < 0x20 || typed.at(0).unicode() == 0x7f;
        if (controlText || (mod & VTERM_MOD_CTRL)) {
            if (key >= 0x20 && key <= 0x7e)
                typed = QChar(key).toLower();
            else if (controlText)
                return false;
        }
        for (const char32_t ch : typed.toUcs4())
            vterm_keyboard_unichar(d->vt, ch, mod);
    }
    const bool produced = !d->pendingOutput.isEmpty();
    d->flushOutput();
    return produced;
}

void TerminalSession::sendText(const QString &text, bool paste)
{
    if (text.isEmpty())
        return;
    if (paste)
        vterm_keyboard_start_paste(d->vt);
    // Pasted line breaks are sent as CR, like a terminal's Enter key.
    QString normalized = text;
    normalized.replace(QStringLiteral("\r\n"), QStringLiteral("\r"));
    normalized.replace(QLatin1Char('\n'), QLatin1Char('\r'));
    for (const char32_t ch : normalized.toUcs4())
        vterm_keyboard_unichar(d->vt, ch, VTERM_MOD_NONE);
    if (paste)
        vterm_keyboard_end_paste(d->vt);
    d->flushOutput();
}

} // namespace airlock

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

// How a row ends, for re-flowing on a width change. libvterm 0.1 (Debian 12) keeps no wrap flag
// (0.3's vterm_screen_enable_reflow is not there), so the session decides it itself: a row is
// soft-wrapped into the next when text reached its last column and no line feed ended it.
enum class RowEnd : quint8 {
    Hard, ///< a line feed ended it, or text never reached the last column
    Soft, ///< the text went on in the next row
    SoftIfNextWide, ///< the last column is empty but the one before holds text: soft when the
                    ///< next row starts with a wide character that did not fit here
};

struct StoredLine
{
    std::vector<VTermScreenCell> cells;
    RowEnd end = RowEnd::Hard;
};

// A fingerprint of a row's characters: a row ended by a line feed counts as ended only while it
// still holds what it held then (a cleared and rewritten row has other text).
quint64 rowFingerprint(const VTermScreenCell *cells, int count)
{
    quint64 hash = 14695981039346656037ull; // FNV-1a
    for (int col = 0; col < count; ++col) {
        for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cells[col].chars[i] != 0; ++i) {
            hash ^= cells[col].chars[i];
            hash *= 1099511628211ull;
        }
        hash ^= quint64(col) << 32;
        hash *= 1099511628211ull;
    }
    return hash;
}

bool isPlainSpace(const VTermScreenCell &cell)
{
    return (cell.chars[0] == 0 || (cell.chars[0] == ' ' && cell.chars[1] == 0))
        && VTERM_COLOR_IS_DEFAULT_BG(&cell.bg) && !cell.attrs.reverse && !cell.attrs.underline
        && !cell.attrs.strike;
}

bool hasText(const VTermScreenCell &cell)
{
    return cell.chars[0] != 0;
}

// How a full-width row of `cols` cells ends, given whether a line feed ended it.
RowEnd rowEnd(const VTermScreenCell *cells, int cols, bool lineFed)
{
    if (lineFed || cols < 1)
        return RowEnd::Hard;
    if (hasText(cells[cols - 1]))
        return RowEnd::Soft;
    if (cols >= 2 && hasText(cells[cols - 2]))
        return RowEnd::SoftIfNextWide;
    return RowEnd::Hard;
}

void appendColor(QByteArray &sgr, const VTermColor &color, int base)
{
    if (VTERM_COLOR_IS_INDEXED(&color))
        sgr += ';' + QByteArray::number(base) + ";5;" + QByteArray::number(color.indexed.idx);
    else if (VTERM_COLOR_IS_RGB(&color))
        sgr += ';' + QByteArray::number(base) + ";2;" + QByteArray::number(color.rgb.red) + ';'
            + QByteArray::number(color.rgb.green) + ';' + QByteArray::number(color.rgb.blue);
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

    std::deque<StoredLine> scrollback;
    int scrollbackLimit = kDefaultScrollbackLines;
    qint64 pushedTotal = 0;

    // Per screen row: a line feed ended it (lineFed) while it held the text of `fingerprint`.
    struct RowMark
    {
        bool lineFed = false;
        quint64 fingerprint = 0;
    };
    std::vector<RowMark> rowMarks;
    bool altScreen = false;
    bool reflowing = false; // libvterm's pushes and pops belong to reflow(), not to the guest
    std::vector<VTermScreenCell> rowBuffer;

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

    int columns() const
    {
        int rows = 0;
        int cols = 0;
        vterm_get_size(vt, &rows, &cols);
        return cols;
    }

    int screenRows() const
    {
        int rows = 0;
        int cols = 0;
        vterm_get_size(vt, &rows, &cols);
        return rows;
    }

    /// Row `row` of the screen, all columns (rowBuffer is reused).
    const std::vector<VTermScreenCell> &screenRow(int row)
    {
        const int cols = columns();
        rowBuffer.resize(size_t(cols));
        for (int col = 0; col < cols; ++col)
            vterm_screen_get_cell(screen, VTermPos {row, col}, &rowBuffer[size_t(col)]);
        return rowBuffer;
    }

    bool markHolds(int row, const VTermScreenCell *cells, int cols) const
    {
        if (row < 0 || row >= int(rowMarks.size()) || !rowMarks[size_t(row)].lineFed)
            return false;
        return rowMarks[size_t(row)].fingerprint == rowFingerprint(cells, cols);
    }

    /// Writes guest bytes, noting the row each line feed leaves (see RowEnd).
    void write(const char *bytes, size_t len)
    {
        const char *end = bytes + len;
        while (bytes < end) {
            const char *feed = std::find_if(
                bytes, end, [](char c) { return c == '\n' || c == '\v' || c == '\f'; });
            if (feed > bytes)
                vterm_input_write(vt, bytes, size_t(feed - bytes));
            if (feed == end)
                break;
            markLineFeed();
            vterm_input_write(vt, feed, 1);
            bytes = feed + 1;
        }
    }

    void markLineFeed()
    {
        if (altScreen)
            return;
        VTermPos pos {0, 0};
        vterm_state_get_cursorpos(state, &pos);
        if (pos.row < 0 || pos.row >= int(rowMarks.size()))
            return;
        const std::vector<VTermScreenCell> &cells = screenRow(pos.row);
        rowMarks[size_t(pos.row)] = RowMark {true, rowFingerprint(cells.data(), int(cells.size()))};
    }

    QByteArray penSgr() const
    {
        QByteArray sgr = "\x1b[0";
        VTermValue value {};
        const auto flag = [&](VTermAttr attr, const char *code) {
            if (vterm_state_get_penattr(state, attr, &value) && value.boolean)
                sgr += code;
        };
        flag(VTERM_ATTR_BOLD, ";1");
        flag(VTERM_ATTR_ITALIC, ";3");
        flag(VTERM_ATTR_BLINK, ";5");
        flag(VTERM_ATTR_REVERSE, ";7");
        flag(VTERM_ATTR_STRIKE, ";9");
        if (vterm_state_get_penattr(state, VTERM_ATTR_UNDERLINE, &value)) {
            if (value.number == VTERM_UNDERLINE_SINGLE)
                sgr += ";4";
            else if (value.number == VTERM_UNDERLINE_DOUBLE)
                sgr += ";21";
            else if (value.number == VTERM_UNDERLINE_CURLY)
                sgr += ";4:3";
        }
        if (vterm_state_get_penattr(state, VTERM_ATTR_FONT, &value) && value.number > 0)
            sgr += ';' + QByteArray::number(10 + value.number);
        if (vterm_state_get_penattr(state, VTERM_ATTR_FOREGROUND, &value)
            && !VTERM_COLOR_IS_DEFAULT_FG(&value.color))
            appendColor(sgr, value.color, 38);
        if (vterm_state_get_penattr(state, VTERM_ATTR_BACKGROUND, &value)
            && !VTERM_COLOR_IS_DEFAULT_BG(&value.color))
            appendColor(sgr, value.color, 48);
        return sgr + 'm';
    }

    void reflow(int rows, int cols);

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
        case VTERM_PROP_ALTSCREEN:
            self->altScreen = value->boolean;
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
        if (self->reflowing)
            return 1;
        // libvterm pushes the top row when the whole screen scrolls up: the row marks move up
        // with the rows.
        const RowEnd end = rowEnd(cells, cols, self->markHolds(0, cells, cols));
        if (!self->rowMarks.empty()) {
            self->rowMarks.erase(self->rowMarks.begin());
            self->rowMarks.emplace_back();
        }
        // Trailing blanks are not stored: most console lines are short, and 5000 full-width
        // lines of cells would otherwise cost tens of MiB per console.
        int used = cols;
        while (used > 0 && isBlank(cells[used - 1]))
            --used;
        self->scrollback.push_back(StoredLine {{cells, cells + used}, end});
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
        const StoredLine stored = std::move(self->scrollback.back());
        const std::vector<VTermScreenCell> &line = stored.cells;
        self->scrollback.pop_back();
        const VTermScreenCell blankCell = self->blankVTermCell();
        for (int col = 0; col < cols; ++col)
            cells[col] = col < int(line.size()) ? line[size_t(col)] : blankCell;
        if (!self->reflowing) {
            --self->pushedTotal;
            // The row comes back on top; its mark comes with it.
            RowMark mark;
            if (stored.end == RowEnd::Hard)
                mark = RowMark {true, rowFingerprint(cells, cols)};
            self->rowMarks.insert(self->rowMarks.begin(), mark);
        }
        self->damaged = true;
        return 1;
    }

    static void onOutput(const char *bytes, size_t len, void *user)
    {
        static_cast<Private *>(user)->pendingOutput.append(bytes, qsizetype(len));
    }
};

// Re-flows scrollback and screen for a new width: rows that wrapped are joined into their lines,
// the lines wrapped again at `cols`, the cursor kept on its character. libvterm 0.1 has no call
// that sets a screen cell, so the new rows are handed to it the way it takes rows back from the
// scrollback when the screen grows (sb_popline): shrink to one erased row, grow by popping the
// re-wrapped rows in above it, then drop that row again.
void TerminalSession::Private::reflow(int rows, int cols)
{
    const int oldCols = columns();
    const int oldRows = screenRows();
    VTermPos cursor {0, 0};
    vterm_state_get_cursorpos(state, &cursor);

    // 1. Every stored row, oldest first: the scrollback, then the screen down to the cursor or
    // the last row with text.
    std::vector<StoredLine> old(std::make_move_iterator(scrollback.begin()),
                                std::make_move_iterator(scrollback.end()));
    const qint64 firstStored = pushedTotal - qint64(scrollback.size());
    scrollback.clear();
    int lastRow = cursor.row;
    for (int row = oldRows - 1; row > lastRow; --row) {
        if (!vterm_screen_is_eol(screen, VTermPos {row, 0})) {
            lastRow = row;
            break;
        }
    }
    const int cursorIndex = int(old.size()) + cursor.row;
    for (int row = 0; row <= lastRow; ++row) {
        const std::vector<VTermScreenCell> &cells = screenRow(row);
        const RowEnd end = rowEnd(cells.data(), oldCols, markHolds(row, cells.data(), oldCols));
        int used = oldCols;
        while (used > 0 && isBlank(cells[size_t(used - 1)]))
            --used;
        old.push_back(StoredLine {{cells.begin(), cells.begin() + used}, end});
    }

    // 2. Join wrapped rows into lines; the cursor becomes an offset into its line.
    std::vector<std::vector<VTermScreenCell>> lines;
    int cursorLine = 0;
    int cursorOffset = 0;
    bool startNew = true;
    for (size_t i = 0; i < old.size(); ++i) {
        if (startNew)
            lines.emplace_back();
        std::vector<VTermScreenCell> &line = lines.back();
        if (int(i) == cursorIndex) {
            cursorLine = int(lines.size()) - 1;
            cursorOffset = int(line.size()) + cursor.col;
        }
        RowEnd end = old[i].end;
        if (end == RowEnd::SoftIfNextWide)
            end = i + 1 < old.size() && !old[i + 1].cells.empty()
                    && old[i + 1].cells.front().width == 2
                ? RowEnd::Soft
                : RowEnd::Hard;
        std::vector<VTermScreenCell> &cells = old[i].cells;
        if (end == RowEnd::Soft) {
            // A soft row is full: its blank cells (a wide character's pad) are not text.
            while (!cells.empty() && !hasText(cells.back()))
                cells.pop_back();
        } else {
            // Blanks a program wrote at a line's end are not kept: they would wrap into rows
            // of nothing. (The cursor keeps its offset either way.)
            while (!cells.empty() && isPlainSpace(cells.back()))
                cells.pop_back();
        }
        line.insert(line.end(), cells.begin(), cells.end());
        startNew = end != RowEnd::Soft;
    }

    // 3. Wrap each line at the new width, wide characters kept whole.
    std::vector<StoredLine> out;
    int cursorRow = 0;
    int cursorCol = 0;
    for (int index = 0; index < int(lines.size()); ++index) {
        const std::vector<VTermScreenCell> &line = lines[size_t(index)];
        out.emplace_back();
        int offset = 0;
        for (size_t k = 0; k < line.size();) {
            const bool wide = line[k].width == 2 && k + 1 < line.size()
                && line[k + 1].chars[0] == kWideContinuation;
            const size_t span = wide ? 2 : 1;
            std::vector<VTermScreenCell> *row = &out.back().cells;
            if (int(row->size() + span) > cols && !row->empty()) {
                out.back().end = RowEnd::Soft;
                out.emplace_back();
                row = &out.back().cells;
            }
            if (index == cursorLine && offset <= cursorOffset
                && cursorOffset < offset + int(span)) {
                cursorRow = int(out.size()) - 1;
                cursorCol = int(row->size());
            }
            row->insert(row->end(), line.begin() + qsizetype(k),
                        line.begin() + qsizetype(k + span));
            offset += int(span);
            k += span;
        }
        if (index == cursorLine && cursorOffset >= offset) {
            // The cursor stands after the line's text (e.g. after a prompt's trailing blank).
            int col = int(out.back().cells.size()) + (cursorOffset - offset);
            while (col >= cols) {
                out.back().end = RowEnd::Soft;
                out.emplace_back();
                col -= cols;
            }
            cursorRow = int(out.size()) - 1;
            cursorCol = col;
        }
        out.back().end = RowEnd::Hard;
    }
    if (out.empty())
        out.emplace_back();

    // 4. The screen shows the last rows, the cursor's among them.
    int end = int(out.size());
    if (cursorRow < end - rows)
        end = cursorRow + rows; // rows further below than a screen under the cursor are dropped
    const int onScreen = std::min(rows, end);
    const int screenTop = end - onScreen;

    // 5. Hand the rows to libvterm.
    const QByteArray pen = penSgr();
    reflowing = true;
    vterm_set_size(vt, 1, cols);
    static constexpr char kEraseRow[] = "\x1b[0m\r\x1b[2K";
    vterm_input_write(vt, kEraseRow, sizeof kEraseRow - 1);
    for (int i = 0; i < end; ++i)
        scrollback.push_back(std::move(out[size_t(i)]));
    // How the rows that go onto the screen end, read before libvterm pops them.
    std::vector<RowEnd> screenEnds;
    for (int i = screenTop; i < end; ++i)
        screenEnds.push_back(scrollback[size_t(i)].end);
    vterm_set_size(vt, rows + 1, cols);
    const QByteArray move = "\x1b[" + QByteArray::number(cursorRow - screenTop + 1) + ';'
        + QByteArray::number(cursorCol + 1) + 'H';
    vterm_input_write(vt, move.constData(), size_t(move.size()));
    vterm_set_size(vt, rows, cols);
    vterm_input_write(vt, pen.constData(), size_t(pen.size()));
    reflowing = false;

    rowMarks.assign(size_t(rows), RowMark {});
    for (int row = 0; row < int(screenEnds.size()); ++row) {
        if (screenEnds[size_t(row)] != RowEnd::Hard)
            continue;
        const std::vector<VTermScreenCell> &cells = screenRow(row);
        rowMarks[size_t(row)] = RowMark {true, rowFingerprint(cells.data(), int(cells.size()))};
    }
    qint64 first = firstStored;
    while (int(scrollback.size()) > scrollbackLimit) {
        scrollback.pop_front();
        ++first;
    }
    pushedTotal = first + qint64(scrollback.size());
    damaged = true;
}

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
    d->rowMarks.resize(size_t(std::max(rows, 1)));
}

TerminalSession::~TerminalSession()
{
    vterm_free(d->vt);
}

void TerminalSession::feed(const QByteArray &bytes)
{
    if (!bytes.isEmpty())
        d->write(bytes.constData(), size_t(bytes.size()));
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
    d->altScreen = false;
    std::fill(d->rowMarks.begin(), d->rowMarks.end(), Private::RowMark {});
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
    if (cols != this->cols() && !d->altScreen) {
        d->reflow(rows, cols);
    } else {
        // Only the height changes (or a full-screen program owns the screen and redraws it
        // for the new size itself): libvterm moves rows to and from the scrollback.
        vterm_set_size(d->vt, rows, cols);
        d->rowMarks.resize(size_t(rows));
    }
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
    const std::vector<VTermScreenCell> &cells = d->scrollback[size_t(line)].cells;
    if (col >= int(cells.size()))
        return d->blank();
    return d->convert(cells[size_t(col)]);
}

QString TerminalSession::scrollbackLineText(int line) const
{
    if (line < 0 || line >= scrollbackCount())
        return {};
    QString text;
    const std::vector<VTermScreenCell> &cells = d->scrollback[size_t(line)].cells;
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

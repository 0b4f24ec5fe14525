#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPoint>
#include <QString>

#include <memory>

namespace airlock {

/// A colour as 0xAARRGGBB, the layout of TerminalRgb (QtGui), so a view can hand it to QColor as
/// is.
using TerminalRgb = quint32;

/// Packs an opaque colour like qRgb() does, without needing QtGui here.
constexpr TerminalRgb terminalRgb(int red, int green, int blue)
{
    return 0xff000000u | (quint32(red & 0xff) << 16) | (quint32(green & 0xff) << 8)
        | quint32(blue & 0xff);
}

/// One character cell of the terminal, with colours already resolved to RGB.
struct TerminalCell
{
    QString text; ///< the grapheme (base char plus combining marks); empty for a blank cell
    TerminalRgb foreground = 0;
    TerminalRgb background = 0;
    int width = 1; ///< 2 for the left half of a wide character, 0 for its right half
    bool bold = false;
    bool italic = false;
    bool underline = false;
    bool reverse = false; ///< painters swap foreground and background

    friend bool operator==(const TerminalCell &, const TerminalCell &) = default;
};

/// A terminal screen model (libvterm) with no widgets: console bytes go in with feed(), the
/// screen, cursor and a bounded scrollback come out, and keys typed by the user come out as the
/// bytes a terminal would send (outputReady). TerminalView paints it; tests read it directly.
class TerminalSession final : public QObject
{
    Q_OBJECT
public:
    static constexpr int kDefaultScrollbackLines = 5000;

    explicit TerminalSession(int rows = 24, int cols = 80, QObject *parent = nullptr);
    ~TerminalSession() override;

    /// Feeds bytes from the guest. UTF-8 sequences split across calls are joined. Emits
    /// screenChanged() at most once per call, and outputReady() when the bytes asked the
    /// terminal to answer (e.g. a cursor position report).
    void feed(const QByteArray &bytes);
    /// Clears screen and scrollback and resets modes, e.g. before a console replay.
    void reset();

    int rows() const;
    int cols() const;
    /// Resizes the screen; lines that scroll off the top go to the scrollback and come back
    /// when the screen grows again. A new width re-flows scrollback and screen: rows the text
    /// wrapped into are joined again and the lines wrapped at the new width, the cursor staying
    /// on its character (libvterm 0.1 has no reflow of its own). A row counts as wrapped when
    /// text reached its last column and no line feed ended it while it held what it holds now;
    /// a row a full-screen program draws on the alternate screen is left to that program,
    /// which redraws for the new size. The oldest stored line keeps its number
    /// (scrollbackPushedTotal() - scrollbackCount()), later numbers change.
    void resize(int rows, int cols);

    /// The cell at (row, col) of the visible screen; a default blank cell outside it.
    TerminalCell cell(int row, int col) const;
    /// Row `row` of the screen as text, trailing blanks removed.
    QString lineText(int row) const;
    /// The whole screen, one line per row joined by '\n', trailing blanks and empty last lines
    /// removed.
    QString screenText() const;

    /// Cursor as (column, row).
    QPoint cursorPosition() const;
    bool cursorVisible() const;
    QString title() const;

    /// Number of lines scrolled off the top, oldest first; at most scrollbackLimit().
    int scrollbackCount() const;
    int scrollbackLimit() const;
    void setScrollbackLimit(int lines);
    /// A cell of scrollback line `line` (0 = oldest); blank beyond the stored width.
    TerminalCell scrollbackCell(int line, int col) const;
    QString scrollbackLineText(int line) const;
    /// Scrollback plus screen as text, for tests and "copy all".
    QString allText() const;
    /// Total lines ever pushed to the scrollback; lets a view keep a selection anchored while
    /// old lines are dropped.
    qint64 scrollbackPushedTotal() const;

    TerminalRgb defaultForeground() const;
    TerminalRgb defaultBackground() const;

    /// Encodes a key press as the terminal would (arrows honour the guest's cursor-key mode).
    /// `key` is a Qt::Key, `text` the text the key produced (may be empty or a control char).
    /// Returns false when the key produces nothing (e.g. a lone modifier).
    bool sendKey(int key, Qt::KeyboardModifiers modifiers, const QString &text);
    /// Sends text as typed or pasted; wrapped in bracketed-paste markers when `paste` is true
    /// and the guest enabled bracketed paste.
    void sendText(const QString &text, bool paste = true);

Q_SIGNALS:
    /// Bytes to send to the guest (console.write).
    void outputReady(const QByteArray &bytes);
    /// Screen, cursor or scrollback changed; coalesced to one signal per feed().
    void screenChanged();
    void titleChanged(const QString &title);
    void bell();

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace airlock

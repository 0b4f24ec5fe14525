#pragma once

#include "core/terminal/terminalsession.h"

#include <QAbstractScrollArea>
#include <QKeySequence>
#include <QPointer>
#include <QTimer>

class QMenu;

namespace airlock {

/// Paints a TerminalSession and forwards every key to it; it holds no terminal state of its
/// own beyond the selection. Monospace font, colours, cursor, scrollback through the wheel and
/// the scroll bar, selection with the mouse, Ctrl+Shift+C copies and Ctrl+Shift+V pastes.
/// Repaints are throttled (about every 10 ms) so a flood of output cannot freeze the window.
///
/// The cell is the font's exact advance rounded up to whole pixels (letter spacing makes up the
/// rest), so the columns the session gets are exactly those the viewport, beside the scroll
/// bar, can show. Keys that always leave the terminal, so it is no keyboard trap: Ctrl+Page
/// Up/Down and Ctrl+Tab/Ctrl+Shift+Tab switch the tabs of the enclosing QTabWidget, and the
/// leave shortcut (leaveShortcut(), Ctrl+] unless set otherwise) moves the focus to its tab bar.
class TerminalView final : public QAbstractScrollArea
{
    Q_OBJECT
public:
    /// The QSettings key of the leave shortcut (a QKeySequence in portable text).
    static constexpr char kLeaveShortcutKey[] = "console/leaveShortcut";
    /// Pixels between the viewport's edges and the cells.
    static constexpr int kMargin = 4;

    explicit TerminalView(TerminalSession *session, QWidget *parent = nullptr);

    /// The shortcut that moves the focus out of the terminal: QSettings kLeaveShortcutKey, or
    /// Ctrl+] (as `airlockctl console` detaches).
    static QKeySequence leaveShortcut();
    /// Stores the leave shortcut for every console (an empty sequence restores Ctrl+]).
    static void setLeaveShortcut(const QKeySequence &shortcut);
    /// Moves the focus out: to the tab bar of the enclosing QTabWidget, else the next widget.
    void leaveTerminal();
    /// Shows the tab `delta` places on in the enclosing QTabWidget (wrapping) and focuses it.
    void switchTab(int delta);
    /// The context menu (copy, paste, and the ways out with their keys); the caller owns it.
    QMenu *createContextMenu(QWidget *parent);

    TerminalSession *session() const { return m_session; }
    /// The selected text, lines joined by '\n'; empty when nothing is selected.
    QString selectedText() const;
    /// Selects everything in scrollback and screen.
    void selectAll();
    void clearSelection();
    /// Copies the selection to the clipboard.
    void copy();
    /// Sends the clipboard to the guest (bracketed if the guest asked for it).
    void paste();
    /// Size of one character cell in pixels.
    QSize cellSize() const;

    QSize sizeHint() const override;

Q_SIGNALS:
    /// The view's size in cells changed (after the session was resized).
    void terminalSizeChanged(int rows, int cols);

protected:
    bool event(QEvent *event) override;
    bool focusNextPrevChild(bool next) override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void inputMethodEvent(QInputMethodEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void focusInEvent(QFocusEvent *event) override;
    void focusOutEvent(QFocusEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;
    void contextMenuEvent(QContextMenuEvent *event) override;

private:
    // A position in the whole history: line counts from the first line ever pushed to the
    // scrollback, so a selection stays on its text while new output scrolls.
    struct HistoryPos
    {
        qint64 line = 0;
        int col = 0;
        friend auto operator<=>(const HistoryPos &, const HistoryPos &) = default;
    };

    /// +1/-1 when the key switches tabs (never sent to the guest), else 0.
    static int tabSwitchDelta(const QKeyEvent *event);
    static bool isLeaveShortcut(const QKeyEvent *event);
    void scheduleRepaint();
    void repaintNow();
    void updateScrollBar();
    void updateTerminalSize();
    HistoryPos historyPosAt(const QPoint &point) const;
    qint64 firstStoredLine() const;
    QString historyLineText(qint64 line, int fromCol, int toCol) const;
    bool isSelected(qint64 line, int col) const;
    void scrollToBottom();

    QPointer<TerminalSession> m_session;
    QTimer m_repaintTimer;
    QSize m_cell;
    int m_ascent = 0;
    bool m_followOutput = true;
    bool m_selecting = false;
    bool m_hasSelection = false;
    HistoryPos m_selectionAnchor;
    HistoryPos m_selectionEnd;
};

} // namespace airlock

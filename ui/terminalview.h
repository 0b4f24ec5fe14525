#pragma once

#include "core/terminal/terminalsession.h"

#include <QAbstractScrollArea>
#include <QPointer>
#include <QTimer>

namespace airlock {

/// Paints a TerminalSession and forwards every key to it; it holds no terminal state of its
/// own beyond the selection. Monospace font, colours, cursor, scrollback through the wheel and
/// the scroll bar, selection with the mouse, Ctrl+Shift+C copies and Ctrl+Shift+V pastes.
/// Repaints are throttled (about every 10 ms) so a flood of output cannot freeze the window.
class TerminalView final : public QAbstractScrollArea
{
    Q_OBJECT
public:
    explicit TerminalView(TerminalSession *session, QWidget *parent = nullptr);

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

private:
    // A position in the whole history: line counts from the first line ever pushed to the
    // scrollback, so a selection stays on its text while new output scrolls.
    struct HistoryPos
    {
        qint64 line = 0;
        int col = 0;
        friend auto operator<=>(const HistoryPos &, const HistoryPos &) = default;
    };

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

#include "ui/terminalview.h"

#include "core/terminal/terminalsession.h"

#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QInputMethodEvent>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>

#include <algorithm>

namespace airlock {

namespace {

// ~100 frames per second at most: enough to look live, cheap enough to survive `yes`.
constexpr int kRepaintIntervalMs = 10;
// Space between the viewport edge and the first cell, so text does not touch the frame.
constexpr int kMargin = 4;

QFont terminalFont()
{
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    font.setStyleHint(QFont::Monospace, QFont::PreferDefault);
    font.setFixedPitch(true);
    font.setKerning(false);
    return font;
}

bool sameStyle(const TerminalCell &a, const TerminalCell &b)
{
    return a.foreground == b.foreground && a.background == b.background && a.bold == b.bold
        && a.italic == b.italic && a.underline == b.underline && a.reverse == b.reverse;
}

} // namespace

TerminalView::TerminalView(TerminalSession *session, QWidget *parent)
    : QAbstractScrollArea(parent), m_session(session)
{
    setFont(terminalFont());
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_InputMethodEnabled, true);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    viewport()->setCursor(Qt::IBeamCursor);
    viewport()->setAutoFillBackground(false);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent, true);
    setAccessibleName(tr("Terminal"));
    setAccessibleDescription(tr("Console of the sandbox. Ctrl+Shift+C copies, Ctrl+Shift+V "
                                "pastes, Shift+Page Up/Down scrolls the history."));

    const QFontMetrics metrics(font());
    m_cell = QSize(std::max(1, metrics.horizontalAdvance(QLatin1Char('M'))),
                   std::max(1, metrics.height()));
    m_ascent = metrics.ascent();

    m_repaintTimer.setParent(this);
    m_repaintTimer.setObjectName(QStringLiteral("repaint")); // tests count its ticks
    m_repaintTimer.setSingleShot(true);
    m_repaintTimer.setInterval(kRepaintIntervalMs);
    connect(&m_repaintTimer, &QTimer::timeout, this, &TerminalView::repaintNow);
    if (m_session)
        connect(m_session, &TerminalSession::screenChanged, this, &TerminalView::scheduleRepaint);
    updateScrollBar();
}

QSize TerminalView::cellSize() const
{
    return m_cell;
}

QSize TerminalView::sizeHint() const
{
    const int frame = 2 * frameWidth();
    return QSize(80 * m_cell.width() + 2 * kMargin + verticalScrollBar()->sizeHint().width()
                     + frame,
                 24 * m_cell.height() + 2 * kMargin + frame);
}

bool TerminalView::event(QEvent *event)
{
    if (event->type() == QEvent::ShortcutOverride) {
        // Keys belong to the guest while the console has focus (Ctrl+C, Ctrl+N, Alt+x, ...).
        // Ctrl+Shift combinations and Ctrl+Page Up/Down stay with the window for its own
        // shortcuts (tab switching, closing a tab).
        auto *key = static_cast<QKeyEvent *>(event);
        const Qt::KeyboardModifiers mods = key->modifiers();
        const bool ctrlShift = (mods & Qt::ControlModifier) && (mods & Qt::ShiftModifier);
        const bool tabSwitch = (mods & Qt::ControlModifier)
            && (key->key() == Qt::Key_PageUp || key->key() == Qt::Key_PageDown);
        if (!tabSwitch && (!ctrlShift || key->key() == Qt::Key_C || key->key() == Qt::Key_V)) {
            event->accept();
            return true;
        }
    }
    return QAbstractScrollArea::event(event);
}

bool TerminalView::focusNextPrevChild(bool)
{
    // Tab and Shift+Tab go to the guest (shell completion), not to the next widget.
    return false;
}

void TerminalView::scheduleRepaint()
{
    if (!m_repaintTimer.isActive())
        m_repaintTimer.start();
}

void TerminalView::repaintNow()
{
    updateScrollBar();
    viewport()->update();
}

qint64 TerminalView::firstStoredLine() const
{
    return m_session ? m_session->scrollbackPushedTotal() - m_session->scrollbackCount() : 0;
}

void TerminalView::updateScrollBar()
{
    if (!m_session)
        return;
    QScrollBar *bar = verticalScrollBar();
    const int maximum = m_session->scrollbackCount();
    // Remember the top line in history coordinates so the view does not drift while the
    // user reads the scrollback and new output arrives.
    const qint64 topLine = firstStoredLine() + bar->value();
    const bool follow = m_followOutput;
    bar->setRange(0, maximum);
    bar->setPageStep(m_session->rows());
    bar->setSingleStep(3);
    if (follow)
        bar->setValue(maximum);
    else
        bar->setValue(int(std::clamp<qint64>(topLine - firstStoredLine(), 0, maximum)));
    m_followOutput = follow;
}

void TerminalView::scrollContentsBy(int, int)
{
    m_followOutput = verticalScrollBar()->value() >= verticalScrollBar()->maximum();
    viewport()->update();
}

void TerminalView::scrollToBottom()
{
    m_followOutput = true;
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

void TerminalView::updateTerminalSize()
{
    if (!m_session)
        return;
    const int rows = std::max(1, (viewport()->height() - 2 * kMargin) / m_cell.height());
    const int cols = std::max(1, (viewport()->width() - 2 * kMargin) / m_cell.width());
    if (rows == m_session->rows() && cols == m_session->cols())
        return;
    m_session->resize(rows, cols);
    updateScrollBar();
    Q_EMIT terminalSizeChanged(rows, cols);
}

void TerminalView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateTerminalSize();
}

void TerminalView::paintEvent(QPaintEvent *)
{
    QPainter painter(viewport());
    const QColor defaultBackground =
        QColor::fromRgb(m_session ? m_session->defaultBackground() : 0xff000000u);
    painter.fillRect(viewport()->rect(), defaultBackground);
    if (!m_session)
        return;

    const int rows = m_session->rows();
    const int cols = m_session->cols();
    const int scrollback = m_session->scrollbackCount();
    const int top = verticalScrollBar()->value();
    const qint64 firstLine = firstStoredLine();

    painter.translate(kMargin, kMargin);
    QFont regular = font();
    auto cellAt = [&](int index, int col) {
        return index < scrollback ? m_session->scrollbackCell(index, col)
                                  : m_session->cell(index - scrollback, col);
    };

    for (int row = 0; row < rows; ++row) {
        const int index = top + row;
        if (index >= scrollback + rows)
            break;
        const qint64 historyLine = firstLine + index;
        const int y = row * m_cell.height();
        int col = 0;
        while (col < cols) {
            const TerminalCell first = cellAt(index, col);
            const bool selected = isSelected(historyLine, col);
            // Collect a run of cells that share one style, so a line costs a few drawText calls.
            QString text;
            int end = col;
            while (end < cols) {
                const TerminalCell c = end == col ? first : cellAt(index, end);
                if (end != col
                    && (!sameStyle(c, first) || isSelected(historyLine, end) != selected
                        || c.width == 2 || first.width == 2))
                    break;
                if (c.width != 0)
                    text += c.text.isEmpty() ? QStringLiteral(" ") : c.text;
                ++end;
                if (first.width == 2)
                    break;
            }
            if (first.width == 2 && end < cols)
                ++end; // the right half belongs to this glyph

            QColor fg = QColor::fromRgb(first.foreground);
            QColor bg = QColor::fromRgb(first.background);
            if (first.reverse != selected)
                std::swap(fg, bg);
            const QRect rect(col * m_cell.width(), y, (end - col) * m_cell.width(),
                             m_cell.height());
            if (bg != defaultBackground)
                painter.fillRect(rect, bg);
            if (!text.trimmed().isEmpty() || first.underline) {
                QFont f = regular;
                f.setBold(first.bold);
                f.setItalic(first.italic);
                f.setUnderline(first.underline);
                painter.setFont(f);
                painter.setPen(fg);
                painter.drawText(QPoint(rect.left(), y + m_ascent), text);
            }
            col = end;
        }
    }

    // The cursor: a block when focused, an outline otherwise; only when its row is visible.
    const QPoint cursor = m_session->cursorPosition();
    const int cursorRow = scrollback + cursor.y() - top;
    if (m_session->cursorVisible() && cursorRow >= 0 && cursorRow < rows) {
        const QRect rect(cursor.x() * m_cell.width(), cursorRow * m_cell.height(), m_cell.width(),
                         m_cell.height());
        const TerminalCell under = m_session->cell(cursor.y(), cursor.x());
        const QColor cursorColor = QColor::fromRgb(m_session->defaultForeground());
        if (hasFocus()) {
            painter.fillRect(rect, cursorColor);
            if (!under.text.isEmpty()) {
                QFont f = regular;
                f.setBold(under.bold);
                painter.setFont(f);
                painter.setPen(defaultBackground);
                painter.drawText(QPoint(rect.left(), rect.top() + m_ascent), under.text);
            }
        } else {
            painter.setPen(cursorColor);
            painter.drawRect(rect.adjusted(0, 0, -1, -1));
        }
    }
}

void TerminalView::keyPressEvent(QKeyEvent *event)
{
    if (!m_session)
        return;
    const Qt::KeyboardModifiers mods = event->modifiers();
    const bool ctrlShift = (mods & Qt::ControlModifier) && (mods & Qt::ShiftModifier);
    if (ctrlShift && event->key() == Qt::Key_C) {
        copy();
        return;
    }
    if ((ctrlShift && event->key() == Qt::Key_V)
        || (mods == Qt::ShiftModifier && event->key() == Qt::Key_Insert)) {
        paste();
        return;
    }
    if (mods == Qt::ShiftModifier
        && (event->key() == Qt::Key_PageUp || event->key() == Qt::Key_PageDown)) {
        QScrollBar *bar = verticalScrollBar();
        bar->triggerAction(event->key() == Qt::Key_PageUp ? QAbstractSlider::SliderPageStepSub
                                                          : QAbstractSlider::SliderPageStepAdd);
        return;
    }
    if (m_session->sendKey(event->key(), mods, event->text())) {
        scrollToBottom();
        event->accept();
        return;
    }
    QAbstractScrollArea::keyPressEvent(event);
}

void TerminalView::inputMethodEvent(QInputMethodEvent *event)
{
    if (m_session && !event->commitString().isEmpty()) {
        m_session->sendText(event->commitString(), false);
        scrollToBottom();
    }
    event->accept();
}

TerminalView::HistoryPos TerminalView::historyPosAt(const QPoint &viewportPoint) const
{
    const QPoint point = viewportPoint - QPoint(kMargin, kMargin);
    const int cols = m_session ? m_session->cols() : 0;
    const int row = std::clamp(point.y() / m_cell.height(), 0,
                               std::max(0, (m_session ? m_session->rows() : 1) - 1));
    const int col = std::clamp((point.x() + m_cell.width() / 2) / m_cell.width(), 0, cols);
    return HistoryPos {firstStoredLine() + verticalScrollBar()->value() + row, col};
}

bool TerminalView::isSelected(qint64 line, int col) const
{
    if (!m_hasSelection)
        return false;
    const auto [from, to] = std::minmax(m_selectionAnchor, m_selectionEnd);
    const HistoryPos pos {line, col};
    return from <= pos && pos < to;
}

QString TerminalView::historyLineText(qint64 line, int fromCol, int toCol) const
{
    const qint64 index = line - firstStoredLine();
    const int scrollback = m_session->scrollbackCount();
    if (index < 0 || index >= scrollback + m_session->rows())
        return {};
    QString text;
    for (int col = fromCol; col < toCol; ++col) {
        const TerminalCell c = index < scrollback ? m_session->scrollbackCell(int(index), col)
                                                  : m_session->cell(int(index) - scrollback, col);
        if (c.width == 0)
            continue;
        text += c.text.isEmpty() ? QStringLiteral(" ") : c.text;
    }
    while (text.endsWith(QLatin1Char(' ')))
        text.chop(1);
    return text;
}

QString TerminalView::selectedText() const
{
    if (!m_hasSelection || !m_session)
        return {};
    const auto [from, to] = std::minmax(m_selectionAnchor, m_selectionEnd);
    QStringList lines;
    for (qint64 line = from.line; line <= to.line; ++line) {
        const int start = line == from.line ? from.col : 0;
        const int end = line == to.line ? to.col : m_session->cols();
        lines.append(historyLineText(line, start, end));
    }
    return lines.join(QLatin1Char('\n'));
}

void TerminalView::selectAll()
{
    if (!m_session)
        return;
    m_selectionAnchor = HistoryPos {firstStoredLine(), 0};
    m_selectionEnd =
        HistoryPos {m_session->scrollbackPushedTotal() + m_session->rows() - 1, m_session->cols()};
    m_hasSelection = true;
    viewport()->update();
}

void TerminalView::clearSelection()
{
    if (!m_hasSelection)
        return;
    m_hasSelection = false;
    viewport()->update();
}

void TerminalView::copy()
{
    const QString text = selectedText();
    if (!text.isEmpty())
        QApplication::clipboard()->setText(text);
}

void TerminalView::paste()
{
    if (!m_session)
        return;
    const QString text = QApplication::clipboard()->text();
    if (text.isEmpty())
        return;
    m_session->sendText(text, true);
    scrollToBottom();
}

void TerminalView::mousePressEvent(QMouseEvent *event)
{
    setFocus(Qt::MouseFocusReason);
    if (event->button() == Qt::LeftButton && m_session) {
        m_selectionAnchor = historyPosAt(event->position().toPoint());
        m_selectionEnd = m_selectionAnchor;
        m_selecting = true;
        clearSelection();
        return;
    }
    if (event->button() == Qt::MiddleButton && m_session) {
        const QString text = QApplication::clipboard()->text(QClipboard::Selection);
        if (!text.isEmpty())
            m_session->sendText(text, true);
        return;
    }
    QAbstractScrollArea::mousePressEvent(event);
}

void TerminalView::mouseMoveEvent(QMouseEvent *event)
{
    if (!m_selecting)
        return;
    m_selectionEnd = historyPosAt(event->position().toPoint());
    m_hasSelection = m_selectionEnd != m_selectionAnchor;
    viewport()->update();
}

void TerminalView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !m_selecting)
        return;
    m_selecting = false;
    if (m_hasSelection && QApplication::clipboard()->supportsSelection())
        QApplication::clipboard()->setText(selectedText(), QClipboard::Selection);
}

void TerminalView::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() != Qt::LeftButton || !m_session)
        return;
    // Select the word under the pointer: a run of non-blank characters.
    const HistoryPos pos = historyPosAt(event->position().toPoint());
    const int clickCol =
        std::min(event->position().toPoint().x() / m_cell.width(), m_session->cols() - 1);
    const QString line = historyLineText(pos.line, 0, m_session->cols())
                             .leftJustified(m_session->cols(), QLatin1Char(' '));
    if (clickCol < 0 || clickCol >= line.size() || line.at(clickCol).isSpace())
        return;
    int start = clickCol;
    while (start > 0 && !line.at(start - 1).isSpace())
        --start;
    int end = clickCol;
    while (end < line.size() && !line.at(end).isSpace())
        ++end;
    m_selectionAnchor = HistoryPos {pos.line, start};
    m_selectionEnd = HistoryPos {pos.line, end};
    m_hasSelection = true;
    m_selecting = false;
    viewport()->update();
    if (QApplication::clipboard()->supportsSelection())
        QApplication::clipboard()->setText(selectedText(), QClipboard::Selection);
}

void TerminalView::focusInEvent(QFocusEvent *event)
{
    QAbstractScrollArea::focusInEvent(event);
    viewport()->update();
}

void TerminalView::focusOutEvent(QFocusEvent *event)
{
    QAbstractScrollArea::focusOutEvent(event);
    viewport()->update();
}

} // namespace airlock

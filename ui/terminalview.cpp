#include "ui/terminalview.h"

#include "core/terminal/terminalsession.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QInputMethodEvent>
#include <QKeyEvent>
#include <QKeySequenceEdit>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QTabBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <memory>

namespace airlock {

namespace {

// ~100 frames per second at most: enough to look live, cheap enough to survive `yes`.
constexpr int kRepaintIntervalMs = 10;

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

QTabWidget *enclosingTabWidget(QWidget *widget)
{
    for (QWidget *w = widget->parentWidget(); w; w = w->parentWidget()) {
        if (auto *tabs = qobject_cast<QTabWidget *>(w))
            return tabs;
    }
    return nullptr;
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
    setAccessibleDescription(
        tr("Console of the sandbox. Ctrl+Shift+C copies, Ctrl+Shift+V pastes, Shift+Page "
           "Up/Down scrolls the history, Ctrl+Page Up/Down switch tabs, %1 leaves the console.")
            .arg(leaveShortcut().toString(QKeySequence::NativeText)));

    // Runs of cells are drawn as one string, so the string's real width must be the grid's:
    // an advance of 7.8 px counted as 8 (or 8.2 as 8) drifts by a character every 40 columns and
    // the last ones are drawn under the scroll bar. Round up and pad with letter spacing.
    QFont cellFont = font();
    const qreal advance = QFontMetricsF(cellFont).horizontalAdvance(QLatin1Char('M'));
    const int cellWidth = std::max(1, int(std::ceil(advance - 0.001)));
    if (cellWidth - advance > 0.001) {
        cellFont.setLetterSpacing(QFont::AbsoluteSpacing, cellWidth - advance);
        setFont(cellFont);
    }
    const QFontMetrics metrics(font());
    m_cell = QSize(cellWidth, std::max(1, metrics.height()));
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
        // The ways out (tab switching, the leave shortcut) are ours whatever the window's
        // shortcuts; other Ctrl+Shift combinations stay with the window (closing a tab).
        auto *key = static_cast<QKeyEvent *>(event);
        const Qt::KeyboardModifiers mods = key->modifiers();
        const bool ctrlShift = (mods & Qt::ControlModifier) && (mods & Qt::ShiftModifier);
        if (tabSwitchDelta(key) != 0 || isLeaveShortcut(key)) {
            // Handled in keyPressEvent(), whatever the window's shortcuts say.
            event->accept();
            return true;
        }
        if (!ctrlShift || key->key() == Qt::Key_C || key->key() == Qt::Key_V) {
            event->accept();
            return true;
        }
    }
    return QAbstractScrollArea::event(event);
}

int TerminalView::tabSwitchDelta(const QKeyEvent *event)
{
    const Qt::KeyboardModifiers mods =
        event->modifiers() & (Qt::ControlModifier | Qt::ShiftModifier | Qt::AltModifier);
    if (mods == Qt::ControlModifier && event->key() == Qt::Key_PageDown)
        return 1;
    if (mods == Qt::ControlModifier && event->key() == Qt::Key_PageUp)
        return -1;
    if (mods == Qt::ControlModifier && event->key() == Qt::Key_Tab)
        return 1;
    // Ctrl+Shift+Tab arrives as Backtab (with or without Shift in the modifiers).
    if ((mods & Qt::ControlModifier) && !(mods & Qt::AltModifier)
        && (event->key() == Qt::Key_Backtab
            || (event->key() == Qt::Key_Tab && (mods & Qt::ShiftModifier))))
        return -1;
    return 0;
}

QKeySequence TerminalView::leaveShortcut()
{
    const QString stored = QSettings().value(QLatin1String(kLeaveShortcutKey)).toString();
    const QKeySequence sequence = QKeySequence::fromString(stored, QKeySequence::PortableText);
    return sequence.isEmpty() ? QKeySequence(Qt::ControlModifier | Qt::Key_BracketRight) : sequence;
}

void TerminalView::setLeaveShortcut(const QKeySequence &shortcut)
{
    QSettings settings;
    if (shortcut.isEmpty())
        settings.remove(QLatin1String(kLeaveShortcutKey));
    else
        settings.setValue(QLatin1String(kLeaveShortcutKey),
                          shortcut.toString(QKeySequence::PortableText));
}

bool TerminalView::isLeaveShortcut(const QKeyEvent *event)
{
    const QKeySequence shortcut = leaveShortcut();
    if (shortcut.isEmpty())
        return false;
    const Qt::KeyboardModifiers mods = event->modifiers() & ~Qt::KeypadModifier;
    return shortcut[0] == QKeyCombination(mods, Qt::Key(event->key()));
}

void TerminalView::leaveTerminal()
{
    if (QTabWidget *tabs = enclosingTabWidget(this)) {
        tabs->tabBar()->setFocus(Qt::ShortcutFocusReason);
        return;
    }
    QAbstractScrollArea::focusNextPrevChild(true);
}

void TerminalView::switchTab(int delta)
{
    QTabWidget *tabs = enclosingTabWidget(this);
    if (!tabs || tabs->count() < 2)
        return;
    const int count = tabs->count();
    tabs->setCurrentIndex(((tabs->currentIndex() + delta) % count + count) % count);
    if (QWidget *page = tabs->currentWidget())
        page->setFocus(Qt::TabFocusReason);
}

void TerminalView::contextMenuEvent(QContextMenuEvent *event)
{
    std::unique_ptr<QMenu> menu(createContextMenu(this));
    menu->exec(event->globalPos());
}

QMenu *TerminalView::createContextMenu(QWidget *parent)
{
    auto *menuPointer = new QMenu(parent);
    QMenu &menu = *menuPointer;
    QAction *copyAction = menu.addAction(tr("&Copy"), this, &TerminalView::copy);
    copyAction->setShortcut(QKeySequence(tr("Ctrl+Shift+C")));
    copyAction->setEnabled(m_hasSelection);
    menu.addAction(tr("&Paste"), this, &TerminalView::paste)
        ->setShortcut(QKeySequence(tr("Ctrl+Shift+V")));
    menu.addAction(tr("Select &All"), this, &TerminalView::selectAll);
    menu.addSeparator();
    // The ways out of the terminal, written where a trapped user looks (docs/gui.md).
    QAction *leave = menu.addAction(tr("&Leave Console"), this, &TerminalView::leaveTerminal);
    leave->setObjectName(QStringLiteral("leaveConsole"));
    leave->setShortcut(leaveShortcut());
    QAction *next = menu.addAction(tr("&Next Tab"), this, [this] { switchTab(1); });
    next->setShortcuts({QKeySequence(Qt::ControlModifier | Qt::Key_PageDown),
                        QKeySequence(Qt::ControlModifier | Qt::Key_Tab)});
    QAction *previous = menu.addAction(tr("P&revious Tab"), this, [this] { switchTab(-1); });
    previous->setShortcuts(
        {QKeySequence(Qt::ControlModifier | Qt::Key_PageUp),
         QKeySequence(Qt::ControlModifier | Qt::ShiftModifier | Qt::Key_Backtab)});
    menu.addAction(tr("Set Leave &Shortcut…"), this, [this] {
        QDialog dialog(this);
        dialog.setWindowTitle(tr("Leave Console Shortcut"));
        auto *edit = new QKeySequenceEdit(leaveShortcut(), &dialog);
        auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel
                                                 | QDialogButtonBox::RestoreDefaults,
                                             &dialog);
        connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
        connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, edit,
                [edit] {
                    edit->setKeySequence(QKeySequence(Qt::ControlModifier | Qt::Key_BracketRight));
                });
        auto *layout = new QVBoxLayout(&dialog);
        layout->addWidget(
            new QLabel(tr("The key that moves the focus out of every console:"), &dialog));
        layout->addWidget(edit);
        layout->addWidget(buttons);
        if (dialog.exec() == QDialog::Accepted)
            setLeaveShortcut(edit->keySequence());
    });
    return menuPointer;
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
    // A new width re-flows the lines (TerminalSession::resize): a selection's cells would name
    // other text afterwards.
    if (cols != m_session->cols())
        clearSelection();
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
    if (isLeaveShortcut(event)) {
        leaveTerminal();
        return;
    }
    if (const int delta = tabSwitchDelta(event)) {
        switchTab(delta);
        return;
    }
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

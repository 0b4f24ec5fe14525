#include "ui/commandoutputview.h"

#include "ui/guesttext.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>

namespace airlock {

namespace {

/// Readable on the light and the dark palettes alike (4.5:1 or more against both a white and
/// a #1e1e1e base): a red of medium lightness.
const QColor kStderr(0xd0, 0x3a, 0x3a);

} // namespace

CommandOutputView::CommandOutputView(QWidget *parent) : QPlainTextEdit(parent)
{
    setReadOnly(true);
    setUndoRedoEnabled(false);
    setMaximumBlockCount(kMaxLines);
    setLineWrapMode(QPlainTextEdit::WidgetWidth);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    setPlaceholderText(tr("The command's output appears here."));
}

QColor CommandOutputView::stderrColor() const
{
    return kStderr;
}

void CommandOutputView::appendOutput(bool isStderr, const QByteArray &bytes)
{
    const QString text = (isStderr ? m_errDecoder : m_outDecoder).decode(bytes);
    QTextCharFormat format;
    if (isStderr)
        format.setForeground(kStderr);
    else
        format.setForeground(palette().color(QPalette::Text));
    insert(GuestText::shown(text), format);
}

void CommandOutputView::appendNote(const QString &text)
{
    QTextCharFormat format;
    format.setForeground(palette().color(QPalette::PlaceholderText));
    format.setFontItalic(true);
    QString line = GuestText::shown(text);
    if (m_lineChars > 0)
        line.prepend(u'\n');
    insert(line + u'\n', format);
}

void CommandOutputView::clearOutput()
{
    clear();
    m_outDecoder.resetState();
    m_errDecoder.resetState();
    m_lineChars = 0;
}

void CommandOutputView::insert(const QString &text, const QTextCharFormat &format)
{
    if (text.isEmpty())
        return;
    // Break over-long lines so that no single block (which maximumBlockCount cannot bound)
    // grows without end.
    QString bounded;
    bounded.reserve(text.size() + text.size() / kMaxLineChars + 1);
    for (const QChar c : text) {
        if (c == u'\n') {
            m_lineChars = 0;
        } else if (++m_lineChars > kMaxLineChars) {
            bounded.append(u'\n');
            m_lineChars = 1;
        }
        bounded.append(c);
    }
    QScrollBar *bar = verticalScrollBar();
    const bool atEnd = bar->value() == bar->maximum();
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(bounded, format);
    if (atEnd)
        bar->setValue(bar->maximum());
}

} // namespace airlock

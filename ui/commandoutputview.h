#pragma once

#include <QPlainTextEdit>
#include <QStringDecoder>

namespace airlock {

/// The output of a guest command: read-only plain text (guest bytes are hostile: never parsed
/// as rich text), stderr in another colour. Bounded: at most kMaxLines lines are kept (the
/// oldest go first) and a line longer than kMaxLineChars is broken, so a command that prints
/// gigabytes, or one endless line, cannot grow the widget without end. Control characters
/// other than tab and newline (terminal escapes, carriage returns) are shown as U+FFFD.
class CommandOutputView final : public QPlainTextEdit
{
    Q_OBJECT
public:
    static constexpr int kMaxLines = 5000;
    static constexpr int kMaxLineChars = 4000;

    explicit CommandOutputView(QWidget *parent = nullptr);

    /// Appends raw bytes of one stream (UTF-8, decoded across chunks per stream).
    void appendOutput(bool isStderr, const QByteArray &bytes);
    /// Appends a line of the window's own (the command line, its end) in a muted style.
    void appendNote(const QString &text);
    /// Empties the view and the decoders.
    void clearOutput();
    /// The text shown of stderr (tests tell it from stdout by its colour).
    QColor stderrColor() const;

private:
    void insert(const QString &text, const QTextCharFormat &format);

    QStringDecoder m_outDecoder {QStringDecoder::Utf8};
    QStringDecoder m_errDecoder {QStringDecoder::Utf8};
    int m_lineChars = 0; ///< characters of the last (unfinished) line
};

} // namespace airlock

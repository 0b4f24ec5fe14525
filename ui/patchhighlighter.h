#pragma once

#include <QSyntaxHighlighter>

namespace airlock {

/// Colours a unified diff in a plain-text document: added lines green, removed lines red,
/// hunk headers blue. Each colour pair (text and background) is set together, so it stays
/// readable on light and dark palettes.
class PatchHighlighter final : public QSyntaxHighlighter
{
    Q_OBJECT
public:
    explicit PatchHighlighter(QTextDocument *document);

protected:
    void highlightBlock(const QString &text) override;
};

} // namespace airlock

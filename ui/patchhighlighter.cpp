#include "ui/patchhighlighter.h"

namespace airlock {

PatchHighlighter::PatchHighlighter(QTextDocument *document) : QSyntaxHighlighter(document) { }

void PatchHighlighter::highlightBlock(const QString &text)
{
    QTextCharFormat format;
    if (text.startsWith(QLatin1String("+++")) || text.startsWith(QLatin1String("---"))) {
        format.setFontWeight(QFont::Bold);
    } else if (text.startsWith(u'+')) {
        format.setForeground(QColor(0x11, 0x63, 0x29));
        format.setBackground(QColor(0xe6, 0xff, 0xec));
    } else if (text.startsWith(u'-')) {
        format.setForeground(QColor(0x9a, 0x1c, 0x20));
        format.setBackground(QColor(0xff, 0xeb, 0xe9));
    } else if (text.startsWith(QLatin1String("@@"))) {
        format.setForeground(QColor(0x05, 0x50, 0xae));
        format.setBackground(QColor(0xdd, 0xf4, 0xff));
    } else {
        return;
    }
    setFormat(0, int(text.size()), format);
}

} // namespace airlock

#pragma once

#include <QStringList>

class QAbstractItemView;
class QTableView;

namespace airlock {

/// Column widths from what the cells show, not from pixel guesses: a column is made as wide as
/// its header and the widest of a few sample texts need in the view's font (the longest memory
/// figure, uptime, verdict or reason a row can hold), so a larger font or a longer translation
/// widens it instead of cutting it.
class ColumnSizer final
{
public:
    /// The width a cell of `view` needs to show `text` whole: the text's advance in the view's
    /// font plus the item delegate's margins on both sides (QStyle::PM_FocusFrameHMargin + 1).
    static int textWidth(const QAbstractItemView *view, const QString &text);
    /// Sets `column` of `table` as wide as its header and each of `samples` need, and at
    /// least `minimum` pixels.
    static void fit(QTableView *table, int column, const QStringList &samples, int minimum = 0);
};

} // namespace airlock

#include "ui/columnsizer.h"

#include <QHeaderView>
#include <QStyle>
#include <QTableView>

#include <algorithm>

namespace airlock {

int ColumnSizer::textWidth(const QAbstractItemView *view, const QString &text)
{
    // QCommonStyle lays an item's text out with this margin on each side.
    const int margin = view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view) + 1;
    return view->fontMetrics().horizontalAdvance(text) + 2 * margin;
}

void ColumnSizer::fit(QTableView *table, int column, const QStringList &samples, int minimum)
{
    int width = std::max(minimum, table->horizontalHeader()->sectionSizeHint(column));
    for (const QString &sample : samples)
        width = std::max(width, textWidth(table, sample));
    // One pixel of grid line between columns.
    table->setColumnWidth(column, width + 1);
}

} // namespace airlock

#include "ui/snapshottimelineview.h"

#include "ui/snapshottimelinemodel.h"

#include <QContextMenuEvent>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QLocale>
#include <QMenu>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>

namespace airlock {

namespace {

constexpr int kRightMargin = 40;
constexpr int kTopMargin = 46; // legend and retention note
constexpr int kBottomMargin = 40; // time axis
constexpr int kLaneHeight = 64; // the least; lanes grow to fill the widget up to kMaxLaneHeight
constexpr int kMaxLaneHeight = 110;

const QColor kManual(0x1f, 0x6f, 0xc5);
const QColor kAutomatic(0x7f, 0x8c, 0x9d);
const QColor kSafety(0xe6, 0x7e, 0x22);
const QColor kTemplate(0x8e, 0x44, 0xad);
const QColor kPinned(0xd4, 0xa0, 0x17);
const QColor kRetention(0x3d, 0x8e, 0xd8, 28);

QColor colorFor(SnapshotKind kind)
{
    switch (kind) {
    case SnapshotKind::Manual:
        return kManual;
    case SnapshotKind::Automatic:
        return kAutomatic;
    case SnapshotKind::Safety:
        return kSafety;
    case SnapshotKind::Template:
        return kTemplate;
    }
    return kManual;
}

/// The marker's outline: circles for manual and automatic, a diamond for safety snapshots,
/// a square for templates (shape and colour both differ, for colour-blind eyes).
QPainterPath markerPath(SnapshotKind kind, const QPointF &c, double r)
{
    QPainterPath path;
    if (kind == SnapshotKind::Safety) {
        const double d = r * 1.25;
        path.moveTo(c.x(), c.y() - d);
        path.lineTo(c.x() + d, c.y());
        path.lineTo(c.x(), c.y() + d);
        path.lineTo(c.x() - d, c.y());
        path.closeSubpath();
    } else if (kind == SnapshotKind::Template) {
        path.addRect(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r));
    } else {
        path.addEllipse(c, r, r);
    }
    return path;
}

void paintPin(QPainter &painter, const QPointF &top)
{
    // A map pin above the marker: head and needle.
    painter.save();
    painter.setPen(QPen(kPinned.darker(140), 1.5));
    painter.drawLine(top, top - QPointF(0, 9));
    painter.setBrush(kPinned);
    painter.drawEllipse(top - QPointF(0, 12), 4, 4);
    painter.restore();
}

} // namespace

SnapshotTimelineView::SnapshotTimelineView(QWidget *parent) : QWidget(parent), m_clock(this)
{
    m_clock.setObjectName(QStringLiteral("clock"));
    setAccessibleName(tr("Snapshot timeline"));
    setFocusPolicy(Qt::StrongFocus);
    setBackgroundRole(QPalette::Base);
    setAutoFillBackground(true);
    setMouseTracking(false);
    // "now" moves on: the axis follows now and then, never under the pointer (a marker must not
    // move between aiming at it and clicking it).
    m_clock.setInterval(30000);
    connect(&m_clock, &QTimer::timeout, this, [this] {
        if (m_pointerInside) {
            m_clockPending = true;
            return;
        }
        m_range.reset();
        update();
    });
    m_clock.start();
}

void SnapshotTimelineView::setModel(SnapshotTimelineModel *model, QItemSelectionModel *selection)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    if (m_selection)
        disconnect(m_selection, nullptr, this, nullptr);
    m_model = model;
    m_selection = selection;
    auto changed = [this] {
        m_range.reset();
        updateGeometry();
        updateDescription();
        update();
    };
    if (model) {
        connect(model, &QAbstractItemModel::dataChanged, this, changed);
        connect(model, &QAbstractItemModel::rowsInserted, this, changed);
        connect(model, &QAbstractItemModel::rowsRemoved, this, changed);
        connect(model, &QAbstractItemModel::modelReset, this, changed);
        connect(model, &SnapshotTimelineModel::metadataChanged, this, changed);
    }
    // Another current snapshot changes how it is drawn, not where anything is.
    if (selection)
        connect(selection, &QItemSelectionModel::currentChanged, this, [this] {
            updateDescription();
            update();
        });
    changed();
}

QModelIndex SnapshotTimelineView::currentIndex() const
{
    if (!m_selection || !m_model)
        return {};
    const QModelIndex current = m_selection->currentIndex();
    return current.isValid() ? current.siblingAtColumn(0) : QModelIndex();
}

void SnapshotTimelineView::setCurrentIndex(const QModelIndex &index)
{
    if (!m_selection)
        return;
    m_selection->setCurrentIndex(index,
                                 QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

int SnapshotTimelineView::markerRadius(qint64 newBytes)
{
    const double mib = double(std::max<qint64>(newBytes, 0)) / (1024.0 * 1024.0);
    return std::clamp(int(std::lround(5.0 + 2.2 * std::log2(1.0 + mib))), 5, 18);
}

int SnapshotTimelineView::clusterRadius(int count)
{
    return count < 10 ? 11 : count < 100 ? 13 : 15;
}

QStringList SnapshotTimelineView::clusterMembers(const QModelIndex &index) const
{
    if (!m_model || !index.isValid())
        return {};
    const Range &range = timeRange();
    const int cluster = range.clusterOf.value(
        index.siblingAtColumn(0).data(SnapshotTimelineModel::IdRole).toString(), -1);
    return cluster < 0 ? QStringList() : range.clusters[size_t(cluster)].ids;
}

int SnapshotTimelineView::clusterAt(const QPoint &pos) const
{
    if (!m_model)
        return -1;
    const Range &range = timeRange();
    for (size_t i = 0; i < range.clusters.size(); ++i) {
        const Range::Cluster &cluster = range.clusters[i];
        const QPointF c(cluster.x, yForLane(cluster.lane));
        const double dx = pos.x() - c.x();
        const double dy = pos.y() - c.y();
        if (dx * dx + dy * dy <= double(cluster.radius + 4) * (cluster.radius + 4))
            return int(i);
    }
    return -1;
}

QSize SnapshotTimelineView::sizeHint() const
{
    const int lanes = m_model ? std::max(1, m_model->laneCount()) : 1;
    return {760, kTopMargin + lanes * kLaneHeight + kBottomMargin};
}

QSize SnapshotTimelineView::minimumSizeHint() const
{
    return {360, kTopMargin + kLaneHeight + kBottomMargin};
}

const SnapshotTimelineView::Range &SnapshotTimelineView::timeRange() const
{
    // Only a change of the data or the size, or the clock while the pointer is elsewhere, makes
    // a new axis: repaints (selection, focus) keep the markers where they are.
    if (m_range && m_rangeSize == size())
        return *m_range;
    const QDateTime now = m_now();
    const QModelIndexList byTime = m_model ? m_model->indexesByTime() : QModelIndexList();
    QDateTime from = now;
    if (!byTime.isEmpty())
        from = std::min(
            from, byTime.constFirst().data(SnapshotTimelineModel::CreatedAtRole).toDateTime());
    const qint64 span = std::max<qint64>(from.msecsTo(now), 60000);
    // Room on both sides so the first marker and "now" are not on the edge.
    const qint64 pad = span / 16;
    Range range;
    range.now = now;
    range.from = now.addMSecs(-span - pad);
    range.to = now.addMSecs(pad);
    const QRect plot = plotRect();
    const double total = double(range.from.msecsTo(range.to));
    auto linear = [&](const QDateTime &t) {
        return plot.left() + plot.width() * double(range.from.msecsTo(t)) / total;
    };
    // One item per marker: a snapshot, or a cluster of neighbours in time on one lane.
    struct Item
    {
        QStringList ids;
        int lane = 0;
        qint64 firstMs = 0;
        qint64 lastMs = 0;
        int radius = 0;
    };
    std::vector<Item> items;
    for (const QModelIndex &index : byTime) {
        const qint64 t =
            index.data(SnapshotTimelineModel::CreatedAtRole).toDateTime().toMSecsSinceEpoch();
        items.push_back(
            Item {{index.data(SnapshotTimelineModel::IdRole).toString()},
                  index.data(SnapshotTimelineModel::LaneRole).toInt(),
                  t,
                  t,
                  markerRadius(index.data(SnapshotTimelineModel::NewBytesRole).toLongLong())});
    }
    const double first = plot.left() + 10 + (byTime.isEmpty() ? 0 : 12);
    const double last = plot.right() - 10;
    const double room = last - first;
    // Markers (and "now" last) at least `gap` apart: gapBefore(i) is the least distance between
    // item i-1 and i (their radii and some air); "now" follows the last.
    const auto gapBefore = [&](size_t i) {
        return i == 0 ? 0.0 : std::max(28.0, double(items[i - 1].radius + items[i].radius + 12));
    };
    const auto needed = [&] {
        double sum = items.empty() ? 0.0 : items.back().radius + 24.0;
        for (size_t i = 1; i < items.size(); ++i)
            sum += gapBefore(i);
        return sum;
    };
    // Too many markers for the width: merge the two neighbours closest in time (on one lane)
    // into a cluster, again until the rest fit. Neighbours on different lanes stay apart.
    while (needed() > room) {
        size_t best = items.size();
        qint64 bestGap = std::numeric_limits<qint64>::max();
        for (size_t i = 0; i + 1 < items.size(); ++i) {
            if (items[i].lane != items[i + 1].lane)
                continue;
            const qint64 gap = items[i + 1].firstMs - items[i].lastMs;
            if (gap < bestGap) {
                bestGap = gap;
                best = i;
            }
        }
        if (best == items.size())
            break;
        Item &into = items[best];
        into.ids += items[best + 1].ids;
        into.lastMs = items[best + 1].lastMs;
        into.radius = clusterRadius(int(into.ids.size()));
        items.erase(items.begin() + qsizetype(best + 1));
    }
    std::vector<qint64> times;
    std::vector<double> xs;
    std::vector<double> gaps;
    for (size_t i = 0; i < items.size(); ++i) {
        // A cluster sits at the middle of its time span.
        const qint64 t = items[i].firstMs + (items[i].lastMs - items[i].firstMs) / 2;
        times.push_back(t);
        xs.push_back(linear(QDateTime::fromMSecsSinceEpoch(t, Qt::UTC)));
        gaps.push_back(gapBefore(i));
    }
    times.push_back(now.toMSecsSinceEpoch());
    xs.push_back(linear(now));
    gaps.push_back(items.empty() ? 24.0 : items.back().radius + 24.0);
    // Still too many (lanes alternating): shrink every gap alike.
    double sum = 0;
    for (size_t i = 1; i < gaps.size(); ++i)
        sum += gaps[i];
    if (sum > room && sum > 0) {
        for (double &gap : gaps)
            gap *= room / sum;
    }
    for (size_t i = 0; i < xs.size(); ++i)
        xs[i] = std::max(xs[i], i == 0 ? first : xs[i - 1] + gaps[i]);
    for (size_t i = xs.size(); i-- > 0;)
        xs[i] = std::min(xs[i], i + 1 == xs.size() ? last : xs[i + 1] - gaps[i + 1]);
    for (size_t i = 0; i < xs.size(); ++i)
        xs[i] = std::max(xs[i], i == 0 ? first : xs[i - 1] + gaps[i]);
    range.knots.emplace_back(range.from.toMSecsSinceEpoch(), plot.left());
    for (size_t i = 0; i < xs.size(); ++i)
        range.knots.emplace_back(times[i], xs[i]);
    range.knots.emplace_back(range.to.toMSecsSinceEpoch(),
                             std::max<double>(plot.right(), xs.back()));
    for (size_t i = 0; i < items.size(); ++i) {
        for (const QString &id : std::as_const(items[i].ids))
            range.markerX.insert(id, xs[i]);
        if (items[i].ids.size() < 2)
            continue;
        for (const QString &id : std::as_const(items[i].ids))
            range.clusterOf.insert(id, int(range.clusters.size()));
        range.clusters.push_back(
            Range::Cluster {items[i].ids, items[i].lane, xs[i], items[i].radius});
    }
    range.nowX = xs.back();
    m_range = std::move(range);
    m_rangeSize = size();
    m_clockPending = false;
    return *m_range;
}

QRect SnapshotTimelineView::plotRect() const
{
    const int left = leftMargin();
    return QRect(left, kTopMargin, std::max(40, width() - left - kRightMargin),
                 laneHeight() * std::max(1, m_model ? m_model->laneCount() : 1));
}

double SnapshotTimelineView::xFor(const QDateTime &time, const Range &range,
                                  const QRect &plot) const
{
    const qint64 t = time.toMSecsSinceEpoch();
    const auto &knots = range.knots;
    if (knots.empty())
        return plot.left();
    if (t <= knots.front().first)
        return knots.front().second;
    for (size_t i = 1; i < knots.size(); ++i) {
        const auto &[t1, x1] = knots[i];
        if (t > t1)
            continue;
        const auto &[t0, x0] = knots[i - 1];
        if (t1 == t0)
            return x0;
        return x0 + (x1 - x0) * double(t - t0) / double(t1 - t0);
    }
    return knots.back().second;
}

int SnapshotTimelineView::laneHeight() const
{
    const int lanes = std::max(1, m_model ? m_model->laneCount() : 1);
    return std::clamp((height() - kTopMargin - kBottomMargin) / lanes, kLaneHeight, kMaxLaneHeight);
}

int SnapshotTimelineView::yForLane(int lane) const
{
    return kTopMargin + lane * laneHeight() + laneHeight() / 2;
}

QPoint SnapshotTimelineView::centerOf(const QModelIndex &index, const Range &range,
                                      const QRect &plot) const
{
    const int lane = index.data(SnapshotTimelineModel::LaneRole).toInt();
    const QString id = index.data(SnapshotTimelineModel::IdRole).toString();
    const double x = range.markerX.contains(id)
        ? range.markerX.value(id)
        : xFor(index.data(SnapshotTimelineModel::CreatedAtRole).toDateTime(), range, plot);
    return QPoint(int(std::lround(x)), yForLane(lane));
}

QRect SnapshotTimelineView::markerRect(const QModelIndex &index) const
{
    if (!m_model || !index.isValid() || index.model() != m_model)
        return {};
    const Range &range = timeRange();
    const int cluster = range.clusterOf.value(
        index.siblingAtColumn(0).data(SnapshotTimelineModel::IdRole).toString(), -1);
    // A snapshot in a cluster is where its cluster is drawn.
    const int r =
        (cluster >= 0 ? range.clusters[size_t(cluster)].radius
                      : markerRadius(index.data(SnapshotTimelineModel::NewBytesRole).toLongLong()))
        + 2;
    const QPoint c = centerOf(index.siblingAtColumn(0), range, plotRect());
    return QRect(c.x() - r, c.y() - r, 2 * r + 1, 2 * r + 1);
}

void SnapshotTimelineView::setDetachedState(const QString &why)
{
    if (why == m_detached)
        return;
    m_detached = why;
    updateDescription();
    update();
}

QRect SnapshotTimelineView::currentStateMarker() const
{
    if (!m_model)
        return {};
    if (m_detached.isEmpty())
        return markerRect(m_model->indexOf(m_model->head()));
    if (m_model->sandbox().isEmpty())
        return {};
    const QPoint c(int(std::lround(timeRange().nowX)), yForLane(0));
    return QRect(c.x() - 8, c.y() - 8, 17, 17);
}

QRect SnapshotTimelineView::currentStateRect() const
{
    const QRect marker = currentStateMarker();
    if (marker.isEmpty())
        return {};
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics metrics(bold);
    const int w = metrics.horizontalAdvance(currentStateText()) + 12;
    const int h = metrics.height() + 4;
    // Above the marker (its label is below), inside the view.
    const int left = std::clamp(marker.center().x() - w / 2, 2, std::max(2, width() - w - 2));
    const int top = std::max(2, marker.top() - h - 6);
    return QRect(left, top, w, h);
}

QModelIndex SnapshotTimelineView::indexAt(const QPoint &pos) const
{
    if (!m_model)
        return {};
    // Newest on top, as painted; a few pixels of slack for small markers.
    const QModelIndexList indexes = m_model->indexesByTime();
    for (auto it = indexes.crbegin(); it != indexes.crend(); ++it) {
        if (markerRect(*it).adjusted(-3, -3, 3, 3).contains(pos))
            return *it;
    }
    return {};
}

void SnapshotTimelineView::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRect plot = plotRect();
    const Range &range = timeRange();
    const QPalette pal = palette();

    const double shadeLeft = paintRetention(painter, range, plot);
    paintLegend(painter);
    // Labels sit on a patch of what is behind them, so an edge passing under one does not run
    // through its letters.
    QColor shaded = pal.color(QPalette::Base);
    const double alpha = kRetention.alphaF();
    shaded.setRgbF(shaded.redF() * (1 - alpha) + kRetention.redF() * alpha,
                   shaded.greenF() * (1 - alpha) + kRetention.greenF() * alpha,
                   shaded.blueF() * (1 - alpha) + kRetention.blueF() * alpha);
    m_painted.clear();
    // What a label must not cover: markers, labels and tags drawn or placed before it.
    QList<QRect> taken;
    const auto labelBox = [&](const QPoint &baseline, const QString &text) {
        const QFontMetrics metrics = painter.fontMetrics();
        return QRect(baseline.x() - 2, baseline.y() - metrics.ascent() - 1,
                     metrics.horizontalAdvance(text) + 4, metrics.height() + 2);
    };
    auto drawLabel = [&](const QPoint &baseline, const QString &text) {
        const QRect box = labelBox(baseline, text);
        const int middle = box.center().x();
        painter.fillRect(box,
                         middle >= shadeLeft && middle <= plot.right() ? shaded
                                                                       : pal.color(QPalette::Base));
        painter.drawText(baseline, text);
        taken.append(box);
        m_painted.append(PaintedItem {PaintedItem::Label, box, text, 1});
    };

    if (!m_model || m_model->snapshotCount() == 0) {
        painter.setPen(pal.color(QPalette::PlaceholderText));
        painter.drawText(rect().adjusted(leftMargin(), kTopMargin, -kRightMargin, -kBottomMargin),
                         Qt::AlignCenter | Qt::TextWordWrap,
                         m_model && !m_model->sandbox().isEmpty()
                             ? tr("No snapshots of %1 yet. Take one with Take Snapshot "
                                  "(Ctrl+Shift+S).")
                                   .arg(m_model->sandbox())
                             : tr("Select a sandbox to see its snapshots."));
        paintAxis(painter, range, plot);
        return;
    }

    // Lanes: a faint guide and the branch's title.
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.9);
    painter.setFont(small);
    for (int lane = 0; lane < m_model->laneCount(); ++lane) {
        const int y = yForLane(lane);
        painter.setPen(QPen(pal.color(QPalette::Mid), 1, Qt::DotLine));
        painter.drawLine(plot.left(), y, plot.right(), y);
        painter.setPen(pal.color(QPalette::Text));
        const QString title = painter.fontMetrics().elidedText(m_model->laneTitle(lane),
                                                               Qt::ElideRight, plot.left() - 16);
        painter.drawText(QRect(8, y - 10, plot.left() - 14, 20), Qt::AlignLeft | Qt::AlignVCenter,
                         title);
        taken.append(QRect(8, y - 10, painter.fontMetrics().horizontalAdvance(title), 20));
    }

    const QModelIndexList indexes = m_model->indexesByTime();
    // Edges to parents: along the lane, then a curve down into a branch's lane.
    for (const QModelIndex &index : indexes) {
        const QModelIndex parent = index.parent();
        if (!parent.isValid())
            continue;
        const QPointF a = centerOf(parent, range, plot);
        const QPointF b = centerOf(index, range, plot);
        const bool foreign = index.data(SnapshotTimelineModel::ForeignRole).toBool()
            != parent.data(SnapshotTimelineModel::ForeignRole).toBool();
        painter.setPen(QPen(pal.color(QPalette::Text).lighter(150), 2,
                            foreign ? Qt::DashLine : Qt::SolidLine));
        painter.setBrush(Qt::NoBrush);
        QPainterPath path(a);
        if (std::abs(a.y() - b.y()) < 1) {
            path.lineTo(b);
        } else {
            const double bend = std::min(40.0, std::max(12.0, (b.x() - a.x()) / 2));
            path.cubicTo(a + QPointF(bend, 0), QPointF(a.x() + bend, b.y()),
                         QPointF(std::min(b.x(), a.x() + 2 * bend), b.y()));
            path.lineTo(b);
        }
        painter.drawPath(path);
    }

    // Fresh forks without snapshots: a dashed branch from the snapshot they started from to a
    // hollow marker at now.
    for (const SnapshotTimelineModel::ForkStub &stub : m_model->forkStubs()) {
        const QModelIndex from = m_model->indexOf(stub.from);
        if (!from.isValid())
            continue;
        const QPointF a = centerOf(from, range, plot);
        const QPointF b(range.nowX, yForLane(stub.lane));
        painter.setPen(QPen(pal.color(QPalette::Text).lighter(150), 2, Qt::DashLine));
        painter.setBrush(Qt::NoBrush);
        const double bend = std::min(40.0, std::max(12.0, (b.x() - a.x()) / 2));
        QPainterPath path(a);
        path.cubicTo(a + QPointF(bend, 0), QPointF(a.x() + bend, b.y()),
                     QPointF(std::min(b.x(), a.x() + 2 * bend), b.y()));
        path.lineTo(b);
        painter.drawPath(path);
        painter.setPen(QPen(kManual, 2));
        painter.setBrush(pal.color(QPalette::Base));
        painter.drawEllipse(b, 6, 6);
        painter.setPen(pal.color(QPalette::Text));
        const QString text = tr("%1 runs, no snapshot yet").arg(stub.sandbox);
        const int w = painter.fontMetrics().horizontalAdvance(text);
        drawLabel(QPoint(int(std::min(b.x() - w / 2.0, double(width() - w - 4))),
                         int(b.y()) + 8 + painter.fontMetrics().ascent()),
                  text);
    }

    // The current state's tag goes over the head's marker: labels keep out of its way.
    const QRect tag = currentStateRect();
    if (!tag.isEmpty())
        taken.append(tag);

    // The current state: from the head to now, or on its own when it does not descend from it.
    if (!m_detached.isEmpty()) {
        const QRectF marker = QRectF(currentStateMarker()).adjusted(2, 2, -2, -2);
        painter.setPen(QPen(kManual, 2));
        painter.setBrush(pal.color(QPalette::Base));
        painter.drawEllipse(marker);
        painter.setPen(pal.color(QPalette::Text));
        const int w = painter.fontMetrics().horizontalAdvance(m_detached);
        drawLabel(QPoint(int(std::min(marker.center().x() - w / 2.0, double(width() - w - 4))),
                         int(marker.bottom()) + 4 + painter.fontMetrics().ascent()),
                  m_detached);
    } else if (const QModelIndex head = m_model->indexOf(m_model->head()); head.isValid()) {
        const QPointF a = centerOf(head, range, plot);
        const double nowX = range.nowX;
        painter.setPen(QPen(kManual, 2, Qt::DashLine));
        painter.drawLine(a, QPointF(nowX, a.y()));
        painter.setBrush(kManual);
        QPolygonF arrow;
        arrow << QPointF(nowX + 8, a.y()) << QPointF(nowX, a.y() - 5) << QPointF(nowX, a.y() + 5);
        painter.drawPolygon(arrow);
        painter.setPen(pal.color(QPalette::Text));
        // Over the arrow, else after its tip, else under it (the current state's tag may stand
        // over it, and under it is where the head's label goes).
        const QString now = tr("now");
        const QFontMetrics nowMetrics = painter.fontMetrics();
        const QPoint over(int(nowX) - 14, int(a.y()) - 10);
        const QPoint after(int(nowX) + 12, int(a.y()) + nowMetrics.ascent() / 2 - 1);
        const QPoint under(int(nowX) - 14, int(a.y()) + 8 + nowMetrics.ascent());
        QPoint at = under;
        for (const QPoint &candidate : {over, after}) {
            const QRect box = labelBox(candidate, now);
            if (rect().contains(box)
                && std::none_of(taken.cbegin(), taken.cend(),
                                [&](const QRect &other) { return other.intersects(box); })) {
                at = candidate;
                break;
            }
        }
        drawLabel(at, now);
    }

    // Markers, oldest first so newer ones are on top; clusters where there is no room for each.
    const QModelIndex current = currentIndex();
    const QString currentId = current.data(SnapshotTimelineModel::IdRole).toString();
    struct Placed
    {
        QPointF center;
        int radius = 0;
        bool pinned = false;
        int lane = 0;
        QString label;
    };
    std::vector<Placed> placed;
    QList<QRect> markerBoxes;
    const auto markerBox = [](const QPointF &c, int r, bool pinned) {
        // The pin stands above the marker.
        return QRect(int(c.x()) - r - 1, int(c.y()) - r - (pinned ? 16 : 1), 2 * r + 3,
                     2 * r + (pinned ? 17 : 3));
    };
    std::vector<bool> clusterDrawn(range.clusters.size(), false);
    for (const QModelIndex &index : indexes) {
        const QString id = index.data(SnapshotTimelineModel::IdRole).toString();
        const QString label =
            index.siblingAtColumn(SnapshotTimelineModel::LabelColumn).data().toString();
        if (const int clusterIndex = range.clusterOf.value(id, -1); clusterIndex >= 0) {
            if (clusterDrawn[size_t(clusterIndex)])
                continue;
            clusterDrawn[size_t(clusterIndex)] = true;
            const Range::Cluster &cluster = range.clusters[size_t(clusterIndex)];
            const QPointF c(cluster.x, yForLane(cluster.lane));
            const int r = cluster.radius;
            // One colour when its snapshots are of one kind, grey when mixed.
            std::optional<SnapshotKind> kind;
            bool mixed = false;
            bool pinned = false;
            for (const QString &member : cluster.ids) {
                const QModelIndex m = m_model->indexOf(member);
                const auto k = SnapshotKind(m.data(SnapshotTimelineModel::KindRole).toInt());
                mixed = mixed || (kind && *kind != k);
                kind = k;
                pinned = pinned || m.data(SnapshotTimelineModel::PinnedRole).toBool();
            }
            const qsizetype at = cluster.ids.indexOf(currentId);
            if (at >= 0) {
                painter.setPen(Qt::NoPen);
                painter.setBrush(pal.color(QPalette::Highlight));
                painter.drawEllipse(c, r + 5, r + 5);
            }
            const QColor color = mixed || !kind ? kAutomatic : colorFor(*kind);
            painter.setPen(QPen(pinned ? kPinned : color.darker(130), pinned ? 3 : 1.5));
            painter.setBrush(color);
            painter.drawEllipse(c, r, r);
            // A second rim says "more than one".
            painter.setPen(QPen(color.darker(130), 1));
            painter.setBrush(Qt::NoBrush);
            painter.drawEllipse(c, r - 3.5, r - 3.5);
            if (pinned)
                paintPin(painter, c - QPointF(0, r + 2));
            QFont bold = painter.font();
            bold.setBold(true);
            painter.save();
            painter.setFont(bold);
            painter.setPen(Qt::white);
            painter.drawText(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r), Qt::AlignCenter,
                             QString::number(cluster.ids.size()));
            painter.restore();
            const QRect box = markerBox(c, r, pinned);
            markerBoxes.append(box);
            m_painted.append(PaintedItem {PaintedItem::Marker, box, cluster.ids.first(),
                                          int(cluster.ids.size())});
            const QString clusterLabel = at >= 0
                ? tr("%1 (%2 of %3)")
                      .arg(m_model->indexOf(currentId, SnapshotTimelineModel::LabelColumn)
                               .data()
                               .toString())
                      .arg(at + 1)
                      .arg(cluster.ids.size())
                : tr("%n snapshot(s)", "", int(cluster.ids.size()));
            placed.push_back(Placed {c, r, pinned, cluster.lane, clusterLabel});
            continue;
        }
        const QPointF c = centerOf(index, range, plot);
        const int r = markerRadius(index.data(SnapshotTimelineModel::NewBytesRole).toLongLong());
        const auto kind = SnapshotKind(index.data(SnapshotTimelineModel::KindRole).toInt());
        const bool pinned = index.data(SnapshotTimelineModel::PinnedRole).toBool();
        if (index == current) {
            painter.setPen(Qt::NoPen);
            painter.setBrush(pal.color(QPalette::Highlight));
            painter.drawPath(markerPath(kind, c, r + 5));
        }
        const QColor color = colorFor(kind);
        painter.setPen(QPen(pinned ? kPinned : color.darker(130), pinned ? 3 : 1.5));
        painter.setBrush(kind == SnapshotKind::Automatic ? color.lighter(125) : color);
        painter.drawPath(markerPath(kind, c, r));
        if (pinned)
            paintPin(painter, c - QPointF(0, r + 2));
        if (index.data(SnapshotTimelineModel::HeadRole).toBool()) {
            painter.setPen(QPen(pal.color(QPalette::Base), 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawEllipse(c, r * 0.45, r * 0.45);
        }
        const QRect box = markerBox(c, r, pinned);
        markerBoxes.append(box);
        m_painted.append(PaintedItem {PaintedItem::Marker, box, id, 1});
        placed.push_back(
            Placed {c, r, pinned, index.data(SnapshotTimelineModel::LaneRole).toInt(), label});
    }
    taken += markerBoxes;

    // Labels where they cover nothing: below the marker, else above it, else shorter, else not
    // at all (the tooltip and the list have every label).
    painter.setPen(pal.color(QPalette::Text));
    const QFontMetrics metrics = painter.fontMetrics();
    const auto isFree = [&](const QRect &box) {
        const QRect air = box.adjusted(-2, 0, 2, 0);
        return std::none_of(taken.cbegin(), taken.cend(),
                            [&](const QRect &other) { return other.intersects(air); });
    };
    for (const Placed &marker : placed) {
        bool drawn = false;
        for (const int widest : {120, 64}) {
            const QString text = metrics.elidedText(marker.label, Qt::ElideRight, widest);
            if (text.isEmpty())
                continue;
            const int w = metrics.horizontalAdvance(text);
            const int left =
                std::clamp(int(marker.center.x()) - w / 2, 2, std::max(2, width() - w - 4));
            const QPoint below(left, int(marker.center.y()) + marker.radius + metrics.ascent() + 3);
            const QPoint above(left,
                               int(marker.center.y()) - marker.radius - (marker.pinned ? 17 : 4)
                                   - metrics.descent());
            for (const QPoint &baseline : {below, above}) {
                if (isFree(labelBox(baseline, text))) {
                    drawLabel(baseline, text);
                    drawn = true;
                    break;
                }
            }
            if (drawn)
                break;
        }
    }
    // Where the sandbox runs from now: a ring and a tag, so a restore is seen at a glance.
    if (!tag.isEmpty()) {
        m_painted.append(PaintedItem {PaintedItem::Label, tag, currentStateText(), 1});
        const QRect marker = currentStateMarker();
        painter.setPen(QPen(kManual, 2.5));
        painter.setBrush(Qt::NoBrush);
        painter.drawEllipse(QRectF(marker).adjusted(-3, -3, 3, 3));
        painter.setPen(Qt::NoPen);
        painter.setBrush(kManual);
        painter.drawRoundedRect(tag, 4, 4);
        QPolygonF pointer;
        pointer << QPointF(marker.center().x() - 4, tag.bottom() + 1)
                << QPointF(marker.center().x() + 4, tag.bottom() + 1)
                << QPointF(marker.center().x(), tag.bottom() + 5);
        painter.drawPolygon(pointer);
        QFont bold = font();
        bold.setBold(true);
        painter.setFont(bold);
        painter.setPen(Qt::white);
        painter.drawText(tag, Qt::AlignCenter, currentStateText());
        painter.setFont(font());
    }
    if (hasFocus() && current.isValid()) {
        const QRect focus = markerRect(current).adjusted(-6, -6, 6, 6);
        painter.setPen(QPen(pal.color(QPalette::Highlight), 1, Qt::DotLine));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(focus);
    }
    paintAxis(painter, range, plot);
}

double SnapshotTimelineView::paintRetention(QPainter &painter, const Range &range,
                                            const QRect &plot) const
{
    constexpr double kNone = std::numeric_limits<double>::infinity();
    if (!m_model || m_model->sandbox().isEmpty())
        return kNone;
    const SnapshotSchedule schedule = m_model->schedule();
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.9);
    painter.setFont(small);
    const QRect note(plot.left(), 4, width() - plot.left() - 8, 18);
    painter.setPen(palette().color(QPalette::Text));
    if (schedule.intervalMinutes == 0) {
        painter.drawText(note, Qt::AlignLeft | Qt::AlignVCenter,
                         tr("Automatic snapshots are off."));
        return kNone;
    }
    const QDateTime since = m_model->retainedSince();
    if (!since.isValid())
        return kNone;
    // Automatic snapshots inside the window are kept (thinned); older ones are deleted.
    const double x = std::max<double>(plot.left(), xFor(since, range, plot));
    const QRectF shade(x, plot.top() - 2, plot.right() - x, plot.height() + 4);
    painter.fillRect(shade, kRetention);
    painter.setPen(QPen(kRetention.darker(300), 1, Qt::DashLine));
    if (x > plot.left())
        painter.drawLine(QPointF(x, plot.top() - 2), QPointF(x, plot.bottom() + 2));
    const QDateTime hourlyEnd = range.now.addSecs(-qint64(schedule.hourlyHours) * 3600);
    const double hx = xFor(hourlyEnd, range, plot);
    if (schedule.hourlyHours > 0 && hx > plot.left() && hx < plot.right())
        painter.drawLine(QPointF(hx, plot.top() - 2), QPointF(hx, plot.bottom() + 2));
    painter.setPen(palette().color(QPalette::Text));
    const QString text = tr("Every %1 min; shaded: retention window (newest per hour for %2 h, "
                            "per day for %3 d; pinned kept)")
                             .arg(schedule.intervalMinutes)
                             .arg(schedule.hourlyHours)
                             .arg(schedule.dailyDays);
    painter.drawText(note, Qt::AlignLeft | Qt::AlignVCenter,
                     painter.fontMetrics().elidedText(text, Qt::ElideRight, note.width()));
    return x;
}

void SnapshotTimelineView::paintLegend(QPainter &painter) const
{
    struct Entry
    {
        SnapshotKind kind;
        bool pinned;
        QString text;
    };
    const QList<Entry> entries {{SnapshotKind::Manual, false, tr("manual")},
                                {SnapshotKind::Automatic, false, tr("automatic")},
                                {SnapshotKind::Safety, false, tr("safety")},
                                {SnapshotKind::Manual, true, tr("pinned")}};
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.9);
    painter.setFont(small);
    const QFontMetrics metrics(small);
    int x = leftMargin();
    const int y = 32;
    for (const Entry &entry : entries) {
        const QColor color = colorFor(entry.kind);
        painter.setPen(QPen(entry.pinned ? kPinned : color.darker(130), entry.pinned ? 3 : 1.5));
        painter.setBrush(entry.kind == SnapshotKind::Automatic ? color.lighter(125) : color);
        painter.drawPath(markerPath(entry.kind, QPointF(x + 5, y), 5));
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(QPoint(x + 14, y + metrics.ascent() / 2 - 1), entry.text);
        x += 14 + metrics.horizontalAdvance(entry.text) + 16;
    }
    // Elided where the window is narrow (or the language long); the tooltip has it whole.
    painter.drawText(
        QPoint(x, y + metrics.ascent() / 2 - 1),
        metrics.elidedText(legendText(), Qt::ElideRight, std::max(0, width() - x - 8)));
}

QString SnapshotTimelineView::legendText()
{
    return tr("size: new bytes stored; dashed: forks and the current state");
}

int SnapshotTimelineView::leftMargin() const
{
    // Room for the longest lane title ("fork: agent-experiment"), within reason.
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.9);
    const QFontMetrics metrics(small);
    int widest = 0;
    for (int lane = 0; m_model && lane < m_model->laneCount(); ++lane)
        widest = std::max(widest, metrics.horizontalAdvance(m_model->laneTitle(lane)));
    return std::clamp(widest + 24, 100, 240);
}

void SnapshotTimelineView::paintAxis(QPainter &painter, const Range &range, const QRect &plot) const
{
    const int y = plot.bottom() + 10;
    painter.setPen(palette().color(QPalette::Text));
    painter.drawLine(plot.left(), y, plot.right(), y);
    const qint64 spanS = std::max<qint64>(1, range.from.secsTo(range.to));
    static const qint64 steps[] = {1,         5,          10,         15,        30,    60,
                                   120,       300,        600,        900,       1800,  3600,
                                   2 * 3600,  3 * 3600,   6 * 3600,   12 * 3600, 86400, 2 * 86400,
                                   7 * 86400, 30 * 86400, 365 * 86400};
    qint64 step = steps[std::size(steps) - 1];
    for (qint64 candidate : steps) {
        if (plot.width() * candidate / spanS >= 90) {
            step = candidate;
            break;
        }
    }
    const QString format = step < 60 ? QStringLiteral("HH:mm:ss")
        : step < 86400               ? QStringLiteral("HH:mm")
                                     : QStringLiteral("yyyy-MM-dd");
    // Ticks on multiples of the step in local time, so labels read 10:15, 10:20...
    const QDateTime localFrom = range.from.toLocalTime();
    const qint64 offset = localFrom.offsetFromUtc();
    qint64 t = ((range.from.toSecsSinceEpoch() + offset) / step + 1) * step - offset;
    const QFontMetrics metrics(painter.font());
    double labelRight = -1e9;
    for (; t <= range.to.toSecsSinceEpoch(); t += step) {
        const QDateTime at = QDateTime::fromSecsSinceEpoch(t, Qt::UTC);
        const double x = xFor(at, range, plot);
        painter.drawLine(QPointF(x, y), QPointF(x, y + 4));
        // Where markers were pushed apart the ticks crowd: label only those with room.
        const QString text = QLocale().toString(at.toLocalTime(), format);
        const double left = x - metrics.horizontalAdvance(text) / 2.0;
        if (left < labelRight + 8)
            continue;
        painter.drawText(QPointF(left, y + 6 + metrics.ascent()), text);
        labelRight = left + metrics.horizontalAdvance(text);
    }
}

bool SnapshotTimelineView::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        // Over a marker: the snapshot in words; elsewhere the legend (elided when narrow).
        auto *help = static_cast<QHelpEvent *>(event);
        if (const int cluster = clusterAt(help->pos()); cluster >= 0) {
            // A cluster opens up on hover: its snapshots, newest first.
            const QStringList &ids = timeRange().clusters[size_t(cluster)].ids;
            QStringList lines {
                tr("%n snapshot(s) close together; click to pick one:", "", int(ids.size()))};
            constexpr int kShown = 15;
            for (qsizetype i = ids.size() - 1; i >= 0 && lines.size() <= kShown; --i)
                lines.append(m_model->indexOf(ids.at(i))
                                 .data(SnapshotTimelineModel::SummaryRole)
                                 .toString());
            if (ids.size() > kShown)
                lines.append(tr("… and %n more", "", int(ids.size()) - kShown));
            QToolTip::showText(help->globalPos(), lines.join(QLatin1Char('\n')), this);
            return true;
        }
        const QModelIndex index = indexAt(help->pos());
        QToolTip::showText(help->globalPos(),
                           index.isValid()
                               ? index.data(SnapshotTimelineModel::SummaryRole).toString()
                               : legendText(),
                           this);
        return true;
    }
    return QWidget::event(event);
}

void SnapshotTimelineView::mousePressEvent(QMouseEvent *event)
{
    setFocus(Qt::MouseFocusReason);
    if (const int cluster = clusterAt(event->position().toPoint());
        cluster >= 0 && event->button() == Qt::LeftButton) {
        // A click on a cluster opens it: a menu of its snapshots to pick from.
        const QStringList &ids = timeRange().clusters[size_t(cluster)].ids;
        if (!ids.contains(currentIndex().data(SnapshotTimelineModel::IdRole).toString()))
            setCurrentIndex(m_model->indexOf(ids.constLast()));
        showClusterMenu(cluster, event->globalPosition().toPoint());
        event->accept();
        return;
    }
    const QModelIndex index = indexAt(event->position().toPoint());
    if (index.isValid())
        setCurrentIndex(index);
    QWidget::mousePressEvent(event);
}

void SnapshotTimelineView::showClusterMenu(int cluster, const QPoint &globalPos)
{
    const QStringList ids = timeRange().clusters[size_t(cluster)].ids;
    auto *menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("clusterMenu"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->setAccessibleName(tr("Snapshots close together"));
    const QString currentId = currentIndex().data(SnapshotTimelineModel::IdRole).toString();
    for (qsizetype i = ids.size() - 1; i >= 0; --i) {
        const QString id = ids.at(i);
        const QModelIndex label = m_model->indexOf(id, SnapshotTimelineModel::LabelColumn);
        const QString time = QLocale().toString(m_model->indexOf(id)
                                                    .data(SnapshotTimelineModel::CreatedAtRole)
                                                    .toDateTime()
                                                    .toLocalTime(),
                                                QStringLiteral("HH:mm:ss"));
        QAction *action = menu->addAction(tr("%1 — %2").arg(label.data().toString(), time));
        action->setCheckable(true);
        action->setChecked(id == currentId);
        action->setData(id);
        connect(action, &QAction::triggered, this, [this, id] {
            if (m_model)
                setCurrentIndex(m_model->indexOf(id));
        });
    }
    menu->popup(globalPos);
}

void SnapshotTimelineView::enterEvent(QEnterEvent *event)
{
    m_pointerInside = true;
    QWidget::enterEvent(event);
}

void SnapshotTimelineView::leaveEvent(QEvent *event)
{
    m_pointerInside = false;
    if (m_clockPending) {
        m_range.reset();
        update();
    }
    QWidget::leaveEvent(event);
}

void SnapshotTimelineView::mouseDoubleClickEvent(QMouseEvent *event)
{
    const QModelIndex index = indexAt(event->position().toPoint());
    if (index.isValid())
        Q_EMIT activated(index);
}

void SnapshotTimelineView::contextMenuEvent(QContextMenuEvent *event)
{
    QPoint global = event->globalPos();
    QModelIndex snapshot;
    if (event->reason() == QContextMenuEvent::Keyboard) {
        // The keyboard acts on the current snapshot, as the arrow keys chose it.
        snapshot = currentIndex();
        const QRect marker = markerRect(snapshot);
        global = mapToGlobal(marker.isEmpty() ? rect().center() : marker.bottomRight());
    } else {
        // The mouse acts on what is under it, and on nothing else: a click on empty space
        // must not restore or delete the snapshot selected a while ago.
        snapshot = indexAt(event->pos());
        if (snapshot.isValid())
            setCurrentIndex(snapshot);
    }
    Q_EMIT menuRequested(global, snapshot);
    event->accept();
}

void SnapshotTimelineView::keyPressEvent(QKeyEvent *event)
{
    if (!m_model) {
        QWidget::keyPressEvent(event);
        return;
    }
    const QModelIndexList byTime = m_model->indexesByTime();
    switch (event->key()) {
    case Qt::Key_Left:
        moveInTime(-1);
        break;
    case Qt::Key_Right:
        moveInTime(1);
        break;
    case Qt::Key_Up:
        moveLane(-1);
        break;
    case Qt::Key_Down:
        moveLane(1);
        break;
    case Qt::Key_Home:
        if (!byTime.isEmpty())
            setCurrentIndex(byTime.constFirst());
        break;
    case Qt::Key_End:
        if (!byTime.isEmpty())
            setCurrentIndex(byTime.constLast());
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (currentIndex().isValid())
            Q_EMIT activated(currentIndex());
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void SnapshotTimelineView::moveInTime(int step)
{
    const QModelIndexList byTime = m_model->indexesByTime();
    if (byTime.isEmpty())
        return;
    const qsizetype at = byTime.indexOf(currentIndex());
    if (at < 0) {
        setCurrentIndex(step > 0 ? byTime.constFirst() : byTime.constLast());
        return;
    }
    setCurrentIndex(byTime.at(std::clamp<qsizetype>(at + step, 0, byTime.size() - 1)));
}

void SnapshotTimelineView::moveLane(int step)
{
    const QModelIndex current = currentIndex();
    if (!current.isValid()) {
        moveInTime(1);
        return;
    }
    const int lane = current.data(SnapshotTimelineModel::LaneRole).toInt() + step;
    const QDateTime time = current.data(SnapshotTimelineModel::CreatedAtRole).toDateTime();
    QModelIndex best;
    qint64 bestDistance = 0;
    for (const QModelIndex &index : m_model->indexesByTime()) {
        if (index.data(SnapshotTimelineModel::LaneRole).toInt() != lane)
            continue;
        const qint64 distance =
            std::abs(time.msecsTo(index.data(SnapshotTimelineModel::CreatedAtRole).toDateTime()));
        if (!best.isValid() || distance < bestDistance) {
            best = index;
            bestDistance = distance;
        }
    }
    if (best.isValid())
        setCurrentIndex(best);
}

void SnapshotTimelineView::focusInEvent(QFocusEvent *event)
{
    if (!currentIndex().isValid() && m_model) {
        // Keyboard users land on the head (where they are), else the newest snapshot.
        const QModelIndex head = m_model->indexOf(m_model->head());
        const QModelIndexList byTime = m_model->indexesByTime();
        if (head.isValid())
            setCurrentIndex(head);
        else if (!byTime.isEmpty())
            setCurrentIndex(byTime.constLast());
    }
    update();
    QWidget::focusInEvent(event);
}

void SnapshotTimelineView::focusOutEvent(QFocusEvent *event)
{
    update();
    QWidget::focusOutEvent(event);
}

void SnapshotTimelineView::updateDescription()
{
    if (!m_model || m_model->sandbox().isEmpty()) {
        setAccessibleDescription(tr("No sandbox selected."));
        return;
    }
    QString text =
        tr("%n snapshot(s) of %1", nullptr, m_model->snapshotCount()).arg(m_model->sandbox());
    text += QLatin1String(". ");
    text += tr("%n branch(es).", nullptr, m_model->laneCount());
    for (const SnapshotTimelineModel::ForkStub &stub : m_model->forkStubs()) {
        const QModelIndex from = m_model->indexOf(stub.from, SnapshotTimelineModel::LabelColumn);
        text += QLatin1Char(' ')
            + tr("%1 was forked from “%2” and has no snapshot yet.")
                  .arg(stub.sandbox, from.data().toString());
    }
    if (!m_detached.isEmpty())
        text += QLatin1Char(' ') + tr("The current state: %1.").arg(m_detached);
    else if (const QModelIndex head =
                 m_model->indexOf(m_model->head(), SnapshotTimelineModel::LabelColumn);
             head.isValid())
        text +=
            QLatin1Char(' ') + tr("The current state runs from “%1”.").arg(head.data().toString());
    const QModelIndex current = currentIndex();
    if (current.isValid())
        text += QLatin1Char(' ')
            + tr("Selected: %1.").arg(current.data(SnapshotTimelineModel::SummaryRole).toString());
    setAccessibleDescription(text);
}

} // namespace airlock

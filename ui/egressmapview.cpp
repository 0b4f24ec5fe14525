#include "ui/egressmapview.h"

#include "ui/destinationcountmodel.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace airlock {

namespace {

const QColor kAllowed(0x2e, 0x7d, 0x32);
const QColor kDenied(0xc6, 0x28, 0x28);
const QColor kMixed(0xe0, 0x8a, 0x00);

QColor edgeColor(const DestinationCountModel::Destination &destination)
{
    if (destination.denied == 0)
        return kAllowed;
    if (destination.allowed == 0)
        return kDenied;
    return kMixed;
}

} // namespace

EgressMapView::EgressMapView(QWidget *parent) : QWidget(parent)
{
    setAccessibleName(tr("Egress map"));
    setMinimumSize(320, 260);
    setFocusPolicy(Qt::StrongFocus);
    setBackgroundRole(QPalette::Base);
    setAutoFillBackground(true);
}

void EgressMapView::setModel(DestinationCountModel *model)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    if (model) {
        connect(model, &QAbstractItemModel::dataChanged, this, &EgressMapView::scheduleUpdate);
        connect(model, &QAbstractItemModel::rowsInserted, this, &EgressMapView::scheduleUpdate);
        connect(model, &QAbstractItemModel::modelReset, this, &EgressMapView::scheduleUpdate);
    }
    scheduleUpdate();
}

void EgressMapView::setSandbox(const QString &sandbox)
{
    m_sandbox = sandbox;
    scheduleUpdate();
}

void EgressMapView::scheduleUpdate()
{
    setAccessibleDescription(summary());
    update();
}

QString EgressMapView::summary() const
{
    if (!m_model || m_sandbox.isEmpty())
        return tr("No sandbox selected.");
    QStringList lines;
    for (const auto &destination : m_model->destinations(m_sandbox))
        lines.append(tr("%1: %2 allowed, %3 denied")
                         .arg(destination.name)
                         .arg(destination.allowed)
                         .arg(destination.denied));
    if (lines.isEmpty())
        return tr("%1 has made no connections yet.").arg(m_sandbox);
    return lines.join(QLatin1Char('\n'));
}

QList<DestinationCountModel::Destination>
EgressMapView::shownDestinations(QList<DestinationCountModel::Destination> destinations,
                                 int capacity)
{
    capacity = std::max(2, capacity);
    if (destinations.size() <= capacity)
        return destinations;
    std::stable_sort(destinations.begin(), destinations.end(), [](const auto &a, const auto &b) {
        return a.allowed + a.denied > b.allowed + b.denied;
    });
    DestinationCountModel::Destination others;
    const qsizetype hidden = destinations.size() - (capacity - 1);
    for (qsizetype i = capacity - 1; i < destinations.size(); ++i) {
        others.allowed += destinations.at(i).allowed;
        others.denied += destinations.at(i).denied;
    }
    others.name = tr("%n others", nullptr, int(hidden));
    destinations.resize(capacity - 1);
    destinations.append(others);
    return destinations;
}

QSize EgressMapView::sizeHint() const
{
    return {560, 420};
}

void EgressMapView::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRectF area = QRectF(rect()).adjusted(8, 8, -8, -8);
    const QPointF center = area.center();
    const QFontMetrics metrics(font());

    if (!m_model || m_sandbox.isEmpty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(area, Qt::AlignCenter, tr("Select a sandbox to see its egress map."));
        return;
    }
    // An ellipse that uses the widget's shape: the map usually sits in a tall, narrow pane,
    // where a circle sized by the width left most of it empty. Room is kept for short labels
    // beside the dots on the left and right; longer ones go above or below their dot.
    const qreal radiusX = std::max(40.0, area.width() / 2 - 80);
    // Not much taller than wide (long spikes read badly), and clear of the legend at the top.
    const qreal radiusY =
        std::max(40.0, std::min(area.height() / 2 - 3.5 * metrics.height(), 1.6 * radiusX));
    // As many destinations as the ellipse has room for labels (names are much wider than
    // tall, so about three and a half lines of text apart along its circumference); the rest
    // are summed up in one "N others" node.
    const qreal circumference = std::numbers::pi * (radiusX + radiusY);
    const int capacity = int(std::clamp(circumference / (3.5 * metrics.height()), 6.0, 32.0));
    const QList<DestinationCountModel::Destination> destinations =
        shownDestinations(m_model->destinations(m_sandbox), capacity);
    const int count = int(destinations.size());
    for (int i = 0; i < count; ++i) {
        const auto &destination = destinations.at(i);
        const qreal angle = -std::numbers::pi / 2 + 2 * std::numbers::pi * i / std::max(1, count);
        const QPointF end(center.x() + radiusX * std::cos(angle),
                          center.y() + radiusY * std::sin(angle));
        const qint64 hits = destination.allowed + destination.denied;
        QPen pen(edgeColor(destination), 1.5 + std::min(4.0, std::log2(1.0 + double(hits))));
        if (destination.allowed == 0)
            pen.setStyle(Qt::DashLine);
        painter.setPen(pen);
        painter.drawLine(center, end);

        // Hit counts in the middle of the edge.
        const QString counts = destination.denied == 0 ? QString::number(destination.allowed)
            : destination.allowed == 0
            ? QStringLiteral("✕ %1").arg(destination.denied)
            : QStringLiteral("%1 / ✕ %2").arg(destination.allowed).arg(destination.denied);
        const QPointF mid = (center + end) / 2;
        QRectF countRect = metrics.boundingRect(counts).toRectF().adjusted(-4, -1, 4, 1);
        countRect.moveCenter(mid);
        painter.setPen(Qt::NoPen);
        painter.setBrush(palette().color(QPalette::Base));
        painter.drawRoundedRect(countRect, 3, 3);
        painter.setPen(edgeColor(destination));
        painter.drawText(countRect, Qt::AlignCenter, counts);

        // The destination: a dot and its name, placed outward.
        painter.setBrush(edgeColor(destination));
        painter.setPen(Qt::NoPen);
        painter.drawEllipse(end, 6, 6);
        painter.setPen(palette().color(QPalette::Text));
        const QString label = metrics.elidedText(destination.name, Qt::ElideMiddle, 220);
        const QRectF labelRect = metrics.boundingRect(label).toRectF();
        QPointF labelPos = end;
        const qreal dx = std::cos(angle);
        const qreal dy = std::sin(angle);
        labelPos.rx() += dx >= 0.2 ? 10
            : dx <= -0.2           ? -10 - labelRect.width()
                                   : -labelRect.width() / 2;
        labelPos.ry() += dy >= 0.2 ? 8 + metrics.ascent()
            : dy <= -0.2           ? -10
                                   : metrics.ascent() / 2.0;
        // A name too long for its side of a narrow pane would be pushed back over its dot and
        // edge: it goes above the dot instead (below for the lower half), clear of the edge,
        // which leaves the dot towards the middle.
        const bool side = dx >= 0.2 || dx <= -0.2;
        if (side
            && (labelPos.x() < area.left() || labelPos.x() + labelRect.width() > area.right())) {
            labelPos.rx() = end.x() - labelRect.width() / 2;
            labelPos.ry() = dy < 0 ? end.y() - 10 : end.y() + 8 + metrics.ascent();
        }
        // Keep the label inside the widget, whichever side of the circle it is on.
        labelPos.rx() = std::clamp(labelPos.x(), area.left(),
                                   std::max(area.left(), area.right() - labelRect.width()));
        painter.drawText(labelPos, label);
    }

    // The sandbox in the middle.
    const QString name = m_sandbox;
    QRectF box = metrics.boundingRect(name).toRectF().adjusted(-14, -8, 14, 8);
    box.moveCenter(center);
    painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
    painter.setBrush(palette().color(QPalette::AlternateBase));
    painter.drawRoundedRect(box, 6, 6);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(box, Qt::AlignCenter, name);

    if (count == 0) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(area, Qt::AlignHCenter | Qt::AlignBottom, tr("No connections yet."));
    }
    // Legend.
    int x = int(area.left());
    const int y = int(area.top()) + metrics.ascent();
    for (const auto &[color, text] :
         {std::pair {kAllowed, tr("allowed")}, std::pair {kDenied, tr("denied")},
          std::pair {kMixed, tr("both")}}) {
        painter.setPen(QPen(color, 3));
        painter.drawLine(x, y - metrics.ascent() / 3, x + 18, y - metrics.ascent() / 3);
        painter.setPen(palette().color(QPalette::Text));
        painter.drawText(x + 22, y, text);
        x += 30 + metrics.horizontalAdvance(text);
    }
}

} // namespace airlock

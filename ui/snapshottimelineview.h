#pragma once

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QModelIndex>
#include <QPointer>
#include <QRect>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

class QItemSelectionModel;

namespace airlock {

class SnapshotTimelineModel;

/// Paints a SnapshotTimelineModel: a time axis (oldest snapshot to now), one lane per branch
/// (the model decides lanes), an edge from each snapshot to its parent, markers whose area
/// grows with the new bytes the snapshot stored (manual: blue circle, automatic: grey circle,
/// safety: orange diamond; pinned: a gold ring and pin), the current state as a dashed line
/// from the head to "now", and the retention window of the automatic schedule shaded.
///
/// It holds no data of its own: the current snapshot lives in the shared selection model
/// (also used by a tree view of the same model). Keys: Left/Right previous/next snapshot in
/// time, Up/Down the nearest snapshot of the lane above/below, Home/End, Menu or Shift+F10
/// the context menu (menuRequested); a double click or Enter emits activated(). The
/// accessible description names the current snapshot in words.
/// The axis stays put while the pointer is over the view: it is made anew when the snapshots
/// or the size change, and every 30 s for the moving "now" only while the pointer is elsewhere.
///
/// Markers do not crowd: when the width cannot give every marker its own room, neighbours in
/// time on the same lane are drawn as one cluster marker with their count (those closest in
/// time first, until the rest fit). Hovering a cluster lists its snapshots; a click opens a
/// menu of them to pick one; a snapshot inside a cluster that becomes current (keys, the list)
/// names itself in the cluster's label. Labels are drawn only where they overlap no marker,
/// no other label and no tag (below the marker, else above, else shorter, else not at all).
class SnapshotTimelineView final : public QWidget
{
    Q_OBJECT
public:
    explicit SnapshotTimelineView(QWidget *parent = nullptr);

    void setModel(SnapshotTimelineModel *model, QItemSelectionModel *selection);
    /// The first-column index of the current snapshot (invalid when none).
    QModelIndex currentIndex() const;
    void setCurrentIndex(const QModelIndex &index);
    /// The snapshot whose marker is at `pos` (widget coordinates), or invalid.
    QModelIndex indexAt(const QPoint &pos) const;
    /// Where `index`'s marker is drawn (widget coordinates); empty when not shown.
    QRect markerRect(const QModelIndex &index) const;
    /// The "current state" tag over the marker of the snapshot the sandbox now runs from (the
    /// head: after a restore, the restored snapshot), with a ring around that marker; empty
    /// when there is no head in view.
    QRect currentStateRect() const;
    /// The tag's text.
    static QString currentStateText() { return tr("current state"); }
    /// The current state does not descend from the head (e.g. the sandbox was started from
    /// its image's template after a restore): "now" is drawn as a marker of its own on the
    /// first lane, labelled `why`, with the tag over it, and no arrow from the head. Empty:
    /// the current state descends from the head (the default).
    void setDetachedState(const QString &why);
    QString detachedState() const { return m_detached; }
    /// Where the current state's marker is: the head's, or the "now" marker of a detached
    /// state (setDetachedState); empty when neither is shown.
    QRect currentStateMarker() const;
    /// Marker radius in pixels for a snapshot that stored `newBytes`: 5 for nothing new,
    /// growing with the logarithm of the size up to 18 (so a 1 GiB snapshot stays readable
    /// next to a 50 KiB one).
    static int markerRadius(qint64 newBytes);
    /// Radius of a cluster marker of `count` snapshots (room for its count).
    static int clusterRadius(int count);

    /// What the last paint drew in the plot, for tests (no two may overlap) and diagnostics.
    struct PaintedItem
    {
        enum Kind { Marker, Label };
        Kind kind = Marker;
        QRect rect;
        QString text; ///< a label's text; a marker's snapshot id (a cluster's: its first)
        int members = 1; ///< snapshots a marker stands for
    };
    QList<PaintedItem> paintedItems() const { return m_painted; }
    /// The snapshot ids drawn together with `index` as one cluster (empty: drawn on its own).
    QStringList clusterMembers(const QModelIndex &index) const;

    /// Where "now" comes from: QDateTime::currentDateTimeUtc unless a test moves time on.
    void setClock(std::function<QDateTime()> now) { m_now = std::move(now); }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    /// The context menu was asked for at `globalPos`: by the mouse, for the snapshot under it
    /// (which became current) or for none (`snapshot` invalid: empty space); by the keyboard,
    /// for the current snapshot (invalid when there is none).
    void menuRequested(const QPoint &globalPos, const QModelIndex &snapshot);
    void activated(const QModelIndex &index);

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void enterEvent(QEnterEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    void focusInEvent(QFocusEvent *event) override;
    void focusOutEvent(QFocusEvent *event) override;

private:
    /// The time axis: oldest snapshot to now, linear except that markers closer than a few
    /// pixels are pushed apart (snapshots seconds apart among ones hours apart); the axis
    /// follows through the knots, so ticks stay true.
    struct Range
    {
        QDateTime now; // the moment the axis was made; "now" on it
        QDateTime from;
        QDateTime to;
        std::vector<std::pair<qint64, double>> knots; // ms since epoch -> x, ascending
        QHash<QString, double> markerX; // snapshot id -> x
        double nowX = 0;
        struct Cluster
        {
            QStringList ids; // oldest first
            int lane = 0;
            double x = 0;
            int radius = 0;
        };
        std::vector<Cluster> clusters; // markers standing for two or more snapshots
        QHash<QString, int> clusterOf; // snapshot id -> index into clusters
    };
    const Range &timeRange() const;
    QRect plotRect() const;
    double xFor(const QDateTime &time, const Range &range, const QRect &plot) const;
    int laneHeight() const;
    int leftMargin() const;
    static QString legendText();
    int yForLane(int lane) const;
    QPoint centerOf(const QModelIndex &index, const Range &range, const QRect &plot) const;
    void paintAxis(class QPainter &painter, const Range &range, const QRect &plot) const;
    /// Shades the retention window; returns where the shade begins (infinity: no shade).
    double paintRetention(class QPainter &painter, const Range &range, const QRect &plot) const;
    void paintLegend(class QPainter &painter) const;
    void moveInTime(int step);
    void moveLane(int step);
    void updateDescription();
    /// The cluster drawn at `pos`, or -1.
    int clusterAt(const QPoint &pos) const;
    void showClusterMenu(int cluster, const QPoint &globalPos);

    QPointer<SnapshotTimelineModel> m_model;
    QPointer<QItemSelectionModel> m_selection;
    std::function<QDateTime()> m_now = [] { return QDateTime::currentDateTimeUtc(); };
    QString m_detached;
    QTimer m_clock; // "now" moves: a new axis now and then
    mutable std::optional<Range> m_range; // cached; reset when the data changes or the clock ticks
    mutable QSize m_rangeSize;
    mutable bool m_clockPending = false; // the clock ticked while the pointer was inside
    bool m_pointerInside = false;
    mutable QList<PaintedItem> m_painted;
};

} // namespace airlock

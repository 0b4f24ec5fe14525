#pragma once

#include "ui/destinationcountmodel.h"

#include <QPointer>
#include <QWidget>

namespace airlock {

/// The egress map of one sandbox: the sandbox in the middle, its destinations on a circle
/// around it, one edge per destination coloured by verdict (green: only allowed, red: only
/// denied, amber: both) and labelled with the hit counts. Repaints when the counts change, so
/// it follows the live events. The accessible description lists the same facts as text.
class EgressMapView final : public QWidget
{
    Q_OBJECT
public:
    explicit EgressMapView(QWidget *parent = nullptr);

    void setModel(DestinationCountModel *model);
    void setSandbox(const QString &sandbox);
    QString sandbox() const { return m_sandbox; }
    /// The map as text, one line per destination: "pypi.org: 12 allowed, 0 denied".
    QString summary() const;

    QSize sizeHint() const override;
    /// The destinations drawn when at most `capacity` fit around the sandbox: all of them when
    /// they fit, else the capacity - 1 with the most decisions and one last entry "N others"
    /// (empty sandbox) that adds up the rest, so 30 or 300 destinations stay readable.
    static QList<DestinationCountModel::Destination>
    shownDestinations(QList<DestinationCountModel::Destination> destinations, int capacity);

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    void scheduleUpdate();

    QPointer<DestinationCountModel> m_model;
    QString m_sandbox;
};

} // namespace airlock

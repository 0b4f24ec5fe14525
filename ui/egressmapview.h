#pragma once

#include <QPointer>
#include <QWidget>

namespace airlock {

class DestinationCountModel;

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

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    void scheduleUpdate();

    QPointer<DestinationCountModel> m_model;
    QString m_sandbox;
};

} // namespace airlock

#pragma once

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

#include <utility>

namespace airlock {

class Registry;

/// Stores the egress events of the sandboxes' gateways in the Registry (bounded per sandbox)
/// and announces each once it has its sequence number. A gateway parses guest traffic, so what
/// it reports is checked and re-serialized (unknown fields dropped) and bounded in size. Events
/// of one event-loop turn are stored in one transaction.
class EgressRecorder : public QObject
{
    Q_OBJECT
public:
    /// Largest event stored; a gateway (untrusted input parser) must not fill the registry.
    static constexpr qsizetype kMaxEventBytes = 16 * 1024;

    /// Keeps `history` events per sandbox (Registry::appendEgressBatch).
    EgressRecorder(Registry &registry, int history, QObject *parent = nullptr);
    /// Stores what is still queued (not announced: no one listens any more).
    ~EgressRecorder() override;

    /// Checks `object` (an EgressEvent from `name`'s gateway, whose sandbox field is replaced
    /// by `name`) and queues it; false when it is invalid or too large (logged, dropped).
    bool record(const QString &name, const QJsonObject &object);
    /// The event announcing that `name`'s gateway was restarted after it exited for
    /// `reason` (layer tcp: guest connections were refused until then, before any protocol).
    static QJsonObject gatewayRestartedEvent(const QString &name, const QString &reason,
                                             int attempt);
    /// Drops the queued events of `name` (a sandbox being deleted: its last events go with
    /// it, not into a later sandbox of the same name).
    void forget(const QString &name);
    /// Stores the queue now and announces each stored event.
    void flush();

Q_SIGNALS:
    /// An event of `name` stored under `seq`.
    void recorded(const QString &name, qint64 seq, const QJsonObject &event);

private:
    Registry &m_registry;
    int m_history;
    QList<std::pair<QString, QJsonObject>> m_pending; ///< checked, not yet stored
    bool m_flushQueued = false;
};

} // namespace airlock

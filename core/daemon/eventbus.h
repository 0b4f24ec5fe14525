#pragma once

#include <QObject>
#include <QSet>

namespace airlock {

class ConsoleHub;
class RpcServer;
class SandboxService;
class SnapshotService;

/// The helper's notifications (docs/protocol.md, "Notifications"): turns the services' signals
/// into notification frames and sends each to the clients that asked. `sandbox.changed`,
/// `sandbox.removed`, `policy.changed`, `egress.event` and `snapshot.changed` go to every
/// connection that called `events.subscribe` (served here), `console.output` to the connections
/// ConsoleHub has attached to that console. A closed connection's subscriptions and console
/// attachments go with it. Owns no state but the subscriber set.
class EventBus : public QObject
{
    Q_OBJECT
public:
    EventBus(RpcServer &server, SandboxService &sandboxes, ConsoleHub &consoles,
             SnapshotService &snapshots, QObject *parent = nullptr);

    /// Sends a notification frame to every client that called events.subscribe.
    void notifySubscribers(const QByteArray &frame);

private:
    RpcServer &m_server;
    QSet<quint64> m_subscribers;
};

} // namespace airlock

#include "core/daemon/eventbus.h"

#include "core/daemon/consolehub.h"
#include "core/daemon/rpcserver.h"
#include "core/daemon/sandboxservice.h"
#include "core/daemon/snapshotservice.h"
#include "core/protocol/message.h"
#include "core/protocol/methods.h"

namespace airlock {

namespace notification = protocol::notification;

EventBus::EventBus(RpcServer &server, SandboxService &sandboxes, ConsoleHub &consoles,
                   SnapshotService &snapshots, QObject *parent)
    : QObject(parent), m_server(server)
{
    m_server.addMethod(QString::fromLatin1(protocol::method::EventsSubscribe),
                       [this](const RpcContext &c, const QJsonObject &) {
                           m_subscribers.insert(c.clientId);
                           return Result<QJsonValue>(QJsonObject());
                       });
    connect(&m_server, &RpcServer::clientDisconnected, this,
            [this, hub = &consoles](quint64 client) {
                m_subscribers.remove(client);
                hub->detachAll(client);
            });
    connect(&sandboxes, &SandboxService::sandboxChanged, this, [this](const Sandbox &sandbox) {
        notifySubscribers(protocol::encodeNotification(
            QString::fromLatin1(notification::SandboxChanged),
            QJsonObject {{QStringLiteral("sandbox"), sandbox.toJson()}}));
    });
    connect(&sandboxes, &SandboxService::sandboxRemoved, this, [this](const QString &name) {
        notifySubscribers(
            protocol::encodeNotification(QString::fromLatin1(notification::SandboxRemoved),
                                         QJsonObject {{QStringLiteral("name"), name}}));
    });
    connect(&sandboxes, &SandboxService::policyChanged, this, [this](const QString &name) {
        notifySubscribers(
            protocol::encodeNotification(QString::fromLatin1(notification::PolicyChanged),
                                         QJsonObject {{QStringLiteral("name"), name}}));
    });
    connect(&sandboxes, &SandboxService::egressEvent, this,
            [this](const QString &name, qint64 seq, const QJsonObject &event) {
                notifySubscribers(
                    protocol::encodeNotification(QString::fromLatin1(notification::EgressEvent),
                                                 QJsonObject {{QStringLiteral("sandbox"), name},
                                                              {QStringLiteral("seq"), seq},
                                                              {QStringLiteral("event"), event}}));
            });
    connect(&consoles, &ConsoleHub::output, this,
            [this](const QString &sandbox, quint64 seq, const QByteArray &bytes,
                   const QSet<quint64> &recipients) {
                if (recipients.isEmpty())
                    return;
                const QByteArray frame = protocol::encodeNotification(
                    QString::fromLatin1(notification::ConsoleOutput),
                    QJsonObject {{QStringLiteral("sandbox"), sandbox},
                                 {QStringLiteral("seq"), qint64(seq)},
                                 {QStringLiteral("data"), QString::fromLatin1(bytes.toBase64())}});
                for (quint64 client : recipients)
                    m_server.send(client, frame);
            });
    const QString changed = QString::fromLatin1(notification::SnapshotChanged);
    connect(&snapshots, &SnapshotService::snapshotChanged, this,
            [this, changed](const QString &sandbox, const Snapshot &snapshot) {
                notifySubscribers(protocol::encodeNotification(
                    changed,
                    QJsonObject {{QStringLiteral("sandbox"), sandbox},
                                 {QStringLiteral("snapshot"), snapshot.toJson()}}));
            });
    connect(&snapshots, &SnapshotService::snapshotRemoved, this,
            [this, changed](const QString &sandbox, const QString &id) {
                notifySubscribers(
                    protocol::encodeNotification(changed,
                                                 QJsonObject {{QStringLiteral("sandbox"), sandbox},
                                                              {QStringLiteral("removed"), id}}));
            });
}

void EventBus::notifySubscribers(const QByteArray &frame)
{
    // Copy: a send may drop a client, and its disconnect handler edits the set.
    const QSet<quint64> subscribers = m_subscribers;
    for (quint64 client : subscribers)
        m_server.send(client, frame);
}

} // namespace airlock

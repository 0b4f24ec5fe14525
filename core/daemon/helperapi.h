#pragma once

#include "core/daemon/rpcserver.h"

#include <QObject>
#include <QSet>

namespace airlock {

class ConsoleHub;
class ImageStore;
class SandboxService;

/// Binds the methods of docs/protocol.md to the helper's services: reads and checks parameters
/// (types and ranges → invalid_params, names → invalid_name), calls SandboxService, ConsoleHub
/// and ImageStore, and turns their events into notifications for the clients that asked
/// (`events.subscribe`, `console.attach`). Owns no state but the subscriber set.
class HelperApi : public QObject
{
    Q_OBJECT
public:
    /// Default and largest `limit` of egress.history.
    static constexpr int kDefaultEgressLimit = 100;
    static constexpr int kMaxEgressLimit = 1000;
    /// Largest decoded `console.write` payload (64 KiB).
    static constexpr qsizetype kMaxConsoleWriteBytes = 64 * 1024;

    HelperApi(RpcServer &server, SandboxService &sandboxes, ConsoleHub &consoles,
              const ImageStore &images, QObject *parent = nullptr);

    /// Sends a notification frame to every client that called events.subscribe.
    void notifySubscribers(const QByteArray &frame);

private:
    void registerMethods();
    Result<QJsonValue> hello(const RpcContext &context, const QJsonObject &params);
    Result<QJsonValue> consoleAttach(const RpcContext &context, const QJsonObject &params);
    Result<QJsonValue> consoleDetach(const RpcContext &context, const QJsonObject &params);
    Result<QJsonValue> consoleWrite(const QJsonObject &params);
    Result<QJsonValue> imageList();
    Result<QJsonValue> policyGet(const QJsonObject &params);
    Result<QJsonValue> policySet(const QJsonObject &params);
    Result<QJsonValue> policyValidate(const QJsonObject &params);
    Result<QJsonValue> policyDryRun(const QJsonObject &params);
    Result<QJsonValue> egressHistory(const QJsonObject &params);

    RpcServer &m_server;
    SandboxService &m_sandboxes;
    ConsoleHub &m_consoles;
    const ImageStore &m_images;
    QSet<quint64> m_subscribers;
};

} // namespace airlock

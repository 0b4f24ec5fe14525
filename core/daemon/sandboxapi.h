#pragma once

#include "core/daemon/rpcserver.h"

#include <QObject>

namespace airlock {

class ConsoleHub;
class ImageStore;
class SandboxService;

/// Binds the sandbox methods of docs/protocol.md (`hello`, `sandbox.*`, `image.list`,
/// `console.attach|detach|write`, `policy.*`, `egress.history`) to SandboxService, ConsoleHub
/// and ImageStore: reads and checks parameters (types and ranges → invalid_params, names →
/// invalid_name) and turns the results into answers. Owns no state; the notifications these
/// methods lead to are the EventBus's.
class SandboxApi : public QObject
{
    Q_OBJECT
public:
    /// Default and largest `limit` of egress.history.
    static constexpr int kDefaultEgressLimit = 100;
    static constexpr int kMaxEgressLimit = 1000;
    /// Largest decoded `console.write` payload (64 KiB).
    static constexpr qsizetype kMaxConsoleWriteBytes = 64 * 1024;

    SandboxApi(RpcServer &server, SandboxService &sandboxes, ConsoleHub &consoles,
               const ImageStore &images, QObject *parent = nullptr);

private:
    void registerMethods();
    Result<QJsonValue> hello(const RpcContext &context, const QJsonObject &params);
    Result<QJsonValue> consoleAttach(const RpcContext &context, const QJsonObject &params);
    Result<QJsonValue> consoleDetach(const RpcContext &context, const QJsonObject &params);
    Result<QJsonValue> consoleWrite(const QJsonObject &params);
    Result<QJsonValue> imageList();
    Result<QJsonValue> policyGet(const QJsonObject &params);
    /// Answers through `reply` once the policy is stored and enforced (SandboxService::setPolicy).
    void policySet(const RpcContext &context, const QJsonObject &params, RpcServer::Reply reply);
    Result<QJsonValue> policyHistory(const QJsonObject &params);
    Result<QJsonValue> policyValidate(const QJsonObject &params);
    Result<QJsonValue> policyDryRun(const QJsonObject &params);
    Result<QJsonValue> egressHistory(const QJsonObject &params);

    RpcServer &m_server;
    SandboxService &m_sandboxes;
    ConsoleHub &m_consoles;
    const ImageStore &m_images;
};

} // namespace airlock

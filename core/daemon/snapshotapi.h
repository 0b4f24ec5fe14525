#pragma once

#include "core/daemon/rpcserver.h"

#include <QObject>

namespace airlock {

class HelperApi;
class SandboxService;
class SnapshotService;

/// Binds `vm.pause|resume` and `snapshot.*` (docs/protocol.md) to SandboxService and
/// SnapshotService, and sends `snapshot.changed` (plus `sandbox.changed` through the sandbox
/// service) to subscribers. Kept apart from HelperApi so each area's methods live together.
class SnapshotApi : public QObject
{
    Q_OBJECT
public:
    SnapshotApi(RpcServer &server, HelperApi &api, SandboxService &sandboxes,
                SnapshotService &snapshots, QObject *parent = nullptr);

private:
    void registerMethods();
    Result<QJsonValue> list(const QJsonObject &params);
    void restore(const QJsonObject &params, RpcServer::Reply reply);
    void fork(const QJsonObject &params, RpcServer::Reply reply);
    Result<QJsonValue> schedule(const QJsonObject &params);
    Result<QJsonValue> templates();
    Result<QJsonValue> prepareTemplate(const QJsonObject &params);

    RpcServer &m_server;
    HelperApi &m_api;
    SandboxService &m_sandboxes;
    SnapshotService &m_snapshots;
};

} // namespace airlock

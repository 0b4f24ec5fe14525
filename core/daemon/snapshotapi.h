#pragma once

#include "core/daemon/rpcserver.h"

#include <QObject>

namespace airlock {

class CredentialAudit;
class HelperApi;
class SandboxService;
class SecretOwners;
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

    /// Who may copy which bindings in `snapshot.fork` with `bindings: true`: only those of
    /// secrets the caller owns (root: all), each copy written to `audit`. Without it (unit
    /// tests) a fork copies every binding. Both must outlive this object.
    void setCredentialControls(SecretOwners *owners, CredentialAudit *audit)
    {
        m_owners = owners;
        m_audit = audit;
    }

private:
    void registerMethods();
    Result<QJsonValue> list(const QJsonObject &params);
    void restore(const QJsonObject &params, RpcServer::Reply reply);
    void fork(uid_t caller, const QJsonObject &params, RpcServer::Reply reply);
    Result<QJsonValue> schedule(const QJsonObject &params);
    Result<QJsonValue> templates();
    Result<QJsonValue> prepareTemplate(const QJsonObject &params);

    RpcServer &m_server;
    HelperApi &m_api;
    SandboxService &m_sandboxes;
    SnapshotService &m_snapshots;
    SecretOwners *m_owners = nullptr;
    CredentialAudit *m_audit = nullptr;
};

} // namespace airlock

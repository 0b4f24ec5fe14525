#pragma once

#include "core/daemon/rpcserver.h"
#include "core/daemon/snapshotservice.h"

#include <QObject>

namespace airlock {

class CredentialAudit;
class SandboxService;
class SecretOwners;
class SnapshotScheduler;
class SnapshotService;
class TemplateService;

/// Binds `vm.pause|resume`, `snapshot.*` and `template.*` (docs/protocol.md) to SandboxService,
/// SnapshotService, TemplateService and SnapshotScheduler. Kept apart from SandboxApi so each
/// area's methods live together; the `snapshot.changed` notifications are the EventBus's.
class SnapshotApi : public QObject
{
    Q_OBJECT
public:
    SnapshotApi(RpcServer &server, SandboxService &sandboxes, SnapshotService &snapshots,
                TemplateService &templates, SnapshotScheduler &schedules,
                QObject *parent = nullptr);

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
    /// Audits the copied bindings and answers once the fork's guest settled.
    void forkDone(uid_t caller, const QString &id, const Result<QString> &forked,
                  const SnapshotService::ForkBindings &forkBindings, const RpcServer::Reply &reply);
    Result<QJsonValue> schedule(const QJsonObject &params);
    Result<QJsonValue> templates();
    Result<QJsonValue> prepareTemplate(const QJsonObject &params);

    RpcServer &m_server;
    SandboxService &m_sandboxes;
    SnapshotService &m_snapshots;
    TemplateService &m_templates;
    SnapshotScheduler &m_schedules;
    SecretOwners *m_owners = nullptr;
    CredentialAudit *m_audit = nullptr;
};

} // namespace airlock

#pragma once

#include "core/e2b/e2bcontext.h"
#include "core/e2b/httpconnection.h"
#include "core/e2b/sandboxregistry.h"

#include <QHash>
#include <QObject>
#include <QPointer>

namespace airlock::e2b {

/// E2B's control API (spec/openapi.yml of e2b-dev/E2B, as the `e2b` npm SDK 2.x calls it:
/// SandboxApi in packages/js-sdk/src/sandbox/sandboxApi.ts) on top of airlockd:
///
/// | E2B | Airlock |
/// |---|---|
/// | `POST /v2/sandboxes` {templateID, timeout, metadata, envVars} | sandbox.create + sandbox.start
/// of `e2b-<id>`, then the agent's first answer | | `GET /sandboxes/{id}`, `GET /v2/sandboxes`
/// (metadata, state, limit, nextToken) | the registry + sandbox.get/list | | `DELETE
/// /sandboxes/{id}` | sandbox.kill + sandbox.delete | | `POST /sandboxes/{id}/timeout` {timeout} |
/// the registry's end time (expired() kills) | | `POST /v2/sandboxes/{id}/connect` {timeout} |
/// vm.resume / sandbox.start when not running |
///
/// and further pause/connect (snapshot.create, snapshot.restore), createSnapshot, fork,
/// deleteSnapshot, listSnapshots (snapshot.list), getMetrics (read in the guest) and
/// updateNetwork (policy.set); docs/e2b.md has the whole table.
///
/// Errors are `{"code": N, "message": ...}` (the SDK's handleApiError reads `code` and
/// `message`). Everything else answers 501 naming what is not supported.
class ControlApi : public QObject
{
    Q_OBJECT
public:
    explicit ControlApi(E2bContext context, QObject *parent = nullptr);

    /// True when the request is for the control API (the caller checked the API key).
    static bool handles(const HttpRequest &request);
    void handle(const QPointer<HttpConnection> &connection, const HttpRequest &request);
    /// E2B's `network` of POST /v2/sandboxes as an Airlock policy (docs/policy.md): each
    /// `allowOut` host name or `*.domain` a rule for ports 80 and 443, appended to `hosts`;
    /// IPs and CIDR ranges, `rules` (client-side secret values), an `egressProxy` and a
    /// `denyOut` other than 0.0.0.0/0 are invalid_params naming the Airlock way. An empty
    /// object when there is no allowOut (the sandbox keeps deny-all).
    static Result<QJsonObject> policyFromNetwork(const QJsonObject &body, QStringList *hosts);
    /// Kills and deletes the sandbox `id` (also what its timeout does).
    void kill(const QString &id, std::function<void(const Result<void> &)> done);

private:
    void create(const QPointer<HttpConnection> &connection, const HttpRequest &request);
    void info(const QPointer<HttpConnection> &connection, const QString &id);
    void list(const QPointer<HttpConnection> &connection, const HttpRequest &request);
    void setTimeout(const QPointer<HttpConnection> &connection, const QString &id,
                    const HttpRequest &request);
    void connectTo(const QPointer<HttpConnection> &connection, const QString &id,
                   const HttpRequest &request);
    /// E2B's pause: snapshot.create, then sandbox.kill; connect restores the snapshot.
    void pause(const QPointer<HttpConnection> &connection, const QString &id);
    /// E2B's createSnapshot: snapshot.create; the snapshot id is a template for create.
    void createSnapshot(const QPointer<HttpConnection> &connection, const QString &id,
                        const HttpRequest &request);
    /// E2B's fork: one snapshot.create, then `count` snapshot.fork.
    void fork(const QPointer<HttpConnection> &connection, const QString &id,
              const HttpRequest &request);
    /// E2B's deleteSnapshot (DELETE /templates/{id}): snapshot.delete of a snapshot of one of
    /// this registry's sandboxes; 404 for any other.
    void deleteSnapshot(const QPointer<HttpConnection> &connection, const QString &snapshot);
    /// snapshot.fork of `snapshot` into `sandbox` (its id and token set), the policy when one
    /// is given, the agent's first answer, then the registry.
    void forkInto(E2bSandbox sandbox, const QString &snapshot, int seconds,
                  const QJsonObject &policy, std::function<void(const Result<E2bSandbox> &)> done);
    /// E2B's getMetrics (GET /sandboxes/{id}/metrics): one sample read in the guest now
    /// (/proc/stat, /proc/meminfo, df of /); CPU use since the previous sample of this sandbox
    /// (the first: since its boot). A paused sandbox has none: [].
    void metrics(const QPointer<HttpConnection> &connection, const QString &id);
    /// E2B's Sandbox.listSnapshots (GET /snapshots?sandboxID=): snapshot.list, the snapshots
    /// createSnapshot made of this registry's sandboxes (not the pause, fork or Airlock's own).
    void listSnapshots(const QPointer<HttpConnection> &connection, const HttpRequest &request);
    /// E2B's updateNetwork (PUT /sandboxes/{id}/network): the body as policyFromNetwork reads
    /// it becomes the sandbox's policy (policy.set); omitted allowOut is deny-all.
    void updateNetwork(const QPointer<HttpConnection> &connection, const QString &id,
                       const HttpRequest &request);
    /// The metric body of `output` (see metrics()), updating the CPU sample of `id`.
    QJsonObject metricFrom(const QString &id, const QByteArray &output);

    /// Starts a created sandbox, then registers it and answers create.
    void boot(const QPointer<HttpConnection> &connection, E2bSandbox sandbox, int seconds);
    /// sandbox.start, then waits until the guest agent answers (exec.list), at most `deadline`.
    void startAndWait(const QString &name, std::function<void(const Result<void> &)> done);
    void waitForAgent(const QString &name, QDateTime deadline,
                      std::function<void(const Result<void> &)> done);

    /// The `Sandbox` body of create and connect (sandboxID, templateID, envdVersion, token).
    static QJsonObject sandboxBody(const E2bSandbox &sandbox);
    /// The `SandboxDetail` / `ListedSandbox` body, with `state` "running" or "paused".
    static QJsonObject detailBody(const E2bSandbox &sandbox, const QString &state);

    E2bContext m_context;
    /// The last /proc/stat sample (busy, total jiffies) of each sandbox, for getMetrics.
    QHash<QString, std::pair<quint64, quint64>> m_cpuSamples;
};

} // namespace airlock::e2b

#pragma once

#include "core/daemon/accesspolicy.h"
#include "core/model/error.h"
#include "core/protocol/message.h"

#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QObject>

#include <functional>

class QLocalServer;

namespace airlock {

class RpcConnection;

/// Who made a call: the server's id for the connection and the kernel's credentials for it.
struct RpcContext
{
    quint64 clientId = 0;
    PeerCredentials peer;
};

/// The helper's JSON-RPC endpoint (docs/protocol.md): a QLocalServer on a Unix socket with mode
/// 0660, owner root, the access group; every connection is checked with SO_PEERCRED against
/// the AccessPolicy before a byte is read. Methods are a table from name to handler; a handler
/// returns the result or an Error that becomes the JSON-RPC error object. Handlers run on the
/// event loop and must not block for long; one whose work takes long (snapshots) is registered
/// with addDeferredMethod() and answers later through its Reply, while the loop serves others.
class RpcServer : public QObject
{
    Q_OBJECT
public:
    using Handler = std::function<Result<QJsonValue>(const RpcContext &, const QJsonObject &)>;
    /// Answers a deferred call, once, from the server's thread. Harmless after the client left
    /// or the server was destroyed (the answer then goes nowhere).
    using Reply = std::function<void(const Result<QJsonValue> &)>;
    using DeferredHandler =
        std::function<void(const RpcContext &, const QJsonObject &, Reply reply)>;
    /// Connections of unprivileged clients served at once; more are answered `busy` and closed,
    /// so clients cannot use up the helper's file descriptors (each also holds up to 17 MiB of
    /// buffers).
    static constexpr int kMaxClients = 256;
    /// Connections one unprivileged uid may hold at once
    /// (docs/reviews/2026-12-01-newuser-pass.md#m4: one group member's idle sockets locked everyone
    /// out, root included).
    static constexpr int kMaxClientsPerUid = 32;
    /// Root's connections are counted apart (root always gets in while others fill their
    /// share), with a bound of their own.
    static constexpr int kMaxRootClients = 64;

    explicit RpcServer(AccessPolicy policy, QObject *parent = nullptr);
    ~RpcServer() override;

    /// Listens on `path`: creates the parent directory (0755) if missing, refuses when another
    /// helper answers there, removes a stale socket, then sets mode 0660, owner root:group.
    /// Errors: OperationFailed with the reason.
    Result<void> listen(const QString &path);
    /// Serves on an already listening Unix socket (systemd socket activation; the unit sets its
    /// mode and group). `path` is only for logs. Errors: OperationFailed.
    Result<void> listen(int listeningFd, const QString &path);
    /// Stops accepting and closes every client.
    void close();
    /// Registers (or replaces) the handler of a method.
    void addMethod(const QString &method, Handler handler);
    /// Registers (or replaces) a method that answers later through its Reply. Other requests,
    /// of this client too, are served meanwhile; answers carry their request's id (JSON-RPC
    /// allows them out of order).
    void addDeferredMethod(const QString &method, DeferredHandler handler);

    /// Sends an encoded frame to one client; false when that client is gone or was dropped.
    bool send(quint64 clientId, const QByteArray &frame);
    /// Output queued for one client and not yet read by it (0 when it is gone): streams
    /// (exec output) send more only while this stays small, so a slow reader slows its source
    /// instead of growing the helper.
    qint64 pendingOutputBytes(quint64 clientId) const;
    int clientCount() const { return int(m_clients.size()); }

Q_SIGNALS:
    /// A client went away (closed, dropped, or refused); forget what it subscribed to.
    void clientDisconnected(quint64 clientId);
    /// A client's socket took queued output (pendingOutputBytes() shrank).
    void clientWritten(quint64 clientId);

private:
    void acceptPending();
    void dispatch(RpcConnection &client, const protocol::Message &message);
    void forget(quint64 clientId);

    AccessPolicy m_policy;
    QLocalServer *m_server = nullptr;
    QString m_path;
    QHash<QString, Handler> m_methods;
    QHash<QString, DeferredHandler> m_deferred;
    QHash<quint64, RpcConnection *> m_clients;
    QHash<quint64, uid_t> m_served; ///< clients counted below, with their uid
    QHash<uid_t, int> m_perUid; ///< served connections per uid
    int m_unprivileged = 0; ///< served connections of uids other than 0
    quint64 m_nextClientId = 1;
};

} // namespace airlock

#pragma once

#include "core/daemon/rpcserver.h"

#include <QHash>
#include <QList>
#include <QObject>

#include <functional>

namespace airlock {

namespace agent {
class AgentClient;
}
class ExecSession;
class WatchSession;

/// Binds `exec.*`, `files.*` and `console.resize` (docs/protocol.md, "Exec", "Files" and
/// "console.resize") to the guest agents of
/// running sandboxes. Everything goes over the sandbox's agent channel (virtio-serial), never
/// its network: a sandbox with a deny-all policy still runs commands and moves files. File
/// contents travel inside the JSON messages (base64, at most kMaxFileChunkBytes per call); the
/// helper never opens a host path for a client.
class AgentApi : public QObject
{
    Q_OBJECT
public:
    /// The agent of a running sandbox: NotFound (no such sandbox, or one of the helper's own),
    /// InvalidState (not running), AgentUnavailable (no agent channel, or it is not ready).
    using ClientLookup = std::function<Result<agent::AgentClient *>(const QString &sandbox)>;

    /// Bytes of file data per files.read / files.write call: its base64 and the envelope fit
    /// one 1 MiB message.
    static constexpr qint64 kMaxFileChunkBytes = 512 * 1024;
    /// Bytes of exec.input data per call.
    static constexpr qint64 kMaxInputBytes = 64 * 1024;
    /// Entries of one files.list answer at most; beyond it, or beyond kMaxListAnswerBytes of
    /// JSON, the answer says `truncated`.
    static constexpr qint64 kMaxListEntries = 10000;
    static constexpr qint64 kMaxListAnswerBytes = 768 * 1024;
    /// Processes one client may follow at once.
    static constexpr int kMaxSessionsPerClient = 64;
    /// Folders one client may watch at once (files.watch).
    static constexpr int kMaxWatchesPerClient = 16;

    AgentApi(RpcServer &server, ClientLookup lookup, QObject *parent = nullptr);
    ~AgentApi() override;

    /// Sessions open right now (all clients).
    int sessionCount() const;

private:
    void registerMethods();
    Result<agent::AgentClient *> agentFor(const QJsonObject &params, QString *sandbox = nullptr);
    Result<ExecSession *> sessionFor(quint64 client, const QJsonObject &params);
    // Each answers through `reply`, later; an Error returned at once (a bad parameter, no
    // agent) is the answer instead.
    Result<void> startSession(const RpcContext &context, const QJsonObject &params, bool attach,
                              const RpcServer::Reply &reply);
    Result<void> list(const QJsonObject &params, const RpcServer::Reply &reply);
    /// `console.resize`: the console tty's size, set by `stty` run as root through the agent.
    Result<void> consoleResize(const QJsonObject &params, const RpcServer::Reply &reply);
    Result<void> stat(const QJsonObject &params, const RpcServer::Reply &reply);
    Result<void> listFiles(const QJsonObject &params, const RpcServer::Reply &reply);
    Result<void> read(const QJsonObject &params, const RpcServer::Reply &reply);
    Result<void> write(const QJsonObject &params, const RpcServer::Reply &reply);
    Result<void> mkdir(const QJsonObject &params, const RpcServer::Reply &reply);
    Result<void> remove(const QJsonObject &params, const RpcServer::Reply &reply);
    Result<void> rename(const QJsonObject &params, const RpcServer::Reply &reply);
    void forget(ExecSession *session);
    /// `files.watch`: answers `{watch}` once the guest set the watch; events follow as
    /// notifications (WatchSession).
    Result<void> watch(const RpcContext &context, const QJsonObject &params,
                       const RpcServer::Reply &reply);
    Result<QJsonValue> unwatch(const RpcContext &context, const QJsonObject &params);
    void forget(WatchSession *session);

    RpcServer &m_server;
    ClientLookup m_lookup;
    QHash<quint64, QList<ExecSession *>> m_sessions; ///< by client id
    QHash<quint64, QList<WatchSession *>> m_watches; ///< by client id
    quint64 m_nextWatch = 1;
};

} // namespace airlock

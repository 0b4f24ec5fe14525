#pragma once

#include "core/daemon/agentapi.h"

#include <QHash>
#include <QObject>

namespace airlock {

/// Binds `workspace.*` (docs/protocol.md, "Workspace") to the guest agents' archive streams: a
/// client sends a folder into the guest (pushStart, pushData..., pushFinish) or receives one
/// (pullStart, pullRead... until eof) as the archive stream of docs/agent-protocol.md, which it
/// writes or reads on the host itself, as its user. The helper only relays the bytes: it never
/// opens a host path for a client and never decodes what the guest sends. Transfers belong to
/// the connection that opened them and end with it.
class WorkspaceApi : public QObject
{
    Q_OBJECT
public:
    /// Transfers one connection may have open at once.
    static constexpr int kMaxTransfersPerClient = 8;
    /// Bytes per pushData / pullRead call: base64 and the envelope fit one 1 MiB message.
    static constexpr qint64 kMaxChunkBytes = AgentApi::kMaxFileChunkBytes;

    WorkspaceApi(RpcServer &server, AgentApi::ClientLookup lookup, QObject *parent = nullptr);
    ~WorkspaceApi() override;

    /// Transfers open right now (all clients).
    int transferCount() const;

private:
    struct Transfers;
    void registerMethods();
    Result<QJsonValue> start(quint64 client, const QJsonObject &params, bool push);
    /// The transfer `transfer` of `client`, as a push or a pull stream (NotFound otherwise).
    template<typename Stream>
    Result<Stream *> transferOf(quint64 client, const QJsonObject &params);
    void forget(quint64 client, qint64 id);

    RpcServer &m_server;
    AgentApi::ClientLookup m_lookup;
    QHash<quint64, QHash<qint64, QObject *>> m_transfers; ///< by client, then transfer id
    qint64 m_nextId = 1;
};

} // namespace airlock

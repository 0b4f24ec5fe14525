#pragma once

#include "core/agentwire/messages.h"
#include "core/daemon/rpcserver.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <deque>

namespace airlock {

namespace agent {
class AgentReadStream;
}

/// One client watching one guest folder (files.watch, docs/protocol.md "Exec and files"): the
/// agent's watch records (docs/agent-protocol.md, "Watch") go to that client as `files.event`
/// notifications of at most kMaxEventsPerNotification events, and one `files.watchEnd` when
/// the watch ends for any reason but the client's own files.unwatch.
///
/// Backpressure end to end, as ExecSession: records are taken from the stream (which credits
/// the guest only for what is taken) only while the client's connection holds less than
/// kHighWaterBytes unread; a client that does not read stops the guest agent reading inotify,
/// and the kernel's queue overflow reaches the client as one `overflow` event.
class WatchSession : public QObject
{
    Q_OBJECT
public:
    static constexpr int kMaxEventsPerNotification = 256;
    static constexpr qint64 kHighWaterBytes = 256 * 1024;
    /// Record bytes taken from the stream at a time.
    static constexpr qint64 kReadBytes = 64 * 1024;

    /// Follows `stream` (an AgentClient::watch stream, which stays the agent client's child)
    /// for client `client` of `server`; `id` names it in the notifications.
    WatchSession(RpcServer &server, quint64 client, QString sandbox, quint64 id,
                 agent::AgentReadStream *stream, QObject *parent = nullptr);
    ~WatchSession() override;

    quint64 client() const { return m_client; }
    const QString &sandbox() const { return m_sandbox; }
    quint64 id() const { return m_id; }
    /// Stops watching without a files.watchEnd (files.unwatch); ended() follows.
    void stop();

    /// "create", "write", "remove", "rename", "chmod", "overflow".
    static QString opName(agentwire::WatchOp op);

Q_SIGNALS:
    /// The guest set the watch.
    void started();
    /// The watch failed before it was set; nothing was sent to the client.
    void startFailed(const airlock::Error &error);
    /// Nothing more goes to the client; delete this.
    void ended();

private:
    void pump();
    void finish(const QJsonObject &error);
    void end();

    RpcServer &m_server;
    quint64 m_client;
    QString m_sandbox;
    quint64 m_id;
    QPointer<agent::AgentReadStream> m_stream;
    agentwire::WatchRecordDecoder m_decoder;
    std::deque<agentwire::WatchRecord> m_records; ///< decoded, not yet sent
    bool m_started = false;
    bool m_ended = false;
};

} // namespace airlock

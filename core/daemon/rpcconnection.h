#pragma once

#include "core/daemon/accesspolicy.h"
#include "core/protocol/lineframer.h"
#include "core/protocol/message.h"

#include <QObject>
#include <QTimer>

#include <functional>

class QLocalSocket;

namespace airlock {

/// One client of the helper on the server side: reads lines (protocol::LineFramer, 1 MiB
/// limit), decodes them, hands requests and notifications to the dispatcher, and writes
/// answers. It enforces the per-client rules of docs/protocol.md: a message over 1 MiB is
/// answered with message_too_large and the connection is closed; undecodable lines get
/// parse_error/invalid_request and the connection stays; a client whose unread output exceeds
/// kMaxPendingOutputBytes is dropped, and one that leaves a message unfinished for
/// kFrameTimeoutMs is closed. closed() is emitted exactly once, after which the server
/// deletes the object (deleteLater), so a dispatcher running for this client stays safe.
class RpcConnection : public QObject
{
    Q_OBJECT
public:
    static constexpr qint64 kMaxPendingOutputBytes = 16 * 1024 * 1024;
    /// A message must be complete this long after its first byte arrived; a client that
    /// leaves one unfinished is answered `invalid_request` and closed
    /// (docs/reviews/2026-12-01-newuser-pass.md#m4: half lines held connections forever). 1 MiB in
    /// 10 s is 100 KiB/s, far below any local or SSH link.
    static constexpr int kFrameTimeoutMs = 10000;

    using Dispatcher = std::function<void(RpcConnection &, const protocol::Message &)>;

    /// Takes ownership of the connected socket.
    RpcConnection(quint64 id, QLocalSocket *socket, PeerCredentials peer, Dispatcher dispatcher,
                  QObject *parent = nullptr);

    quint64 id() const { return m_id; }
    const PeerCredentials &peer() const { return m_peer; }
    bool isOpen() const { return !m_closed; }

    /// Queues one encoded frame (ending in '\n'). Returns false, and drops the client, when that
    /// would leave more than kMaxPendingOutputBytes unread; false too when already closed.
    bool send(const QByteArray &frame);
    /// Sends one last frame, then closes once it is written (refusals, oversize messages).
    void sendAndClose(const QByteArray &frame);
    /// Bytes queued for the client and not yet taken by its socket (0 once closed).
    qint64 pendingOutputBytes() const;
    /// Starts reading (call after connecting signals).
    void start();

Q_SIGNALS:
    void closed(quint64 id);
    /// The socket took queued output: pendingOutputBytes() shrank.
    void written(quint64 id);

private:
    void readAvailable();
    void markClosed();

    quint64 m_id;
    QLocalSocket *m_socket;
    PeerCredentials m_peer;
    Dispatcher m_dispatcher;
    protocol::LineFramer m_framer;
    bool m_closed = false;
    bool m_closing = false;
    QTimer m_frameTimer; ///< runs while an unfinished message is buffered
};

} // namespace airlock

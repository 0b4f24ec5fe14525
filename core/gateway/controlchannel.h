#pragma once

#include "core/protocol/lineframer.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>

class QSocketNotifier;

namespace airlock::gateway {

/// The gateway's end of its control channel with airlockd (docs/gateway.md): an inherited
/// stream socket (socketpair) carrying one JSON object per line in both directions, at most
/// kMaxLineBytes per line. Non-blocking on the Qt event loop; outgoing messages are queued
/// (at most kMaxQueuedBytes; beyond it events are dropped and counted, never the loop blocked).
class ControlChannel final : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kMaxLineBytes = 4 * 1024 * 1024;
    static constexpr qsizetype kMaxQueuedBytes = 64 * 1024 * 1024;

    /// Adopts `fd` (made non-blocking and close-on-exec).
    explicit ControlChannel(int fd, QObject *parent = nullptr);
    ~ControlChannel() override;

    /// Queues one message (compact JSON + '\n'). False when dropped because the queue is full.
    bool send(const QJsonObject &message);
    /// Writes everything queued, waiting (blocking, at most `timeoutMs`) for the peer to take
    /// it: used before exiting on a fatal error.
    void flushBlocking(int timeoutMs);
    /// Messages dropped because the peer did not read.
    quint64 droppedMessages() const { return m_dropped; }

Q_SIGNALS:
    /// One complete line that parsed as a JSON object.
    void messageReceived(const QJsonObject &message);
    /// The peer sent something that is not a JSON object per line, or a line too long.
    void protocolError(const QString &error);
    /// EOF: airlockd closed the channel (the gateway shuts down).
    void closed();

private:
    void onReadable();
    void onWritable();
    void flush();

    int m_fd = -1;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
    protocol::LineFramer m_framer {kMaxLineBytes};
    QByteArray m_out;
    qsizetype m_outOffset = 0;
    quint64 m_dropped = 0;
    bool m_failed = false;
};

} // namespace airlock::gateway

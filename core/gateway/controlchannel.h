#pragma once

#include "core/model/secretvalue.h"
#include "core/protocol/lineframer.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>

#include <optional>

class QSocketNotifier;

namespace airlock::gateway {

/// The gateway's end of its control channel with airlockd (docs/gateway.md): an inherited
/// stream socket (socketpair) carrying one JSON object per line in both directions, at most
/// kMaxLineBytes per line. Non-blocking on the Qt event loop; outgoing messages are queued
/// (at most kMaxQueuedBytes; beyond it events are dropped and counted, never the loop blocked;
/// essential messages, alerts and summaries, have kReservedBytes more of their own).
///
/// A line whose object has an integer "payloadBytes" N (1..kMaxPayloadBytes) is followed on the
/// stream by exactly N raw bytes (the credentials message: secret values must not pass through
/// the JSON parser, whose copies cannot be wiped). The channel reads them straight into locked
/// memory (SecretValue), wiping every other place they passed through, and emits
/// messageReceived() once all N arrived; the slot takes them with takePayload().
class ControlChannel final : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kMaxLineBytes = 4 * 1024 * 1024;
    static constexpr qsizetype kMaxQueuedBytes = 64 * 1024 * 1024;
    static constexpr qsizetype kMaxPayloadBytes = 16 * 1024 * 1024;
    static constexpr qsizetype kReservedBytes = 16 * 1024 * 1024;

    /// Adopts `fd` (made non-blocking and close-on-exec).
    explicit ControlChannel(int fd, QObject *parent = nullptr);
    ~ControlChannel() override;

    /// Queues one message (compact JSON + '\n'). False when dropped because the queue is full
    /// (kMaxQueuedBytes; `essential`: kMaxQueuedBytes + kReservedBytes). Replies and fatal
    /// messages are essential; ordinary egress events are not.
    bool send(const QJsonObject &message, bool essential = true);
    /// Writes everything queued, waiting (blocking, at most `timeoutMs`) for the peer to take
    /// it: used before exiting on a fatal error.
    void flushBlocking(int timeoutMs);
    /// Messages dropped because the peer did not read.
    quint64 droppedMessages() const { return m_dropped; }
    /// The payload of the message being delivered by messageReceived() (empty when it has
    /// none, or once taken).
    SecretValue takePayload() { return std::move(m_payload); }

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
    /// Delivers the complete lines buffered in the framer; stops at a payload still arriving.
    void processLines();
    void deliver(const QJsonObject &message);
    void failProtocol(const QString &error);

    int m_fd = -1;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
    protocol::LineFramer m_framer {kMaxLineBytes};
    QByteArray m_out;
    qsizetype m_outOffset = 0;
    quint64 m_dropped = 0;
    bool m_failed = false;
    bool m_readFailed = false;
    // A message whose payload is still arriving.
    std::optional<QJsonObject> m_awaiting;
    SecretValue m_payload;
    qsizetype m_payloadFilled = 0;
};

} // namespace airlock::gateway

#pragma once

#include "core/agent/agenterror.h"
#include "core/agentwire/creditwindow.h"
#include "core/agentwire/frame.h"

#include <QDeadlineTimer>
#include <QObject>
#include <QPointer>

#include <optional>

namespace airlock::agent {

class AgentClient;

/// One stream of an AgentClient (an exec, a file read or write, an archive): the base of
/// AgentProcess, AgentReadStream and AgentWriteStream. Created by the client as its child;
/// whoever uses it may delete it at any time, which cancels it in the guest (an exec
/// detaches, its process runs on). It ends exactly once: with its own success signal, or
/// with failed().
///
/// Bounds: what the guest sends on a stream is limited by the credit the stream granted,
/// which it grants only as its consumer reads (backpressure: a slow reader slows the guest);
/// more than that is a protocol error for the whole connection.
class AgentStream : public QObject
{
    Q_OBJECT
public:
    ~AgentStream() override;

    quint32 streamId() const { return m_id; }
    /// Neither ended nor failed.
    bool isOpen() const { return !m_closed; }
    /// The failure, once failed() was emitted.
    const std::optional<AgentError> &error() const { return m_error; }

signals:
    /// The stream failed: agent_unavailable, timeout, protocol_error, or the guest's Error.
    void failed(const airlock::agent::AgentError &error);

protected:
    AgentStream(AgentClient *client, quint32 id, quint64 request);

    /// A guest frame on this stream (the client checked stream and request ids); a
    /// ProtocolError when the guest broke the rules.
    virtual std::optional<agentwire::ProtocolError> handleFrame(const agentwire::Frame &frame) = 0;
    /// Credit arrived or the channel drained: writers send what they buffered.
    virtual void pump() { }
    /// Bytes this stream buffers (for AgentClient::bufferedBytes()).
    virtual qint64 buffered() const { return 0; }

    /// Ends the stream with an error and emits failed() (once; later calls do nothing); with
    /// `cancelGuest`, also tells the guest to drop it (a timeout).
    void fail(const AgentError &error, bool cancelGuest = false);
    /// Ends the stream normally (the subclass emits its own signal after this).
    void close();
    void send(agentwire::MessageType type, agentwire::ByteView payload = {});
    /// Grants the guest `bytes` more data on this stream.
    void grant(quint32 bytes);
    /// A Credit frame from the guest: adds it to what we may send, then pump(). BadPayload or
    /// CreditOverflow (a window beyond agentwire's limit) when the guest broke the rules.
    std::optional<agentwire::ProtocolError> takeCredit(const agentwire::Frame &frame);
    /// An Error frame from the guest: the stream fails with the guest's error. BadPayload when
    /// it does not decode.
    std::optional<agentwire::ProtocolError> takeGuestError(const agentwire::Frame &frame);
    /// Arms (or re-arms, on progress) the stall timeout; stall(false) disarms it.
    void stall(bool waiting);
    /// Arms the timeout to `ms` from now.
    void armDeadline(qint64 ms) { m_deadline = QDeadlineTimer(ms); }
    /// Sends Cancel when the stream is still open (destructor, detach).
    void cancelInGuest();

    QPointer<AgentClient> m_client;
    agentwire::CreditWindow m_receiveCredit; ///< what we granted the guest
    agentwire::CreditWindow m_sendCredit; ///< what the guest granted us

private:
    friend class AgentClient;

    quint32 m_id;
    quint64 m_request;
    bool m_closed = false;
    std::optional<AgentError> m_error;
    QDeadlineTimer m_deadline {QDeadlineTimer::Forever};
};

} // namespace airlock::agent

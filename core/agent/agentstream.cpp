#include "core/agent/agentstream.h"

#include "core/agent/agentclient.h"
#include "core/agentwire/messages.h"

namespace airlock::agent {

using namespace agentwire;

AgentStream::AgentStream(AgentClient *client, quint32 id, quint64 request)
    : QObject(client), m_client(client), m_id(id), m_request(request)
{ }

AgentStream::~AgentStream()
{
    if (m_client)
        m_client->forgetStream(this, !m_closed);
}

void AgentStream::fail(const AgentError &error, bool cancelGuest)
{
    if (m_closed)
        return;
    m_closed = true;
    m_error = error;
    m_deadline = QDeadlineTimer(QDeadlineTimer::Forever);
    if (m_client)
        m_client->forgetStream(this, cancelGuest);
    emit failed(error);
}

void AgentStream::close()
{
    if (m_closed)
        return;
    m_closed = true;
    m_deadline = QDeadlineTimer(QDeadlineTimer::Forever);
    if (m_client)
        m_client->forgetStream(this, false);
}

void AgentStream::send(MessageType type, ByteView payload)
{
    if (m_client && !m_closed)
        m_client->sendFrame(type, m_id, m_request, payload);
}

void AgentStream::grant(quint32 bytes)
{
    if (bytes == 0 || m_closed || !m_receiveCredit.grant(bytes))
        return;
    if (auto payload = Credit {bytes}.encode())
        send(MessageType::Credit, *payload);
}

std::optional<ProtocolError> AgentStream::takeCredit(const Frame &frame)
{
    const auto credit = Credit::decode(frame.payload);
    if (!credit)
        return ProtocolError::BadPayload;
    if (!m_sendCredit.grant(credit->bytes))
        return ProtocolError::CreditOverflow;
    pump();
    return std::nullopt;
}

std::optional<ProtocolError> AgentStream::takeGuestError(const Frame &frame)
{
    const auto error = ErrorMessage::decode(frame.payload);
    if (!error)
        return ProtocolError::BadPayload;
    fail(AgentError::fromGuest(*error));
    return std::nullopt;
}

void AgentStream::stall(bool waiting)
{
    if (!waiting || !m_client) {
        m_deadline = QDeadlineTimer(QDeadlineTimer::Forever);
        return;
    }
    m_deadline = QDeadlineTimer(m_client->limits().stallTimeoutMs);
}

void AgentStream::cancelInGuest()
{
    if (m_closed)
        return;
    m_closed = true;
    if (m_client)
        m_client->forgetStream(this, true);
}

} // namespace airlock::agent

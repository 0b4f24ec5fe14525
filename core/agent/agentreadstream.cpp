#include "core/agent/agentreadstream.h"

#include "core/agent/agentclient.h"

namespace airlock::agent {

using namespace agentwire;

AgentReadStream::AgentReadStream(AgentClient *client, quint32 id, quint64 request, Kind kind)
    : AgentStream(client, id, request), m_kind(kind)
{ }

void AgentReadStream::grantInitialCredit()
{
    grant(m_client->limits().window);
}

QByteArray AgentReadStream::read(qint64 maxBytes)
{
    const qint64 n = maxBytes < 0 ? m_buffer.size() : std::min<qint64>(maxBytes, m_buffer.size());
    QByteArray out = m_buffer.first(n);
    m_buffer.remove(0, n);
    m_consumed += quint32(n);
    if (m_client && isOpen() && m_consumed >= m_client->limits().window / 4) {
        grant(m_consumed);
        m_consumed = 0;
        updateStall();
    }
    return out;
}

void AgentReadStream::updateStall()
{
    // The guest owes data while it has credit; with none, the consumer is the slow one. A
    // watch owes nothing once it is set: events come when the guest's files change.
    stall(isOpen() && m_receiveCredit.available() > 0 && !(m_kind == Kind::Watch && m_opened));
}

std::optional<ProtocolError> AgentReadStream::handleFrame(const Frame &frame)
{
    switch (frame.header.type) {
    case MessageType::FileOpened: {
        if (m_kind == Kind::Archive || m_opened)
            return ProtocolError::Unexpected;
        const auto opened = FileOpened::decode(frame.payload);
        if (!opened)
            return ProtocolError::BadPayload;
        if (m_kind == Kind::Watch && opened->size != 0)
            return ProtocolError::BadPayload;
        // A range read gets at most the range: the guest may not announce (and then stream)
        // more than was asked for.
        if (m_maxSize > 0 && opened->size > m_maxSize)
            return ProtocolError::BadPayload;
        m_opened = *opened;
        updateStall();
        emit this->opened(opened->size, opened->mode);
        return std::nullopt;
    }
    case MessageType::Data: {
        if (m_kind != Kind::Archive && !m_opened)
            return ProtocolError::Unexpected;
        if (!m_receiveCredit.spend(frame.payload.size()))
            return ProtocolError::CreditExceeded;
        m_received += frame.payload.size();
        if (m_kind == Kind::File && m_received > m_opened->size)
            return ProtocolError::BadPayload; // more than the size it announced
        m_buffer.append(reinterpret_cast<const char *>(frame.payload.data()),
                        qsizetype(frame.payload.size()));
        updateStall();
        emit readyRead();
        return std::nullopt;
    }
    case MessageType::End:
        if (!frame.payload.empty())
            return ProtocolError::BadPayload;
        if (m_kind == Kind::File && (!m_opened || m_received != m_opened->size))
            return ProtocolError::Unexpected; // an end before the announced size
        m_ended = true;
        close();
        emit finished();
        return std::nullopt;
    case MessageType::Error:
        return takeGuestError(frame);
    default:
        return ProtocolError::Unexpected;
    }
}

} // namespace airlock::agent

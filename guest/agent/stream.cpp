#include "guest/agent/stream.h"

#include <algorithm>

namespace airlock::guest {

using namespace agentwire;

std::optional<ProtocolError> Stream::frame(const Frame &frame)
{
    if (frame.header.type == MessageType::Credit) {
        const auto credit = Credit::decode(frame.payload);
        if (!credit)
            return ProtocolError::BadPayload;
        if (!m_sendCredit.grant(credit->bytes))
            return ProtocolError::CreditOverflow;
        return std::nullopt;
    }
    if (frame.header.type == MessageType::Cancel) {
        if (!frame.payload.empty())
            return ProtocolError::BadPayload;
        cancel();
        return std::nullopt;
    }
    return onFrame(frame);
}

void Stream::cancel()
{
    failWith(ErrorCode::Canceled, "canceled");
}

void Stream::send(MessageType type, ByteView payload)
{
    m_connection.send(type, m_id, m_request, payload);
}

void Stream::failWith(ErrorCode code, const std::string &message)
{
    if (m_finished)
        return;
    ErrorMessage error {code, message.substr(0, 1024)};
    if (auto payload = error.encode())
        send(MessageType::Error, *payload);
    m_finished = true;
}

void Stream::grant(std::uint32_t bytes)
{
    if (bytes == 0 || !m_receiveCredit.grant(bytes))
        return;
    if (auto payload = Credit {bytes}.encode())
        send(MessageType::Credit, *payload);
}

std::size_t Stream::sendable() const
{
    if (m_connection.outputFull())
        return 0;
    return std::size_t(std::min<std::uint64_t>(m_sendCredit.available(), kMaxPayloadBytes));
}

} // namespace airlock::guest

#include "core/agentwire/frame.h"

#include "core/agentwire/byteorder.h"

#include <cassert>

namespace airlock::agentwire {

std::string_view protocolErrorName(ProtocolError error)
{
    switch (error) {
    case ProtocolError::BadMagic:
        return "bad_magic";
    case ProtocolError::BadVersion:
        return "bad_version";
    case ProtocolError::UnknownType:
        return "unknown_type";
    case ProtocolError::WrongSender:
        return "wrong_sender";
    case ProtocolError::BadFlags:
        return "bad_flags";
    case ProtocolError::BadHeader:
        return "bad_header";
    case ProtocolError::Oversized:
        return "oversized";
    case ProtocolError::BadPayload:
        return "bad_payload";
    case ProtocolError::CreditExceeded:
        return "credit_exceeded";
    case ProtocolError::CreditOverflow:
        return "credit_overflow";
    case ProtocolError::UnknownStream:
        return "unknown_stream";
    case ProtocolError::UnknownRequest:
        return "unknown_request";
    case ProtocolError::Unexpected:
        return "unexpected";
    case ProtocolError::Flood:
        return "flood";
    }
    return "unknown";
}

std::expected<FrameHeader, ProtocolError> parseHeader(ByteView bytes, Sender from)
{
    assert(bytes.size() >= kHeaderBytes);
    if (loadLe<std::uint16_t>(bytes.data()) != kMagic)
        return std::unexpected(ProtocolError::BadMagic);
    if (bytes[2] != kVersion)
        return std::unexpected(ProtocolError::BadVersion);
    const std::optional<Sender> sender = senderOf(bytes[3]);
    if (!sender)
        return std::unexpected(ProtocolError::UnknownType);
    if (*sender != Sender::Both && *sender != from)
        return std::unexpected(ProtocolError::WrongSender);
    FrameHeader header;
    header.type = static_cast<MessageType>(bytes[3]);
    header.flags = loadLe<std::uint16_t>(bytes.data() + 4);
    const std::uint16_t allowedFlags = header.type == MessageType::ListResult ? kFlagEnd : 0;
    if ((header.flags & ~allowedFlags) != 0)
        return std::unexpected(ProtocolError::BadFlags);
    if (loadLe<std::uint16_t>(bytes.data() + 6) != 0)
        return std::unexpected(ProtocolError::BadHeader);
    header.stream = loadLe<std::uint32_t>(bytes.data() + 8);
    header.request = loadLe<std::uint64_t>(bytes.data() + 12);
    header.length = loadLe<std::uint32_t>(bytes.data() + 20);
    if (header.length > kMaxPayloadBytes)
        return std::unexpected(ProtocolError::Oversized);
    return header;
}

void appendFrame(Bytes &out, MessageType type, std::uint32_t stream, std::uint64_t request,
                 ByteView payload, std::uint16_t flags)
{
    assert(payload.size() <= kMaxPayloadBytes);
    const std::size_t at = out.size();
    out.resize(at + kHeaderBytes);
    std::uint8_t *header = out.data() + at;
    storeLe<std::uint16_t>(header, kMagic);
    header[2] = kVersion;
    header[3] = static_cast<std::uint8_t>(type);
    storeLe<std::uint16_t>(header + 4, flags);
    storeLe<std::uint16_t>(header + 6, 0);
    storeLe<std::uint32_t>(header + 8, stream);
    storeLe<std::uint64_t>(header + 12, request);
    storeLe<std::uint32_t>(header + 20, static_cast<std::uint32_t>(payload.size()));
    out.insert(out.end(), payload.begin(), payload.end());
}

Bytes encodeFrame(MessageType type, std::uint32_t stream, std::uint64_t request, ByteView payload,
                  std::uint16_t flags)
{
    Bytes out;
    out.reserve(kHeaderBytes + payload.size());
    appendFrame(out, type, stream, request, payload, flags);
    return out;
}

} // namespace airlock::agentwire

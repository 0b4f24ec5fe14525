#pragma once

#include "core/agentwire/wire.h"

#include <expected>
#include <string_view>

namespace airlock::agentwire {

/// Why a peer's bytes are not the protocol. Each is fatal for the connection: the decoder
/// stops and the receiver drops the connection (the host) or resynchronises on the next Hello
/// (the guest), docs/agent-protocol.md "Errors".
enum class ProtocolError : std::uint8_t {
    BadMagic = 1, ///< the first two header bytes are not kMagic
    BadVersion, ///< the header's version is not kVersion
    UnknownType, ///< a type MessageType does not define
    WrongSender, ///< a type the peer never sends (a guest sending Exec)
    BadFlags, ///< a flag bit that is not defined, or kFlagEnd on a type that has one frame
    BadHeader, ///< the reserved header field is not zero
    Oversized, ///< a payload length over kMaxPayloadBytes
    BadPayload, ///< the payload does not decode as its type (short, long, invalid field)
    CreditExceeded, ///< more data on a stream than the receiver granted
    CreditOverflow, ///< a grant that takes a window past kMaxCreditWindow
    UnknownStream, ///< a frame for a stream the receiver does not know
    UnknownRequest, ///< an answer to a request the receiver never sent
    Unexpected, ///< a valid frame at a moment the protocol does not allow it
    Flood, ///< more unsolicited frames or bytes than the receiver's budget
};

/// "bad_magic", "oversized", ...
std::string_view protocolErrorName(ProtocolError error);

/// The fixed header in front of every payload, little-endian on the wire:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 2 | magic kMagic ("AL") |
/// | 2 | 1 | version kVersion |
/// | 3 | 1 | type (MessageType) |
/// | 4 | 2 | flags (kFlagEnd; others zero) |
/// | 6 | 2 | reserved, zero |
/// | 8 | 4 | stream id (0: not a stream) |
/// | 12 | 8 | request id (the host's nonce of the request this frame belongs to) |
/// | 20 | 4 | payload length, at most kMaxPayloadBytes |
struct FrameHeader
{
    MessageType type = MessageType::Hello;
    std::uint16_t flags = 0;
    std::uint32_t stream = 0;
    std::uint64_t request = 0;
    std::uint32_t length = 0;
};

/// A decoded frame: header and payload (the payload's size is header.length).
struct Frame
{
    FrameHeader header;
    Bytes payload;
};

/// Parses the kHeaderBytes at `bytes` as a frame sent by `from`: magic, version, a known type
/// `from` sends, defined flags, a zero reserved field, a length within kMaxPayloadBytes.
std::expected<FrameHeader, ProtocolError> parseHeader(ByteView bytes, Sender from);

/// Appends the frame (header + payload) to `out`. The payload must be at most
/// kMaxPayloadBytes (checked by the message encoders; asserted here).
void appendFrame(Bytes &out, MessageType type, std::uint32_t stream, std::uint64_t request,
                 ByteView payload, std::uint16_t flags = 0);
/// One frame as its own buffer.
Bytes encodeFrame(MessageType type, std::uint32_t stream, std::uint64_t request, ByteView payload,
                  std::uint16_t flags = 0);

} // namespace airlock::agentwire

#pragma once

#include "core/agentwire/wire.h"

#include <string_view>

namespace airlock::agentwire {

/// Builds a payload field by field, little-endian: integers of fixed width, strings and blobs
/// prefixed by their length (u16 for strings, u32 for blobs). It does not check limits; the
/// message encoders do (messages.h), and ok() says whether the payload fits one frame.
class PayloadWriter
{
public:
    PayloadWriter &u8(std::uint8_t value);
    PayloadWriter &u16(std::uint16_t value);
    PayloadWriter &u32(std::uint32_t value);
    PayloadWriter &u64(std::uint64_t value);
    PayloadWriter &i32(std::int32_t value) { return u32(static_cast<std::uint32_t>(value)); }
    PayloadWriter &i64(std::int64_t value) { return u64(static_cast<std::uint64_t>(value)); }
    PayloadWriter &boolean(bool value) { return u8(value ? 1 : 0); }
    /// u16 length, then the bytes. A string over 65535 bytes makes the payload invalid (ok()).
    PayloadWriter &str(std::string_view value);
    /// u32 length, then the bytes.
    PayloadWriter &blob(ByteView value);
    /// The bytes as they are, no length (the payload of a data frame).
    PayloadWriter &raw(ByteView value);

    /// False once a string was too long for its prefix or the payload passed kMaxPayloadBytes.
    bool ok() const { return m_ok && m_bytes.size() <= kMaxPayloadBytes; }
    std::size_t size() const { return m_bytes.size(); }
    const Bytes &bytes() const { return m_bytes; }
    Bytes take() { return std::move(m_bytes); }

private:
    Bytes m_bytes;
    bool m_ok = true;
};

} // namespace airlock::agentwire

#pragma once

#include "core/agentwire/wire.h"

#include <string>
#include <string_view>

namespace airlock::agentwire {

/// Reads a payload field by field, strictly: a field that runs past the end, a string longer
/// than its limit or holding a NUL byte, or a boolean other than 0/1 makes the reader fail,
/// and every later read returns zero values. finish() is true only when every byte was read
/// and nothing failed, so trailing bytes are an error too.
class PayloadReader
{
public:
    explicit PayloadReader(ByteView bytes) : m_bytes(bytes) { }

    std::uint8_t u8();
    std::uint16_t u16();
    std::uint32_t u32();
    std::uint64_t u64();
    std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
    std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
    bool boolean();
    /// A u16-prefixed string of at most `maxBytes` bytes and no NUL.
    std::string str(std::size_t maxBytes = kMaxStringBytes);
    /// A u32-prefixed blob of at most `maxBytes` bytes.
    Bytes blob(std::size_t maxBytes = kMaxPayloadBytes);
    /// Everything not read yet.
    ByteView rest();

    /// Marks the payload invalid (a field decoded but its value is not allowed).
    void invalidate() { m_ok = false; }
    bool ok() const { return m_ok; }
    std::size_t remaining() const { return m_ok ? m_bytes.size() - m_at : 0; }
    /// True when all bytes were read and every field was valid.
    bool finish() const { return m_ok && m_at == m_bytes.size(); }

private:
    const std::uint8_t *take(std::size_t n);

    ByteView m_bytes;
    std::size_t m_at = 0;
    bool m_ok = true;
};

} // namespace airlock::agentwire

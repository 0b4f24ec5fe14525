#include "core/agentwire/payloadreader.h"

#include "core/agentwire/byteorder.h"

namespace airlock::agentwire {

const std::uint8_t *PayloadReader::take(std::size_t n)
{
    if (!m_ok || m_bytes.size() - m_at < n) {
        m_ok = false;
        return nullptr;
    }
    const std::uint8_t *at = m_bytes.data() + m_at;
    m_at += n;
    return at;
}

std::uint8_t PayloadReader::u8()
{
    const std::uint8_t *at = take(1);
    return at ? *at : 0;
}

std::uint16_t PayloadReader::u16()
{
    const std::uint8_t *at = take(2);
    return at ? loadLe<std::uint16_t>(at) : 0;
}

std::uint32_t PayloadReader::u32()
{
    const std::uint8_t *at = take(4);
    return at ? loadLe<std::uint32_t>(at) : 0;
}

std::uint64_t PayloadReader::u64()
{
    const std::uint8_t *at = take(8);
    return at ? loadLe<std::uint64_t>(at) : 0;
}

bool PayloadReader::boolean()
{
    const std::uint8_t value = u8();
    if (value > 1)
        m_ok = false;
    return m_ok && value == 1;
}

std::string PayloadReader::str(std::size_t maxBytes)
{
    const std::uint16_t size = u16();
    if (size > maxBytes) {
        m_ok = false;
        return {};
    }
    const std::uint8_t *at = take(size);
    if (!at)
        return {};
    std::string out(reinterpret_cast<const char *>(at), size);
    if (out.find('\0') != std::string::npos) {
        m_ok = false;
        return {};
    }
    return out;
}

Bytes PayloadReader::blob(std::size_t maxBytes)
{
    const std::uint32_t size = u32();
    if (size > maxBytes) {
        m_ok = false;
        return {};
    }
    const std::uint8_t *at = take(size);
    if (!at)
        return {};
    return Bytes(at, at + size);
}

ByteView PayloadReader::rest()
{
    if (!m_ok)
        return {};
    ByteView out = m_bytes.subspan(m_at);
    m_at = m_bytes.size();
    return out;
}

} // namespace airlock::agentwire

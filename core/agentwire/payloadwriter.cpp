#include "core/agentwire/payloadwriter.h"

#include "core/agentwire/byteorder.h"

#include <limits>

namespace airlock::agentwire {

namespace {

template<typename T>
void put(Bytes &out, T value)
{
    const std::size_t at = out.size();
    out.resize(at + sizeof(T));
    storeLe<T>(out.data() + at, value);
}

} // namespace

PayloadWriter &PayloadWriter::u8(std::uint8_t value)
{
    m_bytes.push_back(value);
    return *this;
}

PayloadWriter &PayloadWriter::u16(std::uint16_t value)
{
    put(m_bytes, value);
    return *this;
}

PayloadWriter &PayloadWriter::u32(std::uint32_t value)
{
    put(m_bytes, value);
    return *this;
}

PayloadWriter &PayloadWriter::u64(std::uint64_t value)
{
    put(m_bytes, value);
    return *this;
}

PayloadWriter &PayloadWriter::str(std::string_view value)
{
    if (value.size() > std::numeric_limits<std::uint16_t>::max()) {
        m_ok = false;
        return *this;
    }
    u16(static_cast<std::uint16_t>(value.size()));
    m_bytes.insert(m_bytes.end(), value.begin(), value.end());
    return *this;
}

PayloadWriter &PayloadWriter::blob(ByteView value)
{
    if (value.size() > kMaxPayloadBytes) {
        m_ok = false;
        return *this;
    }
    u32(static_cast<std::uint32_t>(value.size()));
    return raw(value);
}

PayloadWriter &PayloadWriter::raw(ByteView value)
{
    m_bytes.insert(m_bytes.end(), value.begin(), value.end());
    return *this;
}

} // namespace airlock::agentwire

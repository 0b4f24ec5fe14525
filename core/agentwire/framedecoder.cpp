#include "core/agentwire/framedecoder.h"

#include <algorithm>
#include <cstring>

namespace airlock::agentwire {

FrameDecoder::FrameDecoder(Sender from, Mode mode) : m_from(from), m_mode(mode)
{
    m_frame.payload.reserve(kMaxPayloadBytes);
}

std::size_t FrameDecoder::wanted() const
{
    if (m_ready || m_error)
        return 0;
    if (m_mode == Mode::SeekHello)
        return m_headerFill < kHeaderBytes ? kHeaderBytes - m_headerFill : 1;
    if (!m_haveHeader)
        return kHeaderBytes - m_headerFill;
    return m_frame.header.length - m_payloadFill;
}

std::size_t FrameDecoder::feed(ByteView bytes)
{
    if (m_ready || m_error)
        return 0;
    if (m_mode == Mode::SeekHello)
        return seek(bytes);
    std::size_t used = 0;
    if (!m_haveHeader) {
        const std::size_t n = std::min(bytes.size(), kHeaderBytes - m_headerFill);
        std::memcpy(m_header + m_headerFill, bytes.data(), n);
        m_headerFill += n;
        used = n;
        if (m_headerFill < kHeaderBytes)
            return used;
        auto header = parseHeader(ByteView(m_header, kHeaderBytes), m_from);
        if (!header) {
            m_error = header.error();
            return used;
        }
        m_frame.header = *header;
        m_frame.payload.resize(header->length);
        m_payloadFill = 0;
        m_haveHeader = true;
    }
    const std::size_t n =
        std::min(bytes.size() - used, std::size_t(m_frame.header.length) - m_payloadFill);
    if (n > 0)
        std::memcpy(m_frame.payload.data() + m_payloadFill, bytes.data() + used, n);
    m_payloadFill += n;
    used += n;
    if (m_payloadFill == m_frame.header.length)
        m_ready = true;
    return used;
}

std::size_t FrameDecoder::seek(ByteView bytes)
{
    // A sliding window over the last kHeaderBytes bytes: a Hello header may start anywhere.
    std::size_t used = 0;
    while (used < bytes.size()) {
        if (m_headerFill == kHeaderBytes) {
            std::memmove(m_header, m_header + 1, kHeaderBytes - 1);
            --m_headerFill;
            ++m_skipped;
        }
        m_header[m_headerFill++] = bytes[used++];
        if (m_headerFill < kHeaderBytes)
            continue;
        auto header = parseHeader(ByteView(m_header, kHeaderBytes), m_from);
        if (header && header->type == MessageType::Hello) {
            m_mode = Mode::Strict;
            m_frame.header = *header;
            m_frame.payload.resize(header->length);
            m_payloadFill = 0;
            m_haveHeader = true;
            if (header->length == 0)
                m_ready = true;
            return used;
        }
    }
    return used;
}

Frame FrameDecoder::take()
{
    Frame out;
    out.header = m_frame.header;
    out.payload.assign(m_frame.payload.begin(), m_frame.payload.end());
    pop();
    return out;
}

void FrameDecoder::pop()
{
    m_ready = false;
    m_haveHeader = false;
    m_headerFill = 0;
    m_payloadFill = 0;
    m_frame.payload.clear();
}

void FrameDecoder::resync()
{
    pop();
    m_error.reset();
    m_mode = Mode::SeekHello;
}

void FrameDecoder::reset()
{
    pop();
    m_error.reset();
    m_mode = Mode::Strict;
    m_skipped = 0;
}

} // namespace airlock::agentwire

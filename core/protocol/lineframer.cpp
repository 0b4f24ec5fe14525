#include "core/protocol/lineframer.h"

#include <openssl/crypto.h>

#include <cstring>

namespace airlock::protocol {

LineFramer::LineFramer(qsizetype maxBytes) : m_maxBytes(maxBytes) { }

void LineFramer::append(const QByteArray &bytes)
{
    if (m_poisoned)
        return;
    m_buffer.append(bytes);
}

std::optional<Result<QByteArray>> LineFramer::next()
{
    if (m_poisoned)
        return std::nullopt;
    const qsizetype newline = m_buffer.indexOf('\n', m_offset);
    const qsizetype lineLength = (newline < 0 ? m_buffer.size() : newline) - m_offset;
    if (lineLength > m_maxBytes) {
        m_poisoned = true;
        m_buffer.clear();
        m_offset = 0;
        return Result<QByteArray>(fail(
            ErrorKind::MessageTooLarge,
            QStringLiteral("message exceeds %1 bytes; closing the connection").arg(m_maxBytes)));
    }
    if (newline < 0) {
        // Compact once the consumed prefix dominates, keeping appends amortised O(1).
        if (m_offset > 0 && m_offset * 2 >= m_buffer.size()) {
            m_buffer.remove(0, m_offset);
            m_offset = 0;
        }
        return std::nullopt;
    }
    QByteArray line = m_buffer.mid(m_offset, lineLength);
    m_offset = newline + 1;
    if (m_offset == m_buffer.size()) {
        m_buffer.clear();
        m_offset = 0;
    }
    if (line.endsWith('\r'))
        line.chop(1);
    return Result<QByteArray>(std::move(line));
}

qsizetype LineFramer::takeRaw(char *out, qsizetype max)
{
    const qsizetype count = qMin(max, m_buffer.size() - m_offset);
    if (count <= 0)
        return 0;
    char *data = m_buffer.data() + m_offset;
    std::memcpy(out, data, std::size_t(count));
    OPENSSL_cleanse(data, std::size_t(count));
    m_offset += count;
    if (m_offset == m_buffer.size()) {
        m_buffer.clear();
        m_offset = 0;
    }
    return count;
}

} // namespace airlock::protocol

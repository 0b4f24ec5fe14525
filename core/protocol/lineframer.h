#pragma once

#include "core/model/error.h"

#include <QByteArray>

#include <optional>

namespace airlock::protocol {

/// Splits a byte stream into newline-terminated messages (the framing of docs/protocol.md:
/// one UTF-8 JSON value per line). Bytes are appended as they arrive; next() returns complete
/// lines without the '\n'. A line longer than `maxBytes` yields one MessageTooLarge error, after
/// which the framer is poisoned (the caller closes the connection), so a peer cannot make us
/// buffer without bound.
class LineFramer
{
public:
    explicit LineFramer(qsizetype maxBytes);

    void append(const QByteArray &bytes);
    /// The next complete line, an error, or std::nullopt when more bytes are needed.
    std::optional<Result<QByteArray>> next();
    /// Moves up to `max` buffered bytes that follow the last line returned by next() into
    /// `out` and overwrites them in the buffer with zeros: a binary payload announced by a line
    /// (the gateway's credentials, docs/gateway.md) leaves no copy behind. Returns the count.
    qsizetype takeRaw(char *out, qsizetype max);
    bool poisoned() const { return m_poisoned; }
    qsizetype bufferedBytes() const { return m_buffer.size() - m_offset; }

private:
    qsizetype m_maxBytes;
    QByteArray m_buffer;
    qsizetype m_offset = 0;
    bool m_poisoned = false;
};

} // namespace airlock::protocol

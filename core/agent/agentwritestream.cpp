#include "core/agent/agentwritestream.h"

#include "core/agent/agentclient.h"

#include <QIODevice>

#include <memory>

namespace airlock::agent {

using namespace agentwire;

AgentWriteStream::AgentWriteStream(AgentClient *client, quint32 id, quint64 request, Kind kind)
    : AgentStream(client, id, request), m_kind(kind)
{ }

qint64 AgentWriteStream::room() const
{
    if (!m_client || !isOpen() || m_finishRequested)
        return 0;
    return std::max<qint64>(0, qint64(m_client->limits().window) - m_buffer.size());
}

void AgentWriteStream::writeAllAndFinish(QByteArray data)
{
    auto rest = std::make_shared<QByteArray>(std::move(data));
    const auto feed = [this, rest] {
        while (!rest->isEmpty()) {
            const qint64 taken = write(*rest);
            if (taken == 0)
                return; // bytesWritten() calls again
            rest->remove(0, taken);
        }
        finish();
    };
    feed();
    connect(this, &AgentWriteStream::bytesWritten, this, feed);
}

qint64 AgentWriteStream::write(QByteArrayView data)
{
    const qint64 n = std::min<qint64>(data.size(), room());
    if (n <= 0)
        return 0;
    m_buffer.append(data.first(n));
    // A writer that loops on write() and also writes from bytesWritten() would be re-entered
    // with its own bookkeeping half done: the signal of what this call sent comes later.
    m_inWrite = true;
    pump();
    m_inWrite = false;
    return n;
}

void AgentWriteStream::finish()
{
    if (!isOpen() || m_finishRequested)
        return;
    m_finishRequested = true;
    pump();
}

void AgentWriteStream::updateStall()
{
    // The guest owes credit (data waits, none granted) or the answer after End.
    stall(isOpen() && ((!m_buffer.isEmpty() && m_sendCredit.available() == 0) || m_endSent));
}

void AgentWriteStream::pump()
{
    if (!m_client || !isOpen() || !m_credited)
        return;
    QIODevice *device = m_client->m_device;
    qint64 sent = 0;
    while (!m_buffer.isEmpty() && m_sendCredit.available() > 0
           && device->bytesToWrite() < m_client->limits().writeBufferBytes) {
        const qint64 n = std::min<qint64>(
            {m_buffer.size(), qint64(m_sendCredit.available()), qint64(kMaxPayloadBytes)});
        m_sendCredit.spend(quint64(n));
        send(
            MessageType::Data,
            ByteView(reinterpret_cast<const std::uint8_t *>(m_buffer.constData()), std::size_t(n)));
        m_buffer.remove(0, n);
        sent += n;
    }
    m_sent += quint64(sent);
    if (m_buffer.isEmpty() && m_finishRequested && !m_endSent) {
        m_endSent = true;
        send(MessageType::End);
    }
    updateStall();
    if (sent > 0 && m_inWrite)
        QMetaObject::invokeMethod(
            this, [this, sent] { emit bytesWritten(sent); }, Qt::QueuedConnection);
    else if (sent > 0)
        emit bytesWritten(sent);
}

std::optional<ProtocolError> AgentWriteStream::handleFrame(const Frame &frame)
{
    switch (frame.header.type) {
    case MessageType::Credit:
        // Before takeCredit(): its pump() sends only once the guest has granted credit.
        m_credited = true;
        return takeCredit(frame);
    case MessageType::Ok:
        if (m_kind != Kind::File || !m_endSent || !frame.payload.empty())
            return ProtocolError::Unexpected;
        close();
        emit finished();
        return std::nullopt;
    case MessageType::ArchiveResult: {
        if (m_kind != Kind::Archive || !m_endSent)
            return ProtocolError::Unexpected;
        auto result = ArchiveResult::decode(frame.payload);
        if (!result)
            return ProtocolError::BadPayload;
        m_result = std::move(*result);
        close();
        emit finished();
        return std::nullopt;
    }
    case MessageType::Error:
        return takeGuestError(frame);
    default:
        return ProtocolError::Unexpected;
    }
}

} // namespace airlock::agent

#pragma once

#include "core/agent/agentstream.h"
#include "core/agentwire/messages.h"

#include <QByteArray>

namespace airlock::agent {

/// Bytes streamed into the guest: a file (AgentClient::writeFile) or an archive stream into a
/// folder (AgentClient::archiveIn). write() takes at most room() bytes (Limits::window minus
/// what waits here), which go out within the guest's credit; bytesWritten() says when room
/// grew. finish() ends the stream once everything was sent; finished() comes with the guest's
/// answer (Ok, or an ArchiveResult for an archive).
class AgentWriteStream : public AgentStream
{
    Q_OBJECT
public:
    enum class Kind { File, Archive };

    /// Takes up to room() bytes of `data`; returns how many.
    qint64 write(QByteArrayView data);
    qint64 room() const;
    /// No more data: End once the buffer is sent.
    void finish();
    /// Writes all of `data` as room() allows, now and on each bytesWritten(), then finish():
    /// for a content that is in memory whole (a files.write chunk, the env file). finished()
    /// or failed() tells the outcome.
    void writeAllAndFinish(QByteArray data);
    quint64 bytesSent() const { return m_sent; }
    /// What an archive in wrote and refused, once finished().
    const std::optional<agentwire::ArchiveResult> &archiveResult() const { return m_result; }

signals:
    /// `bytes` went to the guest. Never emitted from inside write(): a writer may write again
    /// from it.
    void bytesWritten(qint64 bytes);
    /// The guest wrote everything.
    void finished();

private:
    friend class AgentClient;
    AgentWriteStream(AgentClient *client, quint32 id, quint64 request, Kind kind);
    std::optional<agentwire::ProtocolError> handleFrame(const agentwire::Frame &frame) override;
    void pump() override;
    qint64 buffered() const override { return m_buffer.size(); }
    void updateStall();

    Kind m_kind;
    QByteArray m_buffer;
    quint64 m_sent = 0;
    bool m_credited = false; ///< the guest opened the target and granted credit
    bool m_finishRequested = false;
    bool m_endSent = false;
    bool m_inWrite = false;
    std::optional<agentwire::ArchiveResult> m_result;
};

} // namespace airlock::agent

#pragma once

#include "core/agent/agentstream.h"
#include "core/agentwire/messages.h"

#include <QByteArray>

namespace airlock::agent {

/// Bytes streamed out of the guest: a file (AgentClient::readFile: opened() with its size
/// first), a folder's archive stream (AgentClient::archiveOut) or a folder's watch records
/// (AgentClient::watch: opened() once the watch is set; agentwire::WatchRecordDecoder splits
/// the bytes; it never finishes, the owner deletes it). Data waits here until
/// read(); credit goes back as it is read, so at most Limits::window bytes are held and a
/// slow consumer slows the guest. finished() after the last byte arrived (what is buffered
/// stays readable); a file's total is checked against the size the guest announced.
class AgentReadStream : public AgentStream
{
    Q_OBJECT
public:
    enum class Kind { File, Archive, Watch };

    qint64 bytesAvailable() const { return m_buffer.size(); }
    /// Takes up to `maxBytes` (all with -1) and credits the guest.
    QByteArray read(qint64 maxBytes = -1);
    /// Ended and nothing left to read.
    bool atEnd() const { return m_ended && m_buffer.isEmpty(); }
    bool hasEnded() const { return m_ended; }
    quint64 bytesReceived() const { return m_received; }
    /// A file's size and mode, once opened().
    const std::optional<agentwire::FileOpened> &fileInfo() const { return m_opened; }

signals:
    /// A file read is under way: `size` bytes will come.
    void opened(quint64 size, quint32 mode);
    void readyRead();
    /// The guest sent the last byte.
    void finished();

private:
    friend class AgentClient;
    AgentReadStream(AgentClient *client, quint32 id, quint64 request, Kind kind);
    void grantInitialCredit();
    std::optional<agentwire::ProtocolError> handleFrame(const agentwire::Frame &frame) override;
    qint64 buffered() const override { return m_buffer.size(); }
    void updateStall();

    Kind m_kind;
    QByteArray m_buffer;
    quint32 m_consumed = 0;
    quint64 m_received = 0;
    bool m_ended = false;
    std::optional<agentwire::FileOpened> m_opened;
    quint64 m_maxSize = 0; ///< the requested length of a file read; 0: to the end
};

} // namespace airlock::agent

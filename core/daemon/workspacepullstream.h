#pragma once

#include "core/daemon/rpcserver.h"

#include <QList>
#include <QObject>
#include <QPointer>

#include <optional>

namespace airlock {

namespace agent {
class AgentReadStream;
}

/// One `workspace.pull*` transfer (docs/protocol.md, "Workspace"): the guest folder's archive
/// stream, handed to the client in `workspace.pullRead` answers of at most the length asked
/// for. The agent stream holds at most its credit window, and credits the guest only as the
/// client reads, so a client that stops reading stops the guest, not the helper's memory.
class WorkspacePullStream : public QObject
{
    Q_OBJECT
public:
    /// pullRead calls queued at most; further ones are answered `busy`.
    static constexpr int kMaxQueuedCalls = 4;

    /// Takes `stream` (an AgentClient child; deleted with this, which cancels it in the guest).
    explicit WorkspacePullStream(agent::AgentReadStream *stream, QObject *parent = nullptr);
    ~WorkspacePullStream() override;

    /// Queues a read of up to `length` bytes; the answer is {data: base64, eof}, with at least
    /// one byte unless `eof`. Busy when kMaxQueuedCalls wait already.
    Result<void> read(qint64 length, const RpcServer::Reply &reply);

signals:
    /// The last byte was read, or the stream failed and its error was answered: the owner
    /// deletes this.
    void ended();

private:
    struct Pending
    {
        qint64 length = 0;
        RpcServer::Reply reply;
    };
    void serve();

    QPointer<agent::AgentReadStream> m_stream;
    QList<Pending> m_queue;
    std::optional<Error> m_error;
    bool m_ended = false;
};

} // namespace airlock

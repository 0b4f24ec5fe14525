#pragma once

#include "core/daemon/rpcserver.h"

#include <QList>
#include <QObject>
#include <QPointer>

#include <optional>

namespace airlock {

namespace agent {
class AgentWriteStream;
}

/// One `workspace.push*` transfer (docs/protocol.md, "Workspace"): archive bytes a client
/// sends in `workspace.pushData` calls go into the guest's archive_in stream, and
/// `workspace.pushFinish` answers with what the guest wrote and refused. A data call is
/// answered once the agent stream took all of its bytes, so a client that keeps at most a few
/// calls in flight is paced by the guest's credit; at most kMaxQueuedCalls wait here.
class WorkspacePushStream : public QObject
{
    Q_OBJECT
public:
    /// pushData calls queued at most; further ones are answered `busy`.
    static constexpr int kMaxQueuedCalls = 4;

    /// Takes `stream` (an AgentClient child; deleted with this, which cancels it in the guest).
    explicit WorkspacePushStream(agent::AgentWriteStream *stream, QObject *parent = nullptr);
    ~WorkspacePushStream() override;

    /// Queues `data`; the answer is {accepted: bytes}. Busy when kMaxQueuedCalls wait already,
    /// InvalidState after finish().
    Result<void> data(const QByteArray &bytes, const RpcServer::Reply &reply);
    /// Ends the stream once the queued data went out; the answer is {entries, bytes,
    /// refusedCount, refused: [{path, reason}]}.
    Result<void> finish(const RpcServer::Reply &reply);

signals:
    /// Every call was answered and nothing more will come: the owner deletes this.
    void ended();

private:
    struct Pending
    {
        QByteArray bytes;
        qint64 taken = 0;
        RpcServer::Reply reply;
    };
    void pump();
    void failAll(const Error &error);

    QPointer<agent::AgentWriteStream> m_stream;
    QList<Pending> m_queue;
    RpcServer::Reply m_finishReply;
    bool m_finishing = false;
    std::optional<Error> m_error; ///< the stream failed; the next call gets this
};

} // namespace airlock

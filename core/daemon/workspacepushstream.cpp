#include "core/daemon/workspacepushstream.h"

#include "core/agent/agentwritestream.h"
#include "core/daemon/agentjson.h"

namespace airlock {

WorkspacePushStream::WorkspacePushStream(agent::AgentWriteStream *stream, QObject *parent)
    : QObject(parent), m_stream(stream)
{
    connect(stream, &agent::AgentWriteStream::bytesWritten, this, &WorkspacePushStream::pump);
    connect(stream, &agent::AgentWriteStream::finished, this, [this] {
        const auto &result = m_stream->archiveResult();
        if (m_finishReply)
            std::exchange(m_finishReply, nullptr)(
                QJsonValue(result ? agentjson::archiveResult(*result) : QJsonObject()));
        emit ended();
    });
    connect(stream, &agent::AgentStream::failed, this,
            [this](const agent::AgentError &error) { failAll(agentjson::toError(error)); });
    // The agent client goes with its sandbox, and its streams with it.
    connect(
        stream, &QObject::destroyed, this,
        [this] {
            failAll(Error {ErrorKind::AgentUnavailable,
                           QStringLiteral("the sandbox's agent channel closed")});
        },
        Qt::QueuedConnection);
}

WorkspacePushStream::~WorkspacePushStream()
{
    delete m_stream.data();
}

Result<void> WorkspacePushStream::data(const QByteArray &bytes, const RpcServer::Reply &reply)
{
    if (m_error) {
        const Error error = *m_error;
        emit ended();
        return std::unexpected(error);
    }
    if (m_finishing)
        return fail(ErrorKind::InvalidState, QStringLiteral("the push is finishing"));
    if (m_queue.size() >= kMaxQueuedCalls)
        return fail(
            ErrorKind::Busy,
            QStringLiteral("%1 workspace.pushData calls wait already").arg(kMaxQueuedCalls));
    m_queue.append({bytes, 0, reply});
    pump();
    return {};
}

Result<void> WorkspacePushStream::finish(const RpcServer::Reply &reply)
{
    if (m_error) {
        const Error error = *m_error;
        emit ended();
        return std::unexpected(error);
    }
    if (m_finishing)
        return fail(ErrorKind::InvalidState, QStringLiteral("the push is finishing"));
    m_finishing = true;
    m_finishReply = reply;
    pump();
    return {};
}

void WorkspacePushStream::pump()
{
    while (m_stream && !m_queue.isEmpty()) {
        Pending &front = m_queue.first();
        while (front.taken < front.bytes.size()) {
            const qint64 taken = m_stream->write(QByteArrayView(front.bytes).sliced(front.taken));
            if (taken == 0)
                return; // bytesWritten() calls again when the guest granted room
            front.taken += taken;
        }
        const Pending done = m_queue.takeFirst();
        done.reply(QJsonValue(QJsonObject {{QStringLiteral("accepted"), done.taken}}));
    }
    if (m_stream && m_finishing)
        m_stream->finish();
}

void WorkspacePushStream::failAll(const Error &error)
{
    const bool waiting = !m_queue.isEmpty() || m_finishReply;
    for (const Pending &pending : std::exchange(m_queue, {}))
        pending.reply(std::unexpected(error));
    if (m_finishReply)
        std::exchange(m_finishReply, nullptr)(std::unexpected(error));
    if (waiting) {
        emit ended();
        return;
    }
    // Nobody is waiting: the client's next call learns why.
    m_error = error;
}

} // namespace airlock

#include "core/daemon/workspacepullstream.h"

#include "core/agent/agentreadstream.h"
#include "core/daemon/agentjson.h"

namespace airlock {

WorkspacePullStream::WorkspacePullStream(agent::AgentReadStream *stream, QObject *parent)
    : QObject(parent), m_stream(stream)
{
    connect(stream, &agent::AgentReadStream::readyRead, this, &WorkspacePullStream::serve);
    connect(stream, &agent::AgentReadStream::finished, this, &WorkspacePullStream::serve);
    connect(stream, &agent::AgentStream::failed, this, [this](const agent::AgentError &error) {
        m_error = agentjson::toError(error);
        serve();
    });
    // The agent client goes with its sandbox, and its streams with it.
    connect(stream, &QObject::destroyed, this, &WorkspacePullStream::serve, Qt::QueuedConnection);
}

WorkspacePullStream::~WorkspacePullStream()
{
    delete m_stream.data();
}

Result<void> WorkspacePullStream::read(qint64 length, const RpcServer::Reply &reply)
{
    if (m_ended)
        return fail(ErrorKind::InvalidState, QStringLiteral("the pull has ended"));
    if (m_queue.size() >= kMaxQueuedCalls)
        return fail(
            ErrorKind::Busy,
            QStringLiteral("%1 workspace.pullRead calls wait already").arg(kMaxQueuedCalls));
    m_queue.append({length, reply});
    serve();
    return {};
}

void WorkspacePullStream::serve()
{
    while (!m_queue.isEmpty() && !m_ended) {
        // Data that arrived before a failure is still the client's; the failure comes after.
        if (m_stream && m_stream->bytesAvailable() > 0) {
            const Pending pending = m_queue.takeFirst();
            const QByteArray data = m_stream->read(pending.length);
            const bool eof = m_stream->atEnd();
            m_ended = eof;
            pending.reply(QJsonValue(QJsonObject {
                {QStringLiteral("data"), QString::fromLatin1(data.toBase64())},
                {QStringLiteral("eof"), eof},
            }));
        } else if (m_error || !m_stream) {
            m_ended = true;
            const Error error = m_error.value_or(Error {
                ErrorKind::AgentUnavailable, QStringLiteral("the sandbox's agent channel closed")});
            for (const Pending &pending : std::exchange(m_queue, {}))
                pending.reply(std::unexpected(error));
        } else if (m_stream->atEnd()) {
            m_ended = true;
            m_queue.takeFirst().reply(QJsonValue(
                QJsonObject {{QStringLiteral("data"), QString()}, {QStringLiteral("eof"), true}}));
        } else {
            return;
        }
    }
    if (m_ended) {
        for (const Pending &pending : std::exchange(m_queue, {}))
            pending.reply(fail(ErrorKind::InvalidState, QStringLiteral("the pull has ended")));
        emit ended();
    }
}

} // namespace airlock

#include "core/daemon/watchsession.h"

#include "core/agent/agentreadstream.h"
#include "core/daemon/agentjson.h"
#include "core/protocol/message.h"
#include "core/protocol/methods.h"

#include <QJsonArray>
#include <QTimer>

namespace airlock {

namespace notification = protocol::notification;

WatchSession::WatchSession(RpcServer &server, quint64 client, QString sandbox, quint64 id,
                           agent::AgentReadStream *stream, QObject *parent)
    : QObject(parent)
    , m_server(server)
    , m_client(client)
    , m_sandbox(std::move(sandbox))
    , m_id(id)
    , m_stream(stream)
{
    using agent::AgentReadStream;
    // The stream stays the agent client's child: when the channel goes, the client deletes it
    // without a signal.
    connect(stream, &QObject::destroyed, this, [this] {
        finish(QJsonObject {
            {QStringLiteral("kind"), QStringLiteral("agent_unavailable")},
            {QStringLiteral("message"), QStringLiteral("the sandbox's agent channel closed")}});
    });
    connect(stream, &AgentReadStream::opened, this, [this] {
        m_started = true;
        Q_EMIT started();
        pump();
    });
    connect(stream, &AgentReadStream::readyRead, this, &WatchSession::pump);
    connect(stream, &AgentReadStream::finished, this, [this] { finish({}); });
    connect(stream, &AgentReadStream::failed, this, [this](const agent::AgentError &error) {
        const Error failure = agentjson::toError(error);
        if (!m_started) {
            if (!m_ended)
                Q_EMIT startFailed(failure);
            end();
            return;
        }
        pump();
        finish(QJsonObject {{QStringLiteral("kind"), errorKindName(failure.kind)},
                            {QStringLiteral("message"), failure.message}});
    });
    connect(&m_server, &RpcServer::clientWritten, this, [this](quint64 who) {
        if (who == m_client)
            pump();
    });
    connect(&m_server, &RpcServer::clientDisconnected, this, [this](quint64 who) {
        if (who == m_client)
            stop();
    });
}

WatchSession::~WatchSession()
{
    // Cancels the watch in the guest; nothing more goes to the client (the stream's
    // destroyed() must not announce an end now).
    m_ended = true;
    delete m_stream.data();
}

QString WatchSession::opName(agentwire::WatchOp op)
{
    using agentwire::WatchOp;
    switch (op) {
    case WatchOp::Create:
        return QStringLiteral("create");
    case WatchOp::Write:
        return QStringLiteral("write");
    case WatchOp::Remove:
        return QStringLiteral("remove");
    case WatchOp::Rename:
        return QStringLiteral("rename");
    case WatchOp::Chmod:
        return QStringLiteral("chmod");
    case WatchOp::Overflow:
        break;
    }
    return QStringLiteral("overflow");
}

void WatchSession::pump()
{
    if (m_ended || !m_stream || !m_started)
        return;
    while (m_server.pendingOutputBytes(m_client) < kHighWaterBytes) {
        // At most kReadBytes of records are decoded ahead of the client (3 bytes each at
        // least); the rest stays in the stream, uncredited.
        if (m_records.empty() && m_stream->bytesAvailable() > 0) {
            const QByteArray bytes = m_stream->read(kReadBytes);
            std::vector<agentwire::WatchRecord> decoded;
            if (!m_decoder.feed(
                    agentwire::ByteView(reinterpret_cast<const std::uint8_t *>(bytes.constData()),
                                        std::size_t(bytes.size())),
                    decoded)) {
                finish(QJsonObject {
                    {QStringLiteral("kind"), QStringLiteral("protocol_error")},
                    {QStringLiteral("message"),
                     QStringLiteral("the guest agent sent a malformed watch record")}});
                return;
            }
            for (agentwire::WatchRecord &record : decoded)
                m_records.push_back(std::move(record));
            continue;
        }
        std::vector<agentwire::WatchRecord> records;
        while (!m_records.empty() && records.size() < std::size_t(kMaxEventsPerNotification)) {
            records.push_back(std::move(m_records.front()));
            m_records.pop_front();
        }
        if (records.empty())
            return;
        QJsonArray events;
        for (const agentwire::WatchRecord &record : records)
            events.append(
                QJsonObject {{QStringLiteral("type"), opName(record.op)},
                             {QStringLiteral("path"), QString::fromStdString(record.name)}});
        const bool sent = m_server.send(
            m_client,
            protocol::encodeNotification(QString::fromLatin1(notification::FilesEvent),
                                         {{QStringLiteral("sandbox"), m_sandbox},
                                          {QStringLiteral("watch"), qint64(m_id)},
                                          {QStringLiteral("events"), events}}));
        if (!sent) {
            stop(); // the client is gone or was dropped for not reading
            return;
        }
    }
}

void WatchSession::finish(const QJsonObject &error)
{
    if (m_ended)
        return;
    QJsonObject params {{QStringLiteral("sandbox"), m_sandbox},
                        {QStringLiteral("watch"), qint64(m_id)}};
    if (!error.isEmpty())
        params.insert(QStringLiteral("error"), error);
    if (m_started)
        m_server.send(
            m_client,
            protocol::encodeNotification(QString::fromLatin1(notification::FilesWatchEnd), params));
    else
        Q_EMIT startFailed(
            Error {ErrorKind::AgentUnavailable, error.value(QStringLiteral("message")).toString()});
    end();
}

void WatchSession::stop()
{
    end();
}

void WatchSession::end()
{
    if (m_ended)
        return;
    m_ended = true;
    QTimer::singleShot(0, this, &WatchSession::ended);
}

} // namespace airlock

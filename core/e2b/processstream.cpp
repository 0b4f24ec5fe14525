#include "core/e2b/processstream.h"

#include "core/e2b/apierror.h"
#include "core/e2b/connectenvelope.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace airlock::e2b {

namespace {

constexpr int kKeepAliveMs = 30000;

ProcessStream::Stats g_stats;

QJsonObject processEvent(const QString &kind, const QJsonObject &value)
{
    return {{QStringLiteral("event"), QJsonObject {{kind, value}}}};
}

} // namespace

ProcessStream::ProcessStream(E2bContext context, const QPointer<HttpConnection> &connection,
                             QString sandbox, QObject *parent)
    : QObject(parent), m_context(context), m_connection(connection), m_sandbox(std::move(sandbox))
{
    m_keepAlive.setInterval(kKeepAliveMs);
    connect(&m_keepAlive, &QTimer::timeout, this,
            [this] { send(processEvent(QStringLiteral("keepalive"), {})); });
    if (m_connection)
        connect(m_connection, &HttpConnection::closed, this, &ProcessStream::onClientGone);
}

ProcessStream::~ProcessStream() = default;

ProcessStream::Stats ProcessStream::stats()
{
    return g_stats;
}

void ProcessStream::resetStats()
{
    g_stats = {};
}

void ProcessStream::start(QJsonObject params, bool shellFallback)
{
    m_pty = params.contains(QStringLiteral("pty"));
    m_context.call(QStringLiteral("exec.start"), params,
                   [this, params, shellFallback](const Result<QJsonObject> &result) mutable {
                       if (!result && shellFallback && result.error().kind == ErrorKind::NotFound) {
                           QJsonArray argv = params.value(QStringLiteral("argv")).toArray();
                           argv[0] = QStringLiteral("/bin/sh");
                           params.insert(QStringLiteral("argv"), argv);
                           return start(params, false);
                       }
                       began(result);
                   });
}

void ProcessStream::attach(quint32 pid)
{
    m_context.call(QStringLiteral("exec.connect"),
                   {{QStringLiteral("name"), m_sandbox}, {QStringLiteral("pid"), qint64(pid)}},
                   [this](const Result<QJsonObject> &result) { began(result); });
}

void ProcessStream::began(const Result<QJsonObject> &result)
{
    if (!result)
        return end(connectCodeFor(result.error().kind), result.error().message);
    m_pid = quint32(result->value(QStringLiteral("pid")).toInteger());
    Q_EMIT bound(m_pid);
    send(processEvent(QStringLiteral("start"), {{QStringLiteral("pid"), qint64(m_pid)}}));
    m_keepAlive.start();
    if (!m_connection) {
        // The client left while the process was starting: it runs on, detached.
        onClientGone();
    }
}

void ProcessStream::deliver(const QString &method, const QJsonObject &params)
{
    if (m_done)
        return;
    if (method == QLatin1String("exec.output")) {
        const QString stream = params.value(QStringLiteral("stream")).toString();
        // The helper's base64 is the Connect JSON form of `bytes` as it is.
        send(processEvent(QStringLiteral("data"),
                          {{stream == QLatin1String("stderr") ? QStringLiteral("stderr")
                                : m_pty                       ? QStringLiteral("pty")
                                                              : QStringLiteral("stdout"),
                            params.value(QStringLiteral("data"))}}));
        return;
    }
    if (params.contains(QStringLiteral("error"))) {
        const QJsonObject error = params.value(QStringLiteral("error")).toObject();
        const auto kind = errorKindFromName(error.value(QStringLiteral("kind")).toString());
        return end(connectCodeFor(kind.value_or(ErrorKind::AgentUnavailable)),
                   error.value(QStringLiteral("message")).toString());
    }
    QJsonObject ended;
    if (params.contains(QStringLiteral("signal"))) {
        // What envd (Go's os.ProcessState) says of a killed process.
        const int signal = params.value(QStringLiteral("signal")).toInt();
        ended = {{QStringLiteral("exitCode"), -1},
                 {QStringLiteral("exited"), false},
                 {QStringLiteral("status"), QStringLiteral("signal: %1").arg(signal)}};
    } else {
        const int code = params.value(QStringLiteral("exitCode")).toInt();
        ended = {{QStringLiteral("exitCode"), code},
                 {QStringLiteral("exited"), true},
                 {QStringLiteral("status"), QStringLiteral("exit status %1").arg(code)}};
    }
    send(processEvent(QStringLiteral("end"), ended));
    end();
}

void ProcessStream::send(const QJsonObject &message)
{
    if (!m_connection || m_done)
        return;
    if (!m_headersSent) {
        m_connection->beginStream(200, "application/connect+json");
        m_headersSent = true;
    }
    const QByteArray chunk =
        connectenvelope::encode(QJsonDocument(message).toJson(QJsonDocument::Compact));
    if (m_connection->pendingBytes() + chunk.size() > kMaxPendingBytes)
        return overrun();
    m_connection->writeChunk(chunk);
    g_stats.peakPendingBytes = std::max(g_stats.peakPendingBytes, m_connection->pendingBytes());
}

void ProcessStream::overrun()
{
    ++g_stats.overruns;
    const qint64 pending = m_connection ? m_connection->pendingBytes() : 0;
    end(QStringLiteral("resource_exhausted"),
        QStringLiteral("the client read too slowly: %1 bytes of output waited unsent; the "
                       "process runs on detached (commands.connect(%2) follows it again)")
            .arg(pending)
            .arg(m_pid));
    m_context.call(QStringLiteral("exec.detach"),
                   {{QStringLiteral("name"), m_sandbox}, {QStringLiteral("pid"), qint64(m_pid)}},
                   [](const Result<QJsonObject> &) {});
}

void ProcessStream::end(const QString &code, const QString &message)
{
    if (m_done)
        return;
    if (m_connection) {
        if (!m_headersSent) {
            m_connection->beginStream(200, "application/connect+json");
            m_headersSent = true;
        }
        m_connection->writeChunk(connectenvelope::endStream(code, message));
        m_connection->finishStream();
    }
    m_done = true;
    m_keepAlive.stop();
    Q_EMIT finished();
    deleteLater();
}

void ProcessStream::onClientGone()
{
    if (m_done)
        return;
    m_connection = nullptr;
    if (m_pid == 0)
        return; // began() detaches once the pid is known
    m_context.call(QStringLiteral("exec.detach"),
                   {{QStringLiteral("name"), m_sandbox}, {QStringLiteral("pid"), qint64(m_pid)}},
                   [](const Result<QJsonObject> &) {});
    m_done = true;
    m_keepAlive.stop();
    Q_EMIT finished();
    deleteLater();
}

} // namespace airlock::e2b

#include "core/e2b/watchdirstream.h"

#include "core/e2b/apierror.h"
#include "core/e2b/connectenvelope.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace airlock::e2b {

namespace {

constexpr int kKeepAliveMs = 30000;

// WatchDirResponse's `event` is a oneof of the message itself: in JSON its member stands at
// the top level (unlike StartResponse, whose `event` is a ProcessEvent message).
QJsonObject watchEvent(const QString &kind, const QJsonObject &value)
{
    return {{kind, value}};
}

} // namespace

WatchDirStream::WatchDirStream(E2bContext context, const QPointer<HttpConnection> &connection,
                               QString sandbox, QObject *parent)
    : QObject(parent), m_context(context), m_connection(connection), m_sandbox(std::move(sandbox))
{
    m_keepAlive.setInterval(kKeepAliveMs);
    connect(&m_keepAlive, &QTimer::timeout, this,
            [this] { send(watchEvent(QStringLiteral("keepalive"), {})); });
    if (m_connection)
        connect(m_connection, &HttpConnection::closed, this, &WatchDirStream::onClientGone);
}

WatchDirStream::~WatchDirStream() = default;

QString WatchDirStream::eventTypeName(const QString &type)
{
    if (type == QLatin1String("create") || type == QLatin1String("write")
        || type == QLatin1String("remove") || type == QLatin1String("rename")
        || type == QLatin1String("chmod"))
        return QStringLiteral("EVENT_TYPE_") + type.toUpper();
    return {};
}

void WatchDirStream::start(const QString &path, bool recursive)
{
    m_context.call(QStringLiteral("files.watch"),
                   {{QStringLiteral("name"), m_sandbox},
                    {QStringLiteral("path"), path},
                    {QStringLiteral("recursive"), recursive}},
                   [this](const Result<QJsonObject> &result) {
                       if (!result)
                           return end(connectCodeFor(result.error().kind), result.error().message);
                       m_watch = quint64(result->value(QStringLiteral("watch")).toInteger());
                       Q_EMIT bound(m_watch);
                       if (!m_connection)
                           return onClientGone(); // it left while the watch was being set
                       send(watchEvent(QStringLiteral("start"), {}));
                       m_keepAlive.start();
                   });
}

void WatchDirStream::deliver(const QString &method, const QJsonObject &params)
{
    if (m_done)
        return;
    if (method == QLatin1String("files.event")) {
        for (const QJsonValue &value : params.value(QStringLiteral("events")).toArray()) {
            const QJsonObject event = value.toObject();
            const QString type = eventTypeName(event.value(QStringLiteral("type")).toString());
            // envd has no event for lost events (the guest's inotify queue ran over): the
            // SDK's handler sees the changes that came through.
            if (type.isEmpty())
                continue;
            send(watchEvent(QStringLiteral("filesystem"),
                            {{QStringLiteral("name"), event.value(QStringLiteral("path"))},
                             {QStringLiteral("type"), type}}));
        }
        return;
    }
    const QJsonObject error = params.value(QStringLiteral("error")).toObject();
    if (error.isEmpty())
        return end();
    const auto kind = errorKindFromName(error.value(QStringLiteral("kind")).toString());
    end(connectCodeFor(kind.value_or(ErrorKind::AgentUnavailable)),
        error.value(QStringLiteral("message")).toString());
}

void WatchDirStream::send(const QJsonObject &message)
{
    if (!m_connection || m_done)
        return;
    if (!m_headersSent) {
        m_connection->beginStream(200, "application/connect+json");
        m_headersSent = true;
    }
    const QByteArray chunk =
        connectenvelope::encode(QJsonDocument(message).toJson(QJsonDocument::Compact));
    if (m_connection->pendingBytes() + chunk.size() > kMaxPendingBytes) {
        end(QStringLiteral("resource_exhausted"),
            QStringLiteral("the client read too slowly: %1 bytes of events waited unsent; the "
                           "watch ended")
                .arg(m_connection->pendingBytes()));
        return unwatch();
    }
    m_connection->writeChunk(chunk);
}

void WatchDirStream::unwatch()
{
    m_context.call(
        QStringLiteral("files.unwatch"),
        {{QStringLiteral("name"), m_sandbox}, {QStringLiteral("watch"), qint64(m_watch)}},
        [](const Result<QJsonObject> &) {});
}

void WatchDirStream::end(const QString &code, const QString &message)
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

void WatchDirStream::onClientGone()
{
    if (m_done)
        return;
    m_connection = nullptr;
    if (m_watch == 0)
        return; // start() unwatches once the watch is known
    m_context.call(
        QStringLiteral("files.unwatch"),
        {{QStringLiteral("name"), m_sandbox}, {QStringLiteral("watch"), qint64(m_watch)}},
        [](const Result<QJsonObject> &) {});
    m_done = true;
    m_keepAlive.stop();
    Q_EMIT finished();
    deleteLater();
}

} // namespace airlock::e2b

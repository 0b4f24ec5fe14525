#include "core/e2b/connectserverstream.h"

#include "core/e2b/connectenvelope.h"

#include <QJsonDocument>

namespace airlock::e2b {

namespace {
constexpr int kKeepAliveMs = 30000;
}

ConnectServerStream::ConnectServerStream(E2bContext context,
                                         const QPointer<HttpConnection> &connection,
                                         QString sandbox, QObject *parent)
    : QObject(parent), m_context(context), m_connection(connection), m_sandbox(std::move(sandbox))
{
    m_keepAlive.setInterval(kKeepAliveMs);
    connect(&m_keepAlive, &QTimer::timeout, this, [this] {
        if (m_keepAliveTick)
            m_keepAliveTick();
    });
    if (m_connection)
        connect(m_connection, &HttpConnection::closed, this, &ConnectServerStream::onClientGone);
}

ConnectServerStream::~ConnectServerStream() = default;

void ConnectServerStream::beginResponse()
{
    if (m_headersSent)
        return;
    m_connection->beginStream(200, "application/connect+json");
    m_headersSent = true;
}

ConnectServerStream::Sent ConnectServerStream::send(const QJsonObject &message,
                                                    qint64 maxPendingBytes)
{
    if (!m_connection || m_done)
        return Sent::Skipped;
    beginResponse();
    const QByteArray chunk =
        connectenvelope::encode(QJsonDocument(message).toJson(QJsonDocument::Compact));
    if (m_connection->pendingBytes() + chunk.size() > maxPendingBytes)
        return Sent::Overrun;
    m_connection->writeChunk(chunk);
    return Sent::Sent;
}

void ConnectServerStream::startKeepAlive(std::function<void()> tick)
{
    m_keepAliveTick = std::move(tick);
    m_keepAlive.start();
}

void ConnectServerStream::end(const QString &code, const QString &message)
{
    if (m_done)
        return;
    if (m_connection) {
        beginResponse();
        m_connection->writeChunk(connectenvelope::endStream(code, message));
        m_connection->finishStream();
    }
    finish();
}

void ConnectServerStream::onClientGone()
{
    if (m_done)
        return;
    m_connection = nullptr;
    if (!hasGuestSide())
        return;
    releaseGuestSide();
    finish();
}

void ConnectServerStream::finish()
{
    m_done = true;
    m_keepAlive.stop();
    Q_EMIT finished();
    deleteLater();
}

} // namespace airlock::e2b

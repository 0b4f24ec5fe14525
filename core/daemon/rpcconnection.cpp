#include "core/daemon/rpcconnection.h"

#include "core/protocol/methods.h"

#include <QLocalSocket>
#include <QLoggingCategory>
#include <QPointer>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcConnection, "airlock.daemon.rpc")
}

RpcConnection::RpcConnection(quint64 id, QLocalSocket *socket, PeerCredentials peer,
                             Dispatcher dispatcher, QObject *parent)
    : QObject(parent)
    , m_id(id)
    , m_socket(socket)
    , m_peer(peer)
    , m_dispatcher(std::move(dispatcher))
    , m_framer(protocol::kMaxMessageBytes)
{
    m_socket->setParent(this);
    m_frameTimer.setSingleShot(true);
    m_frameTimer.setInterval(kFrameTimeoutMs);
    connect(&m_frameTimer, &QTimer::timeout, this, [this] {
        qCWarning(lcConnection,
                  "client %llu (pid %d, uid %u) left a message unfinished for %d ms; closing", m_id,
                  int(m_peer.pid), unsigned(m_peer.uid), kFrameTimeoutMs);
        sendAndClose(protocol::encodeError(
            QJsonValue(QJsonValue::Null),
            Error {ErrorKind::InvalidRequest,
                   QStringLiteral("a message was left unfinished for %1 s (no newline); closing")
                       .arg(kFrameTimeoutMs / 1000)}));
    });
    connect(m_socket, &QLocalSocket::disconnected, this, &RpcConnection::markClosed);
    connect(m_socket, &QLocalSocket::errorOccurred, this, [this](QLocalSocket::LocalSocketError) {
        if (m_socket->state() == QLocalSocket::UnconnectedState)
            markClosed();
    });
}

void RpcConnection::start()
{
    connect(m_socket, &QLocalSocket::readyRead, this, &RpcConnection::readAvailable);
    connect(m_socket, &QLocalSocket::bytesWritten, this, [this] { Q_EMIT written(m_id); });
    readAvailable();
}

qint64 RpcConnection::pendingOutputBytes() const
{
    return m_closed ? 0 : m_socket->bytesToWrite();
}

bool RpcConnection::send(const QByteArray &frame)
{
    if (m_closed || m_closing)
        return false;
    if (m_socket->bytesToWrite() + frame.size() > kMaxPendingOutputBytes) {
        qCWarning(lcConnection,
                  "client %llu (pid %d, uid %u) is not reading: %lld bytes unread; dropping it",
                  m_id, int(m_peer.pid), unsigned(m_peer.uid),
                  static_cast<long long>(m_socket->bytesToWrite()));
        m_socket->abort();
        markClosed();
        return false;
    }
    m_socket->write(frame);
    return true;
}

void RpcConnection::sendAndClose(const QByteArray &frame)
{
    if (m_closed || m_closing)
        return;
    m_socket->write(frame);
    m_closing = true;
    // Waits for the queued bytes to be written, then closes; disconnected() follows.
    m_socket->disconnectFromServer();
}

void RpcConnection::readAvailable()
{
    // A handler may run a nested event loop in which this connection is closed and deleted.
    const QPointer<RpcConnection> self(this);
    bool completed = false; // a message ended: the next one's deadline starts now
    while (self && !m_closed && !m_closing && m_socket->bytesAvailable() > 0) {
        m_framer.append(m_socket->readAll());
        while (!m_closed && !m_closing) {
            auto line = m_framer.next();
            if (!line)
                break;
            completed = true;
            if (!*line) {
                qCWarning(lcConnection, "client %llu: %s", m_id, qPrintable(line->error().message));
                sendAndClose(protocol::encodeError(QJsonValue(QJsonValue::Null), line->error()));
                return;
            }
            if (line->value().trimmed().isEmpty())
                continue;
            auto message = protocol::parseMessage(line->value());
            if (!message) {
                send(protocol::encodeError(QJsonValue(QJsonValue::Null), message.error()));
                continue;
            }
            if (message->type == protocol::Message::Type::Result
                || message->type == protocol::Message::Type::Error) {
                // Clients have nothing to answer; ignore rather than loop errors back.
                qCDebug(lcConnection, "client %llu sent a response; ignored", m_id);
                continue;
            }
            m_dispatcher(*this, *message);
            if (!self)
                return;
        }
    }
    if (!self || m_closed || m_closing)
        return;
    // The deadline runs from the first byte of a message, not from the last: a client that
    // trickles a byte now and then gets no more time.
    if (m_framer.bufferedBytes() == 0)
        m_frameTimer.stop();
    else if (completed || !m_frameTimer.isActive())
        m_frameTimer.start();
}

void RpcConnection::markClosed()
{
    if (m_closed)
        return;
    m_closed = true;
    qCDebug(lcConnection, "client %llu disconnected", m_id);
    Q_EMIT closed(m_id);
}

} // namespace airlock

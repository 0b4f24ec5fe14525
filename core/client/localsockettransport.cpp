#include "core/client/localsockettransport.h"

#include "core/client/helperstartadvice.h"

#include <QFileInfo>
#include <QMetaObject>

#include <cerrno>
#include <sys/socket.h>

namespace airlock {

LocalSocketTransport::LocalSocketTransport(const QString &path, QObject *parent)
    : Transport(parent)
    , m_path(QFileInfo(path).absoluteFilePath())
    , m_socket(new QLocalSocket(this))
{
    connect(m_socket, &QLocalSocket::connected, this, [this] {
        if (m_state != State::Connecting)
            return;
        m_state = State::Open;
        Q_EMIT connected();
    });
    connect(m_socket, &QLocalSocket::readyRead, this, [this] {
        const QByteArray bytes = m_socket->readAll();
        if (!bytes.isEmpty() && m_state == State::Open)
            Q_EMIT bytesReceived(bytes);
    });
    connect(m_socket, &QLocalSocket::errorOccurred, this, &LocalSocketTransport::onErrorOccurred);
    connect(m_socket, &QLocalSocket::disconnected, this, &LocalSocketTransport::onSocketClosed);
    connect(m_socket, &QLocalSocket::stateChanged, this, [this](QLocalSocket::LocalSocketState s) {
        if (s == QLocalSocket::UnconnectedState)
            onSocketClosed();
    });
}

LocalSocketTransport::~LocalSocketTransport()
{
    // Nobody listens any more; close quietly.
    m_socket->disconnect(this);
    m_socket->abort();
}

QString LocalSocketTransport::connectErrorReason(QLocalSocket::LocalSocketError error,
                                                 const QString &path, const QString &detail)
{
    switch (error) {
    case QLocalSocket::ServerNotFoundError:
        return QStringLiteral("airlockd is not running: no socket at %1 (start it with: %2)")
            .arg(path, HelperStartAdvice::command(path));
    case QLocalSocket::ConnectionRefusedError:
        return QStringLiteral("airlockd is not running: nothing accepts connections on %1 "
                              "(start it with: %2)")
            .arg(path, HelperStartAdvice::command(path));
    case QLocalSocket::SocketAccessError:
        return QStringLiteral("permission denied on %1: add yourself to the airlock group (sudo "
                              "usermod -aG airlock $USER) and log in again")
            .arg(path);
    case QLocalSocket::SocketTimeoutError:
        return QStringLiteral("timed out connecting to the helper at %1").arg(path);
    default:
        return QStringLiteral("cannot connect to the helper at %1: %2").arg(path, detail);
    }
}

void LocalSocketTransport::open()
{
    if (m_state != State::Closed)
        return;
    ++m_generation;
    m_closeScheduled = false;
    m_closeReason.clear();
    m_closeKind = ErrorKind::Disconnected;
    m_tail.clear();
    m_state = State::Connecting;
    m_socket->connectToServer(m_path, QIODevice::ReadWrite);
}

void LocalSocketTransport::close()
{
    if (m_state == State::Closed)
        return;
    m_closeReason = QStringLiteral("connection to %1 closed by the client").arg(description());
    ++m_generation; // drop any close already scheduled by socket signals
    const bool wasOpen = m_state == State::Open;
    m_state = State::Closed;
    m_socket->abort();
    if (wasOpen)
        Q_EMIT disconnected(m_closeReason);
}

void LocalSocketTransport::write(const QByteArray &bytes)
{
    if (m_state != State::Open || m_closeScheduled)
        return;
    qsizetype offset = 0;
    const qintptr fd = m_socket->socketDescriptor();
    if (fd >= 0 && m_socket->bytesToWrite() == 0) {
        // Write ourselves while Qt has nothing queued: on EPIPE Qt's socket engine closes the
        // descriptor at once, losing the line the helper sent just before closing (its
        // permission_denied answer), which we must still read.
        while (offset < bytes.size()) {
            const ssize_t n = ::send(int(fd), bytes.constData() + offset,
                                     size_t(bytes.size() - offset), MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0) {
                offset += n;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                break;
            } else {
                drainReceived();
                scheduleClose();
                return;
            }
        }
    }
    if (offset < bytes.size())
        m_socket->write(bytes.constData() + offset, bytes.size() - offset);
}

bool LocalSocketTransport::isOpen() const
{
    return m_state == State::Open;
}

QString LocalSocketTransport::description() const
{
    return QStringLiteral("local helper at %1").arg(m_path);
}

bool LocalSocketTransport::flush(int timeoutMs)
{
    while (m_state == State::Open && m_socket->bytesToWrite() > 0) {
        if (!m_socket->waitForBytesWritten(timeoutMs))
            return false;
    }
    return m_state == State::Open || m_socket->bytesToWrite() == 0;
}

void LocalSocketTransport::drainReceived()
{
    if (!m_socket->isOpen())
        return;
    m_tail += m_socket->readAll();
    const qintptr fd = m_socket->socketDescriptor();
    if (fd < 0)
        return;
    // Qt drops unread kernel data when it aborts after a failed write (EPIPE because the helper
    // already closed): read it ourselves while the descriptor is still open.
    char buffer[16384];
    for (;;) {
        const ssize_t n = ::recv(int(fd), buffer, sizeof buffer, MSG_DONTWAIT);
        if (n <= 0)
            break;
        m_tail.append(buffer, n);
    }
}

void LocalSocketTransport::onErrorOccurred(QLocalSocket::LocalSocketError error)
{
    if (m_state == State::Connecting) {
        m_closeReason = connectErrorReason(error, m_path, m_socket->errorString());
        // The socket is root:airlock 0660: refused before the helper could say so itself.
        if (error == QLocalSocket::SocketAccessError)
            m_closeKind = ErrorKind::PermissionDenied;
    } else if (m_state == State::Open) {
        drainReceived();
        if (error != QLocalSocket::PeerClosedError && m_closeReason.isEmpty())
            m_closeReason = QStringLiteral("connection to %1 failed: %2")
                                .arg(description(), m_socket->errorString());
    }
    onSocketClosed();
}

void LocalSocketTransport::onSocketClosed()
{
    if (m_state == State::Closed || m_closeScheduled)
        return;
    if (m_socket->state() != QLocalSocket::UnconnectedState && m_closeReason.isEmpty())
        return;
    scheduleClose();
}

void LocalSocketTransport::scheduleClose()
{
    if (m_state == State::Closed || m_closeScheduled)
        return;
    // QLocalSocket reports one close through several signals in an order that differs between
    // "connect failed" and "peer went away"; settle once the event loop is back so the best
    // reason wins and disconnected() is emitted exactly once.
    m_closeScheduled = true;
    const quint64 generation = m_generation;
    QMetaObject::invokeMethod(
        this,
        [this, generation] {
            if (generation == m_generation)
                finishClose();
        },
        Qt::QueuedConnection);
}

void LocalSocketTransport::finishClose()
{
    if (m_state == State::Closed)
        return;
    if (m_state == State::Open) {
        // The helper may write its last message (e.g. permission_denied) right before closing.
        const quint64 generation = m_generation;
        drainReceived();
        const QByteArray rest = std::exchange(m_tail, {});
        if (!rest.isEmpty())
            Q_EMIT bytesReceived(rest);
        if (generation != m_generation || m_state == State::Closed)
            return; // the receiver closed us itself
    }
    if (m_closeReason.isEmpty())
        m_closeReason = QStringLiteral("%1 closed the connection").arg(description());
    m_state = State::Closed;
    m_closeScheduled = false;
    ++m_generation;
    m_socket->abort();
    Q_EMIT disconnected(m_closeReason);
}

} // namespace airlock

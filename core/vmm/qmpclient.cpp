#include "core/vmm/qmpclient.h"

#include "core/model/answerlater.h"

#include <QJsonDocument>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <QTimer>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcQmp, "airlock.vmm.qmp")

constexpr qsizetype kMaxLine = 1024 * 1024;
} // namespace

QmpClient::QmpClient(QObject *parent) : QObject(parent) { }

QmpClient::~QmpClient()
{
    if (m_socket) {
        // No disconnected() from inside our own destructor: the owner is going away too.
        m_socket->disconnect(this);
        m_socket->abort();
    }
    dropOutgoing();
    m_pending.clear();
}

bool QmpClient::isConnected() const
{
    return m_socket && m_socket->state() == QLocalSocket::ConnectedState;
}

void QmpClient::connectToServer(const QString &path, int timeoutMs, Connected done)
{
    disconnectFromServer();
    m_socket = new QLocalSocket(this);
    m_handshake = std::move(done);
    const int attempt = ++m_handshakeAttempt;
    // A VMM that accepts but never greets (hung, or stopped by a debugger) ends here, not in a
    // blocked event loop.
    QTimer::singleShot(timeoutMs, this, [this, attempt, path] {
        if (attempt == m_handshakeAttempt && m_handshake)
            finishHandshake(
                fail(ErrorKind::Timeout, QStringLiteral("no QMP greeting from %1").arg(path)));
    });
    connect(m_socket, &QLocalSocket::readyRead, this, &QmpClient::onReadyRead);
    connect(m_socket, &QLocalSocket::bytesWritten, this, &QmpClient::flushOutgoing);
    connect(m_socket, &QLocalSocket::disconnected, this, &QmpClient::onDisconnected);
    connect(m_socket, &QLocalSocket::errorOccurred, this,
            [this, path](QLocalSocket::LocalSocketError error) {
                if (!m_handshake || (m_socket && m_socket->state() == QLocalSocket::ConnectedState))
                    return;
                const QString text = m_socket ? m_socket->errorString() : QString();
                if (error == QLocalSocket::ServerNotFoundError
                    || error == QLocalSocket::ConnectionRefusedError)
                    return finishHandshake(
                        fail(ErrorKind::NotFound,
                             QStringLiteral("no QMP server at %1: %2").arg(path, text)));
                finishHandshake(
                    fail(ErrorKind::OperationFailed,
                         QStringLiteral("cannot connect to QMP at %1: %2").arg(path, text)));
            });
    // QEMU speaks first (handleMessage); commands are refused until qmp_capabilities has been
    // answered.
    m_socket->connectToServer(path, QIODevice::ReadWrite);
}

void QmpClient::greeted()
{
    send(
        QStringLiteral("qmp_capabilities"), {},
        [this, attempt = m_handshakeAttempt](const Result<QJsonValue> &answer) {
            if (attempt != m_handshakeAttempt || !m_handshake)
                return;
            if (answer)
                qCDebug(lcQmp) << "connected";
            finishHandshake(answer ? Result<void>()
                                   : Result<void>(std::unexpected(answer.error())));
        },
        -1, 0);
}

void QmpClient::finishHandshake(const Result<void> &result)
{
    Connected done = std::exchange(m_handshake, {});
    ++m_handshakeAttempt;
    if (!result) {
        // Not failPending's Disconnected for the capabilities request: the caller hears why.
        m_pending.clear();
        disconnectFromServer();
    }
    // From the event loop: an error can be found inside connectToServer() itself.
    answerLater(this, std::move(done), result);
}

void QmpClient::disconnectFromServer()
{
    if (!m_socket)
        return;
    m_socket->disconnect(this);
    m_socket->abort();
    m_socket->deleteLater();
    m_socket = nullptr;
    dropOutgoing();
    m_buffer.clear();
    m_greeting = {};
    // A handshake under way ends unanswered: its owner is letting go of the connection.
    m_handshake = {};
    ++m_handshakeAttempt;
    failPending(QStringLiteral("QMP connection closed"));
}

void QmpClient::execute(const QString &command, const QJsonObject &arguments, Reply reply,
                        int timeoutMs)
{
    send(command, arguments, std::move(reply), -1, timeoutMs);
}

void QmpClient::send(const QString &command, const QJsonObject &arguments, Reply reply, int fd,
                     int timeoutMs)
{
    if (!isConnected()) {
        // From the event loop like every answer: the caller may not expect it inside its call.
        if (reply)
            QTimer::singleShot(0, this, [reply = std::move(reply), command] {
                reply(fail(ErrorKind::Disconnected,
                           QStringLiteral("QMP is not connected (command %1)").arg(command)));
            });
        return;
    }
    const qint64 id = m_nextId++;
    QJsonObject message {{QStringLiteral("execute"), command}, {QStringLiteral("id"), id}};
    if (!arguments.isEmpty())
        message.insert(QStringLiteral("arguments"), arguments);
    m_pending.insert(id, std::move(reply));
    if (timeoutMs > 0) {
        QTimer::singleShot(timeoutMs, this, [this, id, command, timeoutMs] {
            // Gone from m_pending once answered (or failed by a disconnect).
            const auto it = m_pending.find(id);
            if (it == m_pending.end())
                return;
            Reply late = std::move(it.value());
            m_pending.erase(it);
            if (late)
                late(
                    fail(ErrorKind::Timeout,
                         QStringLiteral("QMP %1: no answer in %2 ms").arg(command).arg(timeoutMs)));
        });
    }
    const QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
    if (fd < 0 && m_outgoing.empty()) {
        m_socket->write(line);
        m_socket->flush();
        return;
    }
    // A descriptor travels as SCM_RIGHTS with the bytes of its command (QEMU takes it from the
    // message that carries `getfd`), so everything queued before must go out first, and what
    // comes after waits behind it. Queued with a copy of the descriptor: the caller's may close.
    Outgoing outgoing {line, id, -1};
    if (fd >= 0 && (outgoing.fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        failDescriptor(id, errno);
        return;
    }
    m_outgoing.push_back(std::move(outgoing));
    flushOutgoing();
}

void QmpClient::flushOutgoing()
{
    while (m_socket && !m_outgoing.empty()) {
        Outgoing &next = m_outgoing.front();
        if (next.fd < 0) {
            m_socket->write(next.line);
            m_outgoing.pop_front();
            continue;
        }
        // Only once Qt's write buffer is empty: the descriptor must not overtake its bytes.
        if (m_socket->bytesToWrite() > 0) {
            m_socket->flush();
            return; // bytesWritten() calls again
        }
        char control[CMSG_SPACE(sizeof(int))] = {};
        iovec data {next.line.data(), size_t(next.line.size())};
        msghdr header {};
        header.msg_iov = &data;
        header.msg_iovlen = 1;
        header.msg_control = control;
        header.msg_controllen = sizeof control;
        cmsghdr *rights = CMSG_FIRSTHDR(&header);
        rights->cmsg_level = SOL_SOCKET;
        rights->cmsg_type = SCM_RIGHTS;
        rights->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(rights), &next.fd, sizeof(int));
        ssize_t sent;
        do {
            sent = ::sendmsg(int(m_socket->socketDescriptor()), &header, MSG_NOSIGNAL);
        } while (sent < 0 && errno == EINTR);
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            // QEMU reads its monitor slowly: try again when the socket takes bytes.
            if (!m_writable) {
                m_writable = new QSocketNotifier(m_socket->socketDescriptor(),
                                                 QSocketNotifier::Write, m_socket);
                connect(m_writable, &QSocketNotifier::activated, this, [this] {
                    m_writable->setEnabled(false);
                    flushOutgoing();
                });
            }
            m_writable->setEnabled(true);
            return;
        }
        const int error = sent < 0 ? errno : EMSGSIZE;
        const bool whole = sent == next.line.size();
        const qint64 id = next.id;
        ::close(next.fd);
        m_outgoing.pop_front();
        if (whole)
            continue;
        // A partial sendmsg leaves the monitor's stream broken: nothing after it can be trusted.
        failDescriptor(id, error);
        if (sent > 0)
            return disconnectFromServer();
    }
}

void QmpClient::failDescriptor(qint64 id, int error)
{
    if (Reply failed = m_pending.take(id))
        answerLater(
            this, std::move(failed),
            Result<QJsonValue>(fail(ErrorKind::OperationFailed,
                                    QStringLiteral("cannot pass a descriptor to QEMU: %1")
                                        .arg(QString::fromLocal8Bit(std::strerror(error))))));
}

void QmpClient::dropOutgoing()
{
    for (const Outgoing &outgoing : m_outgoing) {
        if (outgoing.fd >= 0)
            ::close(outgoing.fd);
    }
    m_outgoing.clear();
    m_writable = nullptr; // a child of the socket
}

void QmpClient::passDescriptor(const QString &name, int fd, int timeoutMs, Reply reply)
{
    send(QStringLiteral("getfd"), {{QStringLiteral("fdname"), name}}, std::move(reply), fd,
         timeoutMs);
}

void QmpClient::readPending()
{
    if (!m_socket)
        return;
    m_socket->waitForReadyRead(0);
    onReadyRead();
}

void QmpClient::onReadyRead()
{
    if (!m_socket)
        return;
    m_buffer.append(m_socket->readAll());
    qsizetype newline;
    while (m_socket && (newline = m_buffer.indexOf('\n')) >= 0) {
        const QByteArray line = m_buffer.left(newline).trimmed();
        m_buffer.remove(0, newline + 1);
        if (line.isEmpty())
            continue;
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(line, &error);
        if (!document.isObject()) {
            qCWarning(lcQmp) << "ignoring a malformed QMP line:" << error.errorString();
            continue;
        }
        handleMessage(document.object());
    }
    if (m_socket && m_buffer.size() > kMaxLine) {
        qCWarning(lcQmp) << "QMP line over 1 MiB; closing the connection";
        onDisconnected();
    }
}

void QmpClient::handleMessage(const QJsonObject &message)
{
    if (message.contains(QStringLiteral("QMP"))) {
        const bool first = m_greeting.isEmpty();
        m_greeting = message;
        if (first && m_handshake)
            greeted();
        return;
    }
    if (message.contains(QStringLiteral("event"))) {
        const QString name = message.value(QStringLiteral("event")).toString();
        qCDebug(lcQmp) << "event" << name;
        Q_EMIT eventReceived(name, message.value(QStringLiteral("data")).toObject());
        return;
    }
    const QJsonValue idValue = message.value(QStringLiteral("id"));
    const qint64 id = idValue.toInteger(-1);
    const auto it = m_pending.find(id);
    if (it == m_pending.end()) {
        qCDebug(lcQmp) << "reply for unknown id" << idValue;
        return;
    }
    Reply reply = std::move(it.value());
    m_pending.erase(it);
    if (!reply)
        return;
    if (message.contains(QStringLiteral("error"))) {
        const QJsonObject error = message.value(QStringLiteral("error")).toObject();
        reply(fail(ErrorKind::OperationFailed,
                   QStringLiteral("QMP error %1: %2")
                       .arg(error.value(QStringLiteral("class")).toString(),
                            error.value(QStringLiteral("desc")).toString())));
        return;
    }
    reply(message.value(QStringLiteral("return")));
}

void QmpClient::onDisconnected()
{
    if (!m_socket)
        return;
    if (m_handshake)
        return finishHandshake(
            fail(ErrorKind::Disconnected, QStringLiteral("QMP closed during its handshake")));
    disconnectFromServer();
    Q_EMIT disconnected();
}

void QmpClient::failPending(const QString &why)
{
    const auto pending = std::exchange(m_pending, {});
    for (const Reply &reply : pending) {
        if (reply)
            reply(fail(ErrorKind::Disconnected, why));
    }
}

} // namespace airlock

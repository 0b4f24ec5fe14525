#include "core/vmm/qmpclient.h"

#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QTimer>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>

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
    m_pending.clear();
}

bool QmpClient::isConnected() const
{
    return m_socket && m_socket->state() == QLocalSocket::ConnectedState;
}

Result<void> QmpClient::connectToServer(const QString &path, int timeoutMs)
{
    disconnectFromServer();
    const QDeadlineTimer deadline(timeoutMs);
    m_socket = new QLocalSocket(this);
    m_socket->connectToServer(path, QIODevice::ReadWrite);
    if (!m_socket->waitForConnected(int(deadline.remainingTime()))) {
        const auto error = m_socket->error();
        const QString text = m_socket->errorString();
        delete m_socket;
        m_socket = nullptr;
        if (error == QLocalSocket::ServerNotFoundError
            || error == QLocalSocket::ConnectionRefusedError)
            return fail(ErrorKind::NotFound,
                        QStringLiteral("no QMP server at %1: %2").arg(path, text));
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot connect to QMP at %1: %2").arg(path, text));
    }
    connect(m_socket, &QLocalSocket::readyRead, this, &QmpClient::onReadyRead);
    connect(m_socket, &QLocalSocket::disconnected, this, &QmpClient::onDisconnected);

    // QEMU speaks first; commands are refused until qmp_capabilities has been answered.
    while (m_greeting.isEmpty()) {
        if (!isConnected())
            return fail(ErrorKind::Disconnected, QStringLiteral("QMP closed before its greeting"));
        if (deadline.hasExpired())
            return fail(ErrorKind::Timeout, QStringLiteral("no QMP greeting from %1").arg(path));
        if (m_socket->waitForReadyRead(int(deadline.remainingTime())))
            onReadyRead();
    }
    AIRLOCK_TRY(executeAndWait(QStringLiteral("qmp_capabilities"), {},
                               int(qMax<qint64>(1, deadline.remainingTime()))));
    qCDebug(lcQmp) << "connected to" << path;
    return {};
}

void QmpClient::disconnectFromServer()
{
    if (!m_socket)
        return;
    m_socket->disconnect(this);
    m_socket->abort();
    m_socket->deleteLater();
    m_socket = nullptr;
    m_buffer.clear();
    m_greeting = {};
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
    if (fd < 0) {
        m_socket->write(line);
        m_socket->flush();
        return;
    }
    // A descriptor travels as SCM_RIGHTS with the bytes of its command (QEMU takes it from the
    // message that carries `getfd`), so everything queued before goes out first.
    while (m_socket->bytesToWrite() > 0 && m_socket->waitForBytesWritten(1000)) { }
    char control[CMSG_SPACE(sizeof(int))] = {};
    iovec data {const_cast<char *>(line.constData()), size_t(line.size())};
    msghdr header {};
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    cmsghdr *rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(rights), &fd, sizeof(int));
    const int socket = int(m_socket->socketDescriptor());
    ssize_t sent;
    do {
        sent = ::sendmsg(socket, &header, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent != line.size()) {
        const QString why = QString::fromLocal8Bit(std::strerror(sent < 0 ? errno : EMSGSIZE));
        Reply failed = m_pending.take(id);
        if (failed)
            QTimer::singleShot(0, this, [failed = std::move(failed), why] {
                failed(fail(ErrorKind::OperationFailed,
                            QStringLiteral("cannot pass a descriptor to QEMU: %1").arg(why)));
            });
    }
}

void QmpClient::passDescriptor(const QString &name, int fd, int timeoutMs, Reply reply)
{
    send(QStringLiteral("getfd"), {{QStringLiteral("fdname"), name}}, std::move(reply), fd,
         timeoutMs);
}

Result<QJsonValue> QmpClient::executeAndWait(const QString &command, const QJsonObject &arguments,
                                             int timeoutMs)
{
    if (!isConnected())
        return fail(ErrorKind::Disconnected,
                    QStringLiteral("QMP is not connected (command %1)").arg(command));
    std::optional<Result<QJsonValue>> answer;
    const qint64 id = m_nextId;
    send(
        command, arguments, [&answer](const Result<QJsonValue> &result) { answer = result; }, -1,
        0);
    return waitFor(id, answer, command, timeoutMs);
}

Result<QJsonValue> QmpClient::waitFor(qint64 id, std::optional<Result<QJsonValue>> &answer,
                                      const QString &command, int timeoutMs)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!answer) {
        if (!isConnected())
            return fail(ErrorKind::Disconnected,
                        QStringLiteral("QMP closed while waiting for %1").arg(command));
        if (deadline.hasExpired()) {
            // A late answer must not write into this stack frame.
            m_pending.remove(id);
            return fail(ErrorKind::Timeout, QStringLiteral("QMP %1: no answer").arg(command));
        }
        if (m_socket->waitForReadyRead(int(qMax<qint64>(1, deadline.remainingTime()))))
            onReadyRead();
    }
    return *answer;
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
        m_greeting = message;
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

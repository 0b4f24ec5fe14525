#include "rpctestclient.h"

#include <QDeadlineTimer>
#include <QJsonDocument>

namespace airlock::test {

RpcTestClient::RpcTestClient(const QString &socketPath, int timeoutMs)
{
    m_socket.connectToServer(socketPath);
    m_socket.waitForConnected(timeoutMs);
}

RpcTestClient::~RpcTestClient()
{
    m_socket.abort();
}

bool RpcTestClient::isConnected() const
{
    return m_socket.state() == QLocalSocket::ConnectedState;
}

void RpcTestClient::abort()
{
    m_socket.abort();
}

bool RpcTestClient::sendRaw(const QByteArray &bytes, int timeoutMs)
{
    if (!isConnected())
        return false;
    if (m_socket.write(bytes) != bytes.size())
        return false;
    QDeadlineTimer deadline(timeoutMs);
    while (m_socket.bytesToWrite() > 0 && isConnected()) {
        if (deadline.hasExpired() || !m_socket.waitForBytesWritten(int(deadline.remainingTime())))
            return m_socket.bytesToWrite() == 0;
    }
    return m_socket.bytesToWrite() == 0;
}

QJsonObject RpcTestClient::call(const QString &method, const QJsonObject &params, int timeoutMs)
{
    const qint64 id = m_nextId++;
    const QJsonObject request {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                               {QStringLiteral("id"), id},
                               {QStringLiteral("method"), method},
                               {QStringLiteral("params"), params}};
    if (!sendRaw(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n', timeoutMs))
        return {};
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        auto message = readLine(int(deadline.remainingTime()));
        if (!message)
            return {};
        if (message->contains(QStringLiteral("method"))) {
            m_pending.append(*message);
            continue;
        }
        if (message->value(QStringLiteral("id")).toInteger(-1) == id)
            return *message;
    }
    return {};
}

bool RpcTestClient::hello(int timeoutMs)
{
    const QJsonObject answer =
        call(QStringLiteral("hello"),
             {{QStringLiteral("protocol"), 1}, {QStringLiteral("client"), QStringLiteral("test")}},
             timeoutMs);
    return answer.value(QStringLiteral("result")).isObject();
}

std::optional<QJsonObject> RpcTestClient::readMessage(int timeoutMs)
{
    if (!m_pending.isEmpty())
        return m_pending.takeFirst();
    return readLine(timeoutMs);
}

std::optional<QJsonObject> RpcTestClient::waitForNotification(
    const QString &method, const std::function<bool(const QJsonObject &)> &predicate, int timeoutMs)
{
    auto matches = [&](const QJsonObject &message) {
        return message.value(QStringLiteral("method")).toString() == method
            && (!predicate || predicate(message.value(QStringLiteral("params")).toObject()));
    };
    for (qsizetype i = 0; i < m_pending.size(); ++i) {
        if (matches(m_pending.at(i)))
            return m_pending.takeAt(i);
    }
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        auto message = readLine(int(deadline.remainingTime()));
        if (!message)
            return std::nullopt;
        if (matches(*message))
            return message;
        m_pending.append(*message);
    }
    return std::nullopt;
}

QList<QJsonObject> RpcTestClient::takeNotifications()
{
    QList<QJsonObject> notifications;
    notifications.swap(m_pending);
    return notifications;
}

bool RpcTestClient::waitForDisconnected(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        m_socket.readAll();
        if (m_socket.state() == QLocalSocket::UnconnectedState)
            return true;
        m_socket.waitForReadyRead(int(qMin<qint64>(deadline.remainingTime(), 100)));
        if (m_socket.state() == QLocalSocket::UnconnectedState)
            return true;
    }
    return m_socket.state() == QLocalSocket::UnconnectedState;
}

QString RpcTestClient::errorKind(const QJsonObject &response)
{
    return response.value(QStringLiteral("error"))
        .toObject()
        .value(QStringLiteral("data"))
        .toObject()
        .value(QStringLiteral("kind"))
        .toString();
}

QJsonObject RpcTestClient::result(const QJsonObject &response)
{
    return response.value(QStringLiteral("result")).toObject();
}

std::optional<QJsonObject> RpcTestClient::readLine(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        const qsizetype newline = m_buffer.indexOf('\n');
        if (newline >= 0) {
            const QByteArray line = m_buffer.left(newline);
            m_buffer.remove(0, newline + 1);
            const QJsonDocument document = QJsonDocument::fromJson(line);
            // A non-object line is reported as an object the test can inspect.
            if (!document.isObject())
                return QJsonObject {{QStringLiteral("invalidLine"), QString::fromUtf8(line)}};
            return document.object();
        }
        if (m_socket.bytesAvailable() > 0) {
            m_buffer.append(m_socket.readAll());
            continue;
        }
        if (m_socket.state() != QLocalSocket::ConnectedState || deadline.hasExpired())
            return std::nullopt;
        m_socket.waitForReadyRead(int(qMax<qint64>(1, deadline.remainingTime())));
    }
}

} // namespace airlock::test

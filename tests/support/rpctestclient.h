#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QLocalSocket>
#include <QString>

#include <functional>
#include <optional>

namespace airlock::test {

/// A raw, synchronous JSON-RPC client for tests: no HelperClient, no event loop; every call
/// blocks on the socket with a timeout. It sees exactly the bytes the helper sends, so tests
/// can check framing, error objects and disconnections.
///
///     RpcTestClient client(helper.socketPath());
///     QVERIFY(client.isConnected());
///     const QJsonObject answer = client.call("sandbox.list");
///     QVERIFY(answer.contains("result"));
///
/// Notifications that arrive while waiting for an answer are kept, in order, for
/// waitForNotification() and takeNotifications().
class RpcTestClient
{
public:
    /// Connects at once (up to `timeoutMs`); check isConnected().
    explicit RpcTestClient(const QString &socketPath, int timeoutMs = 5000);
    ~RpcTestClient();

    bool isConnected() const;
    /// Closes the connection at once (a client going away mid-call).
    void abort();

    /// Writes bytes as they are (no newline added) and flushes them.
    bool sendRaw(const QByteArray &bytes, int timeoutMs = 10000);
    /// Sends a request with the next id and returns the whole response object (`result` or
    /// `error`), or an empty object on timeout or disconnection.
    QJsonObject call(const QString &method, const QJsonObject &params = {}, int timeoutMs = 10000);
    /// Sends `hello` with protocol 1; true when it got a result.
    bool hello(int timeoutMs = 10000);
    /// The next message of any kind (response or notification) that was not consumed yet.
    std::optional<QJsonObject> readMessage(int timeoutMs = 10000);
    /// The first notification (queued or arriving) with that method whose params satisfy the
    /// predicate; earlier non-matching ones stay queued. std::nullopt on timeout.
    std::optional<QJsonObject>
    waitForNotification(const QString &method,
                        const std::function<bool(const QJsonObject &params)> &predicate,
                        int timeoutMs = 10000);
    /// Queued notifications, oldest first; the queue is emptied.
    QList<QJsonObject> takeNotifications();
    /// True once the helper closed the connection (reads and discards until then).
    bool waitForDisconnected(int timeoutMs = 10000);

    /// Convenience: the `error.data.kind` of a response, or an empty string.
    static QString errorKind(const QJsonObject &response);
    /// Convenience: the `result` object of a response.
    static QJsonObject result(const QJsonObject &response);
    /// The underlying socket (e.g. to stop reading it).
    QLocalSocket &socket() { return m_socket; }

private:
    /// Reads one line into a message; false on timeout or disconnection.
    std::optional<QJsonObject> readLine(int timeoutMs);

    QLocalSocket m_socket;
    QByteArray m_buffer;
    QList<QJsonObject> m_pending;
    qint64 m_nextId = 1;
};

} // namespace airlock::test

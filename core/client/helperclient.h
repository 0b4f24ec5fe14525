#pragma once

#include "core/client/transport.h"
#include "core/model/error.h"

#include <QHash>
#include <QJsonObject>
#include <QJsonValue>
#include <QObject>

#include <functional>
#include <memory>

namespace airlock {

/// JSON-RPC client for airlockd over any Transport. Sends `hello` on every (re)connection,
/// matches answers to calls by id, emits notifications, and optionally reconnects with backoff
/// (0.5 s doubling to 10 s) after the helper goes away.
class HelperClient : public QObject
{
    Q_OBJECT
public:
    enum class State { Disconnected, Connecting, Ready };
    Q_ENUM(State)

    using Callback = std::function<void(const Result<QJsonValue> &)>;

    /// Takes ownership of the transport.
    explicit HelperClient(std::unique_ptr<Transport> transport, const QString &clientName,
                          QObject *parent = nullptr);
    ~HelperClient() override;

    /// Connects and sends `hello`; ready() or connectionLost() follows.
    void connectToHelper();
    void disconnectFromHelper();
    void setAutoReconnect(bool enabled);
    /// The reconnect backoff: the first retry `initialMs` after a loss, each further one twice
    /// as late, at most `maxMs` (defaults 500 ms and 10 s; tests shorten them).
    void setReconnectBackoff(int initialMs, int maxMs);
    /// The delay of the reconnect attempt that is scheduled, in ms; -1 when none is.
    int scheduledReconnectMs() const;

    State state() const;
    /// The `hello` result of the current connection (empty when not Ready).
    QJsonObject helloResult() const;
    QString transportDescription() const;

    /// Sends a request. The callback runs exactly once: with the result, the helper's error,
    /// Timeout after `timeoutMs`, or Disconnected when the connection drops first. Calls made
    /// before Ready are queued until hello completes (or fail with Disconnected). Calls made
    /// while Disconnected fail with Disconnected on the next event-loop turn. Destroying the
    /// client drops outstanding callbacks without running them.
    void call(const QString &method, const QJsonObject &params, Callback callback,
              int timeoutMs = 30000);
    /// Blocking variant for the CLI: spins a local event loop until the answer arrives.
    Result<QJsonValue> callSync(const QString &method, const QJsonObject &params,
                                int timeoutMs = 30000);
    /// Blocking connect for the CLI: connects, waits for the hello answer.
    Result<void> connectSync(int timeoutMs = 10000);

Q_SIGNALS:
    void stateChanged(airlock::HelperClient::State state);
    /// `hello` answered; calls may flow. Emitted again after each reconnection.
    void ready();
    /// The connection failed or dropped. Error kinds: PermissionDenied (helper refused us),
    /// Disconnected (socket missing/closed; message says which path), MessageTooLarge,
    /// InvalidRequest (protocol version mismatch).
    void connectionLost(const airlock::Error &error);
    void notificationReceived(const QString &method, const QJsonObject &params);

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace airlock

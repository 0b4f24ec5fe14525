#include "core/client/helperclient.h"

#include "core/protocol/lineframer.h"
#include "core/protocol/message.h"
#include "core/protocol/methods.h"

#include <QEventLoop>
#include <QLoggingCategory>
#include <QPointer>
#include <QTimer>

#include <map>
#include <optional>

Q_LOGGING_CATEGORY(lcClient, "airlock.client")

namespace airlock {

namespace {

constexpr int kInitialBackoffMs = 500;
constexpr int kMaxBackoffMs = 10000;
constexpr int kHelloTimeoutMs = 10000;

QString describeDuration(int ms)
{
    if (ms % 1000 == 0)
        return QStringLiteral("%1 s").arg(ms / 1000);
    return QStringLiteral("%1 ms").arg(ms);
}

} // namespace

struct HelperClient::Private
{
    struct Call
    {
        QString method;
        QJsonObject params;
        Callback callback;
        QTimer *timer = nullptr;
    };

    HelperClient *q;
    std::unique_ptr<Transport> transport;
    QString clientName;
    State state = State::Disconnected;
    QJsonObject hello;
    bool autoReconnect = false;
    // True between connectToHelper() and disconnectFromHelper(): only then do we reconnect.
    bool wanted = false;
    int initialBackoffMs = kInitialBackoffMs;
    int maxBackoffMs = kMaxBackoffMs;
    int backoffMs = kInitialBackoffMs;
    QTimer reconnectTimer;
    QTimer helloTimer;
    std::optional<protocol::LineFramer> framer;
    qint64 nextId = 1;
    qint64 helloId = 0;
    // An error the helper sent with id null right before closing (permission_denied,
    // message_too_large): it, not "connection closed", is why we lost the connection.
    std::optional<Error> fatalError;
    // Ordered by id, so calls queued before Ready go out in the order they were made.
    std::map<qint64, Call> calls;
    QList<qint64> queued;

    explicit Private(HelperClient *owner) : q(owner) { }

    void setState(State newState)
    {
        if (state == newState)
            return;
        state = newState;
        Q_EMIT q->stateChanged(newState);
    }

    void startAttempt()
    {
        framer.emplace(protocol::kMaxMessageBytes);
        fatalError.reset();
        hello = QJsonObject();
        setState(State::Connecting);
        transport->open();
    }

    void send(qint64 id, const Call &call)
    {
        transport->write(protocol::encodeRequest(QJsonValue(id), call.method, call.params));
    }

    void onConnected()
    {
        if (state != State::Connecting)
            return;
        helloId = nextId++;
        const QJsonObject params {{QStringLiteral("protocol"), protocol::kProtocolVersion},
                                  {QStringLiteral("client"), clientName}};
        transport->write(protocol::encodeRequest(
            QJsonValue(helloId), QString::fromLatin1(protocol::method::Hello), params));
        helloTimer.start(kHelloTimeoutMs);
    }

    void onHelloAnswer(const protocol::Message &message)
    {
        helloTimer.stop();
        if (message.type == protocol::Message::Type::Error) {
            lose(message.error);
            return;
        }
        if (!message.result.isObject()) {
            lose(Error {ErrorKind::InvalidRequest,
                        QStringLiteral("%1 answered hello without an object")
                            .arg(transport->description())});
            return;
        }
        hello = message.result.toObject();
        backoffMs = initialBackoffMs;
        setState(State::Ready);
        const QList<qint64> toSend = std::exchange(queued, {});
        for (const qint64 id : toSend) {
            const auto it = calls.find(id);
            if (it != calls.end())
                send(id, it->second);
        }
        Q_EMIT q->ready();
    }

    void onBytes(const QByteArray &bytes)
    {
        if (!framer)
            return;
        framer->append(bytes);
        const QPointer<HelperClient> guard(q);
        while (guard && framer) {
            std::optional<Result<QByteArray>> line = framer->next();
            if (!line)
                break;
            if (!line->has_value()) {
                lose(Error {
                    ErrorKind::MessageTooLarge,
                    QStringLiteral("%1 sent a message over 1 MiB").arg(transport->description())});
                return;
            }
            Result<protocol::Message> message = protocol::parseMessage(line->value());
            if (!message) {
                qCWarning(lcClient)
                    << "ignoring unreadable message from helper:" << message.error().message;
                continue;
            }
            dispatch(*message);
        }
    }

    void dispatch(const protocol::Message &message)
    {
        using Type = protocol::Message::Type;
        switch (message.type) {
        case Type::Notification:
            Q_EMIT q->notificationReceived(message.method, message.params);
            return;
        case Type::Request:
            qCDebug(lcClient) << "ignoring request from helper:" << message.method;
            return;
        case Type::Result:
        case Type::Error:
            break;
        }
        if (message.id.isNull() || message.id.isUndefined()) {
            // The helper closes the connection after each of these (a refusal, a connection
            // limit, an oversize message): the caller should hear why.
            if (message.type == Type::Error
                && (message.error.kind == ErrorKind::PermissionDenied
                    || message.error.kind == ErrorKind::MessageTooLarge
                    || message.error.kind == ErrorKind::Busy)) {
                fatalError = message.error;
                lose(message.error);
            } else {
                qCWarning(lcClient) << "helper error without id:" << message.error.message;
            }
            return;
        }
        if (!message.id.isDouble()) {
            qCDebug(lcClient) << "ignoring answer with a foreign id";
            return;
        }
        const qint64 id = message.id.toInteger();
        if (state == State::Connecting && id == helloId) {
            onHelloAnswer(message);
            return;
        }
        if (message.type == Type::Error)
            finish(id, std::unexpected(message.error));
        else
            finish(id, message.result);
    }

    void finish(qint64 id, const Result<QJsonValue> &result)
    {
        const auto it = calls.find(id);
        if (it == calls.end()) {
            qCDebug(lcClient) << "answer for unknown or timed-out call" << id;
            return;
        }
        Call call = std::move(it->second);
        calls.erase(it);
        queued.removeOne(id);
        call.timer->stop();
        call.timer->deleteLater();
        if (call.callback)
            call.callback(result);
    }

    // Fails every outstanding call; callbacks may destroy the client, so stop when it is gone.
    void failAll(const QString &reason)
    {
        std::map<qint64, Call> failing = std::exchange(calls, {});
        queued.clear();
        const QPointer<HelperClient> guard(q);
        for (auto &[id, call] : failing) {
            call.timer->stop();
            call.timer->deleteLater();
            if (!guard)
                return;
            if (call.callback)
                call.callback(
                    fail(ErrorKind::Disconnected,
                         QStringLiteral("no answer to '%1': %2").arg(call.method, reason)));
        }
    }

    // The one way a connection ends unasked: close, fail calls, report, maybe retry.
    void lose(const Error &error)
    {
        if (state == State::Disconnected)
            return;
        helloTimer.stop();
        framer.reset();
        hello = QJsonObject();
        setState(State::Disconnected);
        transport->close();
        const QPointer<HelperClient> guard(q);
        failAll(error.message);
        if (!guard)
            return;
        Q_EMIT q->connectionLost(error);
        if (!guard)
            return;
        if (autoReconnect && wanted && state == State::Disconnected) {
            qCDebug(lcClient) << "reconnecting in" << backoffMs << "ms";
            reconnectTimer.start(backoffMs);
            backoffMs = std::min(backoffMs * 2, maxBackoffMs);
        }
    }

    void onTransportDisconnected(const QString &reason)
    {
        lose(fatalError.value_or(Error {transport->disconnectKind(), reason}));
    }
};

HelperClient::HelperClient(std::unique_ptr<Transport> transport, const QString &clientName,
                           QObject *parent)
    : QObject(parent), d(std::make_unique<Private>(this))
{
    d->transport = std::move(transport);
    d->transport->setParent(nullptr); // owned by d, not by the QObject tree
    d->clientName = clientName;
    d->reconnectTimer.setSingleShot(true);
    d->helloTimer.setSingleShot(true);
    connect(&d->reconnectTimer, &QTimer::timeout, this, [this] {
        if (d->wanted && d->state == State::Disconnected)
            d->startAttempt();
    });
    connect(&d->helloTimer, &QTimer::timeout, this, [this] {
        d->lose(Error {ErrorKind::Timeout,
                       QStringLiteral("%1 did not answer hello within %2")
                           .arg(d->transport->description(), describeDuration(kHelloTimeoutMs))});
    });
    connect(d->transport.get(), &Transport::connected, this, [this] { d->onConnected(); });
    connect(d->transport.get(), &Transport::bytesReceived, this,
            [this](const QByteArray &bytes) { d->onBytes(bytes); });
    connect(d->transport.get(), &Transport::disconnected, this,
            [this](const QString &reason) { d->onTransportDisconnected(reason); });
}

HelperClient::~HelperClient()
{
    // Outstanding callbacks are dropped: their owners are usually being destroyed with us.
    d->transport->disconnect(this);
    d->transport->close();
}

void HelperClient::connectToHelper()
{
    d->wanted = true;
    d->reconnectTimer.stop();
    if (d->state != State::Disconnected)
        return;
    d->startAttempt();
}

void HelperClient::disconnectFromHelper()
{
    d->wanted = false;
    d->reconnectTimer.stop();
    if (d->state == State::Disconnected)
        return;
    d->helloTimer.stop();
    d->framer.reset();
    d->hello = QJsonObject();
    d->setState(State::Disconnected);
    d->transport->close();
    d->failAll(QStringLiteral("disconnected by the client"));
}

void HelperClient::setAutoReconnect(bool enabled)
{
    d->autoReconnect = enabled;
    if (!enabled)
        d->reconnectTimer.stop();
}

void HelperClient::setReconnectBackoff(int initialMs, int maxMs)
{
    d->initialBackoffMs = initialMs;
    d->maxBackoffMs = maxMs;
    d->backoffMs = initialMs;
}

int HelperClient::scheduledReconnectMs() const
{
    return d->reconnectTimer.isActive() ? d->reconnectTimer.interval() : -1;
}

HelperClient::State HelperClient::state() const
{
    return d->state;
}

QJsonObject HelperClient::helloResult() const
{
    return d->hello;
}

QString HelperClient::transportDescription() const
{
    return d->transport->description();
}

void HelperClient::call(const QString &method, const QJsonObject &params, Callback callback,
                        int timeoutMs)
{
    if (d->state == State::Disconnected) {
        // Answer on the next event-loop turn, so callers never see their callback run inside
        // call() itself.
        const QString reason = QStringLiteral("not connected to %1").arg(transportDescription());
        QTimer::singleShot(0, this, [callback = std::move(callback), method, reason] {
            if (callback)
                callback(fail(ErrorKind::Disconnected,
                              QStringLiteral("no answer to '%1': %2").arg(method, reason)));
        });
        return;
    }
    const qint64 id = d->nextId++;
    auto *timer = new QTimer(this);
    timer->setSingleShot(true);
    connect(timer, &QTimer::timeout, this, [this, id, method, timeoutMs] {
        d->finish(id,
                  fail(ErrorKind::Timeout,
                       QStringLiteral("no answer to '%1' from %2 within %3")
                           .arg(method, transportDescription(), describeDuration(timeoutMs))));
    });
    d->calls.emplace(id, Private::Call {method, params, std::move(callback), timer});
    timer->start(timeoutMs);
    if (d->state == State::Ready)
        d->send(id, d->calls.at(id));
    else
        d->queued.append(id);
}

Result<QJsonValue> HelperClient::callSync(const QString &method, const QJsonObject &params,
                                          int timeoutMs)
{
    std::optional<Result<QJsonValue>> answer;
    QEventLoop loop;
    call(
        method, params,
        [&answer, &loop](const Result<QJsonValue> &result) {
            answer = result;
            loop.quit();
        },
        timeoutMs);
    if (!answer)
        loop.exec(QEventLoop::ExcludeUserInputEvents);
    return *answer;
}

Result<void> HelperClient::connectSync(int timeoutMs)
{
    if (d->state == State::Ready)
        return {};
    std::optional<Result<void>> outcome;
    QEventLoop loop;
    const QMetaObject::Connection onReady = connect(this, &HelperClient::ready, &loop, [&] {
        outcome = Result<void>();
        loop.quit();
    });
    const QMetaObject::Connection onLost =
        connect(this, &HelperClient::connectionLost, &loop, [&](const Error &error) {
            outcome = std::unexpected(error);
            loop.quit();
        });
    QTimer timer;
    timer.setSingleShot(true);
    connect(&timer, &QTimer::timeout, &loop, [&] {
        outcome = fail(ErrorKind::Timeout,
                       QStringLiteral("%1 did not answer within %2")
                           .arg(transportDescription(), describeDuration(timeoutMs)));
        loop.quit();
    });
    timer.start(timeoutMs);
    connectToHelper();
    if (!outcome)
        loop.exec(QEventLoop::ExcludeUserInputEvents);
    disconnect(onReady);
    disconnect(onLost);
    if (!outcome->has_value() && d->state != State::Ready && !d->autoReconnect)
        disconnectFromHelper();
    return *outcome;
}

} // namespace airlock

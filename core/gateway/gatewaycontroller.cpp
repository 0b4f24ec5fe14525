#include "core/gateway/gatewaycontroller.h"

#include "core/gateway/controlchannel.h"
#include "core/gateway/credentials/gatewaycredentials.h"
#include "core/model/jsonfields.h"

#include <QJsonValue>
#include <QLoggingCategory>

#include <limits>

namespace airlock::gateway {

Q_LOGGING_CATEGORY(lcController, "airlock.gateway")

namespace {

QJsonObject message(const QString &type)
{
    return QJsonObject {{QStringLiteral("type"), type}};
}

} // namespace

GatewayController::GatewayController(ControlChannel *channel, QObject *parent)
    : QObject(parent), m_channel(channel)
{
    connect(m_channel, &ControlChannel::messageReceived, this, &GatewayController::onMessage);
    connect(m_channel, &ControlChannel::protocolError, this, &GatewayController::fatal);
    connect(m_channel, &ControlChannel::closed, this, [this] {
        if (!m_fatal)
            Q_EMIT exitRequested(0);
    });
}

GatewayController::~GatewayController() = default;

void GatewayController::onMessage(const QJsonObject &object)
{
    if (m_fatal)
        return;
    const QJsonValue type = object.value(QStringLiteral("type"));
    if (!type.isString())
        return fatal(QStringLiteral("a control message without a string 'type'"));
    if (type.toString() == u"config")
        return onConfig(object);
    if (type.toString() == u"policy")
        return onPolicy(object);
    if (type.toString() == u"credentials")
        return onCredentials(object);
    if (type.toString() == u"forgetSecret")
        return onForgetSecret(object);
    fatal(QStringLiteral("unknown control message type '%1'").arg(type.toString()));
}

void GatewayController::onConfig(const QJsonObject &object)
{
    if (m_gateway)
        return fatal(QStringLiteral("a second config message"));
    auto config = GatewayConfig::fromJson(object);
    if (!config)
        return fatal(QStringLiteral("config: %1").arg(config.error().message));
    auto gateway = EgressGateway::create(*config);
    if (!gateway)
        return fatal(QStringLiteral("config: %1").arg(gateway.error().message));
    m_gateway = std::move(*gateway);
    connect(m_gateway.get(), &EgressGateway::egress, &m_events, &EventRateLimiter::submit);
    connect(&m_events, &EventRateLimiter::passed, this, [this](const EgressEvent &event) {
        QJsonObject out = message(QStringLiteral("egress"));
        out.insert(QStringLiteral("event"), event.toJson());
        // Alerts and summaries may use the channel's reserve: they are never dropped for
        // ordinary events queued before them.
        m_channel->send(out, event.alert || event.count.has_value());
    });
    if (auto started = m_gateway->start(); !started)
        return fatal(QStringLiteral("config: %1").arg(started.error().message));
    QJsonObject ready = message(QStringLiteral("ready"));
    ready.insert(QStringLiteral("tcpPort"), m_gateway->tcpPort());
    ready.insert(QStringLiteral("dnsPort"), m_gateway->dnsPort());
    m_channel->send(ready);
    qCInfo(lcController, "sandbox %s: gateway ready on TCP port %u, DNS port %u",
           qPrintable(config->sandbox), unsigned(m_gateway->tcpPort()),
           unsigned(m_gateway->dnsPort()));
}

void GatewayController::onPolicy(const QJsonObject &object)
{
    if (!m_gateway)
        return fatal(QStringLiteral("a policy message before the config message"));
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it.key() != u"type" && it.key() != u"policy" && it.key() != u"generation")
            return fatal(QStringLiteral("policy message: field '%1': unknown key").arg(it.key()));
    }
    const QJsonValue value = object.value(QStringLiteral("policy"));
    if (!value.isObject())
        return fatal(QStringLiteral("policy message: field 'policy': must be an object"));
    // The generation airlockd numbered this policy with; echoed so that its policy.set answers
    // only once this policy is enforced (docs/gateway.md, "Control channel").
    // -1: absent (a sender that does not number its policies gets no generation back).
    const auto generation = json::readInteger(object, QStringLiteral("generation"), 0,
                                              std::numeric_limits<qint64>::max(), -1);
    if (!generation)
        return fatal(QStringLiteral("policy message: %1").arg(generation.error().message));
    auto policy = EgressPolicy::fromJson(value.toObject());
    // setPolicy() closes the open connections the new policy no longer allows before it
    // returns, so "applied" is sent only once nothing the old policy allowed can pass.
    Result<void> applied =
        policy ? m_gateway->setPolicy(*policy) : Result<void>(std::unexpected(policy.error()));
    if (!applied) {
        QJsonObject error = message(QStringLiteral("error"));
        error.insert(
            QStringLiteral("error"),
            QStringLiteral("policy: %1 (the previous policy stays)").arg(applied.error().message));
        if (*generation >= 0)
            error.insert(QStringLiteral("generation"), *generation);
        m_channel->send(error);
        return;
    }
    QJsonObject ack = message(QStringLiteral("applied"));
    ack.insert(QStringLiteral("rules"), int(policy->rules.size()));
    if (*generation >= 0)
        ack.insert(QStringLiteral("generation"), *generation);
    m_channel->send(ack);
}

void GatewayController::onForgetSecret(const QJsonObject &object)
{
    if (!m_gateway)
        return fatal(QStringLiteral("a forgetSecret message before the config message"));
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it.key() != u"type" && it.key() != u"secret")
            return fatal(
                QStringLiteral("forgetSecret message: field '%1': unknown key").arg(it.key()));
    }
    const QJsonValue secret = object.value(QStringLiteral("secret"));
    if (!secret.isString() || secret.toString().isEmpty())
        return fatal(QStringLiteral("forgetSecret message: field 'secret': must be a string"));
    const qsizetype dropped = m_gateway->forgetSecret(secret.toString());
    qCInfo(lcController, "secret %s deleted: forgot %lld value(s)", qPrintable(secret.toString()),
           static_cast<long long>(dropped));
    QJsonObject ack = message(QStringLiteral("secretForgotten"));
    ack.insert(QStringLiteral("values"), qint64(dropped));
    m_channel->send(ack);
}

void GatewayController::onCredentials(const QJsonObject &object)
{
    // Taken first, so the values are wiped on every path out of here.
    const SecretValue payload = m_channel->takePayload();
    if (!m_gateway)
        return fatal(QStringLiteral("a credentials message before the config message"));
    auto credentials = credentialsFromMessage(object, m_gateway->sandbox(), payload);
    if (!credentials) {
        QJsonObject error = message(QStringLiteral("error"));
        error.insert(QStringLiteral("error"),
                     QStringLiteral("credentials: %1 (the previous credentials stay)")
                         .arg(credentials.error().message));
        m_channel->send(error);
        return;
    }
    const qsizetype count = credentials->size();
    m_gateway->setCredentials(std::move(*credentials));
    QJsonObject ack = message(QStringLiteral("credentialsApplied"));
    ack.insert(QStringLiteral("credentials"), qint64(count));
    m_channel->send(ack);
    qCInfo(lcController, "credentials replaced: %lld binding(s)", static_cast<long long>(count));
}

void GatewayController::fatal(const QString &error)
{
    if (m_fatal)
        return;
    m_fatal = true;
    qCCritical(lcController, "%s", qPrintable(error));
    QJsonObject out = message(QStringLiteral("fatal"));
    out.insert(QStringLiteral("error"), error);
    m_channel->send(out);
    m_channel->flushBlocking(2000);
    Q_EMIT exitRequested(1);
}

} // namespace airlock::gateway

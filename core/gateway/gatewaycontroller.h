#pragma once

#include "core/gateway/egressgateway.h"
#include "core/gateway/eventratelimiter.h"

#include <QJsonObject>
#include <QObject>

#include <memory>

namespace airlock::gateway {

class ControlChannel;

/// The airlock-gateway side of the control protocol (docs/gateway.md, "Control messages"):
/// the first message must be `config` (→ build and start the EgressGateway, answer `ready`),
/// then `policy` messages replace the policy (→ `applied`, or `error` keeping the old policy)
/// and `credentials` messages (with their raw payload) replace the credentials
/// (→ `credentialsApplied`, or `error` keeping the old ones).
/// Egress decisions go out as `egress` messages. Anything else — a line that is not a JSON
/// object, an unknown type, a config that does not validate or a second config — is fatal:
/// `{"type":"fatal","error":...}` then exitRequested(1). EOF → exitRequested(0).
class GatewayController final : public QObject
{
    Q_OBJECT
public:
    /// `channel` must outlive the controller.
    explicit GatewayController(ControlChannel *channel, QObject *parent = nullptr);
    ~GatewayController() override;

    EgressGateway *gateway() const { return m_gateway.get(); }

Q_SIGNALS:
    /// The process should exit with `code` (0: airlockd closed the channel; 1: fatal error).
    void exitRequested(int code);

private:
    void onMessage(const QJsonObject &message);
    void onConfig(const QJsonObject &message);
    void onPolicy(const QJsonObject &message);
    void onCredentials(const QJsonObject &message);
    void onForgetSecret(const QJsonObject &message);
    void fatal(const QString &error);

    ControlChannel *m_channel;
    std::unique_ptr<EgressGateway> m_gateway;
    /// Between the gateway's decisions and the channel (docs/gateway.md, "Event rate").
    EventRateLimiter m_events;
    bool m_fatal = false;
};

} // namespace airlock::gateway

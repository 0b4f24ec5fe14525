#pragma once

#include "core/model/egressreason.h"
#include "core/model/error.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace airlock {

/// Which stage of the gateway made an egress decision (docs/gateway.md, "Events").
enum class EgressLayer {
    Dns, ///< "dns": a query to the gateway's resolver
    Tcp, ///< "tcp": before any protocol was recognized (not_tls, caps, timeouts)
    Tls, ///< "tls": the guest's ClientHello (SNI, policy, destination)
    Http, ///< "http": one request (allowed, or answered by the gateway with 4xx/5xx)
};

/// Stable name of a layer, e.g. "tls".
QString egressLayerName(EgressLayer layer);
/// Parses a layer name; std::nullopt for unknown names.
std::optional<EgressLayer> egressLayerFromName(QStringView name);

/// One decision of a sandbox's egress gateway: the value behind the gateway's `egress`
/// control message, airlockd's `egress.event` notification and `egress.history` entries.
/// Optional fields are left out of the JSON when absent. Never holds a query string (the path
/// is stored without "?..." by redactPath) nor secrets.
struct EgressEvent
{
    QDateTime time; ///< UTC, millisecond precision on the wire
    QString sandbox;
    EgressLayer layer = EgressLayer::Tcp;
    bool allowed = false; ///< verdict "allowed" / "denied"
    /// wireName() of an EgressReason; kept as text, so a newer gateway's reason still parses
    QString reason;
    QString detail; ///< English text for logs and the GUI
    QString name; ///< canonical name the decision is about, or escaped raw text
    QString sni;
    QString host;
    std::optional<quint16> port;
    QString destination; ///< the original destination address the guest dialed
    QString method;
    QString path; ///< without the query (redactPath)
    QString dnsType; ///< layer dns only, e.g. "A"
    std::optional<int> status; ///< http: the status the guest received
    std::optional<qint64> bytesUp; ///< http allowed: request bytes forwarded (head and body)
    std::optional<qint64> bytesDown; ///< http allowed: response bytes sent to the guest
    /// http: the credential binding (its helper id) this request used: injected into (verdict
    /// allowed) or carried the placeholder or value of and was refused (`credential_exfil`,
    /// `credential_unavailable`). The helper counts both per binding (docs/credentials.md).
    std::optional<qint64> binding;
    /// http: the secret's value (raw, base64 or percent-encoded) in the response was replaced
    /// by the placeholder this many times before the guest saw it (docs/redteam-cases.md I3).
    std::optional<qint64> scrubbed;
    /// A summary: this event stands for `count` decisions alike (same layer, verdict, reason,
    /// name, port, method, binding and alert) that the gateway's event rate limit aggregated
    /// in the last second; byte counts and `scrubbed` are their sums, `path` and `status` the
    /// common ones (left out when they differ). Absent: one decision (docs/gateway.md).
    std::optional<qint64> count;
    /// Someone should look: a credential was sent where its binding does not allow it, or a
    /// response carried the secret (docs/redteam-cases.md I2, I3). The GUI shows it as a
    /// probing alert.
    bool alert = false;

    /// The contract's JSON object (docs/gateway.md); absent fields are left out.
    QJsonObject toJson() const;
    /// Reads an event back; InvalidParams naming the field for a missing or mistyped required
    /// field (time, layer, verdict, reason), a bad layer/verdict name, or a path with a query.
    static Result<EgressEvent> fromJson(const QJsonObject &object);

    /// A request target's path without its query: "/a?x=1" -> "/a". An absolute-form target
    /// keeps its scheme and authority ("http://h/a?x" -> "http://h/a"); '#...' is cut too.
    static QString redactPath(QStringView target);

    friend bool operator==(const EgressEvent &, const EgressEvent &) = default;
};

} // namespace airlock

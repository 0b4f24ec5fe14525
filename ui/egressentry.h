#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace airlock {

/// One egress decision as the window shows it, read from the EgressEvent JSON of
/// `egress.event` notifications and `egress.history` entries (docs/protocol.md). The path
/// never holds a query: it is redacted again on reading, whatever the sender did.
struct EgressEntry
{
    qint64 seq = -1; ///< the helper's sequence number, -1 when unknown
    QDateTime time; ///< UTC
    QString sandbox;
    /// When the row was last seen: later than `time` when repeats were folded into it.
    QDateTime lastTime;
    QString layer; ///< "dns", "tcp", "tls", "http"
    /// Layer dns: the record types asked ("A", "AAAA"); one lookup's A and AAAA fold into one row.
    QStringList dnsTypes;
    bool allowed = false;
    QString reason; ///< stable snake_case reason
    QString detail; ///< the gateway's English detail
    QString name; ///< canonical name the decision is about
    QString sni;
    QString host;
    int port = -1; ///< -1 when absent
    QString method;
    QString path; ///< without "?query" and "#fragment"
    /// The credential binding (helper id) the request was injected with or tried to misuse;
    /// -1 when the event names none (docs/credentials.md, "Counters").
    qint64 binding = -1;
    qint64 scrubbed = 0; ///< secret forms replaced in the response (0 when none)
    /// Someone should look: `credential_exfil`, or a response that carried a secret.
    bool alert = false;
    /// Decisions this entry stands for: more than 1 for a summary the gateway's event rate
    /// limit made (docs/gateway.md, "Event rate"), which counters and rates add in full.
    qint64 count = 1;
    QJsonObject json; ///< the event as received (path redacted)

    /// Reads an event; std::nullopt when time, verdict or reason are missing or mistyped.
    /// `sandbox` is used when the event does not name one.
    static std::optional<EgressEntry> fromJson(const QJsonObject &event, const QString &sandbox,
                                               qint64 seq = -1);
    /// The name the decision is about: name, else SNI, else Host.
    QString destination() const;
    /// "SNI / Host" for the table: one value when both agree.
    QString sniAndHost() const;
    /// The layer for the table: "DNS A, AAAA", "TLS", "HTTP".
    QString layerText() const;
    /// True when `other` is a repeat of this decision (same sandbox, layer, verdict, reason,
    /// destination, port, SNI/Host, method, path and binding), so the table shows one row
    /// counting both. DNS lookups of another record type repeat too: A and AAAA of one name.
    bool sameDecision(const EgressEntry &other) const;
    /// Takes `other` (a repeat, see sameDecision) into this row: adds its count, moves
    /// lastTime forward, merges the record types and keeps an alert.
    void fold(const EgressEntry &other);
    /// A request target's path without query or fragment ("/a?x=1" → "/a").
    static QString redactPath(const QString &target);
};

} // namespace airlock

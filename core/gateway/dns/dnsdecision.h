#pragma once

#include "core/model/egressreason.h"

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QMetaType>
#include <QString>

#include <expected>

namespace airlock::gateway {

/// What the gateway's DNS did with one query. Stable names (dnsVerdictName) travel in egress
/// events; docs/dns.md has the table of verdicts per query.
enum class DnsVerdict {
    Answer, ///< "answer": NOERROR with the synthetic A record of an allowed name
    NoData, ///< "nodata": NOERROR, empty answer (AAAA/HTTPS/SVCB of an allowed name)
    Refused, ///< "refused": RCODE 5 REFUSED (RFC 1035 §4.1.1)
    NxDomain, ///< "nxdomain": RCODE 3, the upstream says the allowed name does not exist
    ServFail, ///< "servfail": RCODE 2, the upstream failed or timed out
    FormErr, ///< "formerr": RCODE 1, the query is malformed
    NotImp, ///< "notimp": RCODE 4, an opcode other than QUERY
    Drop, ///< "drop": no answer at all (not a query, or too short to answer)
    Resolve, ///< "resolve": allowed A query waiting for the upstream resolver (not final)
};

/// Stable name of a verdict, e.g. "refused".
QString dnsVerdictName(DnsVerdict verdict);

/// The outcome of DnsResponder::decide/finish for one query.
struct DnsDecision
{
    DnsVerdict verdict = DnsVerdict::Drop;
    EgressReason reason = EgressReason::MalformedQuery; ///< Allowed, or a reason of docs/dns.md
    /// The canonical name when it canonicalized, else the name as ldns presents it (escaped,
    /// for logs only); empty when there was no single question.
    QString name;
    quint16 type = 0; ///< QTYPE (RFC 1035 §3.2.2; 28 AAAA, 64 SVCB, 65 HTTPS), 0 if none
    QHostAddress address; ///< the synthetic address answered (verdict Answer only)
    QByteArray response; ///< wire-format response; empty for Drop and Resolve
    QByteArray query; ///< the query bytes, kept for Resolve so finish() can answer later
    QString detail; ///< English detail for logs and the GUI

    bool final() const { return verdict != DnsVerdict::Resolve; }
};

/// Why an upstream resolution failed: one of PrivateDestination, UpstreamNxDomain, NoAddress,
/// UpstreamFailure, UpstreamTimeout, Overloaded; plus an English detail.
struct DnsFailure
{
    EgressReason reason = EgressReason::UpstreamFailure;
    QString detail;
};

/// The upstream's A addresses for an allowed name (none of them in a refused range), or why not.
using DnsResolution = std::expected<QList<QHostAddress>, DnsFailure>;

/// One decision as the gateway reports it in an `egress` event.
struct DnsEvent
{
    QString name;
    quint16 type = 0;
    DnsVerdict verdict = DnsVerdict::Drop;
    EgressReason reason = EgressReason::MalformedQuery; ///< as DnsDecision::reason
    QString detail;
};

} // namespace airlock::gateway

Q_DECLARE_METATYPE(airlock::gateway::DnsEvent)

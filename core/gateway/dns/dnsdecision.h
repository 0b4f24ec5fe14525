#pragma once

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

/// Why. Stable snake_case names (dnsReasonName); docs/dns.md lists them.
enum class DnsReason {
    Allowed, ///< "allowed": the name is allowed and answered (or being resolved)
    HostNotAllowed, ///< "host_not_allowed": no policy rule matches the name
                    ///< (docs/redteam-cases.md E1)
    MalformedHost, ///< "malformed_host": the name fails canonicalizeHostname (principle 2)
    TypeNotAllowed, ///< "type_not_allowed": a query type other than A/AAAA/HTTPS/SVCB (principle 3)
    ClassNotAllowed, ///< "class_not_allowed": a class other than IN
    OpcodeNotImplemented, ///< "opcode_not_implemented": opcode other than QUERY
    MalformedQuery, ///< "malformed_query": unparseable, not one question, or records in a query
    NotAQuery, ///< "not_a_query": QR set (a response sent to the server) or under 12 bytes
    PrivateDestination, ///< "private_destination": upstream answer in a refused range (E6)
    UpstreamNxDomain, ///< "upstream_nxdomain": the upstream answered NXDOMAIN
    NoAddress, ///< "no_address": the upstream answer holds no A record for the name
    UpstreamFailure, ///< "upstream_failure": SERVFAIL or another error from the upstream
    UpstreamTimeout, ///< "upstream_timeout": no acceptable answer in time
    MappingExhausted, ///< "mapping_exhausted": the synthetic address pool is full
    Overloaded, ///< "overloaded": too many queries waiting for the upstream
    TooManyConnections, ///< "too_many_connections": a DNS TCP connection beyond the cap
};

/// Stable name of a verdict, e.g. "refused".
QString dnsVerdictName(DnsVerdict verdict);
/// Stable name of a reason, e.g. "private_destination".
QString dnsReasonName(DnsReason reason);

/// The outcome of DnsResponder::decide/finish for one query.
struct DnsDecision
{
    DnsVerdict verdict = DnsVerdict::Drop;
    DnsReason reason = DnsReason::MalformedQuery;
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
    DnsReason reason = DnsReason::UpstreamFailure;
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
    DnsReason reason = DnsReason::MalformedQuery;
    QString detail;
};

} // namespace airlock::gateway

Q_DECLARE_METATYPE(airlock::gateway::DnsEvent)

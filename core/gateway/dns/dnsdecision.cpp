#include "core/gateway/dns/dnsdecision.h"

namespace airlock::gateway {

QString dnsVerdictName(DnsVerdict verdict)
{
    switch (verdict) {
    case DnsVerdict::Answer:
        return QStringLiteral("answer");
    case DnsVerdict::NoData:
        return QStringLiteral("nodata");
    case DnsVerdict::Refused:
        return QStringLiteral("refused");
    case DnsVerdict::NxDomain:
        return QStringLiteral("nxdomain");
    case DnsVerdict::ServFail:
        return QStringLiteral("servfail");
    case DnsVerdict::FormErr:
        return QStringLiteral("formerr");
    case DnsVerdict::NotImp:
        return QStringLiteral("notimp");
    case DnsVerdict::Drop:
        return QStringLiteral("drop");
    case DnsVerdict::Resolve:
        return QStringLiteral("resolve");
    }
    return QStringLiteral("drop");
}

QString dnsReasonName(DnsReason reason)
{
    switch (reason) {
    case DnsReason::Allowed:
        return QStringLiteral("allowed");
    case DnsReason::HostNotAllowed:
        return QStringLiteral("host_not_allowed");
    case DnsReason::MalformedHost:
        return QStringLiteral("malformed_host");
    case DnsReason::TypeNotAllowed:
        return QStringLiteral("type_not_allowed");
    case DnsReason::ClassNotAllowed:
        return QStringLiteral("class_not_allowed");
    case DnsReason::OpcodeNotImplemented:
        return QStringLiteral("opcode_not_implemented");
    case DnsReason::MalformedQuery:
        return QStringLiteral("malformed_query");
    case DnsReason::NotAQuery:
        return QStringLiteral("not_a_query");
    case DnsReason::PrivateDestination:
        return QStringLiteral("private_destination");
    case DnsReason::UpstreamNxDomain:
        return QStringLiteral("upstream_nxdomain");
    case DnsReason::NoAddress:
        return QStringLiteral("no_address");
    case DnsReason::UpstreamFailure:
        return QStringLiteral("upstream_failure");
    case DnsReason::UpstreamTimeout:
        return QStringLiteral("upstream_timeout");
    case DnsReason::MappingExhausted:
        return QStringLiteral("mapping_exhausted");
    case DnsReason::Overloaded:
        return QStringLiteral("overloaded");
    case DnsReason::TooManyConnections:
        return QStringLiteral("too_many_connections");
    }
    return QStringLiteral("malformed_query");
}

} // namespace airlock::gateway

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

} // namespace airlock::gateway

// libFuzzer target: DnsResponder::decide and finish (docs/dns.md; docs/redteam-cases.md E1,
// principle 4). Any datagram from the guest: a response, when there is one, must parse, echo the
// query id and never carry data for a name the policy does not allow.
#include "core/gateway/dns/dnsldns.h"
#include "core/gateway/dns/dnsresponder.h"

#include <cstdint>
#include <cstdlib>

using namespace airlock;
using namespace airlock::gateway;
using namespace airlock::policy;

namespace {

void check(bool condition)
{
    if (!condition)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static DnsNameMapping mapping =
        *DnsNameMapping::create(*AddressRange::parse(u"100.112.0.0/24"));
    static DnsResponder responder = [] {
        EgressRule rule;
        rule.host = QStringLiteral("*.pkg.test");
        EgressRule exact;
        exact.host = QStringLiteral("api.test");
        EgressPolicy policy;
        policy.rules = {rule, exact};
        return DnsResponder(*PolicyMatcher::create(policy), &mapping);
    }();
    const QByteArrayView query(reinterpret_cast<const char *>(data), qsizetype(size));
    DnsDecision decision = responder.decide(query);
    if (decision.verdict == DnsVerdict::Resolve) {
        check(responder.policy().checkHost(decision.name).allowed());
        // Alternate between an answer and a refused one, driven by the input.
        DnsResolution resolution = (size % 2)
            ? DnsResolution(QList<QHostAddress> {QHostAddress(QStringLiteral("192.0.2.10"))})
            : DnsResolution(std::unexpected(DnsFailure {EgressReason::PrivateDestination, {}}));
        decision = responder.finish(decision, resolution);
        check(decision.final());
    }
    if (decision.verdict == DnsVerdict::Drop) {
        check(decision.response.isEmpty());
        return 0;
    }
    check(decision.response.size() >= 12);
    check(size >= 2);
    check(decision.response.at(0) == char(data[0]) && decision.response.at(1) == char(data[1]));
    ldns_pkt *packet = nullptr;
    check(ldns_wire2pkt(&packet, reinterpret_cast<const uint8_t *>(decision.response.constData()),
                        size_t(decision.response.size()))
          == LDNS_STATUS_OK);
    if (ldns_pkt_ancount(packet) > 0)
        check(decision.verdict == DnsVerdict::Answer
              && responder.policy().checkHost(decision.name).allowed());
    ldns_pkt_free(packet);
    return 0;
}

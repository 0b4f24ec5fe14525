#pragma once

#include "core/gateway/dns/dnsdecision.h"
#include "core/gateway/dns/dnsnamemapping.h"
#include "core/policy/policymatcher.h"

#include <QByteArrayView>

namespace airlock::gateway {

/// The gateway's DNS logic for one sandbox, without sockets (docs/redteam-cases.md principles
/// 2, 3, 4; E1). Queries are parsed with ldns; only A for allowed names is answered with data,
/// from the sandbox's DnsNameMapping, after the upstream resolver has vouched for the name (so
/// names pointing at refused ranges are REFUSED, E6). The decision table is in docs/dns.md:
///
/// | query | verdict |
/// |---|---|
/// | fewer than 12 bytes, QR set, or over kMaxQueryBytes | drop |
/// | unparseable (ldns_wire2pkt fails) | FORMERR, id echoed, no question |
/// | QDCOUNT != 1, or answer/authority records present | FORMERR |
/// | opcode other than QUERY (RFC 1035 §4.1.1) | NOTIMP |
/// | class other than IN | REFUSED class_not_allowed |
/// | name not canonical (canonicalizeHostname) | REFUSED malformed_host |
/// | name not allowed (PolicyMatcher::checkHost) | REFUSED host_not_allowed, never forwarded |
/// | allowed, type A | resolve upstream, then finish(): A synthetic address, TTL kTtl |
/// | allowed, AAAA (RFC 3596), SVCB 64 / HTTPS 65 (RFC 9460) | NOERROR, no data (NODATA) |
/// | allowed, any other type (MX, TXT, ANY, PTR, ...) | REFUSED type_not_allowed |
///
/// Every response echoes the id, the RD bit and the question as sent (case preserved), sets
/// QR, AA and RA, and carries no EDNS, authority or additional records. Not thread-safe.
class DnsResponder final
{
public:
    static constexpr quint32 kTtl = 5; ///< seconds, the TTL of every answer
    static constexpr qsizetype kMaxQueryBytes = 4096; ///< longer datagrams/messages are dropped

    /// `mapping` must outlive the responder.
    DnsResponder(policy::PolicyMatcher policy, DnsNameMapping *mapping);

    /// Replaces the policy; applies to the next query (policy.set is atomic).
    void setPolicy(policy::PolicyMatcher policy) { m_policy = std::move(policy); }
    const policy::PolicyMatcher &policy() const { return m_policy; }

    /// Decides one query (the DNS message without the TCP length prefix). Final for every
    /// verdict except Resolve: then the caller resolves `decision.name` upstream and calls
    /// finish(). Never touches the mapping.
    DnsDecision decide(QByteArrayView query) const;

    /// Completes a Resolve decision with the upstream's result: an allowed A name with at least
    /// one acceptable address → Answer with the name's synthetic address (assigned now); the
    /// policy is checked again (it may have changed meanwhile). Failures map to REFUSED
    /// (private_destination), NXDOMAIN (upstream_nxdomain), NODATA (no_address) or SERVFAIL
    /// (upstream_failure, upstream_timeout, mapping_exhausted, overloaded).
    DnsDecision finish(const DnsDecision &pending, const DnsResolution &resolution);

private:
    policy::PolicyMatcher m_policy;
    DnsNameMapping *m_mapping;
};

} // namespace airlock::gateway

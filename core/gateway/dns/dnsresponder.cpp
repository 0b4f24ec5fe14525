#include "core/gateway/dns/dnsresponder.h"

#include "core/gateway/dns/dnsldns.h"
#include "core/model/hostname.h"

namespace airlock::gateway {

using namespace ldnsutil;

namespace {

constexpr quint16 kTypeSvcb = 64; // RFC 9460
constexpr quint16 kTypeHttps = 65; // RFC 9460

// Builds a response: header from the query (id, opcode, RD), `rcode`, the question echoed when
// given, and one A record for it when `a` is set.
QByteArray buildResponse(quint16 id, quint8 opcode, bool rd, ldns_pkt_rcode rcode,
                         const ldns_rr *question, std::optional<quint32> a = std::nullopt)
{
    Pkt response(ldns_pkt_new());
    if (!response)
        return {};
    ldns_pkt_set_id(response.get(), id);
    ldns_pkt_set_qr(response.get(), true);
    // The opcode is echoed as its four raw bits (patched into the wire below): ldns_pkt_opcode
    // names only some of the 16 values, and an unnamed one is not a valid enumerator in C++.
    ldns_pkt_set_opcode(response.get(), LDNS_PACKET_QUERY);
    ldns_pkt_set_aa(response.get(), true);
    ldns_pkt_set_rd(response.get(), rd);
    ldns_pkt_set_ra(response.get(), true);
    ldns_pkt_set_rcode(response.get(), uint8_t(rcode));
    if (question) {
        ldns_rr *echo = ldns_rr_clone(question);
        if (!echo || !ldns_pkt_push_rr(response.get(), LDNS_SECTION_QUESTION, echo))
            return {};
        if (a) {
            Rr record(ldns_rr_new());
            if (!record)
                return {};
            ldns_rr_set_owner(record.get(), ldns_rdf_clone(ldns_rr_owner(question)));
            ldns_rr_set_type(record.get(), LDNS_RR_TYPE_A);
            ldns_rr_set_class(record.get(), LDNS_RR_CLASS_IN);
            ldns_rr_set_ttl(record.get(), DnsResponder::kTtl);
            const uint8_t bytes[4] = {uint8_t(*a >> 24), uint8_t(*a >> 16), uint8_t(*a >> 8),
                                      uint8_t(*a)};
            ldns_rr_push_rdf(record.get(), ldns_rdf_new_frm_data(LDNS_RDF_TYPE_A, 4, bytes));
            if (!ldns_pkt_push_rr(response.get(), LDNS_SECTION_ANSWER, record.get()))
                return {};
            record.release(); // owned by the packet now
        }
    }
    QByteArray wire = toWire(response.get());
    if (wire.size() >= 3)
        wire[2] = char((quint8(wire.at(2)) & 0x87) | ((opcode & 0x0f) << 3));
    return wire;
}

DnsDecision make(DnsVerdict verdict, EgressReason reason, QString detail)
{
    DnsDecision d;
    d.verdict = verdict;
    d.reason = reason;
    d.detail = std::move(detail);
    return d;
}

ldns_pkt_rcode rcodeFor(DnsVerdict verdict)
{
    switch (verdict) {
    case DnsVerdict::Refused:
        return LDNS_RCODE_REFUSED;
    case DnsVerdict::NxDomain:
        return LDNS_RCODE_NXDOMAIN;
    case DnsVerdict::ServFail:
        return LDNS_RCODE_SERVFAIL;
    case DnsVerdict::FormErr:
        return LDNS_RCODE_FORMERR;
    case DnsVerdict::NotImp:
        return LDNS_RCODE_NOTIMPL;
    default:
        return LDNS_RCODE_NOERROR;
    }
}

// Final decision answered with the question of `query` echoed (question may be null).
DnsDecision respond(DnsDecision d, const ldns_pkt *query, const ldns_rr *question,
                    std::optional<quint32> a = std::nullopt)
{
    d.response = buildResponse(ldns_pkt_id(query), quint8(ldns_pkt_get_opcode(query)),
                               ldns_pkt_rd(query), rcodeFor(d.verdict), question, a);
    if (d.response.isEmpty()) {
        d.verdict = DnsVerdict::Drop;
        d.detail += QStringLiteral(" (response could not be encoded)");
    }
    return d;
}

} // namespace

DnsResponder::DnsResponder(policy::PolicyMatcher policy, DnsNameMapping *mapping)
    : m_policy(std::move(policy)), m_mapping(mapping)
{ }

DnsDecision DnsResponder::decide(QByteArrayView query) const
{
    if (query.size() < 12)
        return make(DnsVerdict::Drop, EgressReason::NotAQuery,
                    QStringLiteral("%1 bytes: shorter than a DNS header").arg(query.size()));
    if (query.size() > kMaxQueryBytes)
        return make(
            DnsVerdict::Drop, EgressReason::MalformedQuery,
            QStringLiteral("%1 bytes: longer than %2").arg(query.size()).arg(kMaxQueryBytes));
    const auto header = reinterpret_cast<const quint8 *>(query.data());
    if (header[2] & 0x80)
        return make(DnsVerdict::Drop, EgressReason::NotAQuery,
                    QStringLiteral("QR is set: a response, not a query"));

    const Pkt pkt = parse(query);
    if (!pkt) {
        DnsDecision d = make(DnsVerdict::FormErr, EgressReason::MalformedQuery,
                             QStringLiteral("the message does not parse"));
        const quint16 id = quint16(header[0] << 8 | header[1]);
        const auto opcode = quint8((header[2] >> 3) & 0x0f);
        d.response = buildResponse(id, opcode, header[2] & 0x01, LDNS_RCODE_FORMERR, nullptr);
        if (d.response.isEmpty())
            d.verdict = DnsVerdict::Drop;
        return d;
    }

    const ldns_rr_list *questions = ldns_pkt_question(pkt.get());
    const size_t questionCount = questions ? ldns_rr_list_rr_count(questions) : 0;
    const ldns_rr *question = questionCount == 1 ? ldns_rr_list_rr(questions, 0) : nullptr;

    if (ldns_pkt_get_opcode(pkt.get()) != LDNS_PACKET_QUERY)
        return respond(
            make(DnsVerdict::NotImp, EgressReason::OpcodeNotImplemented,
                 QStringLiteral("opcode %1 is not QUERY").arg(int(ldns_pkt_get_opcode(pkt.get())))),
            pkt.get(), question);
    if (questionCount != 1)
        return respond(make(DnsVerdict::FormErr, EgressReason::MalformedQuery,
                            QStringLiteral("%1 questions, not exactly one").arg(questionCount)),
                       pkt.get(), nullptr);
    if (ldns_pkt_ancount(pkt.get()) != 0 || ldns_pkt_nscount(pkt.get()) != 0
        || ldns_pkt_tc(pkt.get()))
        return respond(make(DnsVerdict::FormErr, EgressReason::MalformedQuery,
                            QStringLiteral("a query with answer or authority records or TC set")),
                       pkt.get(), question);

    const QString presented = toString(ldns_rr_owner(question));
    const quint16 type = quint16(ldns_rr_get_type(question));
    const auto withQuestion = [&](DnsDecision d, const QString &name) {
        d.name = name;
        d.type = type;
        return d;
    };

    if (ldns_rr_get_class(question) != LDNS_RR_CLASS_IN)
        return respond(
            withQuestion(
                make(DnsVerdict::Refused, EgressReason::ClassNotAllowed,
                     QStringLiteral("class %1 is not IN").arg(int(ldns_rr_get_class(question)))),
                presented),
            pkt.get(), question);

    const auto canonical = canonicalizeHostname(presented);
    if (!canonical)
        return respond(withQuestion(make(DnsVerdict::Refused, EgressReason::MalformedHost,
                                         hostnameReasonName(canonical.error().reason)
                                             + QStringLiteral(": ") + canonical.error().message),
                                    presented),
                       pkt.get(), question);
    const QString &name = *canonical;

    const policy::Verdict verdict = m_policy.checkHost(name);
    if (!verdict.allowed()) // host_not_allowed or malformed_host
        return respond(
            withQuestion(make(DnsVerdict::Refused, verdict.reason, verdict.detail), name),
            pkt.get(), question);

    if (type == LDNS_RR_TYPE_A) {
        DnsDecision d = withQuestion(make(DnsVerdict::Resolve, EgressReason::Allowed,
                                          QStringLiteral("allowed by rule %1").arg(verdict.rule)),
                                     name);
        d.query = query.toByteArray();
        return d;
    }
    if (type == LDNS_RR_TYPE_AAAA || type == kTypeSvcb || type == kTypeHttps)
        return respond(withQuestion(make(DnsVerdict::NoData, EgressReason::Allowed,
                                         QStringLiteral("only A records are answered")),
                                    name),
                       pkt.get(), question);
    return respond(withQuestion(make(DnsVerdict::Refused, EgressReason::TypeNotAllowed,
                                     QStringLiteral("query type %1 is not served").arg(type)),
                                name),
                   pkt.get(), question);
}

DnsDecision DnsResponder::finish(const DnsDecision &pending, const DnsResolution &resolution)
{
    DnsDecision d = pending;
    d.query.clear();
    const Pkt pkt = parse(pending.query);
    if (pending.verdict != DnsVerdict::Resolve || !pkt
        || ldns_rr_list_rr_count(ldns_pkt_question(pkt.get())) != 1) {
        d.verdict = DnsVerdict::Drop;
        d.reason = EgressReason::MalformedQuery;
        d.detail = QStringLiteral("finish() without a pending A query");
        return d;
    }
    const ldns_rr *question = ldns_rr_list_rr(ldns_pkt_question(pkt.get()), 0);

    const policy::Verdict verdict = m_policy.checkHost(pending.name);
    if (!verdict.allowed()) {
        d.verdict = DnsVerdict::Refused;
        d.reason = EgressReason::HostNotAllowed;
        d.detail = verdict.detail;
        return respond(d, pkt.get(), question);
    }
    if (!resolution) {
        d.reason = resolution.error().reason;
        d.detail = resolution.error().detail;
        switch (d.reason) {
        case EgressReason::PrivateDestination:
            d.verdict = DnsVerdict::Refused;
            break;
        case EgressReason::UpstreamNxDomain:
            d.verdict = DnsVerdict::NxDomain;
            break;
        case EgressReason::NoAddress:
            d.verdict = DnsVerdict::NoData;
            break;
        default:
            d.verdict = DnsVerdict::ServFail;
            break;
        }
        return respond(d, pkt.get(), question);
    }
    if (resolution->isEmpty()) {
        d.verdict = DnsVerdict::NoData;
        d.reason = EgressReason::NoAddress;
        d.detail = QStringLiteral("the upstream answer holds no A record");
        return respond(d, pkt.get(), question);
    }
    auto address = m_mapping->addressFor(pending.name);
    if (!address) {
        d.verdict = DnsVerdict::ServFail;
        d.reason = EgressReason::MappingExhausted;
        d.detail = address.error().message;
        return respond(d, pkt.get(), question);
    }
    d.verdict = DnsVerdict::Answer;
    d.reason = EgressReason::Allowed;
    d.address = *address;
    return respond(d, pkt.get(), question, address->toIPv4Address());
}

} // namespace airlock::gateway

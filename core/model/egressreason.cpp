#include "core/model/egressreason.h"

#include <QHash>

#include <array>

namespace airlock {

namespace {

using L = EgressReasonLayer;

// The one table: every reason, in enum order.
constexpr EgressReasonInfo kEgressReasons[] = {
    {EgressReason::Allowed, "allowed", L::Policy, 0, true},
    {EgressReason::HostNotAllowed, "host_not_allowed", L::Policy, 403, true},
    {EgressReason::PortNotAllowed, "port_not_allowed", L::Policy, 403, true},
    {EgressReason::MethodNotAllowed, "method_not_allowed", L::Policy, 403, true},
    {EgressReason::PathNotAllowed, "path_not_allowed", L::Policy, 403, true},
    {EgressReason::MalformedHost, "malformed_host", L::Policy, 400, false},
    {EgressReason::MalformedMethod, "malformed_method", L::Policy, 400, false},
    {EgressReason::MalformedPath, "malformed_path", L::Policy, 400, false},
    {EgressReason::TypeNotAllowed, "type_not_allowed", L::Dns, 0, false},
    {EgressReason::ClassNotAllowed, "class_not_allowed", L::Dns, 0, false},
    {EgressReason::OpcodeNotImplemented, "opcode_not_implemented", L::Dns, 0, false},
    {EgressReason::MalformedQuery, "malformed_query", L::Dns, 0, false},
    {EgressReason::NotAQuery, "not_a_query", L::Dns, 0, false},
    {EgressReason::PrivateDestination, "private_destination", L::Dns, 403, false},
    {EgressReason::UpstreamNxDomain, "upstream_nxdomain", L::Dns, 0, false},
    {EgressReason::NoAddress, "no_address", L::Dns, 0, false},
    {EgressReason::UpstreamFailure, "upstream_failure", L::Dns, 0, false},
    {EgressReason::UpstreamTimeout, "upstream_timeout", L::Dns, 0, false},
    {EgressReason::MappingExhausted, "mapping_exhausted", L::Dns, 0, false},
    {EgressReason::Overloaded, "overloaded", L::Dns, 0, false},
    {EgressReason::TooManyConnections, "too_many_connections", L::Connection, 0, false},
    {EgressReason::NotTls, "not_tls", L::Connection, 0, false},
    {EgressReason::IdleTimeout, "idle_timeout", L::Connection, 0, false},
    {EgressReason::ClosedBeforeDecision, "closed_before_decision", L::Connection, 0, false},
    {EgressReason::NoSni, "no_sni", L::Tls, 0, false},
    {EgressReason::BadSni, "bad_sni", L::Tls, 421, false},
    {EgressReason::NoHttp11Alpn, "no_http11_alpn", L::Tls, 0, false},
    {EgressReason::LeafUnavailable, "leaf_unavailable", L::Tls, 0, false},
    {EgressReason::HandshakeFailed, "handshake_failed", L::Tls, 0, false},
    {EgressReason::DestinationMismatch, "destination_mismatch", L::Tls, 421, false},
    {EgressReason::ConnectSniMismatch, "sni_connect_mismatch", L::Tls, 0, false},
    {EgressReason::MalformedRequest, "malformed_request", L::Http, 400, false},
    {EgressReason::MalformedHeader, "malformed_header", L::Http, 400, false},
    {EgressReason::HeaderTooLarge, "header_too_large", L::Http, 431, false},
    {EgressReason::UnsupportedVersion, "unsupported_version", L::Http, 505, false},
    {EgressReason::ConflictingFraming, "conflicting_framing", L::Http, 400, false},
    {EgressReason::BadContentLength, "bad_content_length", L::Http, 400, false},
    {EgressReason::BadTransferEncoding, "bad_transfer_encoding", L::Http, 400, false},
    {EgressReason::BadChunk, "bad_chunk", L::Http, 400, false},
    {EgressReason::BodyTooLarge, "body_too_large", L::Http, 413, false},
    {EgressReason::BadTarget, "bad_target", L::Http, 400, false},
    {EgressReason::MethodForbidden, "method_forbidden", L::Http, 403, false},
    {EgressReason::PlainHttpPort, "plain_http_port", L::Http, 403, false},
    {EgressReason::AmbiguousFieldName, "ambiguous_field_name", L::Http, 400, false},
    {EgressReason::RequestOverride, "request_override", L::Http, 403, false},
    {EgressReason::HostMismatch, "host_mismatch", L::Http, 421, false},
    {EgressReason::MissingHost, "missing_host", L::Authority, 400, false},
    {EgressReason::Userinfo, "userinfo", L::Authority, 400, false},
    {EgressReason::IpLiteral, "ip_literal", L::Authority, 403, false},
    {EgressReason::AuthorityMismatch, "authority_mismatch", L::Authority, 400, false},
    {EgressReason::SniHostMismatch, "sni_host_mismatch", L::Authority, 421, false},
    {EgressReason::PortMismatch, "port_mismatch", L::Authority, 421, false},
    {EgressReason::UpstreamUnreachable, "upstream_unreachable", L::Upstream, 502, false},
    {EgressReason::UpstreamTlsFailed, "upstream_tls_failed", L::Upstream, 502, false},
    {EgressReason::CredentialExfil, "credential_exfil", L::Credentials, 403, false},
    {EgressReason::CredentialUnavailable, "credential_unavailable", L::Credentials, 503, false},
    {EgressReason::UnscrubbableResponse, "unscrubbable_response", L::Credentials, 502, false},
    {EgressReason::GatewayRestarted, "gateway_restarted", L::Network, 0, false},
    {EgressReason::FirewallRestored, "firewall_restored", L::Network, 0, false},
    {EgressReason::FirewallLost, "firewall_lost", L::Network, 0, false},
    {EgressReason::PolicyRevoked, "policy_revoked", L::Policy, 403, false},
};

constexpr bool inEnumOrder()
{
    for (int i = 0; i < int(std::size(kEgressReasons)); ++i) {
        if (int(kEgressReasons[i].reason) != i)
            return false;
    }
    return true;
}

static_assert(std::size(kEgressReasons) == std::size_t(kEgressReasonCount),
              "one row per EgressReason: a value appended to the enum needs its row and "
              "kEgressReasonCount moved to it");
static_assert(inEnumOrder(), "kEgressReasons rows follow the enum's order");

constexpr bool wireNamesAreSnakeCase()
{
    for (const EgressReasonInfo &row : kEgressReasons) {
        if (row.wireName.empty())
            return false;
        for (const char c : row.wireName) {
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
                return false;
        }
    }
    return true;
}

// HTTP denials carry the name in a JSON string without escaping (denialResponse).
static_assert(wireNamesAreSnakeCase(), "wire names are snake_case ASCII");

} // namespace

const EgressReasonInfo &egressReasonInfo(EgressReason reason)
{
    const int index = int(reason);
    Q_ASSERT(index >= 0 && index < kEgressReasonCount);
    return kEgressReasons[index];
}

std::span<const EgressReasonInfo> egressReasons()
{
    return kEgressReasons;
}

QString wireName(EgressReason reason)
{
    // Built once: every event names its reason, and the gateway makes tens of thousands a
    // second (issue 16); a copy of a shared QString costs a reference count.
    static const std::array<QString, kEgressReasonCount> names = [] {
        std::array<QString, kEgressReasonCount> built;
        for (int i = 0; i < kEgressReasonCount; ++i) {
            const std::string_view name = kEgressReasons[size_t(i)].wireName;
            built[size_t(i)] = QString::fromLatin1(name.data(), qsizetype(name.size()));
        }
        return built;
    }();
    egressReasonInfo(reason); // asserts the range
    return names[size_t(reason)];
}

int denialStatus(EgressReason reason)
{
    return egressReasonInfo(reason).httpStatus;
}

std::optional<EgressReason> fromWireName(QStringView name)
{
    static const QHash<QString, EgressReason> byName = [] {
        QHash<QString, EgressReason> names;
        for (const EgressReasonInfo &row : kEgressReasons)
            names.insert(wireName(row.reason), row.reason);
        return names;
    }();
    const auto found = byName.constFind(name.toString());
    if (found == byName.cend())
        return std::nullopt;
    return *found;
}

} // namespace airlock

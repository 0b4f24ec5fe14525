#pragma once

#include <QString>
#include <QStringView>

#include <optional>
#include <span>
#include <string_view>

namespace airlock {

/// Where a reason comes from: the check that decides it. An event's EgressLayer (dns, tcp, tls,
/// http) says where the decision was made, which for the policy's reasons is any stage.
enum class EgressReasonLayer {
    Policy, ///< the sandbox's rules (PolicyMatcher), at the DNS, TLS or HTTP stage
    Dns, ///< the gateway's DNS server and its own resolution (docs/dns.md)
    Connection, ///< a guest TCP connection before any protocol decision (docs/gateway.md)
    Tls, ///< the guest's TLS handshake (docs/tls.md)
    Http, ///< request parsing and the rules of one connection (docs/http.md)
    Authority, ///< the request's Host, target and SNI (docs/policy.md, docs/http.md)
    Upstream, ///< the gateway's own connection upstream (docs/gateway.md)
    Credentials, ///< injection, exfiltration and scrubbing (docs/credentials.md)
    Network, ///< what airlockd records about the sandbox network (docs/protocol.md)
};

/// Why an egress decision went as it did: every `reason` an `egress.event` carries, from the
/// gateway (all layers) and the helper. One vocabulary: a wire name means one thing, whichever
/// layer decides it ("host_not_allowed" from DNS, TLS and HTTP is one value). Each value has one
/// row in the table of egressreason.cpp (wire name, layer, HTTP status); append new values last.
enum class EgressReason {
    // The policy (PolicyMatcher).
    Allowed, ///< a rule matched on every axis (also: nothing was refused)
    HostNotAllowed, ///< no rule's host pattern matches (docs/redteam-cases.md C1-C3, E1)
    PortNotAllowed, ///< a rule matches the host, none also the port (D2)
    MethodNotAllowed, ///< host and port match, the method does not
    PathNotAllowed, ///< host, port and method match, no path prefix does
    MalformedHost, ///< the host fails canonicalizeHostname, or a Host line is malformed (A8)
    MalformedMethod, ///< not an RFC 9110 §9.1 token
    MalformedPath, ///< the target is not an unambiguous origin-form path
    // DNS.
    TypeNotAllowed, ///< a query type other than A/AAAA/HTTPS/SVCB (principle 3)
    ClassNotAllowed, ///< a class other than IN
    OpcodeNotImplemented, ///< an opcode other than QUERY
    MalformedQuery, ///< unparseable, not one question, or records in a query
    NotAQuery, ///< QR set (a response sent to the server) or under 12 bytes
    PrivateDestination, ///< the upstream's answer is in a refused range (E6)
    UpstreamNxDomain, ///< the upstream answered NXDOMAIN
    NoAddress, ///< the upstream answer holds no A record for the name
    UpstreamFailure, ///< SERVFAIL or another error from the upstream resolver
    UpstreamTimeout, ///< no acceptable answer in time
    MappingExhausted, ///< the synthetic address pool is full
    Overloaded, ///< too many queries waiting for the upstream
    // Connections.
    TooManyConnections, ///< a connection (TCP or DNS over TCP) beyond the cap
    NotTls, ///< the first bytes are not a TLS ClientHello (D3)
    IdleTimeout, ///< no traffic before any decision
    ClosedBeforeDecision, ///< the connection ended before a decision
    // TLS.
    NoSni, ///< the ClientHello has no server_name extension (A3, A4)
    BadSni, ///< the SNI is malformed (RFC 6066 §3) or does not canonicalize (A4)
    NoHttp11Alpn, ///< the client offered ALPN without "http/1.1" (RFC 7301)
    LeafUnavailable, ///< minting the leaf certificate failed
    HandshakeFailed, ///< any other handshake failure (version, cipher, ...)
    DestinationMismatch, ///< the guest dialed the synthetic address of another name (A3)
    ConnectSniMismatch, ///< in a CONNECT tunnel, the SNI names another host (A5)
    // HTTP.
    MalformedRequest, ///< request line not RFC 9112 §3
    MalformedHeader, ///< obs-fold, whitespace before ':', bare CR/LF, controls (RFC 9112 §5)
    HeaderTooLarge, ///< the head exceeds the header limit (RFC 6585 §5)
    UnsupportedVersion, ///< not HTTP/1.0 or HTTP/1.1
    ConflictingFraming, ///< both Content-Length and Transfer-Encoding (RFC 9112 §6.1, G1)
    BadContentLength, ///< not one field of 1*DIGIT without leading zeros (RFC 9110 §8.6)
    BadTransferEncoding, ///< not exactly "chunked", or on HTTP/1.0 (RFC 9112 §6.1)
    BadChunk, ///< the chunked body does not parse (RFC 9112 §7.1)
    BodyTooLarge, ///< over the configured body limit
    BadTarget, ///< not origin-form or absolute-form (RFC 9112 §3.2), or a late CONNECT
    MethodForbidden, ///< TRACE/TRACK in any case; CONNECT unless on an explicit proxy
    PlainHttpPort, ///< a plain-HTTP proxy request for a port other than 80
    AmbiguousFieldName, ///< a field name CGI-style upstreams fold onto a guarded field
    RequestOverride, ///< a method, URL, host or upstream override field or `_method` parameter
    HostMismatch, ///< a later request on the connection names another host or port
    // The request's authority.
    MissingHost, ///< no Host field (RFC 9112 §3.2)
    Userinfo, ///< '@' in an authority (B4)
    IpLiteral, ///< an IP address instead of a name (D1)
    AuthorityMismatch, ///< absolute-form target (or CONNECT target) and Host differ (A7)
    SniHostMismatch, ///< Host names another name than the SNI (A1, A6)
    PortMismatch, ///< Host names another port than the connection's (B3)
    // Upstream.
    UpstreamUnreachable, ///< no address of the name could be connected to
    UpstreamTlsFailed, ///< the upstream's certificate does not verify, or its TLS failed
    // Credentials.
    CredentialExfil, ///< a placeholder or value where its binding does not allow it (I1/I2)
    CredentialUnavailable, ///< a binding matches, its secret did not reach the gateway
    UnscrubbableResponse, ///< a response that cannot be scrubbed is not forwarded
    // The sandbox network, recorded by airlockd.
    GatewayRestarted, ///< the gateway died and runs again; connections were refused meanwhile
    FirewallRestored, ///< the nftables table had changed and was loaded again
    FirewallLost, ///< the nftables table could not be loaded again; the guest was killed
    // A policy change reaching a connection that was open already (gateway.md).
    PolicyRevoked, ///< the new policy no longer allows the connection's name or port: closed
};

/// One row of the reason table.
struct EgressReasonInfo
{
    EgressReason reason;
    std::string_view wireName; ///< stable snake_case name in `egress.event` and HTTP denials
    EgressReasonLayer layer;
    /// The HTTP status the gateway answers with when this reason refuses a request; 0 when it
    /// never refuses one (allowed, and what only DNS, a handshake or the network report).
    int httpStatus;
    /// A decision a rule change can turn: the policy dry run replays these, the learn list
    /// proposes rules from the denied ones.
    bool ruleDecision;
};

/// How many reasons there are: the enum's values are 0 .. kEgressReasonCount - 1, each with its
/// row in the table (egressreason.cpp checks both at compile time).
inline constexpr int kEgressReasonCount = int(EgressReason::PolicyRevoked) + 1;

/// The row of `reason`.
const EgressReasonInfo &egressReasonInfo(EgressReason reason);
/// Every reason's row, in enum order.
std::span<const EgressReasonInfo> egressReasons();

/// The stable wire name, e.g. "port_not_allowed".
QString wireName(EgressReason reason);
/// The HTTP status of the gateway's denial for `reason` (the row's httpStatus; 0: none).
int denialStatus(EgressReason reason);
/// The reason of a wire name; std::nullopt for a name this build does not know (a newer
/// gateway's, or not a reason at all).
std::optional<EgressReason> fromWireName(QStringView name);

} // namespace airlock

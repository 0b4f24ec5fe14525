#pragma once

#include "core/model/hostname.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace airlock::gateway {

/// Why a request's authority (SNI, Host, absolute-form target, CONNECT target) was refused.
/// Stable names (authorityReasonName) travel in `egress.event`; docs/policy.md lists them
/// with the HTTP status the gateway answers.
enum class AuthorityReason {
    Ok, ///< "ok"
    MissingHost, ///< "missing_host" (400): no Host field (RFC 9112 §3.2)
    MalformedHost, ///< "malformed_host" (400): two Host fields, a list, folding, bad spelling (A8,
                   ///< B1, B3)
    Userinfo, ///< "userinfo" (400): '@' in an authority (B4)
    IpLiteral, ///< "ip_literal" (403): an IP address instead of a name (D1)
    AuthorityMismatch, ///< "authority_mismatch" (400): absolute-form target and Host differ (A7)
    SniHostMismatch, ///< "sni_host_mismatch" (421): Host names another name than the SNI (A1, A6)
    PortMismatch, ///< "port_mismatch" (421): Host names another port than the connection's (B3)
    BadSni, ///< "bad_sni" (421): the SNI itself does not canonicalize (A4)
};

/// Stable name, e.g. "sni_host_mismatch".
QString authorityReasonName(AuthorityReason reason);
/// The HTTP status the gateway answers with: 400, 403 or 421 (0 for Ok): the verdicts of
/// docs/redteam-cases.md.
int authorityReasonStatus(AuthorityReason reason);

/// The result of an authority check: on Ok the one canonical authority of the request.
struct AuthorityCheck
{
    AuthorityReason reason = AuthorityReason::Ok;
    Authority authority; ///< valid only when reason is Ok
    QString detail; ///< English, for logs and the GUI; never contains header bytes verbatim
                    ///< beyond the rejected name

    bool ok() const { return reason == AuthorityReason::Ok; }
};

/// What the HTTP parser saw for one request, plus the connection it arrived on.
struct RequestAuthority
{
    bool tls = true; ///< TLS-terminated connection (https) or plain HTTP (port 80)
    QString sni; ///< the connection's SNI as received; required when tls
    quint16 connectionPort = 443; ///< the original destination port of the connection
    QStringList hostFields; ///< every Host field value in order, OWS trimmed (RFC 9110 §5.5)
    /// For an absolute-form target ("http://pkg.test/x"): its scheme and authority; else
    /// std::nullopt (origin-form).
    std::optional<QString> absoluteScheme;
    std::optional<QString> absoluteAuthority;
};

/// Enforces docs/redteam-cases.md principle 1 for one request: exactly one Host field whose value
/// is one authority (A8), canonicalized with parseAuthority (B1-B4, D1; the default port is 443
/// with tls, else 80); an absolute-form target must name the same scheme ("https" with tls, "http"
/// without), host and port as Host (A7); Host's port must be the connection's port (B3); with
/// tls the canonical SNI must equal Host's canonical name (A1, A6). Checked in that order; the
/// first failure is returned.
AuthorityCheck checkRequestAuthority(const RequestAuthority &request);

/// Parses an explicit proxy's `CONNECT host:port` target (RFC 9110 §9.3.6 authority-form, port
/// required). Userinfo (B4), IpLiteral (D1) or MalformedHost; on Ok the caller must later
/// require the tunnel's SNI to equal authority.host (A5).
AuthorityCheck checkConnectTarget(QStringView target);

} // namespace airlock::gateway

#pragma once

#include "core/model/egressreason.h"
#include "core/model/hostname.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace airlock::gateway {

/// The result of an authority check: on ok() the one canonical authority of the request. A
/// refusal's reason is MissingHost, MalformedHost, Userinfo, IpLiteral, AuthorityMismatch,
/// SniHostMismatch, PortMismatch or BadSni (docs/policy.md lists them with their status, the
/// reason table's httpStatus: 400, 403 or 421).
struct AuthorityCheck
{
    EgressReason reason = EgressReason::Allowed; ///< Allowed: nothing refused
    Authority authority; ///< valid only when ok()
    QString detail; ///< English, for logs and the GUI; never contains header bytes verbatim
                    ///< beyond the rejected name

    bool ok() const { return reason == EgressReason::Allowed; }
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

#include "core/gateway/http/hostheader.h"

namespace airlock::gateway {

namespace {

AuthorityCheck refuse(EgressReason reason, QString detail)
{
    return AuthorityCheck {reason, Authority {}, std::move(detail)};
}

// Maps a parseAuthority rejection to the request-level reason.
AuthorityCheck fromHostnameError(const HostnameError &error, QStringView what)
{
    const QString detail = QStringLiteral("%1: %2").arg(what.toString(), error.toError().message);
    switch (error.reason) {
    case HostnameReason::Userinfo:
        return refuse(EgressReason::Userinfo, detail);
    case HostnameReason::IpLiteral:
        return refuse(EgressReason::IpLiteral, detail);
    default:
        return refuse(EgressReason::MalformedHost, detail);
    }
}

} // namespace

AuthorityCheck checkRequestAuthority(const RequestAuthority &request)
{
    if (request.hostFields.isEmpty())
        return refuse(EgressReason::MissingHost, QStringLiteral("the request has no Host"));
    if (request.hostFields.size() > 1)
        return refuse(
            EgressReason::MalformedHost,
            QStringLiteral("the request has %1 Host fields").arg(request.hostFields.size()));
    const QString &hostField = request.hostFields.first();
    if (hostField.contains(u','))
        return refuse(EgressReason::MalformedHost, QStringLiteral("Host holds a list of values"));
    const quint16 defaultPort = request.tls ? 443 : 80;
    auto host = parseAuthority(hostField, defaultPort);
    if (!host)
        return fromHostnameError(host.error(), u"Host");

    if (request.absoluteScheme || request.absoluteAuthority) {
        const QString expectedScheme =
            request.tls ? QStringLiteral("https") : QStringLiteral("http");
        // Schemes are case-insensitive (RFC 3986 §3.1).
        if (request.absoluteScheme.value_or(QString()).toLower() != expectedScheme)
            return refuse(
                EgressReason::AuthorityMismatch,
                QStringLiteral("the request target's scheme is not %1").arg(expectedScheme));
        auto target = parseAuthority(request.absoluteAuthority.value_or(QString()), defaultPort);
        if (!target)
            return fromHostnameError(target.error(), u"request target");
        if (target->host != host->host || target->port != host->port)
            return refuse(EgressReason::AuthorityMismatch,
                          QStringLiteral("the request target names %1:%2 but Host names %3:%4")
                              .arg(target->host)
                              .arg(target->port)
                              .arg(host->host)
                              .arg(host->port));
    }

    if (host->port != request.connectionPort)
        return refuse(EgressReason::PortMismatch,
                      QStringLiteral("Host names port %1 on a connection to port %2")
                          .arg(host->port)
                          .arg(request.connectionPort));

    if (request.tls) {
        auto sni = canonicalizeHostname(request.sni);
        if (!sni)
            return refuse(EgressReason::BadSni,
                          QStringLiteral("SNI: %1").arg(sni.error().toError().message));
        if (*sni != host->host)
            return refuse(
                EgressReason::SniHostMismatch,
                QStringLiteral("Host names %1 on a TLS connection for %2").arg(host->host, *sni));
    }
    return AuthorityCheck {EgressReason::Allowed, *host, QString()};
}

AuthorityCheck checkConnectTarget(QStringView target)
{
    auto authority = parseAuthority(target, std::nullopt);
    if (!authority)
        return fromHostnameError(authority.error(), u"CONNECT target");
    return AuthorityCheck {EgressReason::Allowed, *authority, QString()};
}

} // namespace airlock::gateway

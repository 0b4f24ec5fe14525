#include "core/gateway/http/hostheader.h"

namespace airlock::gateway {

namespace {

AuthorityCheck refuse(AuthorityReason reason, QString detail)
{
    return AuthorityCheck {reason, Authority {}, std::move(detail)};
}

// Maps a parseAuthority rejection to the request-level reason.
AuthorityCheck fromHostnameError(const HostnameError &error, QStringView what)
{
    const QString detail = QStringLiteral("%1: %2").arg(what.toString(), error.toError().message);
    switch (error.reason) {
    case HostnameReason::Userinfo:
        return refuse(AuthorityReason::Userinfo, detail);
    case HostnameReason::IpLiteral:
        return refuse(AuthorityReason::IpLiteral, detail);
    default:
        return refuse(AuthorityReason::MalformedHost, detail);
    }
}

} // namespace

QString authorityReasonName(AuthorityReason reason)
{
    switch (reason) {
    case AuthorityReason::Ok:
        return QStringLiteral("ok");
    case AuthorityReason::MissingHost:
        return QStringLiteral("missing_host");
    case AuthorityReason::MalformedHost:
        return QStringLiteral("malformed_host");
    case AuthorityReason::Userinfo:
        return QStringLiteral("userinfo");
    case AuthorityReason::IpLiteral:
        return QStringLiteral("ip_literal");
    case AuthorityReason::AuthorityMismatch:
        return QStringLiteral("authority_mismatch");
    case AuthorityReason::SniHostMismatch:
        return QStringLiteral("sni_host_mismatch");
    case AuthorityReason::PortMismatch:
        return QStringLiteral("port_mismatch");
    case AuthorityReason::BadSni:
        return QStringLiteral("bad_sni");
    }
    return QStringLiteral("malformed_host");
}

int authorityReasonStatus(AuthorityReason reason)
{
    switch (reason) {
    case AuthorityReason::Ok:
        return 0;
    case AuthorityReason::IpLiteral:
        return 403;
    case AuthorityReason::SniHostMismatch:
    case AuthorityReason::PortMismatch:
    case AuthorityReason::BadSni:
        return 421;
    case AuthorityReason::MissingHost:
    case AuthorityReason::MalformedHost:
    case AuthorityReason::Userinfo:
    case AuthorityReason::AuthorityMismatch:
        break;
    }
    return 400;
}

AuthorityCheck checkRequestAuthority(const RequestAuthority &request)
{
    if (request.hostFields.isEmpty())
        return refuse(AuthorityReason::MissingHost, QStringLiteral("the request has no Host"));
    if (request.hostFields.size() > 1)
        return refuse(
            AuthorityReason::MalformedHost,
            QStringLiteral("the request has %1 Host fields").arg(request.hostFields.size()));
    const QString &hostField = request.hostFields.first();
    if (hostField.contains(u','))
        return refuse(AuthorityReason::MalformedHost,
                      QStringLiteral("Host holds a list of values"));
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
                AuthorityReason::AuthorityMismatch,
                QStringLiteral("the request target's scheme is not %1").arg(expectedScheme));
        auto target = parseAuthority(request.absoluteAuthority.value_or(QString()), defaultPort);
        if (!target)
            return fromHostnameError(target.error(), u"request target");
        if (target->host != host->host || target->port != host->port)
            return refuse(AuthorityReason::AuthorityMismatch,
                          QStringLiteral("the request target names %1:%2 but Host names %3:%4")
                              .arg(target->host)
                              .arg(target->port)
                              .arg(host->host)
                              .arg(host->port));
    }

    if (host->port != request.connectionPort)
        return refuse(AuthorityReason::PortMismatch,
                      QStringLiteral("Host names port %1 on a connection to port %2")
                          .arg(host->port)
                          .arg(request.connectionPort));

    if (request.tls) {
        auto sni = canonicalizeHostname(request.sni);
        if (!sni)
            return refuse(AuthorityReason::BadSni,
                          QStringLiteral("SNI: %1").arg(sni.error().toError().message));
        if (*sni != host->host)
            return refuse(
                AuthorityReason::SniHostMismatch,
                QStringLiteral("Host names %1 on a TLS connection for %2").arg(host->host, *sni));
    }
    return AuthorityCheck {AuthorityReason::Ok, *host, QString()};
}

AuthorityCheck checkConnectTarget(QStringView target)
{
    auto authority = parseAuthority(target, std::nullopt);
    if (!authority)
        return fromHostnameError(authority.error(), u"CONNECT target");
    return AuthorityCheck {AuthorityReason::Ok, *authority, QString()};
}

} // namespace airlock::gateway

#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace airlock {

/// The resolver every gateway of this helper queries for allowed names (docs/dns.md).
namespace upstreamdns {

/// "ADDRESS" or "IPV4:PORT" (port 1..65535, default 53) as the gateway's `upstreamDns` config
/// object {address, port, timeoutMs: 2000}; an empty object when `text` is not an address. A
/// bare IPv6 address is taken as it is (a port needs IPv4: "[::1]:53" is refused).
QJsonObject fromText(const QString &text);

/// The address of the first `nameserver` line of resolv.conf(5) text; empty when there is none.
/// Comment lines (`#`, `;`) and other keywords are skipped; fields split on blanks.
QString firstNameserver(const QByteArray &resolvConf);

/// firstNameserver() of the file at `path` (normally /etc/resolv.conf); empty when unreadable.
QString hostResolver(const QString &path = QStringLiteral("/etc/resolv.conf"));

/// The upstream the helper hands its gateways: `configured` when the user named one
/// (--upstream-dns; an invalid text stays invalid so that the caller refuses it), else the
/// host's resolver; a host resolver that is missing or not an address becomes 127.0.0.1,
/// which answers nothing, so every lookup fails closed until --upstream-dns names one.
QString choose(const QString &configured, bool isConfigured, const QString &hostResolverAddress);

} // namespace upstreamdns
} // namespace airlock

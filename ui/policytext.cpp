#include "ui/policytext.h"

#include "core/model/egresspolicy.h"
#include "ui/egressentry.h"

#include <QRegularExpression>
#include <QSet>

namespace airlock {

QStringList splitListCell(const QString &text)
{
    static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
    return text.split(separators, Qt::SkipEmptyParts);
}

QString joinListCell(const QStringList &items)
{
    return items.join(QStringLiteral(", "));
}

QString PolicyText::hostProblem(HostnameReason reason)
{
    switch (reason) {
    case HostnameReason::Empty:
        return tr("Enter a host name, e.g. pypi.org or *.example.com.");
    case HostnameReason::NonAscii:
        return tr("Only ASCII letters, digits, '-' and '.' are allowed; write an international "
                  "name in its xn-- form.");
    case HostnameReason::ControlCharacter:
        return tr("Spaces and control characters are not allowed in a host name.");
    case HostnameReason::Userinfo:
        return tr("'@' is not allowed: enter the host name only, without a user name.");
    case HostnameReason::IpLiteral:
        return tr("An IP address cannot be allowed: name the host instead (the gateway only "
                  "connects to names it resolved itself).");
    case HostnameReason::Percent:
        return tr("'%' is not allowed in a host name.");
    case HostnameReason::Backslash:
        return tr("'\\' is not allowed in a host name.");
    case HostnameReason::Port:
        return tr("Enter the port in the Ports column, not after the host name.");
    case HostnameReason::Wildcard:
        return tr("A wildcard may only be a leading \"*.\", as in *.example.com.");
    case HostnameReason::BadCharacter:
        return tr("Only letters, digits, '-' and '.' are allowed in a host name ('_' too is "
                  "refused).");
    case HostnameReason::TrailingDots:
        return tr("At most one trailing dot is allowed.");
    case HostnameReason::EmptyLabel:
        return tr("The name has an empty part: a leading dot or two dots in a row.");
    case HostnameReason::LabelTooLong:
        return tr("A part between dots may have at most 63 characters.");
    case HostnameReason::TooLong:
        return tr("A host name may have at most 253 characters.");
    case HostnameReason::BadHyphen:
        return tr("A part between dots may not start or end with '-'.");
    case HostnameReason::BadPort:
    case HostnameReason::MissingPort:
        return tr("The port is not a number between 1 and 65535.");
    case HostnameReason::BadPattern:
        return tr("A wildcard may only be a leading \"*.\", as in *.example.com.");
    case HostnameReason::PatternTooBroad:
        return tr("This wildcard covers a whole top-level domain; name at least two parts after "
                  "\"*.\", as in *.example.com.");
    }
    return {};
}

QString PolicyText::hostPatternProblem(const QString &pattern)
{
    auto canonical = canonicalHostPattern(pattern);
    if (!canonical)
        return hostProblem(canonical.error().reason);
    return {};
}

QString PolicyText::portsProblem(const QString &text, QList<quint16> *ports)
{
    const QStringList items = splitListCell(text);
    if (items.isEmpty())
        return tr("Enter at least one port, e.g. 443.");
    QList<quint16> parsed;
    QSet<quint16> seen;
    for (const QString &item : items) {
        bool ok = false;
        const uint port = item.toUInt(&ok);
        if (!ok || port < 1 || port > 65535)
            return tr("“%1” is not a port between 1 and 65535.").arg(item);
        if (seen.contains(quint16(port)))
            return tr("Port %1 is listed twice.").arg(port);
        seen.insert(quint16(port));
        parsed.append(quint16(port));
    }
    if (ports)
        *ports = parsed;
    return {};
}

QString PolicyText::methodsProblem(const QStringList &methods)
{
    QSet<QString> seen;
    for (const QString &method : methods) {
        if (!isValidRuleMethod(method)) {
            if (isValidRuleMethod(method.toUpper()))
                return tr("Methods are case-sensitive: write “%1”.").arg(method.toUpper());
            return tr("“%1” is not an HTTP method such as GET or POST.").arg(method);
        }
        if (seen.contains(method))
            return tr("%1 is listed twice.").arg(method);
        seen.insert(method);
    }
    return {};
}

QString PolicyText::pathPrefixesProblem(const QStringList &prefixes)
{
    QSet<QString> seen;
    for (const QString &prefix : prefixes) {
        if (!prefix.startsWith(QLatin1Char('/')))
            return tr("“%1” must start with '/'.").arg(prefix);
        const QString problem = pathPrefixProblem(prefix);
        if (!problem.isEmpty()) {
            if (prefix.contains(QLatin1Char('%')) || prefix.contains(QLatin1Char('?'))
                || prefix.contains(QLatin1Char('#')))
                return tr("“%1”: write the path without '%', '?' or '#' (no percent-encoding, "
                          "no query).")
                    .arg(prefix);
            if (prefix.split(QLatin1Char('/')).contains(QStringLiteral(".."))
                || prefix.split(QLatin1Char('/')).contains(QStringLiteral(".")))
                return tr("“%1”: \".\" and \"..\" segments are not allowed.").arg(prefix);
            return tr("“%1” is not a plain path: %2").arg(prefix, problem);
        }
        if (seen.contains(prefix))
            return tr("“%1” is listed twice.").arg(prefix);
        seen.insert(prefix);
    }
    return {};
}

QString PolicyText::reasonText(EgressReason reason)
{
    // Short enough for the Reason column; the event's detail follows in the tooltip. No
    // default: a reason added to the table without its words does not compile (-Wswitch).
    switch (reason) {
    // The policy (PolicyMatcher).
    case EgressReason::Allowed:
        return tr("Allowed by rule");
    case EgressReason::HostNotAllowed:
        return tr("Host not allowed");
    case EgressReason::PortNotAllowed:
        return tr("Port not allowed");
    case EgressReason::MethodNotAllowed:
        return tr("Method not allowed");
    case EgressReason::PathNotAllowed:
        return tr("Path not allowed");
    case EgressReason::MalformedHost:
        return tr("Malformed host name");
    case EgressReason::MalformedMethod:
        return tr("Malformed method");
    case EgressReason::MalformedPath:
        return tr("Malformed path");
    // DNS (dns.md).
    case EgressReason::TypeNotAllowed:
        return tr("DNS query type not allowed");
    case EgressReason::ClassNotAllowed:
        return tr("DNS class not allowed");
    case EgressReason::OpcodeNotImplemented:
        return tr("DNS opcode not supported");
    case EgressReason::MalformedQuery:
        return tr("Malformed DNS query");
    case EgressReason::NotAQuery:
        return tr("Not a DNS query");
    case EgressReason::PrivateDestination:
        return tr("Resolves to a private address");
    case EgressReason::UpstreamNxDomain:
        return tr("Name does not exist");
    case EgressReason::NoAddress:
        return tr("No IPv4 address for the name");
    case EgressReason::UpstreamFailure:
        return tr("Upstream DNS failed");
    case EgressReason::UpstreamTimeout:
        return tr("Upstream DNS timed out");
    case EgressReason::MappingExhausted:
        return tr("No synthetic address left");
    case EgressReason::Overloaded:
        return tr("DNS resolver overloaded");
    // Connections (gateway.md).
    case EgressReason::TooManyConnections:
        return tr("Too many connections");
    case EgressReason::NotTls:
        return tr("Not TLS");
    case EgressReason::IdleTimeout:
        return tr("Idle too long");
    case EgressReason::ClosedBeforeDecision:
        return tr("Closed before a decision");
    // TLS (tls.md).
    case EgressReason::NoSni:
        return tr("No server name (SNI)");
    case EgressReason::BadSni:
        return tr("Malformed server name (SNI)");
    case EgressReason::NoHttp11Alpn:
        return tr("HTTP/1.1 not offered (ALPN)");
    case EgressReason::LeafUnavailable:
        return tr("Certificate could not be made");
    case EgressReason::HandshakeFailed:
        return tr("TLS handshake failed");
    case EgressReason::DestinationMismatch:
        return tr("Dialed another name's address");
    case EgressReason::ConnectSniMismatch:
        return tr("SNI differs from CONNECT host");
    // HTTP (http.md).
    case EgressReason::MalformedRequest:
        return tr("Malformed request");
    case EgressReason::MalformedHeader:
        return tr("Malformed header");
    case EgressReason::HeaderTooLarge:
        return tr("Header too large");
    case EgressReason::UnsupportedVersion:
        return tr("HTTP version not supported");
    case EgressReason::ConflictingFraming:
        return tr("Conflicting body length");
    case EgressReason::BadContentLength:
        return tr("Bad Content-Length");
    case EgressReason::BadTransferEncoding:
        return tr("Bad Transfer-Encoding");
    case EgressReason::BadChunk:
        return tr("Malformed chunked body");
    case EgressReason::BodyTooLarge:
        return tr("Body too large");
    case EgressReason::BadTarget:
        return tr("Bad request target");
    case EgressReason::MethodForbidden:
        return tr("Method forbidden");
    case EgressReason::PlainHttpPort:
        return tr("Plain HTTP only to port 80");
    case EgressReason::AmbiguousFieldName:
        return tr("Header name disguises a gateway header");
    case EgressReason::RequestOverride:
        return tr("Method or path override");
    case EgressReason::HostMismatch:
        return tr("Other host on the same connection");
    // The request's authority (policy.md, http.md).
    case EgressReason::MissingHost:
        return tr("Host header missing");
    case EgressReason::Userinfo:
        return tr("User name in the address");
    case EgressReason::IpLiteral:
        return tr("IP address instead of a name");
    case EgressReason::AuthorityMismatch:
        return tr("Target and Host differ");
    case EgressReason::SniHostMismatch:
        return tr("Host differs from SNI");
    case EgressReason::PortMismatch:
        return tr("Other port in Host");
    // Upstream (gateway.md).
    case EgressReason::UpstreamUnreachable:
        return tr("Upstream unreachable");
    case EgressReason::UpstreamTlsFailed:
        return tr("Upstream certificate not trusted");
    // Credentials (credentials.md).
    case EgressReason::CredentialExfil:
        return tr("Credential sent where its binding does not allow it");
    case EgressReason::CredentialUnavailable:
        return tr("Credential value not available to the gateway");
    case EgressReason::UnscrubbableResponse:
        return tr("Response could not be scrubbed");
    // The sandbox network, from the helper (protocol.md).
    case EgressReason::GatewayRestarted:
        return tr("Gateway restarted");
    case EgressReason::FirewallRestored:
        return tr("Firewall table restored");
    case EgressReason::FirewallLost:
        return tr("Firewall table lost; guest stopped");
    case EgressReason::PolicyRevoked:
        return tr("Open connection closed by a policy change");
    }
    return wireName(reason);
}

QString PolicyText::reasonText(const QString &reason)
{
    if (const std::optional<EgressReason> known = fromWireName(reason))
        return reasonText(*known);
    // A reason of a newer gateway: its stable name says more than nothing.
    return reason;
}

QString PolicyText::credentialAlert(const EgressEntry &entry, const QString &binding)
{
    QString where = entry.destination();
    if (entry.port > 0)
        where = QStringLiteral("%1:%2").arg(where).arg(entry.port);
    if (fromWireName(entry.reason) == EgressReason::CredentialExfil)
        return tr("%1 sent the placeholder of %2 to %3 (%4 %5), where the binding does not "
                  "allow it: the gateway refused the request. Something in the sandbox may be "
                  "trying to leak the credential.")
            .arg(entry.sandbox, binding, where, entry.method, entry.path);
    if (entry.scrubbed > 0)
        return tr("A response from %1 to %2 carried the secret of %3: the gateway replaced it "
                  "with the placeholder (%n time(s)) before the guest saw it.",
                  nullptr, int(entry.scrubbed))
            .arg(where, entry.sandbox, binding);
    return tr("The gateway of %1 raised an alert for %2 (%3): %4")
        .arg(entry.sandbox, where, binding, reasonText(entry.reason));
}

} // namespace airlock

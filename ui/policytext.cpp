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

QString PolicyText::reasonText(const QString &reason)
{
    // Every reason an egress event can carry (docs/gateway.md "Events", dns.md, tls.md,
    // http.md, policy.md, credentials.md, and the helper's gateway_restarted in protocol.md),
    // short enough for the Reason column; the event's detail follows in the tooltip.
    struct Words
    {
        const char *reason;
        const char *text;
    };
    static constexpr Words kWords[] = {
        // The policy (PolicyMatcher).
        {"allowed", QT_TR_NOOP("Allowed by rule")},
        {"host_not_allowed", QT_TR_NOOP("Host not allowed")},
        {"port_not_allowed", QT_TR_NOOP("Port not allowed")},
        {"method_not_allowed", QT_TR_NOOP("Method not allowed")},
        {"path_not_allowed", QT_TR_NOOP("Path not allowed")},
        {"malformed_host", QT_TR_NOOP("Malformed host name")},
        {"malformed_method", QT_TR_NOOP("Malformed method")},
        {"malformed_path", QT_TR_NOOP("Malformed path")},
        // DNS (dns.md).
        {"type_not_allowed", QT_TR_NOOP("DNS query type not allowed")},
        {"class_not_allowed", QT_TR_NOOP("DNS class not allowed")},
        {"opcode_not_implemented", QT_TR_NOOP("DNS opcode not supported")},
        {"malformed_query", QT_TR_NOOP("Malformed DNS query")},
        {"not_a_query", QT_TR_NOOP("Not a DNS query")},
        {"private_destination", QT_TR_NOOP("Resolves to a private address")},
        {"upstream_nxdomain", QT_TR_NOOP("Name does not exist")},
        {"no_address", QT_TR_NOOP("No IPv4 address for the name")},
        {"upstream_failure", QT_TR_NOOP("Upstream DNS failed")},
        {"upstream_timeout", QT_TR_NOOP("Upstream DNS timed out")},
        {"mapping_exhausted", QT_TR_NOOP("No synthetic address left")},
        {"overloaded", QT_TR_NOOP("DNS resolver overloaded")},
        // Connections (gateway.md).
        {"not_tls", QT_TR_NOOP("Not TLS")},
        {"too_many_connections", QT_TR_NOOP("Too many connections")},
        {"idle_timeout", QT_TR_NOOP("Idle too long")},
        {"closed_before_decision", QT_TR_NOOP("Closed before a decision")},
        // TLS (tls.md).
        {"no_sni", QT_TR_NOOP("No server name (SNI)")},
        {"bad_sni", QT_TR_NOOP("Malformed server name (SNI)")},
        {"no_http11_alpn", QT_TR_NOOP("HTTP/1.1 not offered (ALPN)")},
        {"leaf_unavailable", QT_TR_NOOP("Certificate could not be made")},
        {"handshake_failed", QT_TR_NOOP("TLS handshake failed")},
        {"destination_mismatch", QT_TR_NOOP("Dialed another name's address")},
        {"sni_connect_mismatch", QT_TR_NOOP("SNI differs from CONNECT host")},
        // HTTP (http.md).
        {"malformed_request", QT_TR_NOOP("Malformed request")},
        {"malformed_header", QT_TR_NOOP("Malformed header")},
        {"header_too_large", QT_TR_NOOP("Header too large")},
        {"unsupported_version", QT_TR_NOOP("HTTP version not supported")},
        {"conflicting_framing", QT_TR_NOOP("Conflicting body length")},
        {"bad_content_length", QT_TR_NOOP("Bad Content-Length")},
        {"bad_transfer_encoding", QT_TR_NOOP("Bad Transfer-Encoding")},
        {"bad_chunk", QT_TR_NOOP("Malformed chunked body")},
        {"body_too_large", QT_TR_NOOP("Body too large")},
        {"bad_target", QT_TR_NOOP("Bad request target")},
        {"method_forbidden", QT_TR_NOOP("Method forbidden")},
        {"plain_http_port", QT_TR_NOOP("Plain HTTP only to port 80")},
        {"ambiguous_field_name", QT_TR_NOOP("Header name disguises a gateway header")},
        {"request_override", QT_TR_NOOP("Method or path override")},
        // The request's authority (policy.md, http.md).
        {"missing_host", QT_TR_NOOP("Host header missing")},
        {"userinfo", QT_TR_NOOP("User name in the address")},
        {"ip_literal", QT_TR_NOOP("IP address instead of a name")},
        {"authority_mismatch", QT_TR_NOOP("Target and Host differ")},
        {"sni_host_mismatch", QT_TR_NOOP("Host differs from SNI")},
        {"port_mismatch", QT_TR_NOOP("Other port in Host")},
        {"host_mismatch", QT_TR_NOOP("Other host on the same connection")},
        // Upstream and credentials (gateway.md, credentials.md).
        {"upstream_unreachable", QT_TR_NOOP("Upstream unreachable")},
        {"upstream_tls_failed", QT_TR_NOOP("Upstream certificate not trusted")},
        {"credential_exfil", QT_TR_NOOP("Credential sent where its binding does not allow it")},
        {"credential_unavailable", QT_TR_NOOP("Credential value not available to the gateway")},
        // The helper (protocol.md, EgressEvent).
        {"gateway_restarted", QT_TR_NOOP("Gateway restarted")},
    };
    for (const Words &words : kWords) {
        if (reason == QLatin1String(words.reason))
            return tr(words.text);
    }
    // A reason of a newer gateway: its stable name says more than nothing.
    return reason;
}

QString PolicyText::credentialAlert(const EgressEntry &entry, const QString &binding)
{
    QString where = entry.destination();
    if (entry.port > 0)
        where = QStringLiteral("%1:%2").arg(where).arg(entry.port);
    if (entry.reason == QLatin1String("credential_exfil"))
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

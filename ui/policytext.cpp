#include "ui/policytext.h"

#include "core/model/egresspolicy.h"

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
    if (reason == QLatin1String("allowed"))
        return tr("Allowed by rule");
    if (reason == QLatin1String("host_not_allowed"))
        return tr("Host not allowed");
    if (reason == QLatin1String("port_not_allowed"))
        return tr("Port not allowed");
    if (reason == QLatin1String("method_not_allowed"))
        return tr("Method not allowed");
    if (reason == QLatin1String("path_not_allowed"))
        return tr("Path not allowed");
    if (reason == QLatin1String("malformed_host"))
        return tr("Malformed host name");
    if (reason == QLatin1String("malformed_method"))
        return tr("Malformed method");
    if (reason == QLatin1String("malformed_path"))
        return tr("Malformed path");
    if (reason == QLatin1String("sni_mismatch") || reason == QLatin1String("host_mismatch"))
        return tr("SNI and Host differ");
    if (reason == QLatin1String("not_tls"))
        return tr("Not TLS");
    if (reason == QLatin1String("credential_exfil"))
        return tr("Credential sent where its binding does not allow it");
    if (reason == QLatin1String("credential_unavailable"))
        return tr("Credential value not available to the gateway");
    if (reason == QLatin1String("plain_http_port"))
        return tr("Plain HTTP only to port 80");
    return reason;
}

} // namespace airlock

#include "core/ssh/sshendpoint.h"

#include <QRegularExpression>

#include <pwd.h>
#include <unistd.h>

namespace airlock {

namespace {

/// POSIX shell single quoting: 'it'\''s'.
QString shellQuote(const QString &text)
{
    QString quoted = text;
    quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

} // namespace

Result<SshEndpoint> SshEndpoint::parse(const QString &text)
{
    SshEndpoint endpoint;
    QString rest = text.trimmed();
    const qsizetype at = rest.lastIndexOf(QLatin1Char('@'));
    if (at >= 0) {
        endpoint.user = rest.left(at);
        rest = rest.mid(at + 1);
        if (endpoint.user.isEmpty())
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("'%1': empty user name before '@'").arg(text));
    }
    QString portText;
    if (rest.startsWith(QLatin1Char('['))) {
        const qsizetype close = rest.indexOf(QLatin1Char(']'));
        if (close < 0)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("'%1': '[' without ']' around the address").arg(text));
        endpoint.host = rest.mid(1, close - 1);
        const QString after = rest.mid(close + 1);
        if (!after.isEmpty()) {
            if (!after.startsWith(QLatin1Char(':')))
                return fail(ErrorKind::InvalidParams,
                            QStringLiteral("'%1': expected ':PORT' after ']'").arg(text));
            portText = after.mid(1);
        }
    } else {
        const qsizetype colon = rest.indexOf(QLatin1Char(':'));
        if (colon >= 0 && rest.indexOf(QLatin1Char(':'), colon + 1) < 0) {
            endpoint.host = rest.left(colon);
            portText = rest.mid(colon + 1);
        } else {
            endpoint.host = rest; // a bare IPv6 address has several colons and no port
        }
    }
    if (endpoint.host.isEmpty())
        return fail(ErrorKind::InvalidParams, QStringLiteral("'%1': no host name").arg(text));
    static const QRegularExpression hostPattern(QStringLiteral("^[A-Za-z0-9._:%-]+$"));
    if (!hostPattern.match(endpoint.host).hasMatch())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("'%1': invalid host name '%2'").arg(text, endpoint.host));
    if (!portText.isNull()) {
        bool ok = false;
        const uint port = portText.toUInt(&ok);
        if (!ok || port == 0 || port > 65535)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("'%1': port must be 1-65535").arg(text));
        endpoint.port = quint16(port);
    }
    return endpoint;
}

QString SshEndpoint::displayName() const
{
    QString name = effectiveUser() + QLatin1Char('@');
    name += host.contains(QLatin1Char(':')) ? QLatin1Char('[') + host + QLatin1Char(']') : host;
    if (port != 22)
        name += QLatin1Char(':') + QString::number(port);
    return name;
}

QString SshEndpoint::effectiveUser() const
{
    if (!user.isEmpty())
        return user;
    if (const passwd *entry = ::getpwuid(::geteuid()))
        return QString::fromLocal8Bit(entry->pw_name);
    return QString::fromLocal8Bit(qgetenv("USER"));
}

QString SshEndpoint::bridgeCommand() const
{
    return shellQuote(remoteCommand) + QStringLiteral(" --socket ") + shellQuote(socketPath)
        + QStringLiteral(" bridge");
}

} // namespace airlock

#include "core/daemon/upstreamdns.h"

#include <QFile>
#include <QHostAddress>

namespace airlock::upstreamdns {

QJsonObject fromText(const QString &text)
{
    QString address = text;
    int port = 53;
    if (const qsizetype colon = text.lastIndexOf(u':');
        colon > 0 && !text.contains(u'[') && text.count(u':') == 1) {
        bool ok = false;
        port = text.mid(colon + 1).toInt(&ok);
        if (!ok || port < 1 || port > 65535)
            return {};
        address = text.left(colon);
    }
    const QHostAddress host(address);
    if (host.isNull())
        return {};
    return QJsonObject {{QStringLiteral("address"), host.toString()},
                        {QStringLiteral("port"), port},
                        {QStringLiteral("timeoutMs"), 2000}};
}

QString firstNameserver(const QByteArray &resolvConf)
{
    for (const QByteArray &line : resolvConf.split('\n')) {
        const QList<QByteArray> fields = line.simplified().split(' ');
        if (fields.size() >= 2 && fields[0] == "nameserver")
            return QString::fromLatin1(fields[1]);
    }
    return {};
}

QString hostResolver(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    // resolv.conf is a few lines; a bound keeps a hostile or odd file from costing memory.
    return firstNameserver(file.read(64 * 1024));
}

QString choose(const QString &configured, bool isConfigured, const QString &hostResolverAddress)
{
    if (isConfigured)
        return configured;
    if (fromText(hostResolverAddress).isEmpty())
        return QStringLiteral("127.0.0.1");
    return hostResolverAddress;
}

} // namespace airlock::upstreamdns

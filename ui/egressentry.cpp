#include "ui/egressentry.h"

#include <QJsonValue>

#include <algorithm>

namespace airlock {

QString EgressEntry::redactPath(const QString &target)
{
    qsizetype end = target.size();
    for (const QChar stop : {u'?', u'#'}) {
        const qsizetype at = target.indexOf(stop);
        if (at >= 0 && at < end)
            end = at;
    }
    return target.left(end);
}

std::optional<EgressEntry> EgressEntry::fromJson(const QJsonObject &event, const QString &sandbox,
                                                 qint64 seq)
{
    const QJsonValue time = event.value(QStringLiteral("time"));
    const QJsonValue verdict = event.value(QStringLiteral("verdict"));
    const QJsonValue reason = event.value(QStringLiteral("reason"));
    if (!time.isString() || !verdict.isString() || !reason.isString())
        return std::nullopt;
    EgressEntry entry;
    entry.seq = seq;
    entry.time = QDateTime::fromString(time.toString(), Qt::ISODateWithMs);
    if (!entry.time.isValid())
        return std::nullopt;
    entry.time = entry.time.toUTC();
    entry.lastTime = entry.time;
    if (verdict.toString() != QLatin1String("allowed")
        && verdict.toString() != QLatin1String("denied"))
        return std::nullopt;
    entry.allowed = verdict.toString() == QLatin1String("allowed");
    entry.reason = reason.toString();
    entry.sandbox = event.value(QStringLiteral("sandbox")).toString(sandbox);
    entry.layer = event.value(QStringLiteral("layer")).toString();
    if (const QString type = event.value(QStringLiteral("dnsType")).toString(); !type.isEmpty())
        entry.dnsTypes.append(type);
    entry.detail = event.value(QStringLiteral("detail")).toString();
    entry.name = event.value(QStringLiteral("name")).toString();
    entry.sni = event.value(QStringLiteral("sni")).toString();
    entry.host = event.value(QStringLiteral("host")).toString();
    const QJsonValue port = event.value(QStringLiteral("port"));
    if (port.isDouble() && port.toInt() >= 1 && port.toInt() <= 65535)
        entry.port = port.toInt();
    entry.method = event.value(QStringLiteral("method")).toString();
    entry.path = redactPath(event.value(QStringLiteral("path")).toString());
    const QJsonValue binding = event.value(QStringLiteral("binding"));
    if (binding.isDouble() && binding.toInteger(-1) > 0)
        entry.binding = binding.toInteger();
    entry.scrubbed = std::max<qint64>(0, event.value(QStringLiteral("scrubbed")).toInteger());
    entry.alert = event.value(QStringLiteral("alert")).toBool();
    entry.count = std::max<qint64>(1, event.value(QStringLiteral("count")).toInteger(1));
    entry.json = event;
    if (!entry.path.isEmpty())
        entry.json.insert(QStringLiteral("path"), entry.path);
    return entry;
}

QString EgressEntry::destination() const
{
    if (!name.isEmpty())
        return name;
    if (!sni.isEmpty())
        return sni;
    return host;
}

QString EgressEntry::sniAndHost() const
{
    if (sni.isEmpty() || host.isEmpty() || sni == host)
        return sni.isEmpty() ? host : sni;
    return QStringLiteral("%1 / %2").arg(sni, host);
}

QString EgressEntry::layerText() const
{
    const QString upper = layer.toUpper();
    return dnsTypes.isEmpty()
        ? upper
        : QStringLiteral("%1 %2").arg(upper, dnsTypes.join(QStringLiteral(", ")));
}

bool EgressEntry::sameDecision(const EgressEntry &other) const
{
    return sandbox == other.sandbox && layer == other.layer && allowed == other.allowed
        && reason == other.reason && name == other.name && sni == other.sni && host == other.host
        && port == other.port && method == other.method && path == other.path
        && binding == other.binding;
}

void EgressEntry::fold(const EgressEntry &other)
{
    count += other.count;
    scrubbed += other.scrubbed;
    alert = alert || other.alert;
    if (other.lastTime > lastTime)
        lastTime = other.lastTime;
    if (other.time < time)
        time = other.time;
    for (const QString &type : other.dnsTypes) {
        if (!dnsTypes.contains(type))
            dnsTypes.append(type);
    }
}

} // namespace airlock

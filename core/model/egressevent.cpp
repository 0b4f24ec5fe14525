#include "core/model/egressevent.h"

#include "core/model/printabletext.h"

#include "core/model/jsonfields.h"

#include <QJsonValue>

#include <tuple>

namespace airlock {

namespace {

const QString kAllowed = QStringLiteral("allowed");
const QString kDenied = QStringLiteral("denied");

void putString(QJsonObject &object, const QString &key, const QString &value)
{
    if (!value.isEmpty())
        object.insert(key, value);
}

Result<QString> optionalString(const QJsonObject &object, const QString &key)
{
    return json::readString(object, key, QString());
}

} // namespace

QString egressLayerName(EgressLayer layer)
{
    switch (layer) {
    case EgressLayer::Dns:
        return QStringLiteral("dns");
    case EgressLayer::Tcp:
        return QStringLiteral("tcp");
    case EgressLayer::Tls:
        return QStringLiteral("tls");
    case EgressLayer::Http:
        return QStringLiteral("http");
    }
    return QStringLiteral("tcp");
}

std::optional<EgressLayer> egressLayerFromName(QStringView name)
{
    for (const EgressLayer layer :
         {EgressLayer::Dns, EgressLayer::Tcp, EgressLayer::Tls, EgressLayer::Http}) {
        if (egressLayerName(layer) == name)
            return layer;
    }
    return std::nullopt;
}

QString EgressEvent::redactPath(QStringView target)
{
    qsizetype end = target.size();
    for (const QChar stop : {u'?', u'#'}) {
        const qsizetype at = target.indexOf(stop);
        if (at >= 0 && at < end)
            end = at;
    }
    return target.first(end).toString();
}

QJsonObject EgressEvent::toJson() const
{
    QJsonObject object;
    object.insert(QStringLiteral("time"), time.toUTC().toString(Qt::ISODateWithMs));
    putString(object, QStringLiteral("sandbox"), sandbox);
    object.insert(QStringLiteral("layer"), egressLayerName(layer));
    object.insert(QStringLiteral("verdict"), allowed ? kAllowed : kDenied);
    object.insert(QStringLiteral("reason"), reason);
    putString(object, QStringLiteral("detail"), detail);
    putString(object, QStringLiteral("name"), name);
    putString(object, QStringLiteral("sni"), sni);
    putString(object, QStringLiteral("host"), host);
    if (port)
        object.insert(QStringLiteral("port"), int(*port));
    putString(object, QStringLiteral("destination"), destination);
    putString(object, QStringLiteral("method"), method);
    // Stored paths are already redacted; redacting again keeps a hand-built event honest.
    putString(object, QStringLiteral("path"), redactPath(path));
    putString(object, QStringLiteral("dnsType"), dnsType);
    if (status)
        object.insert(QStringLiteral("status"), *status);
    if (bytesUp)
        object.insert(QStringLiteral("bytesUp"), *bytesUp);
    if (bytesDown)
        object.insert(QStringLiteral("bytesDown"), *bytesDown);
    if (binding)
        object.insert(QStringLiteral("binding"), *binding);
    if (scrubbed)
        object.insert(QStringLiteral("scrubbed"), *scrubbed);
    if (count)
        object.insert(QStringLiteral("count"), *count);
    if (alert)
        object.insert(QStringLiteral("alert"), true);
    return object;
}

Result<EgressEvent> EgressEvent::fromJson(const QJsonObject &object)
{
    EgressEvent event;
    const auto time = json::readString(object, QStringLiteral("time"));
    AIRLOCK_TRY(time);
    event.time = QDateTime::fromString(*time, Qt::ISODateWithMs);
    if (!event.time.isValid())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'time': not an ISO 8601 date and time"));
    event.time = event.time.toUTC();
    const auto layer = json::readString(object, QStringLiteral("layer"));
    AIRLOCK_TRY(layer);
    const auto parsedLayer = egressLayerFromName(*layer);
    if (!parsedLayer)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'layer': unknown layer '%1'").arg(*layer));
    event.layer = *parsedLayer;
    const auto verdict = json::readString(object, QStringLiteral("verdict"));
    AIRLOCK_TRY(verdict);
    if (*verdict != kAllowed && *verdict != kDenied)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'verdict': neither 'allowed' nor 'denied'"));
    event.allowed = *verdict == kAllowed;
    const auto reason = json::readString(object, QStringLiteral("reason"));
    AIRLOCK_TRY(reason);
    event.reason = *reason;

    const std::pair<QString, QString *> strings[] = {
        {QStringLiteral("sandbox"), &event.sandbox},
        {QStringLiteral("detail"), &event.detail},
        {QStringLiteral("name"), &event.name},
        {QStringLiteral("sni"), &event.sni},
        {QStringLiteral("host"), &event.host},
        {QStringLiteral("destination"), &event.destination},
        {QStringLiteral("method"), &event.method},
        {QStringLiteral("path"), &event.path},
        {QStringLiteral("dnsType"), &event.dnsType},
    };
    for (const auto &[key, target] : strings) {
        const auto value = optionalString(object, key);
        AIRLOCK_TRY(value);
        // A refused name comes from the guest as it sent it; what people read must not carry
        // its control bytes (docs/reviews/2026-12-01-gateway-round3.md#f5).
        const bool isName = key == u"name" || key == u"sni" || key == u"host"
            || key == u"destination" || key == u"sandbox";
        *target = printableText(*value, isName);
    }
    if (event.path.contains(u'?'))
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'path': holds a query string"));
    if (object.contains(QStringLiteral("port"))) {
        const auto port = json::readInteger(object, QStringLiteral("port"), 1, 65535);
        AIRLOCK_TRY(port);
        event.port = quint16(*port);
    }
    if (object.contains(QStringLiteral("status"))) {
        const auto status = json::readInteger(object, QStringLiteral("status"), 100, 999);
        AIRLOCK_TRY(status);
        event.status = int(*status);
    }
    for (const auto &[key, target, minimum] :
         {std::tuple {QStringLiteral("bytesUp"), &event.bytesUp, qint64(0)},
          std::tuple {QStringLiteral("bytesDown"), &event.bytesDown, qint64(0)},
          std::tuple {QStringLiteral("binding"), &event.binding, qint64(1)},
          std::tuple {QStringLiteral("scrubbed"), &event.scrubbed, qint64(0)},
          std::tuple {QStringLiteral("count"), &event.count, qint64(1)}}) {
        if (!object.contains(key))
            continue;
        const auto value =
            json::readInteger(object, key, minimum, std::numeric_limits<qint64>::max());
        AIRLOCK_TRY(value);
        *target = *value;
    }
    if (object.contains(QStringLiteral("alert"))) {
        const QJsonValue alert = object.value(QStringLiteral("alert"));
        if (!alert.isBool())
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("field 'alert': must be a boolean"));
        event.alert = alert.toBool();
    }
    return event;
}

} // namespace airlock

#include "core/model/jsonfields.h"

#include <QJsonValue>

#include <cmath>

namespace airlock::json {

namespace {

std::unexpected<Error> wrongType(const QString &key, const char *expected)
{
    return fail(ErrorKind::InvalidParams,
                QStringLiteral("field '%1' must be %2").arg(key, QLatin1String(expected)));
}

std::unexpected<Error> missing(const QString &key)
{
    return fail(ErrorKind::InvalidParams, QStringLiteral("missing field '%1'").arg(key));
}

} // namespace

Result<QString> readString(const QJsonObject &object, const QString &key,
                           std::optional<QString> fallback)
{
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || (value.isNull() && fallback)) {
        if (fallback)
            return *fallback;
        return missing(key);
    }
    if (!value.isString())
        return wrongType(key, "a string");
    return value.toString();
}

Result<qint64> readInteger(const QJsonObject &object, const QString &key, qint64 min, qint64 max,
                           std::optional<qint64> fallback)
{
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || (value.isNull() && fallback)) {
        if (fallback)
            return *fallback;
        return missing(key);
    }
    if (!value.isDouble())
        return wrongType(key, "an integer");
    const double number = value.toDouble();
    if (!std::isfinite(number) || std::trunc(number) != number)
        return wrongType(key, "an integer");
    if (number < double(min) || number > double(max))
        return fail(
            ErrorKind::InvalidParams,
            QStringLiteral("field '%1' must be between %2 and %3").arg(key).arg(min).arg(max));
    return qint64(number);
}

Result<bool> readBool(const QJsonObject &object, const QString &key, std::optional<bool> fallback)
{
    const QJsonValue value = object.value(key);
    if (value.isUndefined() || (value.isNull() && fallback)) {
        if (fallback)
            return *fallback;
        return missing(key);
    }
    if (!value.isBool())
        return wrongType(key, "true or false");
    return value.toBool();
}

} // namespace airlock::json

#pragma once

#include "core/model/error.h"

#include <QJsonObject>

#include <optional>

namespace airlock::json {

/// Reads a string field. Missing: `fallback` if given, else InvalidParams "missing field".
/// Present with another type: InvalidParams naming the field and the expected type.
Result<QString> readString(const QJsonObject &object, const QString &key,
                           std::optional<QString> fallback = std::nullopt);

/// Reads an integral number within [min, max]. Non-integral numbers, strings and values out of
/// range are InvalidParams errors that name the field and the range.
Result<qint64> readInteger(const QJsonObject &object, const QString &key, qint64 min, qint64 max,
                           std::optional<qint64> fallback = std::nullopt);

/// Reads a boolean field.
Result<bool> readBool(const QJsonObject &object, const QString &key,
                      std::optional<bool> fallback = std::nullopt);

} // namespace airlock::json

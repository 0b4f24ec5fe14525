#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>

namespace airlock::protocol {

/// One decoded JSON-RPC 2.0 message (https://www.jsonrpc.org/specification).
struct Message
{
    enum class Type { Request, Notification, Result, Error };

    Type type = Type::Request;
    QJsonValue id; ///< number or string for Request/Result/Error; null when unknown
    QString method; ///< Request and Notification
    QJsonObject params; ///< Request and Notification; `{}` when absent
    QJsonValue result; ///< Result
    airlock::Error error; ///< Error: kind from `data.kind` (or the code), message
};

/// Decodes one line. ParseError for bytes that are not UTF-8 JSON; InvalidRequest for JSON that
/// is not a JSON-RPC 2.0 object (missing "jsonrpc":"2.0", non-string method, params that are
/// not an object, ids that are neither number nor string). Batches are not supported
/// (InvalidRequest).
Result<Message> parseMessage(const QByteArray &line);

/// Encoders; each returns compact JSON terminated by '\n', ready to write.
QByteArray encodeRequest(const QJsonValue &id, const QString &method, const QJsonObject &params);
QByteArray encodeNotification(const QString &method, const QJsonObject &params);
QByteArray encodeResult(const QJsonValue &id, const QJsonValue &result);
/// `{"code": errorCode(kind), "message": ..., "data": {"kind": errorKindName(kind)}}`.
QByteArray encodeError(const QJsonValue &id, const airlock::Error &error);

} // namespace airlock::protocol

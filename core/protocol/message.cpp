#include "core/protocol/message.h"

#include <QJsonDocument>
#include <QStringDecoder>

namespace airlock::protocol {

namespace {

const QString kJsonRpc = QStringLiteral("jsonrpc");
const QString kId = QStringLiteral("id");
const QString kMethod = QStringLiteral("method");
const QString kParams = QStringLiteral("params");
const QString kResult = QStringLiteral("result");
const QString kError = QStringLiteral("error");

QByteArray encode(const QJsonObject &object)
{
    QByteArray bytes = QJsonDocument(object).toJson(QJsonDocument::Compact);
    bytes.append('\n');
    return bytes;
}

bool validId(const QJsonValue &id)
{
    return id.isString() || id.isDouble();
}

std::unexpected<Error> invalid(const char *why)
{
    return fail(ErrorKind::InvalidRequest, QString::fromLatin1(why));
}

} // namespace

Result<Message> parseMessage(const QByteArray &line)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = decoder.decode(line);
    if (decoder.hasError())
        return fail(ErrorKind::ParseError, QStringLiteral("message is not valid UTF-8"));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8(), &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(ErrorKind::ParseError,
                    QStringLiteral("invalid JSON at offset %1: %2")
                        .arg(parseError.offset)
                        .arg(parseError.errorString()));
    if (document.isArray())
        return invalid("batch requests are not supported");
    if (!document.isObject())
        return invalid("message must be a JSON object");
    const QJsonObject object = document.object();
    if (object.value(kJsonRpc) != QJsonValue(QStringLiteral("2.0")))
        return invalid("field 'jsonrpc' must be \"2.0\"");

    Message message;
    const QJsonValue id = object.value(kId);
    if (object.contains(kMethod)) {
        const QJsonValue method = object.value(kMethod);
        if (!method.isString() || method.toString().isEmpty())
            return invalid("field 'method' must be a non-empty string");
        message.method = method.toString();
        const QJsonValue params = object.value(kParams);
        if (!params.isUndefined() && !params.isObject())
            return invalid("field 'params' must be an object");
        message.params = params.toObject();
        if (id.isUndefined()) {
            message.type = Message::Type::Notification;
        } else {
            if (!validId(id))
                return invalid("field 'id' must be a number or a string");
            message.type = Message::Type::Request;
            message.id = id;
        }
        return message;
    }
    if (!validId(id) && !id.isNull())
        return invalid("field 'id' must be a number or a string");
    message.id = id;
    if (object.contains(kResult)) {
        message.type = Message::Type::Result;
        message.result = object.value(kResult);
        return message;
    }
    const QJsonValue error = object.value(kError);
    if (!error.isObject())
        return invalid("message has neither 'method', 'result' nor 'error'");
    const QJsonObject errorObject = error.toObject();
    message.type = Message::Type::Error;
    const int code = errorObject.value(QStringLiteral("code")).toInt(-32603);
    const QString kindName = errorObject.value(QStringLiteral("data"))
                                 .toObject()
                                 .value(QStringLiteral("kind"))
                                 .toString();
    message.error.kind = errorKindFromName(kindName).value_or(errorKindFromCode(code));
    message.error.message = errorObject.value(QStringLiteral("message")).toString();
    return message;
}

QByteArray encodeRequest(const QJsonValue &id, const QString &method, const QJsonObject &params)
{
    return encode(QJsonObject {
        {kJsonRpc, QStringLiteral("2.0")}, {kId, id}, {kMethod, method}, {kParams, params}});
}

QByteArray encodeNotification(const QString &method, const QJsonObject &params)
{
    return encode(
        QJsonObject {{kJsonRpc, QStringLiteral("2.0")}, {kMethod, method}, {kParams, params}});
}

QByteArray encodeResult(const QJsonValue &id, const QJsonValue &result)
{
    return encode(QJsonObject {{kJsonRpc, QStringLiteral("2.0")}, {kId, id}, {kResult, result}});
}

QByteArray encodeError(const QJsonValue &id, const airlock::Error &error)
{
    const QJsonObject errorObject {
        {QStringLiteral("code"), errorCode(error.kind)},
        {QStringLiteral("message"), error.message},
        {QStringLiteral("data"), QJsonObject {{QStringLiteral("kind"), errorKindName(error.kind)}}},
    };
    return encode(QJsonObject {{kJsonRpc, QStringLiteral("2.0")},
                               {kId, id.isUndefined() ? QJsonValue(QJsonValue::Null) : id},
                               {kError, errorObject}});
}

} // namespace airlock::protocol

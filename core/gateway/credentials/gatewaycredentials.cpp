#include "core/gateway/credentials/gatewaycredentials.h"

#include "core/model/credentialbinding.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <cmath>

namespace airlock::gateway {

namespace {

std::unexpected<Error> entryError(qsizetype index, const QString &why)
{
    return fail(ErrorKind::InvalidParams, QStringLiteral("credentials[%1].%2").arg(index).arg(why));
}

std::optional<qint64> integerOf(const QJsonValue &value, qint64 min, qint64 max)
{
    const double number = value.toDouble(-1);
    if (!value.isDouble() || !std::isfinite(number) || std::trunc(number) != number
        || number < double(min) || number > double(max))
        return std::nullopt;
    return qint64(number);
}

} // namespace

Result<QList<GatewayCredential>> credentialsFromMessage(const QJsonObject &message,
                                                        const QString &sandbox,
                                                        const SecretValue &payload)
{
    for (auto it = message.begin(); it != message.end(); ++it) {
        if (it.key() != u"type" && it.key() != u"credentials" && it.key() != u"payloadBytes")
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("field '%1': unknown key").arg(it.key()));
    }
    const QJsonValue list = message.value(QStringLiteral("credentials"));
    if (!list.isArray())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'credentials': must be an array"));
    static const QRegularExpression placeholderPattern(
        QStringLiteral("^airlock-placeholder-[0-9a-f]{32}$"));
    static const QStringList bindingKeys {QStringLiteral("secret"), QStringLiteral("host"),
                                          QStringLiteral("pathPrefix"), QStringLiteral("methods"),
                                          QStringLiteral("placement")};
    QList<GatewayCredential> credentials;
    qsizetype offset = 0;
    const QJsonArray entries = list.toArray();
    for (qsizetype i = 0; i < entries.size(); ++i) {
        if (!entries.at(i).isObject())
            return entryError(i, QStringLiteral(": must be an object"));
        const QJsonObject entry = entries.at(i).toObject();
        QJsonObject binding {{QStringLiteral("sandbox"), sandbox}};
        for (auto it = entry.begin(); it != entry.end(); ++it) {
            if (bindingKeys.contains(it.key()))
                binding.insert(it.key(), it.value());
            else if (it.key() != u"binding" && it.key() != u"placeholder"
                     && it.key() != u"valueBytes")
                return entryError(i, it.key() + QStringLiteral(": unknown key"));
        }
        auto parsed = CredentialBinding::fromJson(binding);
        if (!parsed)
            return entryError(i, parsed.error().message);
        const auto id = integerOf(entry.value(QStringLiteral("binding")), 1, qint64(1) << 53);
        if (!id)
            return entryError(i, QStringLiteral("binding: must be a positive integer"));
        const QString placeholder = entry.value(QStringLiteral("placeholder")).toString();
        if (!placeholderPattern.match(placeholder).hasMatch())
            return entryError(i,
                              QStringLiteral("placeholder: must be \"airlock-placeholder-\" "
                                             "and 32 lower-case hex digits"));
        const auto valueBytes =
            integerOf(entry.value(QStringLiteral("valueBytes")), 0, SecretValue::kMaxBytes);
        if (!valueBytes)
            return entryError(
                i,
                QStringLiteral("valueBytes: must be an integer 0..%1").arg(SecretValue::kMaxBytes));
        if (*valueBytes > 0 && *valueBytes < 8)
            return entryError(i, QStringLiteral("valueBytes: a value has at least 8 bytes"));
        if (offset + *valueBytes > payload.size())
            return entryError(i, QStringLiteral("valueBytes: beyond the end of the payload"));
        GatewayCredential credential;
        credential.binding = *id;
        credential.secret = parsed->secret;
        credential.host = parsed->host;
        credential.pathPrefix = parsed->pathPrefix;
        credential.methods = parsed->methods;
        credential.placement = parsed->placement;
        credential.placeholder = placeholder.toLatin1();
        if (*valueBytes > 0) {
            const QByteArrayView value = payload.reveal().sliced(offset, *valueBytes);
            // It goes into a header field: a CR, LF or NUL would end the field or the request
            // (RFC 9110 §5.5; the vault refuses these already,
            // docs/reviews/2026-11-30-redteam-pass.md#f5).
            for (const char c : value) {
                const auto byte = static_cast<unsigned char>(c);
                if ((byte < 0x20 && byte != '\t') || byte == 0x7f)
                    return entryError(i, QStringLiteral("value: holds a control character"));
            }
            credential.value = std::make_shared<const SecretValue>(value);
        }
        offset += *valueBytes;
        credentials.append(std::move(credential));
    }
    if (offset != payload.size())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'payloadBytes': %1 bytes announced, the values take %2")
                        .arg(payload.size())
                        .arg(offset));
    return credentials;
}

} // namespace airlock::gateway

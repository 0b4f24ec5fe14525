#include "core/model/credentialbinding.h"

#include "core/model/egresspolicy.h"
#include "core/model/hostname.h"
#include "core/model/names.h"

#include <QJsonArray>
#include <QRandomGenerator>
#include <QSet>

namespace airlock {

namespace {

const QString kType = QStringLiteral("type");
const QString kHeader = QStringLiteral("header");
const QString kTemplate = QStringLiteral("template");
const QString kUsername = QStringLiteral("username");
const QString kSandbox = QStringLiteral("sandbox");
const QString kSecret = QStringLiteral("secret");
const QString kHost = QStringLiteral("host");
const QString kPathPrefix = QStringLiteral("pathPrefix");
const QString kMethods = QStringLiteral("methods");
const QString kPlacement = QStringLiteral("placement");

constexpr qsizetype kMaxTemplate = 256;
constexpr qsizetype kMaxMethods = 16;

std::unexpected<Error> fieldError(const QString &field, const QString &why)
{
    return fail(ErrorKind::InvalidParams, QStringLiteral("field '%1': %2").arg(field, why));
}

// RFC 9110 §5.6.2 tchar.
bool isTokenChar(QChar c)
{
    const char16_t u = c.unicode();
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9'))
        return true;
    return QStringView(u"!#$%&'*+-.^_`|~").contains(c);
}

bool isVisibleAsciiOrSpace(QStringView text)
{
    return std::all_of(text.begin(), text.end(),
                       [](QChar c) { return c.unicode() >= 0x20 && c.unicode() <= 0x7e; });
}

// Fields that decide how a request is framed, where it goes, or what the connection does:
// a credential there could smuggle or reroute (docs/redteam-cases.md G1, principle 1).
bool isForbiddenHeader(const QString &name)
{
    static const QSet<QString> forbidden {
        QStringLiteral("host"),
        QStringLiteral("content-length"),
        QStringLiteral("transfer-encoding"),
        QStringLiteral("connection"),
        QStringLiteral("upgrade"),
        QStringLiteral("te"),
        QStringLiteral("trailer"),
        QStringLiteral("keep-alive"),
        QStringLiteral("forwarded"),
        QStringLiteral("via"),
        QStringLiteral("expect"),
        // The request the policy checked must be the one the upstream acts on, and the
        // client address is the gateway's (http.md, "Unusual field names and overrides").
        QStringLiteral("x-http-method-override"),
        QStringLiteral("x-http-method"),
        QStringLiteral("x-method-override"),
        QStringLiteral("x-original-url"),
        QStringLiteral("x-rewrite-url"),
        QStringLiteral("x-real-ip"),
        QStringLiteral("true-client-ip"),
        QStringLiteral("x-client-ip"),
        QStringLiteral("cf-connecting-ip"),
    };
    const QString lower = name.toLower();
    return forbidden.contains(lower) || lower.startsWith(QStringLiteral("proxy-"))
        || lower.startsWith(QStringLiteral("x-forwarded-"));
}

} // namespace

Result<void> CredentialPlacement::validate() const
{
    if (kind == Kind::Basic) {
        if (username.isEmpty() || username.size() > 128 || !isVisibleAsciiOrSpace(username)
            || username.contains(QLatin1Char(':')))
            return fieldError(QStringLiteral("placement.username"),
                              QStringLiteral("1 to 128 visible ASCII characters without ':' "
                                             "(RFC 7617)"));
        return {};
    }
    const QString headerField = QStringLiteral("placement.header");
    const QString templateField = QStringLiteral("placement.template");
    if (header.isEmpty() || header.size() > 64
        || !std::all_of(header.begin(), header.end(), isTokenChar))
        return fieldError(
            headerField,
            QStringLiteral("'%1' is not an HTTP field name (RFC 9110 §5.1)").arg(header));
    // The gateway drops or refuses every other name a guest sends (CGI-style stacks read
    // `X_Api_Key` as `X-Api-Key`), so the placeholder could never arrive in such a field.
    if (!std::all_of(header.begin(), header.end(), [](QChar c) {
            return (c.isLetterOrNumber() && c.unicode() < 0x80) || c == u'-';
        }))
        return fieldError(headerField,
                          QStringLiteral("'%1': use letters, digits and '-' only (the gateway "
                                         "drops other field names a sandbox sends)")
                              .arg(header));
    if (isForbiddenHeader(header))
        return fieldError(headerField,
                          QStringLiteral("'%1' frames or routes the request and cannot carry a "
                                         "credential")
                              .arg(header));
    if (valueTemplate.size() > kMaxTemplate || !isVisibleAsciiOrSpace(valueTemplate))
        return fieldError(templateField,
                          QStringLiteral("at most %1 visible ASCII characters").arg(kMaxTemplate));
    if (valueTemplate.count(kSecretToken) != 1)
        return fieldError(templateField, QStringLiteral("must contain {secret} exactly once"));
    return {};
}

QJsonObject CredentialPlacement::toJson() const
{
    if (kind == Kind::Basic)
        return {{kType, QStringLiteral("basic")}, {kUsername, username}};
    return {{kType, QStringLiteral("header")}, {kHeader, header}, {kTemplate, valueTemplate}};
}

Result<CredentialPlacement> CredentialPlacement::fromJson(const QJsonObject &object)
{
    CredentialPlacement placement;
    const QString type = object.value(kType).toString();
    QStringList known {kType};
    if (type == QStringLiteral("header")) {
        placement.kind = Kind::Header;
        known << kHeader << kTemplate;
        const QJsonValue header = object.value(kHeader);
        const QJsonValue valueTemplate = object.value(kTemplate);
        if (!header.isUndefined() && !header.isString())
            return fieldError(QStringLiteral("placement.header"),
                              QStringLiteral("must be a string"));
        if (!valueTemplate.isUndefined() && !valueTemplate.isString())
            return fieldError(QStringLiteral("placement.template"),
                              QStringLiteral("must be a string"));
        if (header.isString())
            placement.header = header.toString();
        if (valueTemplate.isString())
            placement.valueTemplate = valueTemplate.toString();
    } else if (type == QStringLiteral("basic")) {
        placement.kind = Kind::Basic;
        known << kUsername;
        if (!object.value(kUsername).isString())
            return fieldError(QStringLiteral("placement.username"),
                              QStringLiteral("missing or not a string"));
        placement.username = object.value(kUsername).toString();
    } else {
        return fieldError(QStringLiteral("placement.type"),
                          QStringLiteral("must be \"header\" or \"basic\""));
    }
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!known.contains(it.key()))
            return fieldError(QStringLiteral("placement.") + it.key(),
                              QStringLiteral("unknown field"));
    }
    AIRLOCK_TRY(placement.validate());
    return placement;
}

QJsonObject CredentialBindingStats::toJson() const
{
    return {{QStringLiteral("injections"), qint64(injections)},
            {QStringLiteral("lastUsed"),
             lastUsed.isValid() ? QJsonValue(lastUsed.toString(Qt::ISODateWithMs)) : QJsonValue()},
            {QStringLiteral("denied"), qint64(denied)}};
}

Result<void> CredentialBinding::validate() const
{
    AIRLOCK_TRY(validateName(sandbox));
    AIRLOCK_TRY(validateName(secret, u"secret name"));
    auto canonical = canonicalHostname(host);
    if (!canonical)
        return fieldError(
            kHost, canonical.error().message + QStringLiteral(" (a binding names one exact host)"));
    if (*canonical != host)
        return fieldError(
            kHost, QStringLiteral("'%1' is not canonical; write '%2'").arg(host, *canonical));
    if (!pathPrefix.isEmpty()) {
        if (const QString why = pathPrefixProblem(pathPrefix); !why.isEmpty())
            return fieldError(kPathPrefix, why);
    }
    if (methods.size() > kMaxMethods)
        return fieldError(kMethods, QStringLiteral("at most %1 methods").arg(kMaxMethods));
    for (const QString &method : methods) {
        if (!isValidRuleMethod(method))
            return fieldError(
                kMethods,
                QStringLiteral("'%1' is not an upper-case method token such as GET").arg(method));
    }
    return placement.validate();
}

QJsonObject CredentialBinding::toJson() const
{
    QJsonObject object {
        {QStringLiteral("id"), id},
        {kSandbox, sandbox},
        {kSecret, secret},
        {kHost, host},
        {kPlacement, placement.toJson()},
        {QStringLiteral("placeholderVariable"), placeholderVariable(secret)},
        {QStringLiteral("stats"), stats.toJson()},
    };
    if (!pathPrefix.isEmpty())
        object.insert(kPathPrefix, pathPrefix);
    if (!methods.isEmpty())
        object.insert(kMethods, QJsonArray::fromStringList(methods));
    if (createdAt.isValid())
        object.insert(QStringLiteral("createdAt"), createdAt.toString(Qt::ISODateWithMs));
    return object;
}

Result<CredentialBinding> CredentialBinding::fromJson(const QJsonObject &object)
{
    static const QStringList known {kSandbox, kSecret, kHost, kPathPrefix, kMethods, kPlacement};
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!known.contains(it.key()))
            return fieldError(it.key(),
                              QStringLiteral("unknown field (known: %1)").arg(known.join(u", ")));
    }
    CredentialBinding binding;
    for (const auto &[key, target] :
         {std::pair {kSandbox, &binding.sandbox}, std::pair {kSecret, &binding.secret},
          std::pair {kHost, &binding.host}}) {
        if (!object.value(key).isString())
            return fieldError(key, QStringLiteral("missing or not a string"));
        *target = object.value(key).toString();
    }
    auto host = canonicalHostname(binding.host);
    if (!host)
        return fieldError(
            kHost, host.error().message + QStringLiteral(" (a binding names one exact host)"));
    binding.host = *host;
    const QJsonValue prefix = object.value(kPathPrefix);
    if (!prefix.isUndefined() && !prefix.isString())
        return fieldError(kPathPrefix, QStringLiteral("must be a string"));
    binding.pathPrefix = prefix.toString();
    const QJsonValue methods = object.value(kMethods);
    if (!methods.isUndefined()) {
        if (!methods.isArray())
            return fieldError(kMethods, QStringLiteral("must be an array of strings"));
        for (const QJsonValue &method : methods.toArray()) {
            if (!method.isString())
                return fieldError(kMethods, QStringLiteral("must be an array of strings"));
            binding.methods.append(method.toString());
        }
    }
    const QJsonValue placement = object.value(kPlacement);
    if (!placement.isUndefined()) {
        if (!placement.isObject())
            return fieldError(kPlacement, QStringLiteral("must be an object"));
        auto parsed = CredentialPlacement::fromJson(placement.toObject());
        AIRLOCK_TRY(parsed);
        binding.placement = *parsed;
    }
    AIRLOCK_TRY(binding.validate());
    return binding;
}

QString placeholderVariable(const QString &secret)
{
    return QStringLiteral("AIRLOCK_SECRET_") + QString(secret).replace(u'-', u'_').toUpper();
}

QString newPlaceholder()
{
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    QByteArray bytes(reinterpret_cast<const char *>(words), sizeof words);
    return QStringLiteral("airlock-placeholder-") + QString::fromLatin1(bytes.toHex());
}

} // namespace airlock

#include "core/model/egresspolicy.h"

#include "core/model/hostname.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>
#include <QSet>

#include <cmath>

namespace airlock {

namespace {

constexpr qsizetype kMaxMethodLength = 32;
constexpr qsizetype kMaxPrefixLength = 1024;
constexpr qsizetype kMaxCommentLength = 1024;
constexpr qsizetype kMaxListLength = 256;

const QString kHost = QStringLiteral("host");
const QString kPorts = QStringLiteral("ports");
const QString kMethods = QStringLiteral("methods");
const QString kPathPrefixes = QStringLiteral("pathPrefixes");
const QString kComment = QStringLiteral("comment");
const QString kVersionKey = QStringLiteral("version");
const QString kRules = QStringLiteral("rules");

std::unexpected<Error> fieldError(const QString &field, const QString &why)
{
    return fail(ErrorKind::InvalidParams, QStringLiteral("field '%1': %2").arg(field, why));
}

Result<void> checkHost(const QString &host)
{
    auto canonical = canonicalHostPattern(host);
    if (!canonical)
        return fieldError(kHost, canonical.error().toError().message);
    if (*canonical != host)
        return fieldError(
            kHost, QStringLiteral("'%1' is not canonical; write '%2'").arg(host, *canonical));
    return {};
}

Result<void> checkPorts(const QList<quint16> &ports)
{
    if (ports.isEmpty())
        return fieldError(kPorts, QStringLiteral("must list at least one port"));
    if (ports.size() > kMaxListLength)
        return fieldError(kPorts, QStringLiteral("at most %1 entries").arg(kMaxListLength));
    QSet<quint16> seen;
    for (quint16 port : ports) {
        if (port == 0)
            return fieldError(kPorts, QStringLiteral("ports must be between 1 and 65535"));
        if (seen.contains(port))
            return fieldError(kPorts, QStringLiteral("port %1 is listed twice").arg(port));
        seen.insert(port);
    }
    return {};
}

Result<void> checkMethods(const QStringList &methods)
{
    if (methods.size() > kMaxListLength)
        return fieldError(kMethods, QStringLiteral("at most %1 entries").arg(kMaxListLength));
    QSet<QString> seen;
    for (const QString &method : methods) {
        if (!isValidRuleMethod(method))
            return fieldError(kMethods,
                              QStringLiteral("'%1' is not an upper-case method token such as "
                                             "GET (methods are case-sensitive, RFC 9110 §9.1)")
                                  .arg(method));
        if (seen.contains(method))
            return fieldError(kMethods, QStringLiteral("'%1' is listed twice").arg(method));
        seen.insert(method);
    }
    return {};
}

Result<void> checkPathPrefixes(const QStringList &prefixes)
{
    if (prefixes.size() > kMaxListLength)
        return fieldError(kPathPrefixes, QStringLiteral("at most %1 entries").arg(kMaxListLength));
    QSet<QString> seen;
    for (const QString &prefix : prefixes) {
        if (const QString problem = pathPrefixProblem(prefix); !problem.isEmpty())
            return fieldError(kPathPrefixes, QStringLiteral("'%1': %2").arg(prefix, problem));
        if (seen.contains(prefix))
            return fieldError(kPathPrefixes, QStringLiteral("'%1' is listed twice").arg(prefix));
        seen.insert(prefix);
    }
    return {};
}

// An optional array of strings: missing -> empty list; present -> a non-empty array of
// strings (an empty array would allow nothing and is almost certainly a mistake).
Result<QStringList> readStringList(const QJsonObject &object, const QString &key)
{
    const QJsonValue value = object.value(key);
    if (value.isUndefined())
        return QStringList();
    if (!value.isArray())
        return fieldError(key, QStringLiteral("must be an array of strings"));
    const QJsonArray array = value.toArray();
    if (array.isEmpty())
        return fieldError(key,
                          QStringLiteral("must not be empty; leave the field out to allow "
                                         "any"));
    if (array.size() > kMaxListLength)
        return fieldError(key, QStringLiteral("at most %1 entries").arg(kMaxListLength));
    QStringList list;
    for (const QJsonValue &item : array) {
        if (!item.isString())
            return fieldError(key, QStringLiteral("must be an array of strings"));
        list.append(item.toString());
    }
    return list;
}

Result<QList<quint16>> readPorts(const QJsonObject &object)
{
    const QJsonValue value = object.value(kPorts);
    if (value.isUndefined())
        return QList<quint16> {EgressRule::kDefaultPort};
    if (!value.isArray())
        return fieldError(kPorts, QStringLiteral("must be an array of port numbers"));
    const QJsonArray array = value.toArray();
    if (array.size() > kMaxListLength)
        return fieldError(kPorts, QStringLiteral("at most %1 entries").arg(kMaxListLength));
    QList<quint16> ports;
    for (const QJsonValue &item : array) {
        const double number = item.toDouble(-1);
        if (!item.isDouble() || !std::isfinite(number) || std::trunc(number) != number || number < 1
            || number > 65535)
            return fieldError(kPorts, QStringLiteral("ports must be integers between 1 and 65535"));
        ports.append(quint16(number));
    }
    return ports;
}

} // namespace

bool isValidRuleMethod(QStringView method)
{
    if (method.isEmpty() || method.size() > kMaxMethodLength)
        return false;
    if (method.at(0) < u'A' || method.at(0) > u'Z')
        return false;
    for (QChar c : method) {
        const bool ok =
            (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9') || c == u'-' || c == u'_';
        if (!ok)
            return false;
    }
    return true;
}

QString pathPrefixProblem(QStringView prefix)
{
    if (!prefix.startsWith(u'/'))
        return QStringLiteral("must start with '/'");
    if (prefix.size() > kMaxPrefixLength)
        return QStringLiteral("must be at most %1 characters").arg(kMaxPrefixLength);
    // RFC 3986 §3.3 pchar without pct-encoded: unreserved / sub-delims / ':' / '@'.
    static const QString allowedPunctuation = QStringLiteral("-._~!$&'()*+,;=:@/");
    for (QChar c : prefix) {
        const bool alnum =
            (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9');
        if (!alnum && !allowedPunctuation.contains(c))
            return QStringLiteral("character %1 is not allowed (no percent-encoding, '?', '#', "
                                  "'\\', spaces, controls or non-ASCII)")
                .arg(QStringLiteral("U+%1").arg(c.unicode(), 4, 16, QLatin1Char('0')));
    }
    for (QStringView segment : prefix.mid(1).tokenize(u'/')) {
        // Also ";" parameters: some servers read "..;" as "..".
        const QStringView name = segment.left(segment.indexOf(u';'));
        if (name == u"." || name == u"..")
            return QStringLiteral("must not contain '.' or '..' segments");
    }
    return {};
}

Result<void> EgressRule::validate() const
{
    if (auto ok = checkHost(host); !ok)
        return ok;
    if (auto ok = checkPorts(ports); !ok)
        return ok;
    if (auto ok = checkMethods(methods); !ok)
        return ok;
    if (auto ok = checkPathPrefixes(pathPrefixes); !ok)
        return ok;
    if (comment.size() > kMaxCommentLength)
        return fieldError(kComment,
                          QStringLiteral("must be at most %1 characters").arg(kMaxCommentLength));
    return {};
}

QJsonObject EgressRule::toJson() const
{
    QJsonObject object {{kHost, host}};
    QJsonArray portArray;
    for (quint16 port : ports)
        portArray.append(int(port));
    object.insert(kPorts, portArray);
    if (!methods.isEmpty())
        object.insert(kMethods, QJsonArray::fromStringList(methods));
    if (!pathPrefixes.isEmpty())
        object.insert(kPathPrefixes, QJsonArray::fromStringList(pathPrefixes));
    if (!comment.isEmpty())
        object.insert(kComment, comment);
    return object;
}

Result<EgressRule> EgressRule::fromJson(const QJsonObject &object)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QString &key = it.key();
        if (key != kHost && key != kPorts && key != kMethods && key != kPathPrefixes
            && key != kComment)
            return fieldError(key,
                              QStringLiteral("unknown field (known: host, ports, methods, "
                                             "pathPrefixes, comment)"));
    }
    EgressRule rule;
    const QJsonValue hostValue = object.value(kHost);
    if (hostValue.isUndefined())
        return fieldError(kHost, QStringLiteral("missing"));
    if (!hostValue.isString())
        return fieldError(kHost, QStringLiteral("must be a string"));
    auto host = canonicalHostPattern(hostValue.toString());
    if (!host)
        return fieldError(kHost, host.error().toError().message);
    rule.host = *host;

    auto ports = readPorts(object);
    AIRLOCK_TRY(ports);
    rule.ports = *ports;
    auto methods = readStringList(object, kMethods);
    AIRLOCK_TRY(methods);
    rule.methods = *methods;
    auto prefixes = readStringList(object, kPathPrefixes);
    AIRLOCK_TRY(prefixes);
    rule.pathPrefixes = *prefixes;
    const QJsonValue commentValue = object.value(kComment);
    if (!commentValue.isUndefined() && !commentValue.isString())
        return fieldError(kComment, QStringLiteral("must be a string"));
    rule.comment = commentValue.toString();

    AIRLOCK_TRY(rule.validate());
    return rule;
}

Result<void> EgressPolicy::validate() const
{
    if (rules.size() > kMaxRules)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'rules': at most %1 rules").arg(kMaxRules));
    for (qsizetype i = 0; i < rules.size(); ++i) {
        if (auto ok = rules.at(i).validate(); !ok)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("rule %1, %2").arg(i).arg(ok.error().message));
    }
    return {};
}

QJsonObject EgressPolicy::toJson() const
{
    QJsonArray array;
    for (const EgressRule &rule : rules)
        array.append(rule.toJson());
    return QJsonObject {{kVersionKey, kVersion}, {kRules, array}};
}

Result<EgressPolicy> EgressPolicy::fromJson(const QJsonObject &object)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it.key() != kVersionKey && it.key() != kRules)
            return fail(
                ErrorKind::InvalidParams,
                QStringLiteral("field '%1': unknown field (known: version, rules)").arg(it.key()));
    }
    const QJsonValue version = object.value(kVersionKey);
    if (version.isUndefined())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'version': missing"));
    if (!version.isDouble() || version.toDouble() != double(kVersion))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'version': must be %1").arg(kVersion));
    const QJsonValue rulesValue = object.value(kRules);
    if (rulesValue.isUndefined())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'rules': missing"));
    if (!rulesValue.isArray())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'rules': must be an array"));
    const QJsonArray array = rulesValue.toArray();
    if (array.size() > kMaxRules)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("field 'rules': at most %1 rules").arg(kMaxRules));
    EgressPolicy policy;
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QJsonValue item = array.at(i);
        if (!item.isObject())
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("rule %1: must be an object").arg(i));
        auto rule = EgressRule::fromJson(item.toObject());
        if (!rule)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("rule %1, %2").arg(i).arg(rule.error().message));
        policy.rules.append(*rule);
    }
    return policy;
}

Result<EgressPolicy> EgressPolicy::fromJsonBytes(const QByteArray &bytes)
{
    if (bytes.size() > kMaxJsonBytes)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("the policy is %1 bytes; at most %2 are allowed")
                        .arg(bytes.size())
                        .arg(kMaxJsonBytes));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError)
        return fail(ErrorKind::ParseError,
                    QStringLiteral("not valid JSON at offset %1: %2")
                        .arg(error.offset)
                        .arg(error.errorString()));
    if (!document.isObject())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("a policy must be a JSON object {\"version\": 1, \"rules\": "
                                   "[...]}"));
    return fromJson(document.object());
}

QByteArray EgressPolicy::toJsonBytes() const
{
    return QJsonDocument(toJson()).toJson(QJsonDocument::Indented);
}

QString EgressPolicy::revision() const
{
    const QByteArray digest = QCryptographicHash::hash(
        QJsonDocument(toJson()).toJson(QJsonDocument::Compact), QCryptographicHash::Sha256);
    return QString::fromLatin1(digest.toHex().left(16));
}

} // namespace airlock

#include "core/policy/policymatcher.h"

#include "core/model/hostname.h"

namespace airlock::policy {

namespace {

int hexValue(QChar c)
{
    if (c >= u'0' && c <= u'9')
        return c.unicode() - u'0';
    if (c >= u'a' && c <= u'f')
        return c.unicode() - u'a' + 10;
    if (c >= u'A' && c <= u'F')
        return c.unicode() - u'A' + 10;
    return -1;
}

bool isDotPiece(const QByteArray &piece)
{
    const qsizetype semicolon = piece.indexOf(';');
    const QByteArray name = semicolon < 0 ? piece : piece.first(semicolon);
    return name == QByteArrayLiteral(".") || name == QByteArrayLiteral("..");
}

// Higher is "more of the rule matched"; used to pick the most telling denial.
int depth(EgressReason reason)
{
    switch (reason) {
    case EgressReason::PortNotAllowed:
        return 1;
    case EgressReason::MethodNotAllowed:
        return 2;
    case EgressReason::PathNotAllowed:
        return 3;
    default:
        return 0;
    }
}

Verdict verdict(EgressReason reason, int rule, QString detail)
{
    return Verdict {reason, rule, std::move(detail)};
}

} // namespace

PolicyMatcher::PolicyMatcher(EgressPolicy policy) : m_policy(std::move(policy)) { }

Result<PolicyMatcher> PolicyMatcher::create(EgressPolicy policy)
{
    AIRLOCK_TRY(policy.validate());
    return PolicyMatcher(std::move(policy));
}

bool PolicyMatcher::hostMatches(QStringView pattern, QStringView host)
{
    if (host.isEmpty() || pattern.isEmpty())
        return false;
    if (!pattern.startsWith(u"*."))
        return pattern == host;
    // "*.pkg.test" -> ".pkg.test": host must end with it and have a label in front.
    const QStringView dotSuffix = pattern.mid(1);
    return host.size() > dotSuffix.size() && host.endsWith(dotSuffix);
}

bool PolicyMatcher::pathMatches(QStringView prefix, QStringView path)
{
    if (!path.startsWith(prefix))
        return false;
    if (path.size() == prefix.size() || prefix.endsWith(u'/'))
        return true;
    return path.at(prefix.size()) == u'/';
}

QString PolicyMatcher::pathProblem(QStringView target)
{
    const qsizetype query = target.indexOf(u'?');
    const QStringView path = query < 0 ? target : target.first(query);
    if (!path.startsWith(u'/'))
        return QStringLiteral("the request target must be an origin-form path starting with '/'");
    for (QChar c : target) {
        if (c.unicode() <= 0x20 || c.unicode() >= 0x7f)
            return QStringLiteral("the request target contains a space, control or non-ASCII "
                                  "character");
        if (c == u'#')
            return QStringLiteral("the request target contains a fragment ('#')");
    }
    for (QStringView segment : path.mid(1).tokenize(u'/')) {
        QByteArray decoded;
        decoded.reserve(segment.size());
        for (qsizetype i = 0; i < segment.size(); ++i) {
            const QChar c = segment.at(i);
            if (c == u'\\')
                return QStringLiteral("the path contains a backslash");
            if (c != u'%') {
                decoded.append(char(c.unicode()));
                continue;
            }
            const int high = i + 2 < segment.size() ? hexValue(segment.at(i + 1)) : -1;
            const int low = i + 2 < segment.size() ? hexValue(segment.at(i + 2)) : -1;
            if (high < 0 || low < 0)
                return QStringLiteral("the path has a '%' not followed by two hex digits");
            decoded.append(char(high * 16 + low));
            i += 2;
        }
        for (char byte : decoded) {
            const auto b = static_cast<unsigned char>(byte);
            if (b < 0x20 || b == 0x7f)
                return QStringLiteral("the path encodes a control character");
            if (b == '\\')
                return QStringLiteral("the path encodes a backslash");
        }
        for (const QByteArray &piece : decoded.split('/')) {
            if (isDotPiece(piece))
                return QStringLiteral("the path contains a '.' or '..' segment (also encoded "
                                      "or with ';' parameters)");
        }
    }
    return {};
}

Verdict PolicyMatcher::checkHost(QStringView host) const
{
    auto canonical = canonicalizeHostname(host);
    if (!canonical)
        return verdict(EgressReason::MalformedHost, -1, canonical.error().toError().message);
    for (qsizetype i = 0; i < m_policy.rules.size(); ++i) {
        if (hostMatches(m_policy.rules.at(i).host, *canonical))
            return verdict(EgressReason::Allowed, int(i), QString());
    }
    return verdict(EgressReason::HostNotAllowed, -1,
                   QStringLiteral("no rule allows %1").arg(*canonical));
}

Verdict PolicyMatcher::checkConnection(QStringView host, quint16 port) const
{
    auto canonical = canonicalizeHostname(host);
    if (!canonical)
        return verdict(EgressReason::MalformedHost, -1, canonical.error().toError().message);
    int hostRule = -1;
    for (qsizetype i = 0; i < m_policy.rules.size(); ++i) {
        const EgressRule &rule = m_policy.rules.at(i);
        if (!hostMatches(rule.host, *canonical))
            continue;
        if (rule.ports.contains(port))
            return verdict(EgressReason::Allowed, int(i), QString());
        if (hostRule < 0)
            hostRule = int(i);
    }
    if (hostRule >= 0)
        return verdict(EgressReason::PortNotAllowed, hostRule,
                       QStringLiteral("port %1 is not allowed for %2").arg(port).arg(*canonical));
    return verdict(EgressReason::HostNotAllowed, -1,
                   QStringLiteral("no rule allows %1").arg(*canonical));
}

Verdict PolicyMatcher::checkRequest(QStringView host, quint16 port, QStringView method,
                                    QStringView target) const
{
    auto canonical = canonicalizeHostname(host);
    if (!canonical)
        return verdict(EgressReason::MalformedHost, -1, canonical.error().toError().message);
    // RFC 9110 §9.1: method = token. Rules hold only [A-Z0-9_-] methods, so any other token
    // can never match; anything that is not a token at all is malformed.
    static const QString tcharPunctuation = QStringLiteral("!#$%&'*+-.^_`|~");
    if (method.isEmpty())
        return verdict(EgressReason::MalformedMethod, -1, QStringLiteral("the method is empty"));
    for (QChar c : method) {
        const bool alnum =
            (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9');
        if (!alnum && !tcharPunctuation.contains(c))
            return verdict(EgressReason::MalformedMethod, -1,
                           QStringLiteral("the method is not an HTTP token"));
    }
    if (const QString problem = pathProblem(target); !problem.isEmpty())
        return verdict(EgressReason::MalformedPath, -1, problem);
    const qsizetype query = target.indexOf(u'?');
    const QStringView path = query < 0 ? target : target.first(query);

    EgressReason best = EgressReason::HostNotAllowed;
    int bestRule = -1;
    for (qsizetype i = 0; i < m_policy.rules.size(); ++i) {
        const EgressRule &rule = m_policy.rules.at(i);
        if (!hostMatches(rule.host, *canonical))
            continue;
        EgressReason reached = EgressReason::PortNotAllowed;
        if (rule.ports.contains(port)) {
            reached = EgressReason::MethodNotAllowed;
            if (rule.methods.isEmpty() || rule.methods.contains(method)) {
                reached = EgressReason::PathNotAllowed;
                bool pathOk = rule.pathPrefixes.isEmpty();
                for (const QString &prefix : rule.pathPrefixes)
                    pathOk = pathOk || pathMatches(prefix, path);
                if (pathOk)
                    return verdict(EgressReason::Allowed, int(i), QString());
            }
        }
        if (depth(reached) > depth(best)) {
            best = reached;
            bestRule = int(i);
        }
    }
    QString detail;
    switch (best) {
    case EgressReason::PortNotAllowed:
        detail = QStringLiteral("port %1 is not allowed for %2").arg(port).arg(*canonical);
        break;
    case EgressReason::MethodNotAllowed:
        detail =
            QStringLiteral("method %1 is not allowed for %2").arg(method.toString(), *canonical);
        break;
    case EgressReason::PathNotAllowed:
        detail = QStringLiteral("path %1 is not allowed for %2").arg(path.toString(), *canonical);
        break;
    default:
        detail = QStringLiteral("no rule allows %1").arg(*canonical);
        break;
    }
    return verdict(best, bestRule, detail);
}

} // namespace airlock::policy

#include "ui/denieddestination.h"

#include "core/model/egressreason.h"
#include "core/model/hostname.h"

namespace airlock {

QString DeniedDestination::nameOf(const EgressEntry &entry)
{
    if (entry.allowed)
        return {};
    // Only what a rule decides: a malformed request or a private address is refused whatever
    // the policy says, so asking "Allow?" about it would promise what Apply cannot do.
    const std::optional<EgressReason> reason = fromWireName(entry.reason);
    if (!reason || *reason == EgressReason::Allowed || !egressReasonInfo(*reason).ruleDecision)
        return {};
    const auto host = canonicalizeHostname(entry.destination());
    return host ? *host : QString();
}

void DeniedDestination::add(const EgressEntry &entry, const QDateTime &now)
{
    if (count == 0)
        first = now;
    last = now;
    count += entry.count;
    if (entry.port > 0 && !ports.contains(quint16(entry.port)))
        ports.append(quint16(entry.port));
    if (!entry.method.isEmpty() && isValidRuleMethod(entry.method)
        && !methods.contains(entry.method))
        methods.append(entry.method);
    if (!entry.path.isEmpty() && paths.size() < kMaxPaths && pathPrefixProblem(entry.path).isEmpty()
        && !paths.contains(entry.path))
        paths.append(entry.path);
}

EgressRule DeniedDestination::nameRule(const QString &comment) const
{
    EgressRule rule;
    rule.host = name;
    rule.ports = ports.isEmpty() ? QList<quint16> {EgressRule::kDefaultPort} : ports;
    rule.comment = comment;
    return rule;
}

EgressRule DeniedDestination::seenRule(const QString &comment) const
{
    EgressRule rule = nameRule(comment);
    rule.methods = methods;
    rule.pathPrefixes = paths;
    return rule;
}

} // namespace airlock

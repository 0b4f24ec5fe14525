#include "core/daemon/policydryrun.h"

#include "core/model/egressevent.h"
#include "core/model/egressreason.h"
#include "core/policy/policymatcher.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace airlock {

namespace {

using policy::PolicyMatcher;
using policy::Verdict;

// A recorded decision a rule change can turn (the reason table's ruleDecision).
bool isPolicyReason(const QString &reason)
{
    const std::optional<EgressReason> known = fromWireName(reason);
    return known && egressReasonInfo(*known).ruleDecision;
}

QString firstOf(const QString &a, const QString &b)
{
    return a.isEmpty() ? b : a;
}

/// The stage check the gateway made for `event`, or std::nullopt when it cannot be replayed.
std::optional<policy::Verdict> judge(const policy::PolicyMatcher &matcher, const EgressEvent &event)
{
    const quint16 port = event.port.value_or(EgressRule::kDefaultPort);
    switch (event.layer) {
    case EgressLayer::Dns:
        if (event.name.isEmpty())
            return std::nullopt;
        return matcher.checkHost(event.name);
    case EgressLayer::Tls: {
        const QString host = firstOf(event.sni, event.name);
        if (host.isEmpty())
            return std::nullopt;
        return matcher.checkConnection(host, port);
    }
    case EgressLayer::Http: {
        const QString host = firstOf(event.host, event.name);
        if (host.isEmpty() || event.method.isEmpty() || event.path.isEmpty())
            return std::nullopt;
        return matcher.checkRequest(host, port, event.method, event.path);
    }
    case EgressLayer::Tcp:
        return std::nullopt;
    }
    return std::nullopt;
}

QJsonObject verdictJson(const policy::Verdict &verdict)
{
    return {{QStringLiteral("verdict"),
             verdict.allowed() ? QStringLiteral("allowed") : QStringLiteral("denied")},
            {QStringLiteral("reason"), wireName(verdict.reason)},
            {QStringLiteral("rule"), verdict.rule >= 0 ? QJsonValue(verdict.rule) : QJsonValue()},
            {QStringLiteral("detail"), verdict.detail}};
}

} // namespace

Result<QJsonObject> PolicyDryRun::evaluate(const EgressPolicy &applied, const EgressPolicy &edited,
                                           const QList<EgressRecord> &records, const Window &window)
{
    auto before = policy::PolicyMatcher::create(applied);
    AIRLOCK_TRY(before);
    auto after = policy::PolicyMatcher::create(edited);
    AIRLOCK_TRY(after);

    int evaluated = 0;
    int skipped = 0;
    bool truncated = false;
    qsizetype bytes = 0;
    QJsonArray changes;
    for (const EgressRecord &record : records) {
        auto event = EgressEvent::fromJson(record.event);
        if (!event) {
            ++skipped;
            continue;
        }
        if ((window.since && event->time < *window.since)
            || (window.until && event->time >= *window.until))
            continue;
        if (!isPolicyReason(event->reason)) {
            ++skipped;
            continue;
        }
        const std::optional<policy::Verdict> was = judge(*before, *event);
        const std::optional<policy::Verdict> would = judge(*after, *event);
        if (!was || !would) {
            ++skipped;
            continue;
        }
        ++evaluated;
        if (was->allowed() == would->allowed() || truncated)
            continue;
        const QJsonObject change {{QStringLiteral("seq"), record.seq},
                                  {QStringLiteral("event"), event->toJson()},
                                  {QStringLiteral("before"), verdictJson(*was)},
                                  {QStringLiteral("after"), verdictJson(*would)}};
        bytes += QJsonDocument(change).toJson(QJsonDocument::Compact).size();
        if (bytes > kMaxChangeBytes) {
            truncated = true;
            continue;
        }
        changes.append(change);
    }
    return QJsonObject {{QStringLiteral("evaluated"), evaluated},
                        {QStringLiteral("skipped"), skipped},
                        {QStringLiteral("truncated"), truncated},
                        {QStringLiteral("changes"), changes}};
}

} // namespace airlock

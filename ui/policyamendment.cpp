#include "ui/policyamendment.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "ui/errortext.h"

#include <QJsonObject>
#include <QTimer>

namespace airlock {

namespace {

/// The rule without its comment: an equal rule with another comment allows the same.
bool sameAllowance(EgressRule a, EgressRule b)
{
    a.comment.clear();
    b.comment.clear();
    return a == b;
}

} // namespace

PolicyAmendment::PolicyAmendment(HelperClient *client, QString sandbox, EgressRule rule,
                                 QObject *parent)
    : QObject(parent), m_client(client), m_sandbox(std::move(sandbox)), m_rule(std::move(rule))
{ }

void PolicyAmendment::fail(const QString &text)
{
    Q_EMIT finished(false, text);
}

void PolicyAmendment::start()
{
    if (!m_client) {
        QTimer::singleShot(0, this, [this] { fail(tr("Not connected to the helper.")); });
        return;
    }
    QPointer<PolicyAmendment> self(this);
    m_client->call(
        QString::fromLatin1(protocol::method::PolicyGet), {{QStringLiteral("name"), m_sandbox}},
        [self](const Result<QJsonValue> &got) {
            if (!self)
                return;
            if (!got)
                return self->fail(tr("Could not read the policy: %1 %2")
                                      .arg(ErrorText::summary(got.error()), got.error().message));
            auto policy =
                EgressPolicy::fromJson(got->toObject().value(QStringLiteral("policy")).toObject());
            if (!policy)
                return self->fail(policy.error().message);
            self->set(*policy, got->toObject().value(QStringLiteral("revision")).toString());
        });
}

void PolicyAmendment::set(EgressPolicy policy, const QString &revision)
{
    if (std::ranges::any_of(
            policy.rules, [this](const EgressRule &rule) { return sameAllowance(rule, m_rule); })) {
        m_applied = policy;
        Q_EMIT finished(true, tr("%1 already has this rule.").arg(m_sandbox));
        return;
    }
    policy.rules.append(m_rule);
    if (!m_client)
        return fail(tr("Not connected to the helper."));
    QPointer<PolicyAmendment> self(this);
    QJsonObject params {{QStringLiteral("name"), m_sandbox},
                        {QStringLiteral("policy"), policy.toJson()}};
    // Compare and set: what another client stored since the read is kept, not overwritten.
    if (!revision.isEmpty())
        params.insert(QStringLiteral("ifRevision"), revision);
    m_client->call(
        QString::fromLatin1(protocol::method::PolicySet), params,
        [self](const Result<QJsonValue> &result) {
            if (!self)
                return;
            if (!result && result.error().kind == ErrorKind::Conflict
                && ++self->m_conflicts < kMaxConflicts)
                return self->start(); // read the new policy and add the rule to it
            if (!result)
                return self->fail(
                    tr("Not applied: %1 %2")
                        .arg(ErrorText::summary(result.error()), result.error().message));
            if (auto stored = EgressPolicy::fromJson(
                    result->toObject().value(QStringLiteral("policy")).toObject()))
                self->m_applied = *stored;
            Q_EMIT self->finished(true,
                                  tr("Applied: %1 may now reach %2 as the new rule allows.")
                                      .arg(self->m_sandbox, self->m_rule.host));
        });
}

} // namespace airlock

#pragma once

#include "core/model/egresspolicy.h"

#include <QObject>
#include <QPointer>

namespace airlock {

class HelperClient;

/// Adds one rule to a sandbox's policy through the helper, the way the policy editor applies:
/// `policy.get` for the policy the helper holds, the rule appended (unless an equal rule is
/// there already), then one atomic `policy.set` of the whole policy with the revision read
/// (`ifRevision`), which answers once the sandbox's gateway enforces it. When another client
/// changed the policy in between (`conflict`), it reads again and appends to that, up to
/// kMaxConflicts times: nobody's change is lost. The new rule is stored with its comment, so the
/// policy itself records why it is there. Used by the "Allow?" prompt.
class PolicyAmendment final : public QObject
{
    Q_OBJECT
public:
    PolicyAmendment(HelperClient *client, QString sandbox, EgressRule rule,
                    QObject *parent = nullptr);

    /// Sends the calls; finished() follows exactly once.
    void start();
    /// The policy the helper answered policy.set with (empty before success).
    const EgressPolicy &applied() const { return m_applied; }
    /// How often policy.set answered `conflict` (another client changed the policy between
    /// the read and the write) and the amendment read again.
    int conflicts() const { return m_conflicts; }

Q_SIGNALS:
    /// `ok`: the rule is in the applied policy (`text` says so); otherwise `text` says why not
    /// and the policy is as it was.
    void finished(bool ok, const QString &text);

private:
    /// Reads and retries after this many conflicts at most, then reports the last one.
    static constexpr int kMaxConflicts = 3;

    void set(EgressPolicy policy, const QString &revision);
    void fail(const QString &text);

    QPointer<HelperClient> m_client;
    QString m_sandbox;
    EgressRule m_rule;
    EgressPolicy m_applied;
    int m_conflicts = 0;
};

} // namespace airlock

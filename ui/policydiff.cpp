#include "ui/policydiff.h"

#include "ui/policytext.h"

#include <QList>

namespace airlock {

namespace {

QString portsText(const QList<quint16> &ports)
{
    QStringList items;
    for (quint16 port : ports)
        items.append(QString::number(port));
    return joinListCell(items);
}

QString listOrAny(const QStringList &items)
{
    return items.isEmpty() ? PolicyDiff::tr("any") : joinListCell(items);
}

} // namespace

QList<PolicyChange> PolicyDiff::compute(const EgressPolicy &applied, const EgressPolicy &edited)
{
    const QList<EgressRule> &a = applied.rules;
    const QList<EgressRule> &b = edited.rules;
    const qsizetype n = a.size();
    const qsizetype m = b.size();
    // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
    QList<QList<int>> lcs(n + 1, QList<int>(m + 1, 0));
    for (qsizetype i = n - 1; i >= 0; --i) {
        for (qsizetype j = m - 1; j >= 0; --j)
            lcs[i][j] =
                a.at(i) == b.at(j) ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
    QList<PolicyChange> removed;
    QList<PolicyChange> added;
    qsizetype i = 0;
    qsizetype j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a.at(i) == b.at(j)) {
            ++i;
            ++j;
        } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
            added.append({PolicyChange::Kind::Added, -1, int(j), {}, b.at(j)});
            ++j;
        } else {
            removed.append({PolicyChange::Kind::Removed, int(i), -1, a.at(i), {}});
            ++i;
        }
    }
    // A removal and an addition of the same host read better as one change.
    QList<PolicyChange> changes;
    for (PolicyChange &gone : removed) {
        auto match = std::find_if(added.begin(), added.end(), [&](const PolicyChange &change) {
            return change.after.host == gone.before.host;
        });
        if (match == added.end()) {
            changes.append(gone);
            continue;
        }
        changes.append({PolicyChange::Kind::Changed, gone.beforeIndex, match->afterIndex,
                        gone.before, match->after});
        added.erase(match);
    }
    changes.append(added);
    return changes;
}

QString PolicyDiff::ruleSummary(const EgressRule &rule)
{
    QString text = tr("%1  ports %2  methods %3  paths %4")
                       .arg(rule.host, portsText(rule.ports), listOrAny(rule.methods),
                            listOrAny(rule.pathPrefixes));
    if (!rule.comment.isEmpty())
        text += QStringLiteral("  — ") + rule.comment;
    return text;
}

QString PolicyDiff::describe(const PolicyChange &change)
{
    switch (change.kind) {
    case PolicyChange::Kind::Added:
        return tr("+ rule %1: %2").arg(change.afterIndex + 1).arg(ruleSummary(change.after));
    case PolicyChange::Kind::Removed:
        return tr("− rule %1: %2").arg(change.beforeIndex + 1).arg(ruleSummary(change.before));
    case PolicyChange::Kind::Changed:
        break;
    }
    QStringList parts;
    const EgressRule &a = change.before;
    const EgressRule &b = change.after;
    if (a.ports != b.ports)
        parts.append(tr("ports %1 → %2").arg(portsText(a.ports), portsText(b.ports)));
    if (a.methods != b.methods)
        parts.append(tr("methods %1 → %2").arg(listOrAny(a.methods), listOrAny(b.methods)));
    if (a.pathPrefixes != b.pathPrefixes)
        parts.append(tr("paths %1 → %2").arg(listOrAny(a.pathPrefixes), listOrAny(b.pathPrefixes)));
    if (a.comment != b.comment)
        parts.append(tr("comment changed"));
    if (change.beforeIndex != change.afterIndex)
        parts.append(tr("moved from rule %1").arg(change.beforeIndex + 1));
    return tr("~ rule %1: %2: %3")
        .arg(change.afterIndex + 1)
        .arg(b.host, parts.join(QStringLiteral("; ")));
}

} // namespace airlock

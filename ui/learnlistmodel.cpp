#include "ui/learnlistmodel.h"

#include "core/model/hostname.h"
#include "ui/policytext.h"

#include <algorithm>

namespace airlock {

LearnListModel::LearnListModel(QObject *parent) : QAbstractTableModel(parent) { }

void LearnListModel::setLearning(const QString &sandbox, bool on)
{
    if (on)
        m_learning.insert(sandbox);
    else
        m_learning.remove(sandbox);
}

void LearnListModel::record(const EgressEntry &entry)
{
    // A denial a rule would have allowed: host, port, method or path not allowed.
    const std::optional<EgressReason> reason = fromWireName(entry.reason);
    const bool learnable =
        reason && *reason != EgressReason::Allowed && egressReasonInfo(*reason).ruleDecision;
    if (entry.allowed || !m_learning.contains(entry.sandbox) || !learnable)
        return;
    auto host = canonicalizeHostname(entry.destination());
    if (!host)
        return;
    const quint16 port = entry.port > 0 ? quint16(entry.port) : EgressRule::kDefaultPort;
    auto found = std::find_if(m_rows.begin(), m_rows.end(), [&](const Candidate &candidate) {
        return candidate.sandbox == entry.sandbox && candidate.host == *host
            && candidate.port == port;
    });
    if (found == m_rows.end()) {
        const int row = int(m_rows.size());
        beginInsertRows({}, row, row);
        m_rows.append({entry.sandbox, *host, port, {}, {}, 0});
        endInsertRows();
        found = m_rows.begin() + row;
    }
    const int row = int(found - m_rows.begin());
    found->count += 1;
    if (!entry.method.isEmpty() && isValidRuleMethod(entry.method)
        && !found->methods.contains(entry.method))
        found->methods.append(entry.method);
    if (found->examplePath.isEmpty() && !entry.path.isEmpty())
        found->examplePath = entry.path;
    Q_EMIT dataChanged(index(row, MethodsColumn), index(row, CountColumn));
}

void LearnListModel::removeRows(QList<int> rows)
{
    std::sort(rows.begin(), rows.end(), std::greater<int>());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    for (int row : rows) {
        if (row < 0 || row >= m_rows.size())
            continue;
        beginRemoveRows({}, row, row);
        m_rows.removeAt(row);
        endRemoveRows();
    }
}

QList<EgressRule> LearnListModel::rulesFor(const QList<int> &rows) const
{
    QList<EgressRule> rules;
    for (int row : rows) {
        if (row < 0 || row >= m_rows.size())
            continue;
        const Candidate &candidate = m_rows.at(row);
        EgressRule rule;
        rule.host = candidate.host;
        rule.ports = {candidate.port};
        rule.methods = candidate.methods;
        rule.comment = tr("learned: %n denied request(s)", "", candidate.count);
        rules.append(rule);
    }
    return rules;
}

int LearnListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int LearnListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LearnListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Candidate &candidate = m_rows.at(index.row());
    if (role == SandboxRole)
        return candidate.sandbox;
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case SandboxColumn:
        return candidate.sandbox;
    case HostColumn:
        return candidate.host;
    case PortColumn:
        return candidate.port;
    case MethodsColumn:
        return candidate.methods.isEmpty() ? tr("any") : joinListCell(candidate.methods);
    case PathColumn:
        return candidate.examplePath;
    case CountColumn:
        return candidate.count;
    default:
        return {};
    }
}

QVariant LearnListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SandboxColumn:
        return tr("Sandbox");
    case HostColumn:
        return tr("Host");
    case PortColumn:
        return tr("Port");
    case MethodsColumn:
        return tr("Methods");
    case PathColumn:
        return tr("Example path");
    case CountColumn:
        return tr("Denied");
    default:
        return {};
    }
}

} // namespace airlock

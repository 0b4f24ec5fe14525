#include "ui/policyhistorymodel.h"

#include <QJsonObject>

namespace airlock {

namespace {

QList<EgressRule> readRules(const QJsonValue &value)
{
    QList<EgressRule> rules;
    for (const QJsonValue &rule : value.toArray())
        if (auto parsed = EgressRule::fromJson(rule.toObject()))
            rules.append(*parsed);
    return rules;
}

} // namespace

PolicyHistoryModel::PolicyHistoryModel(QObject *parent) : QAbstractTableModel(parent) { }

void PolicyHistoryModel::setChanges(const QJsonArray &changes)
{
    beginResetModel();
    m_rows.clear();
    for (const QJsonValue &value : changes) {
        const QJsonObject object = value.toObject();
        Change change;
        change.seq = object.value(QStringLiteral("seq")).toInteger();
        change.time = QDateTime::fromString(object.value(QStringLiteral("time")).toString(),
                                            Qt::ISODateWithMs);
        if (change.seq <= 0 || !change.time.isValid())
            continue;
        const QJsonValue uid = object.value(QStringLiteral("uid"));
        if (uid.isDouble())
            change.uid = uid.toInteger();
        change.user = object.value(QStringLiteral("user")).toString();
        change.source = object.value(QStringLiteral("source")).toString();
        change.oldRevision = object.value(QStringLiteral("oldRevision")).toString();
        change.newRevision = object.value(QStringLiteral("newRevision")).toString();
        change.rules = object.value(QStringLiteral("rules")).toInt();
        change.added = readRules(object.value(QStringLiteral("added")));
        change.removed = readRules(object.value(QStringLiteral("removed")));
        change.addedCount = object.value(QStringLiteral("addedCount")).toInt(change.added.size());
        change.removedCount =
            object.value(QStringLiteral("removedCount")).toInt(change.removed.size());
        const QJsonValue policy = object.value(QStringLiteral("policy"));
        if (policy.isObject()) {
            // Only a policy that is exactly the recorded revision may be offered to go back to.
            auto parsed = EgressPolicy::fromJson(policy.toObject());
            if (parsed && parsed->revision() == change.newRevision)
                change.policy = *parsed;
        }
        m_rows.append(change);
    }
    endResetModel();
}

void PolicyHistoryModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

QString PolicyHistoryModel::sourceText(const QString &source)
{
    if (source == QLatin1String("editor"))
        return tr("Policy editor");
    if (source == QLatin1String("allow-prompt"))
        return tr("Allow? prompt");
    if (source == QLatin1String("airlockctl"))
        return tr("airlockctl");
    if (source == QLatin1String("revert"))
        return tr("Revert");
    if (source == QLatin1String("fork"))
        return tr("Fork");
    if (source == QLatin1String("client"))
        return tr("Another client");
    return source;
}

QString PolicyHistoryModel::changeText(const Change &change)
{
    QStringList parts;
    for (const EgressRule &rule : change.added)
        parts.append(QStringLiteral("+ ") + rule.summary());
    if (change.addedCount > change.added.size())
        parts.append(tr("+ %n more", "", change.addedCount - int(change.added.size())));
    for (const EgressRule &rule : change.removed)
        parts.append(QStringLiteral("− ") + rule.summary());
    if (change.removedCount > change.removed.size())
        parts.append(tr("− %n more", "", change.removedCount - int(change.removed.size())));
    if (parts.isEmpty())
        return tr("Rules reordered");
    return parts.join(QStringLiteral("; "));
}

int PolicyHistoryModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int PolicyHistoryModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PolicyHistoryModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const Change &change = m_rows.at(index.row());
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case TimeColumn:
            return change.time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        case WhoColumn:
            if (!change.uid)
                return tr("the helper");
            return change.user.isEmpty() ? tr("uid %1").arg(*change.uid) : change.user;
        case SourceColumn:
            return sourceText(change.source);
        case ChangeColumn:
            return changeText(change);
        case RulesColumn:
            return change.rules;
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case WhoColumn:
            return change.uid ? tr("%1 (uid %2), as the helper saw the connection")
                                    .arg(change.user.isEmpty() ? tr("no name") : change.user)
                                    .arg(*change.uid)
                              : tr("A change the helper made itself");
        case ChangeColumn: {
            QStringList lines {tr("Revision %1 → %2").arg(change.oldRevision, change.newRevision)};
            lines.append(changeText(change).split(QStringLiteral("; ")));
            return lines.join(QLatin1Char('\n'));
        }
        default:
            return {};
        }
    }
    if (role == Qt::AccessibleTextRole && index.column() == ChangeColumn)
        return changeText(change)
            .replace(QStringLiteral("+ "), tr("added "))
            .replace(QStringLiteral("− "), tr("removed "));
    return {};
}

QVariant PolicyHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case WhoColumn:
        return tr("Who");
    case SourceColumn:
        return tr("Through");
    case ChangeColumn:
        return tr("Change");
    case RulesColumn:
        return tr("Rules");
    default:
        return {};
    }
}

} // namespace airlock

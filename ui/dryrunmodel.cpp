#include "ui/dryrunmodel.h"

#include "ui/policytext.h"

#include <QBrush>
#include <QColor>
#include <QJsonArray>
#include <QLocale>

namespace airlock {

DryRunModel::DryRunModel(QObject *parent) : QAbstractTableModel(parent) { }

Result<void> DryRunModel::setResult(const QJsonObject &result)
{
    const QJsonValue changes = result.value(QStringLiteral("changes"));
    if (!changes.isArray())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'changes' must be an array"));
    const QString sandbox = result.value(QStringLiteral("name")).toString();
    QList<Change> rows;
    for (const QJsonValue &value : changes.toArray()) {
        const QJsonObject object = value.toObject();
        auto event =
            EgressEntry::fromJson(object.value(QStringLiteral("event")).toObject(), sandbox);
        if (!event)
            return fail(ErrorKind::InvalidParams, QStringLiteral("a change without a valid event"));
        const QJsonObject before = object.value(QStringLiteral("before")).toObject();
        const QJsonObject after = object.value(QStringLiteral("after")).toObject();
        rows.append({*event,
                     before.value(QStringLiteral("verdict")).toString() == QLatin1String("allowed"),
                     before.value(QStringLiteral("reason")).toString(),
                     before.value(QStringLiteral("rule")).toInt(-1),
                     after.value(QStringLiteral("verdict")).toString() == QLatin1String("allowed"),
                     after.value(QStringLiteral("reason")).toString(),
                     after.value(QStringLiteral("rule")).toInt(-1)});
    }
    beginResetModel();
    m_rows = rows;
    m_evaluated = result.value(QStringLiteral("evaluated")).toInt();
    endResetModel();
    return {};
}

void DryRunModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_evaluated = 0;
    endResetModel();
}

int DryRunModel::newlyAllowed() const
{
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(),
                             [](const Change &c) { return c.afterAllowed && !c.beforeAllowed; }));
}

int DryRunModel::newlyDenied() const
{
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(),
                             [](const Change &c) { return !c.afterAllowed && c.beforeAllowed; }));
}

int DryRunModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int DryRunModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DryRunModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Change &change = m_rows.at(index.row());
    const auto reasonWithRule = [](const QString &reason, int rule) {
        return rule >= 0 ? tr("%1 (rule %2)").arg(PolicyText::reasonText(reason)).arg(rule + 1)
                         : PolicyText::reasonText(reason);
    };
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn:
            return QLocale().toString(change.event.time.toLocalTime(),
                                      QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        case NameColumn:
            return change.event.port > 0 && change.event.port != 443
                ? QStringLiteral("%1:%2").arg(change.event.destination()).arg(change.event.port)
                : change.event.destination();
        case MethodColumn:
            return change.event.method;
        case PathColumn:
            return change.event.path;
        case ChangeColumn:
            return change.afterAllowed ? tr("Newly allowed") : tr("Newly denied");
        case NowColumn:
            return reasonWithRule(change.beforeReason, change.beforeRule);
        case AfterColumn:
            return reasonWithRule(change.afterReason, change.afterRule);
        }
        return {};
    case Qt::ForegroundRole:
        if (index.column() == ChangeColumn)
            return QBrush(change.afterAllowed ? QColor(0x2e, 0x7d, 0x32)
                                              : QColor(0xc6, 0x28, 0x28));
        return {};
    case NewlyAllowedRole:
        return change.afterAllowed;
    default:
        return {};
    }
}

QVariant DryRunModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case NameColumn:
        return tr("Name");
    case MethodColumn:
        return tr("Method");
    case PathColumn:
        return tr("Path");
    case ChangeColumn:
        return tr("Change");
    case NowColumn:
        return tr("Applied policy");
    case AfterColumn:
        return tr("Edited policy");
    default:
        return {};
    }
}

} // namespace airlock

#include "ui/destinationcountmodel.h"

#include <QLocale>

namespace airlock {

DestinationCountModel::DestinationCountModel(QObject *parent) : QAbstractTableModel(parent) { }

void DestinationCountModel::add(const EgressEntry &entry)
{
    QString name = entry.destination();
    if (name.isEmpty())
        name = tr("(none)");
    const QString key = entry.sandbox + QLatin1Char('\n') + name;
    auto found = m_index.constFind(key);
    int row;
    if (found == m_index.constEnd()) {
        row = int(m_rows.size());
        beginInsertRows({}, row, row);
        m_rows.append({entry.sandbox, name, 0, 0, {}, {}});
        m_index.insert(key, row);
        endInsertRows();
    } else {
        row = *found;
    }
    Destination &destination = m_rows[row];
    (entry.allowed ? destination.allowed : destination.denied) += entry.count;
    if (!destination.last.isValid() || entry.time >= destination.last) {
        destination.last = entry.time;
        destination.lastReason = entry.reason;
    }
    Q_EMIT dataChanged(index(row, AllowedColumn), index(row, LastColumn));
}

void DestinationCountModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_index.clear();
    endResetModel();
}

QList<DestinationCountModel::Destination>
DestinationCountModel::destinations(const QString &sandbox) const
{
    QList<Destination> result;
    for (const Destination &destination : m_rows) {
        if (destination.sandbox == sandbox)
            result.append(destination);
    }
    return result;
}

int DestinationCountModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int DestinationCountModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DestinationCountModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Destination &destination = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SandboxColumn:
            return destination.sandbox;
        case DestinationColumn:
            return destination.name;
        case AllowedColumn:
            return destination.allowed;
        case DeniedColumn:
            return destination.denied;
        case LastColumn:
            return QLocale().toString(destination.last.toLocalTime(), QStringLiteral("HH:mm:ss"));
        }
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == AllowedColumn || index.column() == DeniedColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SandboxRole:
        return destination.sandbox;
    case DestinationRole:
        return destination.name;
    case AllowedCountRole:
        return destination.allowed;
    case DeniedCountRole:
        return destination.denied;
    default:
        return {};
    }
}

QVariant DestinationCountModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SandboxColumn:
        return tr("Sandbox");
    case DestinationColumn:
        return tr("Destination");
    case AllowedColumn:
        return tr("Allowed");
    case DeniedColumn:
        return tr("Denied");
    case LastColumn:
        return tr("Last seen");
    default:
        return {};
    }
}

} // namespace airlock

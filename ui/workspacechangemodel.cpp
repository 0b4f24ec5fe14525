#include "ui/workspacechangemodel.h"

#include "ui/guesttext.h"
#include "ui/refusaltext.h"

#include <QColor>

namespace airlock {

using workspace::WorkspaceChange;

WorkspaceChangeModel::WorkspaceChangeModel(QObject *parent) : QAbstractTableModel(parent) { }

void WorkspaceChangeModel::setChanges(QList<WorkspaceChange> changes)
{
    beginResetModel();
    m_changes = std::move(changes);
    m_accepted.clear();
    for (const WorkspaceChange &change : std::as_const(m_changes))
        m_accepted.append(change.status != WorkspaceChange::Status::Refused);
    endResetModel();
    emit acceptedChanged();
}

const WorkspaceChange *WorkspaceChangeModel::changeAt(int row) const
{
    return row >= 0 && row < m_changes.size() ? &m_changes.at(row) : nullptr;
}

int WorkspaceChangeModel::rowOf(const QString &path) const
{
    for (int row = 0; row < m_changes.size(); ++row)
        if (m_changes.at(row).path == path)
            return row;
    return -1;
}

void WorkspaceChangeModel::setAllAccepted(bool accepted)
{
    for (int row = 0; row < m_changes.size(); ++row)
        m_accepted[row] = accepted && m_changes.at(row).status != WorkspaceChange::Status::Refused;
    if (!m_changes.isEmpty())
        emit dataChanged(index(0, PathColumn), index(int(m_changes.size()) - 1, PathColumn),
                         {Qt::CheckStateRole});
    emit acceptedChanged();
}

void WorkspaceChangeModel::setAccepted(int row, bool accepted)
{
    setData(index(row, PathColumn), accepted ? Qt::Checked : Qt::Unchecked, Qt::CheckStateRole);
}

QSet<QString> WorkspaceChangeModel::accepted() const
{
    QSet<QString> paths;
    for (int row = 0; row < m_changes.size(); ++row)
        if (m_accepted.at(row))
            paths.insert(m_changes.at(row).path);
    return paths;
}

QString WorkspaceChangeModel::statusText(WorkspaceChange::Status status)
{
    switch (status) {
    case WorkspaceChange::Status::Added:
        return tr("Added");
    case WorkspaceChange::Status::Modified:
        return tr("Modified");
    case WorkspaceChange::Status::Deleted:
        return tr("Deleted");
    case WorkspaceChange::Status::Refused:
        return tr("Refused");
    }
    return {};
}

int WorkspaceChangeModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_changes.size());
}

int WorkspaceChangeModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant WorkspaceChangeModel::data(const QModelIndex &index, int role) const
{
    const WorkspaceChange *change = changeAt(index.row());
    if (!change)
        return {};
    const bool refused = change->status == WorkspaceChange::Status::Refused;
    if (role == Qt::CheckStateRole && index.column() == PathColumn && !refused)
        return m_accepted.at(index.row()) ? Qt::Checked : Qt::Unchecked;
    if (role == Qt::ToolTipRole && refused)
        return tr("Not taken: %1").arg(GuestText::shown(RefusalText::describe(change->summary)));
    if (role == Qt::ForegroundRole && index.column() == StatusColumn) {
        switch (change->status) {
        case WorkspaceChange::Status::Added:
            return QColor(0x1a, 0x7f, 0x37);
        case WorkspaceChange::Status::Deleted:
        case WorkspaceChange::Status::Refused:
            return QColor(0xc0, 0x39, 0x2b);
        case WorkspaceChange::Status::Modified:
            break;
        }
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case PathColumn:
        return GuestText::shown(change->path);
    case StatusColumn:
        return statusText(change->status);
    case DetailsColumn: {
        QStringList parts;
        if (refused) // the Change column says Refused; this one why
            return GuestText::shown(RefusalText::describe(change->summary));
        if (change->binary)
            parts << tr("binary");
        if (!change->summary.isEmpty())
            parts << GuestText::shown(change->summary);
        return parts.join(QStringLiteral(", "));
    }
    default:
        break;
    }
    return {};
}

bool WorkspaceChangeModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    const WorkspaceChange *change = changeAt(index.row());
    if (!change || role != Qt::CheckStateRole || index.column() != PathColumn
        || change->status == WorkspaceChange::Status::Refused)
        return false;
    m_accepted[index.row()] = value.toInt() == Qt::Checked;
    emit dataChanged(index, index, {Qt::CheckStateRole});
    emit acceptedChanged();
    return true;
}

Qt::ItemFlags WorkspaceChangeModel::flags(const QModelIndex &index) const
{
    const WorkspaceChange *change = changeAt(index.row());
    if (!change)
        return Qt::NoItemFlags;
    if (change->status == WorkspaceChange::Status::Refused)
        return Qt::ItemIsEnabled; // readable, neither selectable nor checkable
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == PathColumn)
        flags |= Qt::ItemIsUserCheckable;
    return flags;
}

QVariant WorkspaceChangeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case PathColumn:
        return tr("Path");
    case StatusColumn:
        return tr("Change");
    case DetailsColumn:
        return tr("Details");
    default:
        break;
    }
    return {};
}

} // namespace airlock

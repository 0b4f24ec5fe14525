#pragma once

#include "ui/egressentry.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>

namespace airlock {

/// Per-destination counts of egress decisions: one row per (sandbox, destination name) with
/// allowed and denied hits and the last time seen. Feeds the egress view's counts table and
/// the egress map.
class DestinationCountModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        SandboxColumn,
        DestinationColumn,
        AllowedColumn,
        DeniedColumn,
        LastColumn,
        ColumnCount
    };
    enum Role {
        SandboxRole = Qt::UserRole + 1, ///< QString
        DestinationRole, ///< QString
        AllowedCountRole, ///< int
        DeniedCountRole, ///< int
    };

    struct Destination
    {
        QString sandbox;
        QString name;
        qint64 allowed = 0;
        qint64 denied = 0;
        QDateTime last;
        QString lastReason; ///< reason of the newest decision
    };

    explicit DestinationCountModel(QObject *parent = nullptr);

    /// Counts one decision (entries without a destination name are counted under "(none)").
    void add(const EgressEntry &entry);
    void clear();
    /// The destinations of `sandbox`, in order of first appearance.
    QList<Destination> destinations(const QString &sandbox) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<Destination> m_rows;
    QHash<QString, int> m_index; // "sandbox\nname" -> row
};

} // namespace airlock

#pragma once

#include "core/model/error.h"
#include "ui/egressentry.h"

#include <QAbstractTableModel>
#include <QList>

namespace airlock {

/// The answer of `policy.dryRun`: past requests whose verdict the edited policy would change.
/// Columns: Time, Name, Method, Path, Change ("Newly allowed" / "Newly denied"), Now (the
/// applied policy's reason) and After (the edited policy's reason).
class DryRunModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        TimeColumn,
        NameColumn,
        MethodColumn,
        PathColumn,
        ChangeColumn,
        NowColumn,
        AfterColumn,
        ColumnCount
    };
    enum Role { NewlyAllowedRole = Qt::UserRole + 1 };

    struct Change
    {
        EgressEntry event;
        bool beforeAllowed = false;
        QString beforeReason;
        int beforeRule = -1;
        bool afterAllowed = false;
        QString afterReason;
        int afterRule = -1;
    };

    explicit DryRunModel(QObject *parent = nullptr);

    /// Reads `{name, evaluated, changes: [{event, before, after}]}`.
    Result<void> setResult(const QJsonObject &result);
    void clear();
    int evaluated() const { return m_evaluated; }
    int newlyAllowed() const;
    int newlyDenied() const;
    const Change &changeAt(int row) const { return m_rows.at(row); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<Change> m_rows;
    int m_evaluated = 0;
};

} // namespace airlock

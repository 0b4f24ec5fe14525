#pragma once

#include "core/workspace/workspacediff.h"

#include <QAbstractTableModel>
#include <QSet>

namespace airlock {

/// The changes of a WorkspaceReview for the review dialog: status, path, details, with a
/// check box per change (all checked at first: a person unticks what not to take). Refused
/// changes are shown with their reason but cannot be checked or selected: apply() would never
/// write them.
class WorkspaceChangeModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { PathColumn, StatusColumn, DetailsColumn, ColumnCount };

    explicit WorkspaceChangeModel(QObject *parent = nullptr);

    void setChanges(QList<workspace::WorkspaceChange> changes);
    const workspace::WorkspaceChange *changeAt(int row) const;
    int rowOf(const QString &path) const;
    /// Checks (or unchecks) every change that can be taken.
    void setAllAccepted(bool accepted);
    void setAccepted(int row, bool accepted);
    /// The paths checked: WorkspaceReview::apply()'s argument.
    QSet<QString> accepted() const;
    static QString statusText(workspace::WorkspaceChange::Status status);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

signals:
    void acceptedChanged();

private:
    QList<workspace::WorkspaceChange> m_changes;
    QList<bool> m_accepted;
};

} // namespace airlock

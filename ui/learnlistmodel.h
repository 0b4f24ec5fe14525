#pragma once

#include "core/model/egresspolicy.h"
#include "ui/egressentry.h"

#include <QAbstractTableModel>
#include <QSet>

namespace airlock {

/// Learn mode: for sandboxes in learn mode, destinations the policy denied are collected here
/// (they stay denied) for a person to review: Sandbox, Host, Port, Methods, Example path,
/// Count. Selected rows become rules in one step (rulesFor), which the policy editor shows as
/// pending changes; nothing is allowed until the person applies them.
class LearnListModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        SandboxColumn,
        HostColumn,
        PortColumn,
        MethodsColumn,
        PathColumn,
        CountColumn,
        ColumnCount
    };
    enum Role { SandboxRole = Qt::UserRole + 1 };

    struct Candidate
    {
        QString sandbox;
        QString host; ///< canonical name
        quint16 port = EgressRule::kDefaultPort;
        QStringList methods; ///< methods seen, in order of first appearance
        QString examplePath;
        int count = 0;
    };

    explicit LearnListModel(QObject *parent = nullptr);

    void setLearning(const QString &sandbox, bool on);
    bool isLearning(const QString &sandbox) const { return m_learning.contains(sandbox); }
    /// Collects `entry` when its sandbox is learning and the policy denied it for its host,
    /// port, method or path (malformed requests and other refusals are not learnable).
    void record(const EgressEntry &entry);
    /// Removes the rows (e.g. after they were promoted or dismissed).
    void removeRows(QList<int> rows);
    const Candidate &candidateAt(int row) const { return m_rows.at(row); }
    /// One rule per row: the host (exact), its port, the methods seen (none when a DNS or TLS
    /// denial said nothing about methods), any path; the comment says it was learned.
    QList<EgressRule> rulesFor(const QList<int> &rows) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<Candidate> m_rows;
    QSet<QString> m_learning;
};

} // namespace airlock

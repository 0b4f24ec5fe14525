#pragma once

#include "core/model/egresspolicy.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonArray>
#include <QList>

#include <optional>

namespace airlock {

/// The answer of `policy.history` (docs/protocol.md): the recorded changes of one sandbox's
/// policy, newest first. Columns: Time (local), Who (the user the helper saw, with the uid),
/// Through (the change's source in words: *Policy editor*, *Allow? prompt*, *airlockctl*,
/// *Revert*, *Fork*; another source as it is), Change (`+ rule` and `− rule`, joined by "; ")
/// and Rules (how many the new policy has).
class PolicyHistoryModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { TimeColumn, WhoColumn, SourceColumn, ChangeColumn, RulesColumn, ColumnCount };

    struct Change
    {
        qint64 seq = 0;
        QDateTime time;
        std::optional<qint64> uid;
        QString user;
        QString source;
        QString oldRevision;
        QString newRevision;
        int rules = 0;
        QList<EgressRule> added;
        QList<EgressRule> removed;
        int addedCount = 0;
        int removedCount = 0;
        std::optional<EgressPolicy> policy; ///< the whole new policy, when the helper kept it
    };

    explicit PolicyHistoryModel(QObject *parent = nullptr);

    /// Reads the `changes` of a `policy.history` answer; entries that do not parse are left
    /// out (a newer helper's), never shown half.
    void setChanges(const QJsonArray &changes);
    void clear();
    const Change &changeAt(int row) const { return m_rows.at(row); }
    /// The source in words, e.g. "Allow? prompt" for `allow-prompt`.
    static QString sourceText(const QString &source);
    /// "+ a.test:443; − b.test:443", with "and N more" when the helper listed fewer.
    static QString changeText(const Change &change);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<Change> m_rows;
};

} // namespace airlock

#pragma once

#include "core/model/error.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonObject>
#include <QList>

namespace airlock {

/// The helper's secrets as `secret.list` reports them: Name, Owner, Fingerprint, Last use,
/// Uses, Bindings. Owner is the user who stored the secret (`owner`, or "uid N" for a uid
/// without a name on the helper's host): only they or root may replace, delete or bind it. Holds no
/// value (no method returns one, docs/redteam-cases.md principle 7): only the metadata of
/// SecretInfo.
class SecretListModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        OwnerColumn,
        FingerprintColumn,
        LastUsedColumn,
        UseCountColumn,
        BindingsColumn,
        ColumnCount
    };
    enum Role { NameRole = Qt::UserRole + 1 };

    struct Secret
    {
        QString name;
        QString fingerprint;
        QString owner; ///< user name; empty when the helper knows none (see ownerUid)
        qint64 ownerUid = -1; ///< -1: a helper that does not report owners
        QDateTime updated;
        QDateTime lastUsed;
        qint64 useCount = 0;
        int bindings = 0;
        QString problem; ///< set for a damaged vault file
    };

    explicit SecretListModel(QObject *parent = nullptr);

    /// Replaces the rows with a `secret.list` result ({secrets: [SecretInfo]}).
    Result<void> resetFromList(const QJsonObject &listResult);
    /// Inserts or replaces one SecretInfo (the `secret.set` result).
    void upsert(const QJsonObject &info);
    void remove(const QString &name);
    int rowOf(const QString &name) const;
    const Secret &secretAt(int row) const { return m_rows.at(row); }
    QStringList names() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<Secret> m_rows; // ordered by name
};

} // namespace airlock

#include "ui/secretlistmodel.h"

#include <QBrush>
#include <QColor>
#include <QJsonArray>
#include <QLocale>

namespace airlock {

namespace {

QDateTime readTime(const QJsonValue &value)
{
    if (value.isString())
        return QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
    return {};
}

SecretListModel::Secret fromInfo(const QJsonObject &info)
{
    SecretListModel::Secret secret;
    secret.name = info.value(QStringLiteral("name")).toString();
    secret.fingerprint = info.value(QStringLiteral("fingerprint")).toString();
    secret.owner = info.value(QStringLiteral("owner")).toString();
    secret.ownerUid = info.value(QStringLiteral("ownerUid")).toInteger(-1);
    secret.updated = readTime(info.value(QStringLiteral("updated")));
    secret.lastUsed = readTime(info.value(QStringLiteral("lastUsed")));
    secret.useCount = info.value(QStringLiteral("useCount")).toInteger();
    secret.bindings = int(info.value(QStringLiteral("bindings")).toArray().size());
    secret.problem = info.value(QStringLiteral("problem")).toString();
    return secret;
}

} // namespace

SecretListModel::SecretListModel(QObject *parent) : QAbstractTableModel(parent) { }

Result<void> SecretListModel::resetFromList(const QJsonObject &listResult)
{
    const QJsonValue secrets = listResult.value(QStringLiteral("secrets"));
    if (!secrets.isArray())
        return fail(ErrorKind::InvalidParams, QStringLiteral("field 'secrets' must be an array"));
    QList<Secret> rows;
    for (const QJsonValue &value : secrets.toArray()) {
        Secret secret = fromInfo(value.toObject());
        if (!secret.name.isEmpty())
            rows.append(secret);
    }
    std::sort(rows.begin(), rows.end(),
              [](const Secret &a, const Secret &b) { return a.name < b.name; });
    beginResetModel();
    m_rows = rows;
    endResetModel();
    return {};
}

void SecretListModel::upsert(const QJsonObject &info)
{
    const Secret secret = fromInfo(info);
    if (secret.name.isEmpty())
        return;
    const int existing = rowOf(secret.name);
    if (existing >= 0) {
        m_rows[existing] = secret;
        Q_EMIT dataChanged(index(existing, 0), index(existing, ColumnCount - 1));
        return;
    }
    const auto at = std::lower_bound(m_rows.begin(), m_rows.end(), secret.name,
                                     [](const Secret &s, const QString &n) { return s.name < n; });
    const int row = int(at - m_rows.begin());
    beginInsertRows({}, row, row);
    m_rows.insert(row, secret);
    endInsertRows();
}

void SecretListModel::remove(const QString &name)
{
    const int row = rowOf(name);
    if (row < 0)
        return;
    beginRemoveRows({}, row, row);
    m_rows.removeAt(row);
    endRemoveRows();
}

int SecretListModel::rowOf(const QString &name) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).name == name)
            return row;
    }
    return -1;
}

QStringList SecretListModel::names() const
{
    QStringList names;
    for (const Secret &secret : m_rows)
        names.append(secret.name);
    return names;
}

int SecretListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SecretListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SecretListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Secret &secret = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return secret.name;
        case OwnerColumn:
            if (!secret.owner.isEmpty())
                return secret.owner;
            return secret.ownerUid >= 0 ? tr("uid %1").arg(secret.ownerUid) : QString();
        case FingerprintColumn:
            return secret.problem.isEmpty() ? secret.fingerprint : tr("damaged");
        case LastUsedColumn:
            return secret.lastUsed.isValid()
                ? QLocale().toString(secret.lastUsed.toLocalTime(), QLocale::ShortFormat)
                : tr("never");
        case UseCountColumn:
            return secret.useCount;
        case BindingsColumn:
            return secret.bindings;
        }
        return {};
    case Qt::ToolTipRole:
        if (!secret.problem.isEmpty())
            return secret.problem;
        if (index.column() == OwnerColumn && secret.ownerUid >= 0)
            return tr("Stored by uid %1. Only its owner or root may replace, delete or bind "
                      "it.")
                .arg(secret.ownerUid);
        if (index.column() == FingerprintColumn)
            return tr("First 16 hex digits of the value's SHA-256: tells secrets apart, never "
                      "shows the value.");
        return {};
    case Qt::ForegroundRole:
        if (!secret.problem.isEmpty())
            return QBrush(QColor(0xc6, 0x28, 0x28));
        return {};
    case NameRole:
        return secret.name;
    default:
        return {};
    }
}

QVariant SecretListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Name");
    case OwnerColumn:
        return tr("Owner");
    case FingerprintColumn:
        return tr("Fingerprint");
    case LastUsedColumn:
        return tr("Last use");
    case UseCountColumn:
        return tr("Uses");
    case BindingsColumn:
        return tr("Bindings");
    default:
        return {};
    }
}

} // namespace airlock

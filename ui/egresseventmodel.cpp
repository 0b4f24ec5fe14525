#include "ui/egresseventmodel.h"

#include "core/protocol/methods.h"
#include "ui/policytext.h"

#include <algorithm>
#include <climits>

#include <QBrush>
#include <QColor>
#include <QJsonArray>
#include <QLocale>

namespace airlock {

EgressEventModel::EgressEventModel(QObject *parent) : QAbstractTableModel(parent) { }

QString EgressEventModel::reasonText(const EgressEntry &entry)
{
    const QString reason = PolicyText::reasonText(entry.reason);
    if (entry.count <= 1)
        return reason;
    return tr("%1 (%n times in a second)", nullptr, int(std::min<qint64>(entry.count, INT_MAX)))
        .arg(reason);
}

std::optional<EgressEntry> EgressEventModel::handleNotification(const QString &method,
                                                                const QJsonObject &params)
{
    if (method != QLatin1String(protocol::notification::EgressEvent))
        return std::nullopt;
    const qint64 seq = params.value(QStringLiteral("seq")).toInteger(-1);
    auto entry = EgressEntry::fromJson(params.value(QStringLiteral("event")).toObject(),
                                       params.value(QStringLiteral("sandbox")).toString(), seq);
    if (!entry || !addEntry(*entry, true))
        return std::nullopt;
    return entry;
}

int EgressEventModel::addHistory(const QJsonObject &historyResult)
{
    const QString sandbox = historyResult.value(QStringLiteral("name")).toString();
    QList<EgressEntry> fresh;
    for (const QJsonValue &value : historyResult.value(QStringLiteral("events")).toArray()) {
        const QJsonObject record = value.toObject();
        auto entry =
            EgressEntry::fromJson(record.value(QStringLiteral("event")).toObject(), sandbox,
                                  record.value(QStringLiteral("seq")).toInteger(-1));
        if (entry && (entry->seq < 0 || !m_seqs.contains(entry->seq)))
            fresh.append(*entry);
    }
    if (fresh.isEmpty())
        return 0;
    // History may arrive after live events: insert everything in time order once.
    QList<EgressEntry> merged = m_entries + fresh;
    std::stable_sort(merged.begin(), merged.end(),
                     [](const EgressEntry &a, const EgressEntry &b) { return a.time < b.time; });
    if (merged.size() > kMaxRows)
        merged = merged.mid(merged.size() - kMaxRows);
    beginResetModel();
    m_entries = merged;
    m_seqs.clear();
    for (const EgressEntry &entry : std::as_const(m_entries)) {
        if (entry.seq >= 0)
            m_seqs.insert(entry.seq);
    }
    endResetModel();
    for (const EgressEntry &entry : std::as_const(fresh))
        Q_EMIT entryAdded(entry, false);
    return int(fresh.size());
}

bool EgressEventModel::addEntry(const EgressEntry &entry, bool live)
{
    if (entry.seq >= 0 && m_seqs.contains(entry.seq))
        return false;
    if (m_entries.size() >= kMaxRows) {
        beginRemoveRows({}, 0, 0);
        if (m_entries.constFirst().seq >= 0)
            m_seqs.remove(m_entries.constFirst().seq);
        m_entries.removeFirst();
        endRemoveRows();
    }
    const int row = int(m_entries.size());
    beginInsertRows({}, row, row);
    m_entries.append(entry);
    if (entry.seq >= 0)
        m_seqs.insert(entry.seq);
    endInsertRows();
    Q_EMIT entryAdded(entry, live);
    return true;
}

void EgressEventModel::clear()
{
    beginResetModel();
    m_entries.clear();
    m_seqs.clear();
    endResetModel();
}

int EgressEventModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

int EgressEventModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EgressEventModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const EgressEntry &entry = m_entries.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn:
            return QLocale().toString(entry.time.toLocalTime(), QStringLiteral("HH:mm:ss"));
        case SandboxColumn:
            return entry.sandbox;
        case NameColumn:
            return entry.port > 0 && entry.port != 443
                ? QStringLiteral("%1:%2").arg(entry.destination()).arg(entry.port)
                : entry.destination();
        case SniHostColumn:
            return entry.sniAndHost();
        case MethodColumn:
            return entry.method;
        case PathColumn:
            return entry.path;
        case VerdictColumn:
            return entry.allowed ? tr("Allowed") : tr("Denied");
        case ReasonColumn:
            return reasonText(entry);
        }
        return {};
    case Qt::ToolTipRole:
        if (index.column() == TimeColumn)
            return QLocale().toString(entry.time.toLocalTime(), QLocale::LongFormat);
        // The reason in full (the column is often narrow), then the gateway's detail.
        if (index.column() == ReasonColumn || index.column() == VerdictColumn)
            return entry.detail.isEmpty() ? reasonText(entry)
                                          : tr("%1: %2").arg(reasonText(entry), entry.detail);
        return entry.detail.isEmpty() ? QVariant() : QVariant(entry.detail);
    case Qt::ForegroundRole:
        if (index.column() == VerdictColumn)
            return QBrush(entry.allowed ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28));
        return {};
    case SandboxRole:
        return entry.sandbox;
    case AllowedRole:
        return entry.allowed;
    case DestinationRole:
        return entry.destination();
    case ReasonRole:
        return entry.reason;
    case CountRole:
        return entry.count;
    case SearchTextRole:
        return QStringList {
            entry.sandbox, entry.destination(), entry.sni,    entry.host,
            entry.method,  entry.path,          entry.reason, PolicyText::reasonText(entry.reason),
            entry.detail}
            .join(QLatin1Char('\n'));
    default:
        return {};
    }
}

QVariant EgressEventModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case SandboxColumn:
        return tr("Sandbox");
    case NameColumn:
        return tr("Name");
    case SniHostColumn:
        return tr("SNI / Host");
    case MethodColumn:
        return tr("Method");
    case PathColumn:
        return tr("Path");
    case VerdictColumn:
        return tr("Verdict");
    case ReasonColumn:
        return tr("Reason");
    default:
        return {};
    }
}

} // namespace airlock

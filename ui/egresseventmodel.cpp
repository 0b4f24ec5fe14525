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
    return tr("%1 (%n times)", nullptr, int(std::min<qint64>(entry.count, INT_MAX))).arg(reason);
}

int EgressEventModel::repeatedRow(const QList<EgressEntry> &rows, const EgressEntry &entry)
{
    // Only recent rows: a decision seen again after a pause gets a row of its own, so the table
    // still shows when it happened. Bounded, whatever the event rate.
    const qsizetype oldest = std::max<qsizetype>(0, rows.size() - kFoldScanRows);
    for (qsizetype row = rows.size() - 1; row >= oldest; --row) {
        const EgressEntry &candidate = rows.at(row);
        if (candidate.lastTime.msecsTo(entry.time) > kFoldWindowMs)
            break;
        if (candidate.sameDecision(entry))
            return int(row);
    }
    return -1;
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
    // History may arrive after live events: insert everything in time order once, with repeats
    // folded as if they had arrived live.
    QList<EgressEntry> sorted = m_entries + fresh;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const EgressEntry &a, const EgressEntry &b) { return a.time < b.time; });
    QList<EgressEntry> merged;
    merged.reserve(sorted.size());
    for (const EgressEntry &entry : std::as_const(sorted)) {
        if (const int row = repeatedRow(merged, entry); row >= 0)
            merged[row].fold(entry);
        else
            merged.append(entry);
    }
    if (merged.size() > kMaxRows)
        merged = merged.mid(merged.size() - kMaxRows);
    beginResetModel();
    m_entries = merged;
    for (const EgressEntry &entry : std::as_const(fresh))
        rememberSeq(entry.seq);
    endResetModel();
    for (const EgressEntry &entry : std::as_const(fresh))
        Q_EMIT entryAdded(entry, false);
    return int(fresh.size());
}

bool EgressEventModel::addEntry(const EgressEntry &entry, bool live)
{
    if (entry.seq >= 0 && m_seqs.contains(entry.seq))
        return false;
    if (const int row = repeatedRow(m_entries, entry); row >= 0) {
        m_entries[row].fold(entry);
        rememberSeq(entry.seq);
        Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
        Q_EMIT entryAdded(entry, live);
        return true;
    }
    if (m_entries.size() >= kMaxRows) {
        beginRemoveRows({}, 0, 0);
        m_entries.removeFirst();
        endRemoveRows();
    }
    const int row = int(m_entries.size());
    beginInsertRows({}, row, row);
    m_entries.append(entry);
    rememberSeq(entry.seq);
    endInsertRows();
    Q_EMIT entryAdded(entry, live);
    return true;
}

void EgressEventModel::rememberSeq(qint64 seq)
{
    if (seq < 0)
        return;
    m_seqs.insert(seq);
    // The helper numbers events in order, so the oldest numbers are the ones no history answer
    // brings again; forgetting them keeps the set bounded while rows fold many events.
    while (m_seqs.size() > kMaxSeqs)
        m_seqs.erase(m_seqs.begin());
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
            return QLocale().toString(entry.lastTime.toLocalTime(), QStringLiteral("HH:mm:ss"));
        case SandboxColumn:
            return entry.sandbox;
        case LayerColumn:
            return entry.layerText();
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
        if (index.column() == TimeColumn) {
            const QString last =
                QLocale().toString(entry.lastTime.toLocalTime(), QLocale::LongFormat);
            return entry.lastTime == entry.time
                ? last
                : tr("First %1, last %2")
                      .arg(QLocale().toString(entry.time.toLocalTime(), QLocale::LongFormat), last);
        }
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
        return QStringList {entry.sandbox, entry.layerText(), entry.destination(),
                            entry.sni,     entry.host,        entry.method,
                            entry.path,    entry.reason,      PolicyText::reasonText(entry.reason),
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
    case LayerColumn:
        return tr("Layer");
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

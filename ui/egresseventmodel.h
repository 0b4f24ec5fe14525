#pragma once

#include "ui/egressentry.h"

#include <QAbstractTableModel>
#include <QList>
#include <QSet>

#include <set>

namespace airlock {

/// Every egress decision the window has seen, newest last: Time, Sandbox, Layer, Name,
/// SNI / Host, Method, Path (query redacted), Verdict, Reason. Fed by `egress.event`
/// notifications (live) and `egress.history` answers (recorded); events with a known seq are
/// kept once. A repeat of a recent row's decision (EgressEntry::sameDecision, within
/// kFoldWindowMs, e.g. the A and AAAA lookups of one name or a retry loop) is folded into that
/// row, which then counts both; entryAdded still reports each event. Bounded: beyond kMaxRows
/// the oldest rows are dropped.
class EgressEventModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    static constexpr int kMaxRows = 20000;
    /// A repeat this soon after a row's last event is folded into it.
    static constexpr qint64 kFoldWindowMs = 10000;
    /// How many of the newest rows a repeat is looked for in.
    static constexpr int kFoldScanRows = 32;

    enum Column {
        TimeColumn,
        SandboxColumn,
        LayerColumn,
        NameColumn,
        SniHostColumn,
        MethodColumn,
        PathColumn,
        VerdictColumn,
        ReasonColumn,
        ColumnCount
    };
    enum Role {
        SandboxRole = Qt::UserRole + 1, ///< QString
        AllowedRole, ///< bool
        DestinationRole, ///< QString: EgressEntry::destination()
        ReasonRole, ///< QString: the stable reason name
        SearchTextRole, ///< QString: every shown field, for the text filter
        CountRole, ///< qint64: the decisions the row stands for (EgressEntry::count)
    };

    explicit EgressEventModel(QObject *parent = nullptr);

    /// Handles `egress.event` ({sandbox, seq, event}); other methods are ignored. Returns the
    /// entry when one was added.
    std::optional<EgressEntry> handleNotification(const QString &method, const QJsonObject &params);
    /// Adds the events of an `egress.history` answer ({name, events: [{seq, event}]}) that are
    /// not yet known, in time order. Returns how many were added.
    int addHistory(const QJsonObject &historyResult);
    /// Adds one entry (skipped when its seq is known). Returns false when skipped.
    bool addEntry(const EgressEntry &entry, bool live);
    void clear();

    const EgressEntry &entryAt(int row) const { return m_entries.at(row); }
    const QList<EgressEntry> &entries() const { return m_entries; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    /// An entry was added; `live` is true for notifications, false for history.
    void entryAdded(const airlock::EgressEntry &entry, bool live);

private:
    /// The reason in words; a summary adds how many decisions it stands for.
    static QString reasonText(const EgressEntry &entry);
    /// The recent row `entry` repeats (see kFoldWindowMs), or -1.
    static int repeatedRow(const QList<EgressEntry> &rows, const EgressEntry &entry);

    QList<EgressEntry> m_entries;
    /// Remembers an event's seq (ignored when -1) so that history brings it no second time.
    void rememberSeq(qint64 seq);

    static constexpr size_t kMaxSeqs = 4 * kMaxRows;
    std::set<qint64> m_seqs;
};

} // namespace airlock

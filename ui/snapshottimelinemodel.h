#pragma once

#include "core/model/snapshot.h"

#include <QAbstractItemModel>
#include <QDateTime>
#include <QHash>
#include <QPointer>
#include <QTimer>

#include <memory>

namespace airlock {

class HelperClient;

/// The snapshot tree of one sandbox as an item model: one item per snapshot, children under
/// the snapshot they descend from (a restore or a fork starts a branch), siblings oldest first.
/// Besides the sandbox's own snapshots it holds the snapshots of other sandboxes that descend
/// from them (forks, marked foreign). A snapshot whose parent is not in the tree (a fork's
/// first snapshot, seen from the fork) is a root.
///
/// Each item also has a lane (row of the timeline drawing): the oldest child continues its
/// parent's lane, every further child and every root opens a new one. Lanes are a pure
/// function of the tree, so SnapshotTimelineView only paints.
///
/// Filled from `snapshot.list` (this sandbox's, with head, schedule and retainedSince, and each
/// other sandbox's for forks and their heads) and kept current by `snapshot.changed`: creations,
/// pins and renames are applied at once, a deletion re-links the children to the parent as the
/// helper does; each change is followed by a quiet re-read for the head and the retention window.
class SnapshotTimelineModel final : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column {
        LabelColumn,
        TimeColumn,
        KindColumn,
        LogicalSizeColumn,
        NewBytesColumn,
        PauseColumn,
        PinnedColumn,
        SandboxColumn,
        ColumnCount
    };
    enum Role {
        IdRole = Qt::UserRole + 1, ///< QString
        ParentIdRole, ///< QString, empty for a root of the helper's tree
        KindRole, ///< int: SnapshotKind
        CreatedAtRole, ///< QDateTime (UTC)
        LogicalBytesRole, ///< qint64
        NewBytesRole, ///< qint64: uncompressed bytes the snapshot added to the store
        NewStoredBytesRole, ///< qint64: the same, as stored
        PauseMsRole, ///< qint64
        PinnedRole, ///< bool
        HeadRole, ///< bool: the sandbox's current state descends from this snapshot
        LaneRole, ///< int: 0.. laneCount()-1
        SandboxRole, ///< QString: the sandbox the snapshot was taken of
        ForeignRole, ///< bool: taken of another sandbox (a fork)
        SummaryRole, ///< QString: one sentence for screen readers and tooltips
    };

    explicit SnapshotTimelineModel(QObject *parent = nullptr);
    ~SnapshotTimelineModel() override;

    /// Follows `client` (may be nullptr): lists on every ready(), applies its notifications.
    void setClient(HelperClient *client);
    /// Shows `sandbox`'s tree ("" = empty model) and reads it.
    void setSandbox(const QString &sandbox);
    QString sandbox() const { return m_sandbox; }
    /// Reads the tree again (one snapshot.list per sandbox); loaded() or loadFailed() follows.
    void refresh();

    /// Replaces everything: `own` is the `snapshot.list {name}` result (`snapshots`, `head`,
    /// `schedule`, `retainedSince`), `all` any list of snapshots (other sandboxes' included:
    /// those descending from this tree are its forks; may be empty).
    /// The model is reset only when the tree's shape changed; otherwise changed fields are
    /// reported with dataChanged. InvalidParams (nothing changed) for a malformed snapshot.
    Result<void> setLists(const QJsonObject &own, const QJsonObject &all);
    /// Applies one helper notification; other methods and unrelated sandboxes are ignored.
    void handleNotification(const QString &method, const QJsonObject &params);

    /// The snapshot at `index`, or nullptr.
    const Snapshot *snapshotAt(const QModelIndex &index) const;
    QModelIndex indexOf(const QString &id, int column = 0) const;
    int snapshotCount() const { return int(m_nodes.size()); }
    /// Every item's first-column index, oldest first (the order of the time axis).
    QModelIndexList indexesByTime() const;
    int laneCount() const { return m_laneCount; }
    /// The name of the branch a lane draws: "" for the sandbox's first line, "fork: NAME" for
    /// another sandbox's snapshots, "branch" for a restore's.
    QString laneTitle(int lane) const;
    /// A sandbox forked from a snapshot here that has no snapshot of its own yet: drawn as a
    /// lane of its own from `from` to now (it is not an item: it has nothing to act on).
    struct ForkStub
    {
        QString sandbox;
        QString from; ///< the snapshot it was forked from (its head)
        int lane = -1;
        friend bool operator==(const ForkStub &, const ForkStub &) = default;
    };
    QList<ForkStub> forkStubs() const { return m_stubs; }
    /// The helper's sandboxes (its sandbox list; the shown one is skipped): refresh() reads the
    /// head of those without snapshots to find fresh forks. Re-reads when the list changed.
    void setOtherSandboxes(const QStringList &names);
    /// Heads of other sandboxes (sandbox -> snapshot id); those pointing into this tree and
    /// without snapshots here become fork stubs. refresh() calls it; public for tests.
    void setForkHeads(const QHash<QString, QString> &heads);
    QString head() const { return m_head; }
    SnapshotSchedule schedule() const { return m_schedule; }
    /// Start of the retention window as the helper reported it (invalid when unknown).
    QDateTime retainedSince() const { return m_retainedSince; }
    bool isLoaded() const { return m_loaded; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    /// "512 B", "14.5 KiB", "49.0 MiB", "1.2 GiB".
    static QString formatBytes(qint64 bytes);
    /// The label as the timeline shows it: a safety snapshot's "before restoring ID" in words
    /// ("State kept before restoring “clean”"), "(no label)" for none.
    QString labelText(const Snapshot &snapshot) const;
    /// Translated kind, e.g. "Automatic".
    static QString kindText(SnapshotKind kind);

Q_SIGNALS:
    /// A list arrived and was applied.
    void loaded();
    void loadFailed(const QString &message);
    /// Head, schedule or retention window changed (they are not item data).
    void metadataChanged();

private:
    struct Node;
    Node *nodeOf(const QModelIndex &index) const;
    QModelIndex indexOfNode(const Node *node, int column = 0) const;
    Node *parentNodeFor(const Snapshot &snapshot) const;
    bool belongsHere(const Snapshot &snapshot) const;
    int insertPosition(const Node *parent, const Snapshot &snapshot) const;
    void rebuild(const QList<Snapshot> &snapshots);
    void upsert(const Snapshot &snapshot);
    void removeSnapshot(const QString &id);
    /// Lanes from the tree; with `notify`, dataChanged(LaneRole) for items that moved.
    void assignLanes(bool notify = true);
    void scheduleReread();
    void setMetadata(const QString &head, const SnapshotSchedule &schedule,
                     const QDateTime &retainedSince);

    std::unique_ptr<Node> m_root;
    QHash<QString, Node *> m_nodes; // id -> node (owned through m_root's tree)
    QList<QString> m_laneTitles;
    QStringList m_others; // the helper's other sandboxes
    QHash<QString, QString> m_forkHeads; // other sandbox -> its head
    QList<ForkStub> m_stubs;
    int m_laneCount = 0;
    QString m_sandbox;
    QString m_head;
    SnapshotSchedule m_schedule;
    QDateTime m_retainedSince;
    QPointer<HelperClient> m_client;
    QTimer m_reread;
    quint64 m_generation = 0; // drops answers for an earlier sandbox or read
    bool m_loaded = false;
};

} // namespace airlock

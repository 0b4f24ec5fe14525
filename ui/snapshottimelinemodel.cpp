#include "ui/snapshottimelinemodel.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QFont>
#include <QJsonArray>
#include <QLocale>
#include <QSet>

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

namespace airlock {

struct SnapshotTimelineModel::Node
{
    Snapshot snapshot;
    Node *parent = nullptr;
    std::vector<std::unique_ptr<Node>> children; // oldest first
    int lane = 0;

    int row() const
    {
        if (!parent)
            return 0;
        for (size_t i = 0; i < parent->children.size(); ++i) {
            if (parent->children[i].get() == this)
                return int(i);
        }
        return 0;
    }
};

namespace {

bool olderThan(const Snapshot &a, const Snapshot &b)
{
    if (a.createdAt != b.createdAt)
        return a.createdAt < b.createdAt;
    return a.id < b.id;
}

Result<QList<Snapshot>> readSnapshots(const QJsonObject &list)
{
    QList<Snapshot> snapshots;
    for (const QJsonValue &value : list.value(QStringLiteral("snapshots")).toArray()) {
        auto snapshot = Snapshot::fromJson(value.toObject());
        AIRLOCK_TRY(snapshot);
        // Ids go back to the helper in requests: only well-formed ones are kept.
        AIRLOCK_TRY(Snapshot::validateId(snapshot->id));
        if (!snapshot->parent.isEmpty()) {
            AIRLOCK_TRY(Snapshot::validateId(snapshot->parent));
        }
        snapshots.append(*snapshot);
    }
    return snapshots;
}

} // namespace

SnapshotTimelineModel::SnapshotTimelineModel(QObject *parent)
    : QAbstractItemModel(parent), m_root(std::make_unique<Node>())
{
    // Several notifications come in a burst (a restore: the safety snapshot, then the head
    // moves); one re-read after them is enough.
    m_reread.setParent(this);
    m_reread.setObjectName(QStringLiteral("reread")); // tests wait for it
    m_reread.setSingleShot(true);
    m_reread.setInterval(150);
    connect(&m_reread, &QTimer::timeout, this, &SnapshotTimelineModel::refresh);
}

SnapshotTimelineModel::~SnapshotTimelineModel() = default;

void SnapshotTimelineModel::setClient(HelperClient *client)
{
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    m_client = client;
    if (client) {
        connect(client, &HelperClient::notificationReceived, this,
                &SnapshotTimelineModel::handleNotification);
        connect(client, &HelperClient::ready, this, [this] {
            m_client->call(QString::fromLatin1(protocol::method::EventsSubscribe), {},
                           [](const Result<QJsonValue> &) {});
            refresh();
        });
    }
    refresh();
}

void SnapshotTimelineModel::setSandbox(const QString &sandbox)
{
    if (sandbox == m_sandbox)
        return;
    m_sandbox = sandbox;
    m_loaded = false;
    beginResetModel();
    m_root = std::make_unique<Node>();
    m_nodes.clear();
    m_laneTitles.clear();
    m_laneCount = 0;
    m_forkHeads.clear();
    m_stubs.clear();
    endResetModel();
    setMetadata({}, {}, {});
    refresh();
}

void SnapshotTimelineModel::refresh()
{
    const quint64 generation = ++m_generation;
    if (!m_client || m_sandbox.isEmpty() || m_client->state() != HelperClient::State::Ready)
        return;
    // One snapshot.list per sandbox rather than the unfiltered list, which grows with every
    // sandbox's history toward the 1 MiB message limit. The other sandboxes' lists give the
    // forks' snapshots and, through their heads, the forks that have none yet. Everything is
    // applied together once the last answer is in.
    struct Pending
    {
        std::optional<QJsonObject> own;
        QJsonArray others; // every other sandbox's snapshots
        QHash<QString, QString> heads; // other sandbox -> head
        int waiting = 0;
        bool failed = false;
    };
    auto pending = std::make_shared<Pending>();
    QStringList others = m_others;
    others.removeAll(m_sandbox);
    pending->waiting = 1 + int(others.size());
    QPointer<SnapshotTimelineModel> self(this);
    auto finish = [self, pending, generation] {
        if (!self || generation != self->m_generation || pending->failed || --pending->waiting > 0)
            return;
        const QJsonObject own = *pending->own;
        QJsonArray all = own.value(QStringLiteral("snapshots")).toArray();
        for (const QJsonValue &value : std::as_const(pending->others))
            all.append(value);
        if (auto applied = self->setLists(own, {{QStringLiteral("snapshots"), all}}); !applied) {
            Q_EMIT self->loadFailed(applied.error().message);
            return;
        }
        self->setForkHeads(pending->heads);
    };
    const QString method = QString::fromLatin1(protocol::method::SnapshotList);
    m_client->call(method, {{QStringLiteral("name"), m_sandbox}},
                   [self, pending, finish, generation](const Result<QJsonValue> &result) {
                       if (!self || generation != self->m_generation)
                           return;
                       if (!result) {
                           pending->failed = true;
                           Q_EMIT self->loadFailed(result.error().message);
                           return;
                       }
                       pending->own = result->toObject();
                       finish();
                   });
    for (const QString &name : std::as_const(others)) {
        m_client->call(method, {{QStringLiteral("name"), name}},
                       [pending, finish, name](const Result<QJsonValue> &result) {
                           // A sandbox deleted meanwhile just has nothing to add.
                           if (result) {
                               const QJsonObject list = result->toObject();
                               for (const QJsonValue &value :
                                    list.value(QStringLiteral("snapshots")).toArray())
                                   pending->others.append(value);
                               const QString head = list.value(QStringLiteral("head")).toString();
                               if (!head.isEmpty())
                                   pending->heads.insert(name, head);
                           }
                           finish();
                       });
    }
}

void SnapshotTimelineModel::setOtherSandboxes(const QStringList &names)
{
    QStringList others = names; // the shown sandbox is skipped where they are used
    others.sort();
    if (others == m_others)
        return;
    m_others = others;
    scheduleReread();
}

void SnapshotTimelineModel::setForkHeads(const QHash<QString, QString> &heads)
{
    m_forkHeads = heads;
    const QList<ForkStub> before = m_stubs;
    const int lanesBefore = m_laneCount;
    assignLanes();
    if (m_stubs != before || m_laneCount != lanesBefore)
        Q_EMIT metadataChanged();
}

Result<void> SnapshotTimelineModel::setLists(const QJsonObject &own, const QJsonObject &all)
{
    auto ownSnapshots = readSnapshots(own);
    AIRLOCK_TRY(ownSnapshots);
    auto allSnapshots = readSnapshots(all);
    AIRLOCK_TRY(allSnapshots);
    SnapshotSchedule schedule;
    if (own.value(QStringLiteral("schedule")).isObject()) {
        auto read = SnapshotSchedule::fromJson(own.value(QStringLiteral("schedule")).toObject());
        AIRLOCK_TRY(read);
        schedule = *read;
    }
    const QDateTime retainedSince = QDateTime::fromString(
        own.value(QStringLiteral("retainedSince")).toString(), Qt::ISODateWithMs);

    // This sandbox's snapshots, then every other sandbox's that descends from one of them.
    QList<Snapshot> wanted = *ownSnapshots;
    QSet<QString> ids;
    for (const Snapshot &snapshot : std::as_const(wanted))
        ids.insert(snapshot.id);
    std::sort(allSnapshots->begin(), allSnapshots->end(), olderThan);
    for (bool grew = true; grew;) {
        grew = false;
        for (const Snapshot &snapshot : std::as_const(*allSnapshots)) {
            if (!ids.contains(snapshot.id) && !snapshot.parent.isEmpty()
                && ids.contains(snapshot.parent)) {
                ids.insert(snapshot.id);
                wanted.append(snapshot);
                grew = true;
            }
        }
    }

    // The same snapshots with the same parents: only fields changed.
    bool sameShape = ids.size() == m_nodes.size();
    for (auto it = wanted.cbegin(); sameShape && it != wanted.cend(); ++it) {
        const Node *node = m_nodes.value(it->id);
        const QString inTree = ids.contains(it->parent) ? it->parent : QString();
        sameShape = node
            && (node->parent == m_root.get() ? QString() : node->parent->snapshot.id) == inTree;
    }
    if (sameShape) {
        for (const Snapshot &snapshot : std::as_const(wanted)) {
            Node *node = m_nodes.value(snapshot.id);
            if (node->snapshot == snapshot)
                continue;
            node->snapshot = snapshot;
            Q_EMIT dataChanged(indexOfNode(node, 0), indexOfNode(node, ColumnCount - 1));
        }
    } else {
        rebuild(wanted);
    }
    setMetadata(own.value(QStringLiteral("head")).toString(), schedule, retainedSince);
    m_loaded = true;
    Q_EMIT loaded();
    return {};
}

void SnapshotTimelineModel::setMetadata(const QString &head, const SnapshotSchedule &schedule,
                                        const QDateTime &retainedSince)
{
    if (head == m_head && schedule == m_schedule && retainedSince == m_retainedSince)
        return;
    const QString oldHead = std::exchange(m_head, head);
    m_schedule = schedule;
    m_retainedSince = retainedSince;
    if (oldHead != head) {
        for (const QString &id : {oldHead, head}) {
            if (const Node *node = m_nodes.value(id))
                Q_EMIT dataChanged(indexOfNode(node, 0), indexOfNode(node, ColumnCount - 1));
        }
    }
    Q_EMIT metadataChanged();
}

void SnapshotTimelineModel::handleNotification(const QString &method, const QJsonObject &params)
{
    if (method != QLatin1String(protocol::notification::SnapshotChanged) || m_sandbox.isEmpty())
        return;
    const QString sandbox = params.value(QStringLiteral("sandbox")).toString();
    if (params.contains(QStringLiteral("removed"))) {
        const QString id = params.value(QStringLiteral("removed")).toString();
        if (m_nodes.contains(id)) {
            removeSnapshot(id);
            scheduleReread();
        } else if (sandbox == m_sandbox) {
            scheduleReread();
        }
        return;
    }
    auto snapshot = readSnapshots(
        {{QStringLiteral("snapshots"), QJsonArray {params.value(QStringLiteral("snapshot"))}}});
    if (!snapshot || snapshot->isEmpty()) {
        Q_EMIT loadFailed(snapshot ? QStringLiteral("snapshot.changed without a snapshot")
                                   : snapshot.error().message);
        return;
    }
    if (!belongsHere(snapshot->constFirst()))
        return;
    upsert(snapshot->constFirst());
    scheduleReread();
}

void SnapshotTimelineModel::scheduleReread()
{
    m_reread.start();
}

bool SnapshotTimelineModel::belongsHere(const Snapshot &snapshot) const
{
    return snapshot.sandbox == m_sandbox || m_nodes.contains(snapshot.id)
        || (!snapshot.parent.isEmpty() && m_nodes.contains(snapshot.parent));
}

SnapshotTimelineModel::Node *SnapshotTimelineModel::parentNodeFor(const Snapshot &snapshot) const
{
    Node *parent = m_nodes.value(snapshot.parent);
    return parent ? parent : m_root.get();
}

int SnapshotTimelineModel::insertPosition(const Node *parent, const Snapshot &snapshot) const
{
    const auto it = std::lower_bound(parent->children.cbegin(), parent->children.cend(), snapshot,
                                     [](const std::unique_ptr<Node> &node, const Snapshot &s) {
                                         return olderThan(node->snapshot, s);
                                     });
    return int(it - parent->children.cbegin());
}

void SnapshotTimelineModel::upsert(const Snapshot &snapshot)
{
    if (Node *node = m_nodes.value(snapshot.id)) {
        if (parentNodeFor(snapshot) == node->parent
            && node->snapshot.createdAt == snapshot.createdAt) {
            node->snapshot = snapshot;
            Q_EMIT dataChanged(indexOfNode(node, 0), indexOfNode(node, ColumnCount - 1));
            return;
        }
        QList<Snapshot> all;
        for (const Node *n : std::as_const(m_nodes))
            all.append(n->snapshot.id == snapshot.id ? snapshot : n->snapshot);
        rebuild(all);
        return;
    }
    // A child that arrived before its parent (never from one helper connection) reshapes.
    for (const Node *n : std::as_const(m_nodes)) {
        if (n->snapshot.parent == snapshot.id && n->parent == m_root.get()) {
            QList<Snapshot> all {snapshot};
            for (const Node *m : std::as_const(m_nodes))
                all.append(m->snapshot);
            rebuild(all);
            return;
        }
    }
    Node *parent = parentNodeFor(snapshot);
    const int row = insertPosition(parent, snapshot);
    beginInsertRows(indexOfNode(parent), row, row);
    auto node = std::make_unique<Node>();
    node->snapshot = snapshot;
    node->parent = parent;
    m_nodes.insert(snapshot.id, node.get());
    parent->children.insert(parent->children.begin() + row, std::move(node));
    endInsertRows();
    assignLanes();
}

void SnapshotTimelineModel::removeSnapshot(const QString &id)
{
    Node *node = m_nodes.value(id);
    if (!node)
        return;
    if (node->children.empty()) {
        Node *parent = node->parent;
        const int row = node->row();
        beginRemoveRows(indexOfNode(parent), row, row);
        m_nodes.remove(id);
        parent->children.erase(parent->children.begin() + row);
        endRemoveRows();
        assignLanes();
        return;
    }
    // Its children take its parent, as in the helper's registry.
    const QString newParent = node->snapshot.parent;
    QList<Snapshot> rest;
    for (const Node *n : std::as_const(m_nodes)) {
        if (n == node)
            continue;
        Snapshot snapshot = n->snapshot;
        if (snapshot.parent == id)
            snapshot.parent = newParent;
        rest.append(snapshot);
    }
    rebuild(rest);
}

void SnapshotTimelineModel::rebuild(const QList<Snapshot> &snapshotsIn)
{
    QList<Snapshot> snapshots = snapshotsIn;
    std::sort(snapshots.begin(), snapshots.end(), olderThan);
    QHash<QString, const Snapshot *> byId;
    for (const Snapshot &snapshot : std::as_const(snapshots))
        byId.insert(snapshot.id, &snapshot);
    // A parent chain that loops (a confused registry) is cut: such a snapshot becomes a root.
    auto reachesRoot = [&byId](const Snapshot &snapshot) {
        QSet<QString> seen {snapshot.id};
        for (QString at = snapshot.parent; byId.contains(at); at = byId.value(at)->parent) {
            if (seen.contains(at))
                return false;
            seen.insert(at);
        }
        return true;
    };

    beginResetModel();
    m_root = std::make_unique<Node>();
    m_nodes.clear();
    std::map<QString, std::unique_ptr<Node>> made;
    for (const Snapshot &snapshot : std::as_const(snapshots)) {
        auto node = std::make_unique<Node>();
        node->snapshot = snapshot;
        m_nodes.insert(snapshot.id, node.get());
        made.emplace(snapshot.id, std::move(node));
    }
    for (const Snapshot &snapshot : std::as_const(snapshots)) {
        Node *parent = m_root.get();
        if (byId.contains(snapshot.parent) && reachesRoot(snapshot))
            parent = m_nodes.value(snapshot.parent);
        std::unique_ptr<Node> node = std::move(made[snapshot.id]);
        node->parent = parent;
        parent->children.push_back(std::move(node)); // sorted: snapshots are oldest first
    }
    assignLanes(false); // inside the reset: nobody may look at items now
    endResetModel();
}

void SnapshotTimelineModel::assignLanes(bool notify)
{
    QHash<const Node *, int> before;
    for (const Node *node : std::as_const(m_nodes))
        before.insert(node, node->lane);
    m_laneTitles.clear();
    int next = 0;
    // The oldest child taken of the same sandbox continues the lane; every other child (a
    // restore's branch, a fork) and every root opens the next one.
    std::function<void(Node *, int)> place = [&](Node *node, int lane) {
        node->lane = lane;
        const Node *continuation = nullptr;
        for (const auto &child : node->children) {
            if (child->snapshot.sandbox == node->snapshot.sandbox) {
                continuation = child.get();
                break;
            }
        }
        for (const auto &child : node->children) {
            if (child.get() == continuation) {
                place(child.get(), lane);
            } else {
                const int opened = next++;
                m_laneTitles.append(child->snapshot.sandbox != m_sandbox
                                        ? tr("fork: %1").arg(child->snapshot.sandbox)
                                        : tr("branch"));
                place(child.get(), opened);
            }
        }
    };
    for (const auto &root : m_root->children) {
        const int opened = next++;
        if (root->snapshot.sandbox != m_sandbox)
            m_laneTitles.append(tr("fork: %1").arg(root->snapshot.sandbox));
        else if (!root->snapshot.parent.isEmpty())
            m_laneTitles.append(tr("from another sandbox"));
        else
            m_laneTitles.append(opened == 0 ? m_sandbox : tr("branch"));
        place(root.get(), opened);
    }
    // Fresh forks (no snapshot of their own, none in this tree) after the tree's lanes.
    m_stubs.clear();
    QSet<QString> inTree;
    for (const Node *node : std::as_const(m_nodes))
        inTree.insert(node->snapshot.sandbox);
    QStringList forks = m_forkHeads.keys();
    forks.sort();
    for (const QString &fork : std::as_const(forks)) {
        const QString from = m_forkHeads.value(fork);
        if (fork == m_sandbox || inTree.contains(fork) || !m_nodes.contains(from))
            continue;
        m_stubs.append({fork, from, next++});
        m_laneTitles.append(tr("fork: %1").arg(fork));
    }
    m_laneCount = next;
    if (!notify)
        return;
    for (auto it = before.cbegin(); it != before.cend(); ++it) {
        if (it.key()->lane != it.value()) {
            const QModelIndex index = indexOfNode(it.key());
            Q_EMIT dataChanged(index, index, {LaneRole});
        }
    }
}

QString SnapshotTimelineModel::laneTitle(int lane) const
{
    return m_laneTitles.value(lane);
}

const Snapshot *SnapshotTimelineModel::snapshotAt(const QModelIndex &index) const
{
    const Node *node = nodeOf(index);
    return node ? &node->snapshot : nullptr;
}

QModelIndex SnapshotTimelineModel::indexOf(const QString &id, int column) const
{
    const Node *node = m_nodes.value(id);
    return node ? indexOfNode(node, column) : QModelIndex();
}

QModelIndexList SnapshotTimelineModel::indexesByTime() const
{
    QList<const Node *> nodes(m_nodes.cbegin(), m_nodes.cend());
    std::sort(nodes.begin(), nodes.end(),
              [](const Node *a, const Node *b) { return olderThan(a->snapshot, b->snapshot); });
    QModelIndexList indexes;
    for (const Node *node : std::as_const(nodes))
        indexes.append(indexOfNode(node));
    return indexes;
}

SnapshotTimelineModel::Node *SnapshotTimelineModel::nodeOf(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this)
        return nullptr;
    return static_cast<Node *>(index.internalPointer());
}

QModelIndex SnapshotTimelineModel::indexOfNode(const Node *node, int column) const
{
    if (!node || node == m_root.get())
        return {};
    return createIndex(node->row(), column, const_cast<Node *>(node));
}

QModelIndex SnapshotTimelineModel::index(int row, int column, const QModelIndex &parent) const
{
    if (column < 0 || column >= ColumnCount || row < 0)
        return {};
    const Node *parentNode = parent.isValid() ? nodeOf(parent) : m_root.get();
    if (!parentNode || parent.column() > 0 || row >= int(parentNode->children.size()))
        return {};
    return createIndex(row, column, parentNode->children[size_t(row)].get());
}

QModelIndex SnapshotTimelineModel::parent(const QModelIndex &child) const
{
    const Node *node = nodeOf(child);
    if (!node)
        return {};
    return indexOfNode(node->parent);
}

int SnapshotTimelineModel::rowCount(const QModelIndex &parent) const
{
    if (parent.column() > 0)
        return 0;
    const Node *node = parent.isValid() ? nodeOf(parent) : m_root.get();
    return node ? int(node->children.size()) : 0;
}

int SnapshotTimelineModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QString SnapshotTimelineModel::formatBytes(qint64 bytes)
{
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeIecFormat);
}

QString SnapshotTimelineModel::labelText(const Snapshot &snapshot) const
{
    // The helper labels a safety snapshot "before restoring ID" (docs/snapshots.md); a person
    // reads which state it keeps, so the id becomes the restored snapshot's label or time.
    static const QLatin1StringView safetyPrefix("before restoring ");
    if (snapshot.kind == SnapshotKind::Safety && snapshot.label.startsWith(safetyPrefix)) {
        const QString restored = snapshot.label.mid(safetyPrefix.size());
        const Node *target = m_nodes.value(restored);
        QString what;
        if (target && !target->snapshot.label.isEmpty())
            what = tr("“%1”").arg(target->snapshot.label);
        else if (target)
            what = tr("the snapshot of %1")
                       .arg(QLocale().toString(target->snapshot.createdAt.toLocalTime(),
                                               QStringLiteral("yyyy-MM-dd HH:mm:ss")));
        else
            what = tr("a snapshot since deleted");
        return tr("State kept before restoring %1").arg(what);
    }
    return snapshot.label.isEmpty() ? tr("(no label)") : snapshot.label;
}

QString SnapshotTimelineModel::kindText(SnapshotKind kind)
{
    switch (kind) {
    case SnapshotKind::Manual:
        return tr("Manual");
    case SnapshotKind::Automatic:
        return tr("Automatic");
    case SnapshotKind::Safety:
        return tr("Safety");
    case SnapshotKind::Template:
        return tr("Template");
    }
    return {};
}

QVariant SnapshotTimelineModel::data(const QModelIndex &index, int role) const
{
    const Node *node = nodeOf(index);
    if (!node)
        return {};
    const Snapshot &s = node->snapshot;
    const bool isHead = !m_head.isEmpty() && s.id == m_head;
    switch (role) {
    case IdRole:
        return s.id;
    case ParentIdRole:
        return s.parent;
    case KindRole:
        return int(s.kind);
    case CreatedAtRole:
        return s.createdAt;
    case LogicalBytesRole:
        return s.logicalBytes;
    case NewBytesRole:
        return s.newBytes;
    case NewStoredBytesRole:
        return s.newStoredBytes;
    case PauseMsRole:
        return s.pauseMs;
    case PinnedRole:
        return s.pinned;
    case HeadRole:
        return isHead;
    case LaneRole:
        return node->lane;
    case SandboxRole:
        return s.sandbox;
    case ForeignRole:
        return s.sandbox != m_sandbox;
    case SummaryRole:
    case Qt::ToolTipRole: {
        QString text =
            tr("%1 snapshot “%2” of %3, taken %4: %5 new of %6, paused %7 ms")
                .arg(kindText(s.kind), labelText(s), s.sandbox,
                     QLocale().toString(s.createdAt.toLocalTime(), QLocale::LongFormat),
                     formatBytes(s.newBytes), formatBytes(s.logicalBytes),
                     QString::number(s.pauseMs)); // one pass: a "%1" in a label stays text
        if (s.pinned)
            text += tr("; pinned");
        if (isHead)
            text += tr("; the current state descends from it");
        return text;
    }
    case Qt::FontRole:
        if (isHead && index.column() == LabelColumn) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case LabelColumn:
        return labelText(s);
    case TimeColumn:
        return QLocale().toString(s.createdAt.toLocalTime(), QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case KindColumn:
        return kindText(s.kind);
    case LogicalSizeColumn:
        return formatBytes(s.logicalBytes);
    case NewBytesColumn:
        return tr("%1 (%2 stored)").arg(formatBytes(s.newBytes), formatBytes(s.newStoredBytes));
    case PauseColumn:
        return tr("%1 ms").arg(s.pauseMs);
    case PinnedColumn:
        return s.pinned ? tr("Pinned") : QString();
    case SandboxColumn:
        return s.sandbox;
    default:
        return {};
    }
}

QVariant SnapshotTimelineModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case LabelColumn:
        return tr("Label");
    case TimeColumn:
        return tr("Time");
    case KindColumn:
        return tr("Kind");
    case LogicalSizeColumn:
        return tr("Size");
    case NewBytesColumn:
        return tr("New bytes");
    case PauseColumn:
        return tr("Pause");
    case PinnedColumn:
        return tr("Pinned");
    case SandboxColumn:
        return tr("Sandbox");
    default:
        return {};
    }
}

} // namespace airlock

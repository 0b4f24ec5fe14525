// The snapshot timeline: the model (tree, lanes, notifications) on fixed helper answers, the
// painted view (hit testing, keys), then the whole Snapshots section against a real airlockd
// with a real TCG guest: snapshots taken through the window, a restore that starts a branch,
// a fork whose snapshot shows as a fork branch, pin/rename/delete through the actions, the
// automatic schedule, and pause/resume in the sandbox table and sidebar.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "eventloop.h"
#include "guestconsole.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "ui/forkdialog.h"
#include "ui/hostsidebar.h"
#include "ui/mainwindow.h"
#include "ui/resources.h"
#include "ui/sandboxdetailsview.h"
#include "ui/sandboxtablemodel.h"
#include "ui/scheduledialog.h"
#include "ui/snapshotsview.h"
#include "ui/snapshottimelinemodel.h"
#include "ui/snapshottimelineview.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QContextMenuEvent>
#include <QDialogButtonBox>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTest>
#include <QTimer>
#include <QTreeView>
#include <QTreeWidget>

using namespace airlock;
using test::GuestConsole;
using test::HelperProcess;
using test::RpcTestClient;

namespace {

const QString kName = QStringLiteral("tl");
const QString kFork = QStringLiteral("tl-fork");
constexpr int kBootTimeoutMs = 120000;
constexpr int kSnapshotTimeoutMs = 120000;

QJsonObject snapshotJson(const QString &id, const QString &sandbox, const QString &parent,
                         int minutesAgo, const QString &kind = QStringLiteral("manual"),
                         const QString &label = {}, bool pinned = false)
{
    // One fixed "now", so the same list read twice is the same list.
    static const QDateTime now = QDateTime::currentDateTimeUtc();
    const QDateTime base = now.addSecs(-60 * minutesAgo);
    return {{QStringLiteral("id"), id},
            {QStringLiteral("sandbox"), sandbox},
            {QStringLiteral("parent"), parent.isEmpty() ? QJsonValue() : QJsonValue(parent)},
            {QStringLiteral("label"), label},
            {QStringLiteral("createdAt"), base.toString(Qt::ISODateWithMs)},
            {QStringLiteral("kind"), kind},
            {QStringLiteral("logicalBytes"), 256 * 1024 * 1024},
            {QStringLiteral("newBytes"), 4 * 1024 * 1024 * (minutesAgo % 5 + 1)},
            {QStringLiteral("newStoredBytes"), 1024 * 1024},
            {QStringLiteral("pauseMs"), 80},
            {QStringLiteral("pinned"), pinned},
            {QStringLiteral("image"), QStringLiteral("default")},
            {QStringLiteral("vcpus"), 1},
            {QStringLiteral("memoryMib"), 256}};
}

// a: root; b, c on a's line; d: a restore's branch from a; f1: a fork of b; x: unrelated.
const QString kA = QStringLiteral("000000000000000a");
const QString kB = QStringLiteral("000000000000000b");
const QString kC = QStringLiteral("000000000000000c");
const QString kD = QStringLiteral("000000000000000d");
const QString kE = QStringLiteral("000000000000000e");
const QString kF1 = QStringLiteral("00000000000000f1");
const QString kX = QStringLiteral("0000000000000099");

QJsonObject ownList()
{
    return {{QStringLiteral("snapshots"),
             QJsonArray {snapshotJson(kA, kName, {}, 50, QStringLiteral("manual"),
                                      QStringLiteral("clean boot")),
                         snapshotJson(kB, kName, kA, 40, QStringLiteral("automatic")),
                         snapshotJson(kC, kName, kB, 30, QStringLiteral("safety")),
                         snapshotJson(kD, kName, kA, 20, QStringLiteral("manual"),
                                      QStringLiteral("retry"), true)}},
            {QStringLiteral("head"), kD},
            {QStringLiteral("schedule"),
             QJsonObject {{QStringLiteral("intervalMinutes"), 10},
                          {QStringLiteral("hourlyHours"), 24},
                          {QStringLiteral("dailyDays"), 7}}},
            {QStringLiteral("retainedSince"),
             QDateTime::currentDateTimeUtc().addDays(-7).toString(Qt::ISODateWithMs)}};
}

/// Two snapshots 40 and 20 s old: a short axis, where a second of "now" moves every marker
/// by several pixels.
QJsonObject recentList()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QJsonObject first = snapshotJson(kA, kName, {}, 0);
    first.insert(QStringLiteral("createdAt"), now.addSecs(-40).toString(Qt::ISODateWithMs));
    QJsonObject second = snapshotJson(kB, kName, kA, 0);
    second.insert(QStringLiteral("createdAt"), now.addSecs(-20).toString(Qt::ISODateWithMs));
    return {{QStringLiteral("snapshots"), QJsonArray {first, second}},
            {QStringLiteral("head"), kB},
            {QStringLiteral("schedule"), QJsonObject {{QStringLiteral("intervalMinutes"), 0}}}};
}

/// A point of the plot no marker covers, on `y`.
QPoint emptySpot(const SnapshotTimelineView &view, int y)
{
    for (int x = view.width() / 2; x < view.width() - 4; x += 3) {
        bool clear = true;
        for (int dx = -20; dx <= 20 && clear; dx += 2)
            clear = !view.indexAt(QPoint(x + dx, y)).isValid();
        if (clear)
            return {x, y};
    }
    return {};
}

QStringList menuTexts(const QMenu *menu)
{
    QStringList texts;
    for (QAction *action : menu->actions()) {
        if (!action->isSeparator())
            texts.append(action->text());
    }
    return texts;
}

QJsonObject allList()
{
    QJsonArray all = ownList().value(QStringLiteral("snapshots")).toArray();
    all.append(snapshotJson(kF1, QStringLiteral("other-fork"), kB, 25));
    all.append(snapshotJson(kX, QStringLiteral("unrelated"), {}, 45));
    return {{QStringLiteral("snapshots"), all}};
}

QString idAt(const QModelIndex &index)
{
    return index.data(SnapshotTimelineModel::IdRole).toString();
}

/// Issue 17's crowd: three snapshots hours apart, then 30 within a minute, then one more; a
/// restore's branch from the second with two close together. Ids c01.., labels "build N".
QJsonObject crowdedList()
{
    static const QDateTime now = QDateTime::currentDateTimeUtc();
    QJsonArray snapshots;
    QString parent;
    int n = 0;
    const auto add = [&](const QDateTime &at, const QString &from, const QString &kind) {
        const QString id = QStringLiteral("c%1").arg(++n, 15, 10, QLatin1Char('0'));
        QJsonObject snapshot =
            snapshotJson(id, kName, from, 0, kind, QStringLiteral("build %1 of the crowd").arg(n));
        snapshot.insert(QStringLiteral("createdAt"), at.toString(Qt::ISODateWithMs));
        snapshots.append(snapshot);
        return id;
    };
    parent = add(now.addSecs(-5 * 3600), {}, QStringLiteral("manual"));
    const QString second = parent =
        add(now.addSecs(-3 * 3600), parent, QStringLiteral("automatic"));
    parent = add(now.addSecs(-2 * 3600), parent, QStringLiteral("manual"));
    const QDateTime burst = now.addSecs(-3600);
    for (int i = 0; i < 30; ++i)
        parent = add(burst.addMSecs(i * 2000), parent,
                     i % 3 ? QStringLiteral("automatic") : QStringLiteral("manual"));
    const QString head = add(now.addSecs(-600), parent, QStringLiteral("manual"));
    // A branch: a restore of the second, then two snapshots seconds apart.
    const QString branch = add(now.addSecs(-1800), second, QStringLiteral("manual"));
    add(now.addSecs(-1797), branch, QStringLiteral("automatic"));
    return {{QStringLiteral("snapshots"), snapshots},
            {QStringLiteral("head"), head},
            {QStringLiteral("schedule"), QJsonObject {{QStringLiteral("intervalMinutes"), 0}}}};
}

QStringList childIds(const SnapshotTimelineModel &model, const QModelIndex &parent)
{
    QStringList ids;
    for (int row = 0; row < model.rowCount(parent); ++row)
        ids.append(idAt(model.index(row, 0, parent)));
    return ids;
}

QAbstractButton *buttonWithText(QMessageBox *box, const QString &text)
{
    for (QAbstractButton *button : box->buttons()) {
        if (button->text() == text)
            return button;
    }
    return nullptr;
}

/// Whether the guest's console (replayed by a fresh attach) shows the ready line.
bool guestReady(const QString &socket, const QString &sandbox)
{
    RpcTestClient client(socket);
    const QJsonObject result = RpcTestClient::result(
        client.call(QStringLiteral("console.attach"), {{QStringLiteral("name"), sandbox}}));
    return QByteArray::fromBase64(result.value(QStringLiteral("data")).toString().toLatin1())
        .contains("airlock-guest ready");
}

} // namespace

class TestSnapshotTimeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    // Fixed answers.
    void modelBuildsTreeAndLanes();
    void modelFollowsNotifications();
    void modelRejectsMalformedSnapshots();
    void modelShowsFreshForks();
    void viewPaintsAndNavigates();
    void viewKeepsItsAxisUnderThePointer();
    void viewMarksTheCurrentState();
    void crowdedMarkersClusterAndLabelsDoNotOverlap_data();
    void crowdedMarkersClusterAndLabelsDoNotOverlap();
    void contextMenuOnlyForTheMarkerUnderThePointer();
    void listColumnsFitTheirCells();

    // A real helper and guest, in this order (they build on each other's snapshots).
    void windowShowsTheSandboxTimeline();
    void takeSnapshotsThroughTheView();
    void restoreStartsABranch();
    void forkShowsAsAForkBranch();
    void pinRenameDeleteThroughTheActions();
    void contextMenuOffersTheActions();
    void scheduleDialogSetsRetention();
    void pauseAndResumeShowAsStates();
    void forkWhoseGuestKeepsItsIdentityWarns();

private:
    QJsonObject rpc(const QString &method, const QJsonObject &params, int timeoutMs = 120000);
    QModelIndex findLabel(const QString &label) const;

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<HelperClient> m_client;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_tester;
    QStringList m_failures;
    QString m_first;
    QString m_second;
};

void TestSnapshotTimeline::initTestCase()
{
    initUiResources();
}

void TestSnapshotTimeline::cleanupTestCase()
{
    m_tester.reset();
    m_window.reset();
    m_client.reset();
    m_helper.reset(); // stops airlockd and kills its QEMUs
}

QJsonObject TestSnapshotTimeline::rpc(const QString &method, const QJsonObject &params,
                                      int timeoutMs)
{
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject answer = client.call(method, params, timeoutMs);
    if (!answer.contains(QStringLiteral("result")))
        qWarning("%s: %s", qPrintable(method), QJsonDocument(answer).toJson().constData());
    return answer;
}

QModelIndex TestSnapshotTimeline::findLabel(const QString &label) const
{
    SnapshotTimelineModel *model = m_window->snapshotsView()->model();
    for (const QModelIndex &index : model->indexesByTime()) {
        if (model->snapshotAt(index)->label == label)
            return index;
    }
    return {};
}

void TestSnapshotTimeline::modelBuildsTreeAndLanes()
{
    SnapshotTimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSandbox(kName);
    QSignalSpy metadata(&model, &SnapshotTimelineModel::metadataChanged);
    QVERIFY(model.setLists(ownList(), allList()));
    QVERIFY(model.isLoaded());
    QCOMPARE(metadata.count(), 1);

    // The unrelated sandbox's root is not here; the fork of b is.
    QCOMPARE(model.snapshotCount(), 5);
    QCOMPARE(childIds(model, {}), QStringList {kA});
    const QModelIndex a = model.indexOf(kA);
    QCOMPARE(childIds(model, a), (QStringList {kB, kD})); // oldest first
    QCOMPARE(childIds(model, model.indexOf(kB)), (QStringList {kC, kF1}));
    QVERIFY(!model.indexOf(kX).isValid());
    QCOMPARE(model.indexOf(kC).parent(), model.indexOf(kB));

    // a, b and c are the first line; the fork and the restore's branch get their own lanes.
    auto lane = [&](const QString &id) {
        return model.indexOf(id).data(SnapshotTimelineModel::LaneRole).toInt();
    };
    QCOMPARE(lane(kA), 0);
    QCOMPARE(lane(kB), 0);
    QCOMPARE(lane(kC), 0);
    QCOMPARE(model.laneCount(), 3);
    QVERIFY(lane(kF1) != 0 && lane(kD) != 0 && lane(kF1) != lane(kD));
    QCOMPARE(model.laneTitle(0), kName);
    QCOMPARE(model.laneTitle(lane(kF1)), QStringLiteral("fork: other-fork"));
    QCOMPARE(model.laneTitle(lane(kD)), QStringLiteral("branch"));
    QVERIFY(model.indexOf(kF1).data(SnapshotTimelineModel::ForeignRole).toBool());
    QVERIFY(!model.indexOf(kD).data(SnapshotTimelineModel::ForeignRole).toBool());

    // Head, schedule, retention, and the columns' texts.
    QCOMPARE(model.head(), kD);
    QVERIFY(model.indexOf(kD).data(SnapshotTimelineModel::HeadRole).toBool());
    QVERIFY(!model.indexOf(kA).data(SnapshotTimelineModel::HeadRole).toBool());
    QCOMPARE(model.schedule().intervalMinutes, 10);
    QVERIFY(qAbs(model.retainedSince().daysTo(QDateTime::currentDateTimeUtc()) - 7) <= 1);
    const QModelIndex d = model.indexOf(kD);
    QCOMPARE(d.siblingAtColumn(SnapshotTimelineModel::LabelColumn).data().toString(),
             QStringLiteral("retry"));
    QCOMPARE(model.indexOf(kB, SnapshotTimelineModel::LabelColumn).data().toString(),
             QStringLiteral("(no label)"));
    QCOMPARE(model.indexOf(kC, SnapshotTimelineModel::KindColumn).data().toString(),
             QStringLiteral("Safety"));
    QCOMPARE(d.siblingAtColumn(SnapshotTimelineModel::PinnedColumn).data().toString(),
             QStringLiteral("Pinned"));
    QCOMPARE(d.siblingAtColumn(SnapshotTimelineModel::LogicalSizeColumn).data().toString(),
             QStringLiteral("256.0 MiB"));
    QCOMPARE(d.siblingAtColumn(SnapshotTimelineModel::PauseColumn).data().toString(),
             QStringLiteral("80 ms"));
    QVERIFY(
        d.data(SnapshotTimelineModel::SummaryRole).toString().contains(QStringLiteral("pinned")));
    QCOMPARE(model.indexesByTime().constFirst(), a);

    // The same lists again: no reset, nothing changed.
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
    QVERIFY(model.setLists(ownList(), allList()));
    QCOMPARE(resets.count(), 0);
    QCOMPARE(changes.count(), 0);
    // A renamed snapshot in a re-read: one dataChanged, no reset.
    QJsonObject renamed = ownList();
    QJsonArray snapshots = renamed.value(QStringLiteral("snapshots")).toArray();
    QJsonObject first = snapshots.at(0).toObject();
    first.insert(QStringLiteral("label"), QStringLiteral("base"));
    snapshots.replace(0, first);
    renamed.insert(QStringLiteral("snapshots"), snapshots);
    QVERIFY(model.setLists(renamed, allList()));
    QCOMPARE(resets.count(), 0);
    QCOMPARE(changes.count(), 1);
    QCOMPARE(model.snapshotAt(model.indexOf(kA))->label, QStringLiteral("base"));

    // Without the unfiltered list there are no forks.
    QVERIFY(model.setLists(ownList(), {}));
    QCOMPARE(model.snapshotCount(), 4);
    QCOMPARE(model.laneCount(), 2);
}

void TestSnapshotTimeline::modelFollowsNotifications()
{
    SnapshotTimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSandbox(kName);
    QVERIFY(model.setLists(ownList(), allList()));
    const QString changed = QStringLiteral("snapshot.changed");

    // A new snapshot under c: inserted there, on c's lane.
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    model.handleNotification(changed,
                             {{QStringLiteral("sandbox"), kName},
                              {QStringLiteral("snapshot"), snapshotJson(kE, kName, kC, 10)}});
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(model.indexOf(kE).parent(), model.indexOf(kC));
    QCOMPARE(model.indexOf(kE).data(SnapshotTimelineModel::LaneRole).toInt(), 0);

    // Pinned elsewhere: the item changes in place.
    QSignalSpy dataChanged(&model, &QAbstractItemModel::dataChanged);
    model.handleNotification(
        changed,
        {{QStringLiteral("sandbox"), kName},
         {QStringLiteral("snapshot"),
          snapshotJson(kE, kName, kC, 10, QStringLiteral("manual"), {}, true)}});
    QVERIFY(dataChanged.count() >= 1);
    QVERIFY(model.indexOf(kE).data(SnapshotTimelineModel::PinnedRole).toBool());
    // A label is text: placeholders and markup in it stay as they are.
    model.handleNotification(changed,
                             {{QStringLiteral("sandbox"), kName},
                              {QStringLiteral("snapshot"),
                               snapshotJson(kE, kName, kC, 10, QStringLiteral("manual"),
                                            QStringLiteral("<b>%1</b>"), true)}});
    const QString summary = model.indexOf(kE).data(SnapshotTimelineModel::SummaryRole).toString();
    QVERIFY2(summary.contains(QStringLiteral("“<b>%1</b>”")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("paused 80 ms")), qPrintable(summary));

    // Another sandbox's root is not ours; its snapshot descending from ours is.
    model.handleNotification(
        changed,
        {{QStringLiteral("sandbox"), QStringLiteral("unrelated")},
         {QStringLiteral("snapshot"),
          snapshotJson(QStringLiteral("0000000000000077"), QStringLiteral("unrelated"), {}, 5)}});
    QVERIFY(!model.indexOf(QStringLiteral("0000000000000077")).isValid());
    const QString f2 = QStringLiteral("00000000000000f2");
    model.handleNotification(
        changed,
        {{QStringLiteral("sandbox"), QStringLiteral("other-fork")},
         {QStringLiteral("snapshot"), snapshotJson(f2, QStringLiteral("other-fork"), kF1, 4)}});
    QCOMPARE(model.indexOf(f2).parent(), model.indexOf(kF1));
    QCOMPARE(model.indexOf(f2).data(SnapshotTimelineModel::LaneRole),
             model.indexOf(kF1).data(SnapshotTimelineModel::LaneRole));

    // b deleted: its children (c and the fork) take its parent a, as in the registry.
    model.handleNotification(changed,
                             {{QStringLiteral("sandbox"), kName}, {QStringLiteral("removed"), kB}});
    QVERIFY(!model.indexOf(kB).isValid());
    QCOMPARE(model.indexOf(kC).parent(), model.indexOf(kA));
    QCOMPARE(model.indexOf(kF1).parent(), model.indexOf(kA));
    QCOMPARE(model.snapshotAt(model.indexOf(kC))->parent, kA);
    QCOMPARE(model.indexOf(kC).data(SnapshotTimelineModel::LaneRole).toInt(), 0);

    // A leaf deleted: one row removed.
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    model.handleNotification(changed,
                             {{QStringLiteral("sandbox"), kName}, {QStringLiteral("removed"), kE}});
    QCOMPARE(removed.count(), 1);
    QVERIFY(!model.indexOf(kE).isValid());
    // Unknown ids and other notifications change nothing.
    const int count = model.snapshotCount();
    model.handleNotification(
        changed,
        {{QStringLiteral("sandbox"), kName}, {QStringLiteral("removed"), QStringLiteral("1234")}});
    model.handleNotification(QStringLiteral("sandbox.changed"), {});
    QCOMPARE(model.snapshotCount(), count);
}

void TestSnapshotTimeline::modelRejectsMalformedSnapshots()
{
    SnapshotTimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSandbox(kName);
    QVERIFY(model.setLists(ownList(), allList()));
    QJsonObject bad = ownList();
    QJsonArray snapshots = bad.value(QStringLiteral("snapshots")).toArray();
    QJsonObject broken = snapshots.at(1).toObject();
    broken.insert(QStringLiteral("id"), QStringLiteral("../../etc"));
    snapshots.replace(1, broken);
    bad.insert(QStringLiteral("snapshots"), snapshots);
    const auto applied = model.setLists(bad, {});
    QVERIFY(!applied);
    QCOMPARE(applied.error().kind, ErrorKind::InvalidParams);
    QCOMPARE(model.snapshotCount(), 5); // nothing lost

    // A parent loop (a confused helper) does not hang or lose snapshots: they become roots.
    const QString p = QStringLiteral("00000000000000a1");
    const QString q = QStringLiteral("00000000000000a2");
    QJsonObject loop {{QStringLiteral("snapshots"),
                       QJsonArray {snapshotJson(p, kName, q, 9), snapshotJson(q, kName, p, 8)}}};
    QVERIFY(model.setLists(loop, {}));
    QCOMPARE(model.snapshotCount(), 2);
    QCOMPARE(model.rowCount() + model.rowCount(model.index(0, 0)), 2);
}

void TestSnapshotTimeline::modelShowsFreshForks()
{
    SnapshotTimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setSandbox(kName);
    QVERIFY(model.setLists(ownList(), allList()));
    QCOMPARE(model.laneCount(), 3);
    QSignalSpy metadata(&model, &SnapshotTimelineModel::metadataChanged);
    // "fresh" was forked from b and has no snapshot yet; "elsewhere" descends from a snapshot
    // not in this tree; "other-fork" has snapshots here already (its lane shows them).
    model.setForkHeads({{QStringLiteral("fresh"), kB},
                        {QStringLiteral("elsewhere"), kX},
                        {QStringLiteral("other-fork"), kB},
                        {kName, kD}});
    QCOMPARE(model.forkStubs().size(), 1);
    const SnapshotTimelineModel::ForkStub stub = model.forkStubs().constFirst();
    QCOMPARE(stub.sandbox, QStringLiteral("fresh"));
    QCOMPARE(stub.from, kB);
    QCOMPARE(stub.lane, 3);
    QCOMPARE(model.laneCount(), 4);
    QCOMPARE(model.laneTitle(3), QStringLiteral("fork: fresh"));
    QCOMPARE(metadata.count(), 1);
    QCOMPARE(model.snapshotCount(), 5); // not an item

    QItemSelectionModel selection(&model);
    SnapshotTimelineView view;
    view.setModel(&model, &selection);
    view.resize(900, view.sizeHint().height());
    QVERIFY(view.sizeHint().height() >= 4 * 60);
    QVERIFY2(view.accessibleDescription().contains(QStringLiteral("fresh was forked from")),
             qPrintable(view.accessibleDescription()));
    QVERIFY(!view.grab().isNull());

    // Its first snapshot arrives: it is a fork branch of items now, no stub.
    model.handleNotification(
        QStringLiteral("snapshot.changed"),
        {{QStringLiteral("sandbox"), QStringLiteral("fresh")},
         {QStringLiteral("snapshot"),
          snapshotJson(QStringLiteral("00000000000000f3"), QStringLiteral("fresh"), kB, 1)}});
    QVERIFY(model.forkStubs().isEmpty());
    QCOMPARE(model.laneCount(), 4);
    QCOMPARE(model.laneTitle(model.indexOf(QStringLiteral("00000000000000f3"))
                                 .data(SnapshotTimelineModel::LaneRole)
                                 .toInt()),
             QStringLiteral("fork: fresh"));
    model.setForkHeads({});
    QVERIFY(model.forkStubs().isEmpty());
}

void TestSnapshotTimeline::viewMarksTheCurrentState()
{
    SnapshotTimelineModel model;
    model.setSandbox(kName);
    QVERIFY(model.setLists(ownList(), allList())); // head: d, a restore's branch from a
    QItemSelectionModel selection(&model);
    SnapshotTimelineView view;
    view.setModel(&model, &selection);
    view.resize(900, view.sizeHint().height());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    // The tag sits right above the head's marker, inside the view, over no other marker.
    auto checkTagOver = [&](const QString &id) -> QString {
        const QRect tag = view.currentStateRect();
        const QRect head = view.markerRect(model.indexOf(id));
        if (tag.isEmpty() || head.isEmpty())
            return QStringLiteral("no tag or no marker");
        if (!view.rect().contains(tag) || tag.bottom() >= head.top()
            || std::abs(tag.center().x() - head.center().x()) > 1)
            return QStringLiteral("tag %1,%2 %3x%4 not above the marker at %5,%6")
                .arg(tag.x())
                .arg(tag.y())
                .arg(tag.width())
                .arg(tag.height())
                .arg(head.center().x())
                .arg(head.top());
        for (const QModelIndex &index : model.indexesByTime()) {
            if (idAt(index) != id && view.markerRect(index).intersects(tag))
                return QStringLiteral("tag covers %1").arg(idAt(index));
        }
        // Drawn: the tag's fill is the manual snapshots' blue, unlike the background.
        const QImage image = view.grab().toImage();
        const QColor fill = image.pixelColor(tag.left() + 3, tag.center().y());
        if (fill.blue() < 150 || fill.red() > 100)
            return QStringLiteral("tag not painted: %1").arg(fill.name());
        return {};
    };
    QString problem = checkTagOver(kD);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QCOMPARE(SnapshotTimelineView::currentStateText(), QStringLiteral("current state"));
    QVERIFY2(view.accessibleDescription().contains(
                 QStringLiteral("The current state runs from “retry”.")),
             qPrintable(view.accessibleDescription()));

    // A restore of the first snapshot moves the head there: so does the tag.
    QJsonObject restored = ownList();
    restored.insert(QStringLiteral("head"), kA);
    QVERIFY(model.setLists(restored, allList()));
    QTRY_VERIFY(checkTagOver(kA).isEmpty());
    QVERIFY2(view.accessibleDescription().contains(
                 QStringLiteral("The current state runs from “clean boot”.")),
             qPrintable(view.accessibleDescription()));

    // Started from its image's template after that: the state is the template's, so "now" is
    // a marker of its own on the first lane, the tag over it, not over the restored snapshot.
    Sandbox sandbox;
    sandbox.spec.name = kName;
    sandbox.state = SandboxState::Running;
    sandbox.startedFrom = StartSource::Template;
    sandbox.startedAt = QDateTime::currentDateTimeUtc();
    const Snapshot *head = model.snapshotAt(model.indexOf(kA));
    QVERIFY(head);
    const QString detached = SnapshotsView::detachedState(&sandbox, head);
    QCOMPARE(detached, QStringLiteral("started from a template"));
    view.setDetachedState(detached);
    const QRect tag = view.currentStateRect();
    QVERIFY(!tag.isEmpty());
    QVERIFY(view.rect().contains(tag));
    for (const QModelIndex &index : model.indexesByTime())
        QVERIFY2(tag.center().x() > view.markerRect(index).right(), qPrintable(idAt(index)));
    QCOMPARE(view.currentStateMarker().center().y(),
             view.markerRect(model.indexOf(kA)).center().y());
    QVERIFY2(view.accessibleDescription().contains(
                 QStringLiteral("The current state: started from a template.")),
             qPrintable(view.accessibleDescription()));
    // Not detached: booted or restored, not running, or a snapshot taken since the start.
    sandbox.startedFrom = StartSource::Snapshot;
    QVERIFY(SnapshotsView::detachedState(&sandbox, head).isEmpty());
    sandbox.startedFrom = StartSource::Template;
    sandbox.state = SandboxState::Stopped;
    QVERIFY(SnapshotsView::detachedState(&sandbox, head).isEmpty());
    sandbox.state = SandboxState::Running;
    sandbox.startedAt = head->createdAt.addSecs(-1);
    QVERIFY(SnapshotsView::detachedState(&sandbox, head).isEmpty());
    view.setDetachedState({});
    QTRY_VERIFY(checkTagOver(kA).isEmpty());

    // No head (a sandbox that never had one): no tag.
    restored.insert(QStringLiteral("head"), QJsonValue());
    QVERIFY(model.setLists(restored, allList()));
    QTRY_VERIFY(view.currentStateRect().isEmpty());
}

void TestSnapshotTimeline::crowdedMarkersClusterAndLabelsDoNotOverlap_data()
{
    QTest::addColumn<int>("width");
    QTest::newRow("narrow") << 560;
    QTest::newRow("default") << 900;
    QTest::newRow("wide") << 1400;
}

void TestSnapshotTimeline::crowdedMarkersClusterAndLabelsDoNotOverlap()
{
    QFETCH(int, width);
    SnapshotTimelineModel model;
    model.setSandbox(kName);
    const QJsonObject list = crowdedList();
    QVERIFY(model.setLists(list, list));
    QCOMPARE(model.snapshotCount(), 36);
    QItemSelectionModel selection(&model);
    SnapshotTimelineView view;
    view.setModel(&model, &selection);
    view.resize(width, view.sizeHint().height());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));

    int markers = 0;
    const auto checkNothingOverlaps = [&] {
        markers = 0;
        QVERIFY(!view.grab().isNull()); // paints
        const QList<SnapshotTimelineView::PaintedItem> items = view.paintedItems();
        int shown = 0;
        for (qsizetype i = 0; i < items.size(); ++i) {
            if (items[i].kind == SnapshotTimelineView::PaintedItem::Marker) {
                ++markers;
                shown += items[i].members;
            }
            QVERIFY2(view.rect().contains(items[i].rect),
                     qPrintable(QStringLiteral("%1 outside the view").arg(items[i].text)));
            for (qsizetype j = i + 1; j < items.size(); ++j)
                QVERIFY2(!items[i].rect.intersects(items[j].rect),
                         qPrintable(QStringLiteral("'%1' overlaps '%2' at width %3")
                                        .arg(items[i].text, items[j].text)
                                        .arg(width)));
        }
        // Every snapshot is drawn, on its own or in a cluster, and there are labels.
        QCOMPARE(shown, model.snapshotCount());
        QVERIFY(markers >= 4);
        QVERIFY(std::count_if(items.cbegin(), items.cend(),
                              [](const auto &item) {
                                  return item.kind == SnapshotTimelineView::PaintedItem::Label;
                              })
                >= 3);
    };
    checkNothingOverlaps();
    if (QTest::currentTestFailed())
        return;
    if (width >= 1400) {
        // Room for all 36 on their own (pushed apart): no clusters needed.
        QCOMPARE(markers, model.snapshotCount());
        return;
    }
    // 36 markers of their own need more than these widths have.
    QVERIFY2(markers < model.snapshotCount(), qPrintable(QString::number(markers)));

    // Every snapshot is found where its marker (or its cluster) is drawn.
    const QModelIndexList byTime = model.indexesByTime();
    QModelIndex clustered;
    for (const QModelIndex &index : byTime) {
        const QRect marker = view.markerRect(index);
        QVERIFY(!marker.isEmpty());
        const QStringList members = view.clusterMembers(index);
        if (members.isEmpty()) {
            QCOMPARE(view.indexAt(marker.center()), index);
        } else {
            QVERIFY(members.contains(idAt(index)));
            QVERIFY(members.contains(idAt(view.indexAt(marker.center()))));
            if (!clustered.isValid() && members.size() >= 5)
                clustered = index;
        }
    }
    QVERIFY(clustered.isValid());
    // The snapshots hours apart keep markers of their own.
    QVERIFY(view.clusterMembers(byTime.constFirst()).isEmpty());

    // A click on a cluster opens a menu of its snapshots; picking one makes it current, and the
    // cluster's label names it.
    const QStringList members = view.clusterMembers(clustered);
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.markerRect(clustered).center());
    QMenu *menu = nullptr;
    QTRY_VERIFY((menu = view.findChild<QMenu *>(QStringLiteral("clusterMenu"))));
    QCOMPARE(menu->actions().size(), members.size());
    QVERIFY(members.contains(idAt(view.currentIndex())));
    QAction *pick = menu->actions().constLast(); // newest first: the oldest member
    QCOMPARE(pick->data().toString(), members.constFirst());
    pick->trigger();
    menu->close();
    QCOMPARE(idAt(view.currentIndex()), members.constFirst());
    checkNothingOverlaps();
    const QString label =
        model.indexOf(members.constFirst(), SnapshotTimelineModel::LabelColumn).data().toString();
    QVERIFY2(view.accessibleDescription().contains(label),
             qPrintable(view.accessibleDescription()));
    // The keys walk through a cluster's snapshots one by one.
    QTest::keyClick(&view, Qt::Key_Right);
    QCOMPARE(idAt(view.currentIndex()), members.at(1));
}

void TestSnapshotTimeline::viewPaintsAndNavigates()
{
    SnapshotTimelineModel model;
    model.setSandbox(kName);
    QVERIFY(model.setLists(ownList(), allList()));
    QItemSelectionModel selection(&model);
    SnapshotTimelineView view;
    view.setModel(&model, &selection);
    view.resize(900, view.sizeHint().height());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.accessibleName(), QStringLiteral("Snapshot timeline"));
    QVERIFY(view.sizeHint().height() >= 3 * 60); // three lanes
    QVERIFY(!view.grab().isNull());

    // Bigger snapshots get bigger markers; every marker is found where it is drawn, on its
    // lane, left to right in time.
    QCOMPARE(SnapshotTimelineView::markerRadius(0), 5);
    QVERIFY(SnapshotTimelineView::markerRadius(64 << 20)
            > SnapshotTimelineView::markerRadius(1 << 20));
    QCOMPARE(SnapshotTimelineView::markerRadius(qint64(1) << 50), 18);
    int lastX = -1;
    QSet<int> laneYs;
    for (const QModelIndex &index : model.indexesByTime()) {
        const QRect marker = view.markerRect(index);
        QVERIFY(!marker.isEmpty());
        QVERIFY2(view.rect().contains(marker), qPrintable(idAt(index)));
        QCOMPARE(view.indexAt(marker.center()), index);
        QVERIFY(marker.center().x() > lastX);
        lastX = marker.center().x();
        laneYs.insert(marker.center().y());
    }
    QCOMPARE(laneYs.size(), 3);
    QVERIFY(!view.indexAt(QPoint(2, 2)).isValid());

    // A click selects; keys move in time and between lanes.
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.markerRect(model.indexOf(kC)).center());
    QCOMPARE(view.currentIndex(), model.indexOf(kC));
    QVERIFY(view.accessibleDescription().contains(QStringLiteral("Safety")));
    QTest::keyClick(&view, Qt::Key_Home);
    QCOMPARE(idAt(view.currentIndex()), kA);
    QTest::keyClick(&view, Qt::Key_Right);
    QCOMPARE(idAt(view.currentIndex()), kB);
    QTest::keyClick(&view, Qt::Key_End);
    QCOMPARE(idAt(view.currentIndex()), kD);
    QTest::keyClick(&view, Qt::Key_Left);
    QCOMPARE(idAt(view.currentIndex()), kF1);
    const int forkLane = model.indexOf(kF1).data(SnapshotTimelineModel::LaneRole).toInt();
    QTest::keyClick(&view, forkLane == 1 ? Qt::Key_Up : Qt::Key_Down);
    QCOMPARE(view.currentIndex().data(SnapshotTimelineModel::LaneRole).toInt(), 0);
    QCOMPARE(idAt(view.currentIndex()), kC); // the nearest in time on lane 0
    QVERIFY(selection.isSelected(view.currentIndex()));

    // The context menu from the keyboard and the mouse; Enter activates.
    QSignalSpy menu(&view, &SnapshotTimelineView::menuRequested);
    QSignalSpy activated(&view, &SnapshotTimelineView::activated);
    QContextMenuEvent keyboardMenu(QContextMenuEvent::Keyboard, QPoint(), QPoint());
    QApplication::sendEvent(&view, &keyboardMenu);
    QCOMPARE(menu.count(), 1);
    const QPoint onB = view.markerRect(model.indexOf(kB)).center();
    QContextMenuEvent mouseMenu(QContextMenuEvent::Mouse, onB, view.mapToGlobal(onB));
    QApplication::sendEvent(&view, &mouseMenu);
    QCOMPARE(menu.count(), 2);
    QCOMPARE(idAt(view.currentIndex()), kB);
    QCOMPARE(menu.last().at(1).value<QModelIndex>(), model.indexOf(kB));
    // On empty space: a menu for no snapshot, and the current one stays what it was.
    const QPoint empty = emptySpot(view, onB.y());
    QVERIFY(!empty.isNull());
    QContextMenuEvent emptyMenu(QContextMenuEvent::Mouse, empty, view.mapToGlobal(empty));
    QApplication::sendEvent(&view, &emptyMenu);
    QCOMPARE(menu.count(), 3);
    QVERIFY(!menu.last().at(1).value<QModelIndex>().isValid());
    QCOMPARE(idAt(view.currentIndex()), kB);
    QTest::keyClick(&view, Qt::Key_Return);
    QCOMPARE(activated.count(), 1);
}

void TestSnapshotTimeline::viewKeepsItsAxisUnderThePointer()
{
    SnapshotTimelineModel model;
    model.setSandbox(kName);
    QVERIFY(model.setLists(recentList(), recentList()));
    QItemSelectionModel selection(&model);
    SnapshotTimelineView view;
    view.setModel(&model, &selection);
    view.resize(900, view.sizeHint().height());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto *clock = view.findChild<QTimer *>(QStringLiteral("clock"));
    QVERIFY(clock);
    clock->setInterval(20);
    // The view's "now", moved on by the test: the axis would move as much as time has.
    QDateTime now = QDateTime::currentDateTimeUtc();
    view.setClock([&now] { return now; });
    QSignalSpy ticks(clock, &QTimer::timeout);

    // The pointer comes in: repaints, a minute of time, the clock and a click move nothing.
    const QRect a = view.markerRect(model.indexOf(kA));
    const QRect b = view.markerRect(model.indexOf(kB));
    QEnterEvent enter(b.center(), b.center(), view.mapToGlobal(b.center()));
    QApplication::sendEvent(&view, &enter);
    now = now.addSecs(60);
    QTRY_VERIFY(ticks.count() >= 3); // the clock ticks several times
    view.repaint();
    QCOMPARE(view.markerRect(model.indexOf(kA)), a);
    QTest::mouseClick(&view, Qt::LeftButton, {}, b.center());
    QCOMPARE(view.currentIndex(), model.indexOf(kB));
    view.repaint();
    QCOMPARE(view.markerRect(model.indexOf(kA)), a);
    QCOMPARE(view.markerRect(model.indexOf(kB)), b);
    QCOMPARE(view.indexAt(b.center()), model.indexOf(kB));

    // It leaves: the axis catches up with now, so the old snapshots move left.
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(&view, &leave);
    QTRY_VERIFY(view.markerRect(model.indexOf(kA)).center().x() < a.center().x());
    // New data rescales at once, also under the pointer.
    const QRect moved = view.markerRect(model.indexOf(kA));
    QApplication::sendEvent(&view, &enter);
    now = now.addSecs(60);
    ticks.clear();
    QTRY_VERIFY(ticks.count() >= 3);
    QCOMPARE(view.markerRect(model.indexOf(kA)), moved);
    QJsonObject longer = recentList();
    QJsonArray snapshots = longer.value(QStringLiteral("snapshots")).toArray();
    snapshots.prepend(snapshotJson(kD, kName, {}, 30));
    longer.insert(QStringLiteral("snapshots"), snapshots);
    QVERIFY(model.setLists(longer, longer));
    QVERIFY(view.markerRect(model.indexOf(kA)).center().x() > moved.center().x());
}

void TestSnapshotTimeline::contextMenuOnlyForTheMarkerUnderThePointer()
{
    SnapshotsView view(nullptr, nullptr);
    view.resize(1000, 600);
    view.model()->setSandbox(kName);
    QVERIFY(view.model()->setLists(ownList(), allList()));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    SnapshotTimelineView *timeline = view.timeline();
    auto openMenu = [&](QContextMenuEvent::Reason reason, const QPoint &at) -> QMenu * {
        for (QMenu *old : view.findChildren<QMenu *>())
            delete old;
        QContextMenuEvent event(reason, at, timeline->mapToGlobal(at));
        QApplication::sendEvent(timeline, &event);
        QMenu *menu = view.findChild<QMenu *>();
        return menu && menu->isVisible() ? menu : nullptr;
    };
    const QStringList full {QStringLiteral("&Restore…"),
                            QStringLiteral("&Fork…"),
                            QStringLiteral("Re&name…"),
                            QStringLiteral("&Pin"),
                            QStringLiteral("&Delete…"),
                            QStringLiteral("&Take Snapshot…"),
                            QStringLiteral("&Automatic Snapshots…")};
    const QStringList general {QStringLiteral("&Take Snapshot…"),
                               QStringLiteral("&Automatic Snapshots…")};

    // On a marker: that snapshot's actions, and it becomes current.
    const QRect onC = timeline->markerRect(view.model()->indexOf(kC));
    QMenu *menu = openMenu(QContextMenuEvent::Mouse, onC.center());
    QVERIFY(menu);
    QCOMPARE(menuTexts(menu), full);
    QCOMPARE(view.currentSnapshot(), kC);
    menu->close();

    // On empty space, with kC still current: nothing that acts on a snapshot.
    const QPoint empty = emptySpot(*timeline, onC.center().y());
    QVERIFY(!empty.isNull());
    menu = openMenu(QContextMenuEvent::Mouse, empty);
    QVERIFY(menu);
    QCOMPARE(menuTexts(menu), general);
    QCOMPARE(view.currentSnapshot(), kC);
    QVERIFY(!menu->actions().contains(view.deleteAction()));
    menu->close();

    // The keyboard's menu is the current snapshot's.
    menu = openMenu(QContextMenuEvent::Keyboard, {});
    QVERIFY(menu);
    QCOMPARE(menuTexts(menu), full);
    menu->close();
}

void TestSnapshotTimeline::listColumnsFitTheirCells()
{
    // Sizes like "20.0 MiB (1.0 MiB stored)" and times are shown whole, also in a large font
    // (fixed widths cut them off there); the label column keeps its width (long labels elide,
    // the tooltip has them).
    SnapshotsView view(nullptr, nullptr);
    QFont large = view.font();
    large.setPointSizeF(large.pointSizeF() * 1.6);
    view.setFont(large);
    view.resize(1400, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.model()->setSandbox(kName);
    QVERIFY(view.model()->setLists(ownList(), allList()));
    QAbstractItemView *tree = view.findChild<QTreeView *>();
    QVERIFY(tree);
    auto *treeView = static_cast<QTreeView *>(tree);
    for (int column = 1; column < SnapshotTimelineModel::ColumnCount; ++column) {
        // What the view's delegate needs for the widest cell (text, margins).
        const int needed = tree->sizeHintForColumn(column);
        QVERIFY2(treeView->columnWidth(column) >= needed,
                 qPrintable(QStringLiteral("column %1: %2 px of %3")
                                .arg(column)
                                .arg(treeView->columnWidth(column))
                                .arg(needed)));
    }
}

void TestSnapshotTimeline::windowShowsTheSandboxTimeline()
{
    m_helper = std::make_unique<HelperProcess>();
    QVERIFY2(QFileInfo::exists(m_helper->imageStore() + QStringLiteral("/default/image.json")),
             "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    QVERIFY(rpc(QStringLiteral("sandbox.create"), {{QStringLiteral("name"), kName}})
                .contains(QStringLiteral("result")));
    QVERIFY(rpc(QStringLiteral("sandbox.start"), {{QStringLiteral("name"), kName}})
                .contains(QStringLiteral("result")));

    m_client = std::make_unique<HelperClient>(
        std::make_unique<LocalSocketTransport>(m_helper->socketPath()),
        QStringLiteral("tst_snapshottimeline"));
    m_window = std::make_unique<MainWindow>(m_client.get());
    connect(m_window.get(), &MainWindow::actionFailed, this,
            [this](const QString &text, const Error &error) {
                m_failures.append(text + QLatin1Char(' ') + error.message);
            });
    SnapshotsView *view = m_window->snapshotsView();
    connect(view, &SnapshotsView::actionFailed, this,
            [this](const QString &text, const Error &error) {
                m_failures.append(text + QLatin1Char(' ') + error.message);
            });
    m_tester = std::make_unique<QAbstractItemModelTester>(
        view->model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    m_window->show();
    m_client->connectToHelper();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->model()->rowOf(kName) >= 0, 10000);
    m_window->table()->selectRow(m_window->model()->rowOf(kName));
    m_window->showTimeline(kName);
    QCOMPARE(m_window->sections()->currentWidget(), view);
    QCOMPARE(view->sandbox(), kName);
    QTRY_VERIFY(view->model()->isLoaded());
    QCOMPARE(view->model()->snapshotCount(), 0);
    QCOMPARE(view->model()->schedule().intervalMinutes, 0); // off by default
    QTRY_VERIFY_WITH_TIMEOUT(guestReady(m_helper->socketPath(), kName), kBootTimeoutMs);
    QTRY_VERIFY(view->takeSnapshotAction()->isEnabled());
}

void TestSnapshotTimeline::takeSnapshotsThroughTheView()
{
    QVERIFY(m_window);
    SnapshotsView *view = m_window->snapshotsView();
    SnapshotTimelineModel *model = view->model();

    for (const QString &label : {QStringLiteral("first"), QStringLiteral("second")}) {
        const int before = model->snapshotCount();
        view->takeSnapshotAction()->trigger();
        auto *dialog = qobject_cast<QInputDialog *>(view->pendingDialog());
        QVERIFY(dialog);
        dialog->setTextValue(label);
        dialog->accept();
        QTRY_VERIFY_WITH_TIMEOUT(model->snapshotCount() == before + 1 || !m_failures.isEmpty(),
                                 kSnapshotTimeoutMs);
        QVERIFY2(m_failures.isEmpty(), qPrintable(m_failures.join(u'\n')));
        QTRY_VERIFY(findLabel(label).isValid());
        // The head follows (re-read after the notification).
        QTRY_COMPARE(model->head(), idAt(findLabel(label)));
    }
    const QModelIndex first = findLabel(QStringLiteral("first"));
    const QModelIndex second = findLabel(QStringLiteral("second"));
    m_first = idAt(first);
    m_second = idAt(second);
    QCOMPARE(second.parent(), first);
    QCOMPARE(second.data(SnapshotTimelineModel::LaneRole).toInt(), 0);
    const Snapshot *s = model->snapshotAt(second);
    QCOMPARE(s->kind, SnapshotKind::Manual);
    QCOMPARE(s->sandbox, kName);
    QVERIFY(s->logicalBytes >= 256LL << 20);
    QVERIFY(s->newBytes > 0 && s->newBytes < s->logicalBytes); // the second stores what changed
    QVERIFY(s->pauseMs > 0);
    QVERIFY(model->snapshotAt(first)->newBytes > s->newBytes);

    // The newest is current; the details pane and the status line say what happened.
    QCOMPARE(view->currentSnapshot(), m_second);
    const QString details = view->detailsText();
    QVERIFY2(details.contains(QStringLiteral("Label: second")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("Kind: Manual")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("Parent: “first” of")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("Pause time: %1 ms").arg(s->pauseMs)),
             qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("Current state: descends from this snapshot")),
             qPrintable(details));
    QVERIFY2(view->statusText().startsWith(QStringLiteral("Snapshot taken:")),
             qPrintable(view->statusText()));

    // The list shows the same tree; the timeline draws both markers where it finds them.
    QCOMPARE(view->tree()->model(), model);
    view->timeline()->resize(900, 300);
    QCOMPARE(view->timeline()->indexAt(view->timeline()->markerRect(first).center()), first);
    // The helper agrees.
    const QJsonArray listed = RpcTestClient::result(rpc(QStringLiteral("snapshot.list"),
                                                        {{QStringLiteral("name"), kName}}))
                                  .value(QStringLiteral("snapshots"))
                                  .toArray();
    QCOMPARE(listed.size(), 2);
}

void TestSnapshotTimeline::restoreStartsABranch()
{
    QVERIFY(!m_first.isEmpty());
    SnapshotsView *view = m_window->snapshotsView();
    SnapshotTimelineModel *model = view->model();
    view->selectSnapshot(m_first);
    QTRY_VERIFY(view->restoreAction()->isEnabled());
    view->restoreAction()->trigger();
    auto *box = qobject_cast<QMessageBox *>(view->pendingDialog());
    QVERIFY(box);
    QVERIFY2(box->text().contains(QStringLiteral("“first”")), qPrintable(box->text()));
    QVERIFY2(box->informativeText().contains(QStringLiteral("safety snapshot")),
             qPrintable(box->informativeText()));
    // Cancel restores nothing: no call is in flight (actions wait for the one that is).
    box->button(QMessageBox::Cancel)->click();
    QVERIFY(airlock::test::runUntilIdle());
    QVERIFY(view->restoreAction()->isEnabled());
    QCOMPARE(model->snapshotCount(), 2);

    // The Restore button beside the list does what the action does.
    QPushButton *restoreButton = nullptr;
    for (auto *button : view->findChildren<QPushButton *>()) {
        if (button->accessibleName() == QStringLiteral("Restore the selected snapshot"))
            restoreButton = button;
    }
    QVERIFY(restoreButton && restoreButton->isEnabled());
    restoreButton->click();
    box = qobject_cast<QMessageBox *>(view->pendingDialog());
    QVERIFY(box);
    QAbstractButton *restore = buttonWithText(box, QStringLiteral("&Restore"));
    QVERIFY(restore);
    QSignalSpy finished(view, &SnapshotsView::actionFinished);
    restore->click();
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !m_failures.isEmpty(), kSnapshotTimeoutMs);
    QVERIFY2(m_failures.isEmpty(), qPrintable(m_failures.join(u'\n')));
    QCOMPARE(finished.constFirst().constFirst().toString(), QStringLiteral("snapshot.restore"));

    // The safety snapshot of the state before is the second's child; the head is first.
    QTRY_COMPARE(model->snapshotCount(), 3);
    QTRY_COMPARE(model->head(), m_first);
    // The current state is marked on the restored snapshot, not on the newest one.
    SnapshotTimelineView *timeline = view->timeline();
    QTRY_VERIFY(!timeline->currentStateRect().isEmpty());
    QCOMPARE(timeline->currentStateRect().center().x(),
             timeline->markerRect(model->indexOf(m_first)).center().x());
    const QModelIndexList byTime = model->indexesByTime();
    const Snapshot *safety = model->snapshotAt(byTime.constLast());
    QCOMPARE(safety->kind, SnapshotKind::Safety);
    QCOMPARE(safety->parent, m_second);
    // Its label says in words which state it keeps, not the helper's "before restoring ID".
    QCOMPARE(
        byTime.constLast().siblingAtColumn(SnapshotTimelineModel::LabelColumn).data().toString(),
        QStringLiteral("State kept before restoring “first”"));
    QVERIFY2(view->statusText().contains(QStringLiteral("safety snapshot")),
             qPrintable(view->statusText()));
    QTRY_COMPARE(SandboxTableModel::stateText(
                     m_window->model()->sandboxAt(m_window->model()->rowOf(kName))->state),
                 QStringLiteral("Running"));

    // The next snapshot descends from first: a branch of its own.
    view->takeSnapshot(QStringLiteral("after restore"));
    QTRY_VERIFY_WITH_TIMEOUT(findLabel(QStringLiteral("after restore")).isValid()
                                 || !m_failures.isEmpty(),
                             kSnapshotTimeoutMs);
    QVERIFY2(m_failures.isEmpty(), qPrintable(m_failures.join(u'\n')));
    const QModelIndex branch = findLabel(QStringLiteral("after restore"));
    QCOMPARE(idAt(branch.parent()), m_first);
    const int lane = branch.data(SnapshotTimelineModel::LaneRole).toInt();
    QVERIFY(lane > 0);
    QCOMPARE(model->laneTitle(lane), QStringLiteral("branch"));
    QCOMPARE(model->laneCount(), 2);
    QCOMPARE(childIds(*model, model->indexOf(m_first)), (QStringList {m_second, idAt(branch)}));
}

void TestSnapshotTimeline::forkShowsAsAForkBranch()
{
    QVERIFY(!m_second.isEmpty());
    SnapshotsView *view = m_window->snapshotsView();
    SnapshotTimelineModel *model = view->model();
    // A binding on the original, to see what the fork gets.
    QVERIFY(rpc(QStringLiteral("secret.set"),
                {{QStringLiteral("name"), QStringLiteral("tok")},
                 {QStringLiteral("value"), QStringLiteral("timeline-test-value-1")}})
                .contains(QStringLiteral("result")));
    QVERIFY(rpc(QStringLiteral("binding.add"),
                {{QStringLiteral("sandbox"), kName},
                 {QStringLiteral("secret"), QStringLiteral("tok")},
                 {QStringLiteral("host"), QStringLiteral("api.example.com")}})
                .contains(QStringLiteral("result")));

    view->selectSnapshot(m_second);
    QTRY_VERIFY(view->forkAction()->isEnabled());
    view->forkAction()->trigger();
    auto *dialog = qobject_cast<ForkDialog *>(view->pendingDialog());
    QVERIFY(dialog);
    QPushButton *ok = dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
    QVERIFY(!ok->isEnabled());
    QTest::keyClicks(dialog->nameEdit(), kName); // taken
    QVERIFY(!ok->isEnabled());
    QVERIFY2(dialog->problem().contains(QStringLiteral("already exists")),
             qPrintable(dialog->problem()));
    dialog->nameEdit()->setText(QStringLiteral("Bad_Name"));
    QVERIFY(!ok->isEnabled());
    dialog->nameEdit()->setText(kFork);
    QVERIFY(ok->isEnabled());
    bool warned = false;
    for (QLabel *label : dialog->findChildren<QLabel *>())
        warned = warned || label->text().contains(QStringLiteral("not</b> copied"));
    QVERIFY(warned);
    QVERIFY(!dialog->bindingsBox()->isChecked());
    dialog->bindingsBox()->setChecked(true);
    QSignalSpy forked(view, &SnapshotsView::forked);
    ok->click();
    QTRY_VERIFY_WITH_TIMEOUT(!forked.isEmpty() || !m_failures.isEmpty()
                                 || qobject_cast<QMessageBox *>(view->pendingDialog()),
                             kSnapshotTimeoutMs);
    if (auto *refused = qobject_cast<QMessageBox *>(view->pendingDialog())) {
        // A helper that refuses `bindings`: the window says so and offers the fork without.
        QVERIFY2(refused->text().contains(QStringLiteral("cannot copy credential bindings")),
                 qPrintable(refused->text()));
        m_failures.clear();
        buttonWithText(refused, QStringLiteral("Fork &Without Bindings"))->click();
        QTRY_VERIFY_WITH_TIMEOUT(!forked.isEmpty() || !m_failures.isEmpty(), kSnapshotTimeoutMs);
    }
    QVERIFY2(m_failures.isEmpty(), qPrintable(m_failures.join(u'\n')));
    QCOMPARE(forked.constFirst().constFirst().toString(), kFork);
    QTRY_VERIFY(m_window->model()->rowOf(kFork) >= 0);
    QTRY_COMPARE(m_window->model()->sandboxAt(m_window->model()->rowOf(kFork))->state,
                 SandboxState::Running);

    // Before it has a snapshot of its own the fork shows as a stub lane from second.
    QTRY_COMPARE(model->forkStubs().size(), 1);
    QCOMPARE(model->forkStubs().constFirst().sandbox, kFork);
    QCOMPARE(model->forkStubs().constFirst().from, m_second);
    QCOMPARE(model->laneTitle(model->forkStubs().constFirst().lane),
             QStringLiteral("fork: %1").arg(kFork));
    QCOMPARE(model->laneCount(), 3);

    // What the status line says about bindings is what the helper did.
    const int copied = int(RpcTestClient::result(rpc(QStringLiteral("binding.list"),
                                                     {{QStringLiteral("sandbox"), kFork}}))
                               .value(QStringLiteral("bindings"))
                               .toArray()
                               .size());
    QTRY_VERIFY(view->statusText().contains(QStringLiteral("credential binding")));
    qInfo("the fork got %d binding(s): %s", copied, qPrintable(view->statusText()));
    if (copied > 0)
        QVERIFY2(view->statusText().contains(QStringLiteral("with 1 credential binding")),
                 qPrintable(view->statusText()));
    else
        QVERIFY2(view->statusText().contains(QStringLiteral("did not copy"))
                     || view->statusText().contains(QStringLiteral("were not copied")),
                 qPrintable(view->statusText()));

    // The fork's first snapshot descends from second: it shows here as a fork branch, live.
    const QJsonObject forkSnapshot = RpcTestClient::result(rpc(
        QStringLiteral("snapshot.create"),
        {{QStringLiteral("name"), kFork}, {QStringLiteral("label"), QStringLiteral("in fork")}}));
    const QString forkId = forkSnapshot.value(QStringLiteral("id")).toString();
    QVERIFY(!forkId.isEmpty());
    QTRY_VERIFY(model->indexOf(forkId).isValid());
    const QModelIndex inFork = model->indexOf(forkId);
    QCOMPARE(idAt(inFork.parent()), m_second);
    QVERIFY(inFork.data(SnapshotTimelineModel::ForeignRole).toBool());
    QCOMPARE(model->laneTitle(inFork.data(SnapshotTimelineModel::LaneRole).toInt()),
             QStringLiteral("fork: %1").arg(kFork));
    QCOMPARE(model->laneCount(), 3);
    QTRY_VERIFY(model->forkStubs().isEmpty()); // its snapshot took the lane
    // Restoring another sandbox's snapshot is not offered (its memory is the fork's).
    view->selectSnapshot(forkId);
    QVERIFY(!view->restoreAction()->isEnabled());
    QVERIFY(view->forkAction()->isEnabled());
    QVERIFY(view->detailsText().contains(QStringLiteral("Sandbox: %1").arg(kFork)));

    // The fork's own timeline starts at the snapshot it was made from (another sandbox's).
    SnapshotTimelineModel forkModel;
    QAbstractItemModelTester tester(&forkModel,
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    forkModel.setClient(m_client.get());
    forkModel.setSandbox(kFork);
    QTRY_VERIFY(forkModel.isLoaded());
    QCOMPARE(forkModel.snapshotCount(), 1);
    QCOMPARE(forkModel.laneTitle(0), QStringLiteral("from another sandbox"));
    QCOMPARE(forkModel.head(), forkId);
}

void TestSnapshotTimeline::pinRenameDeleteThroughTheActions()
{
    QVERIFY(!m_first.isEmpty());
    SnapshotsView *view = m_window->snapshotsView();
    SnapshotTimelineModel *model = view->model();
    auto helperSnapshot = [this](const QString &id) {
        const QJsonArray all = RpcTestClient::result(rpc(QStringLiteral("snapshot.list"), {}))
                                   .value(QStringLiteral("snapshots"))
                                   .toArray();
        for (const QJsonValue &value : all) {
            if (value.toObject().value(QStringLiteral("id")).toString() == id)
                return value.toObject();
        }
        return QJsonObject();
    };

    // Pin, then unpin.
    view->selectSnapshot(m_first);
    QCOMPARE(view->pinAction()->text(), QStringLiteral("&Pin"));
    view->pinAction()->trigger();
    QTRY_VERIFY(model->indexOf(m_first).data(SnapshotTimelineModel::PinnedRole).toBool());
    QVERIFY(helperSnapshot(m_first).value(QStringLiteral("pinned")).toBool());
    QTRY_COMPARE(view->pinAction()->text(), QStringLiteral("Un&pin"));
    QVERIFY(view->detailsText().contains(QStringLiteral("Pinned: yes")));
    view->pinAction()->trigger();
    QTRY_VERIFY(!model->indexOf(m_first).data(SnapshotTimelineModel::PinnedRole).toBool());
    QVERIFY(!helperSnapshot(m_first).value(QStringLiteral("pinned")).toBool());

    // Rename through the dialog; a label the helper would refuse is refused before.
    view->renameAction()->trigger();
    auto *dialog = qobject_cast<QInputDialog *>(view->pendingDialog());
    QVERIFY(dialog);
    QCOMPARE(dialog->textValue(), QStringLiteral("first"));
    dialog->setTextValue(QStringLiteral("clean boot"));
    dialog->accept();
    QTRY_COMPARE(model->snapshotAt(model->indexOf(m_first))->label, QStringLiteral("clean boot"));
    QCOMPARE(helperSnapshot(m_first).value(QStringLiteral("label")).toString(),
             QStringLiteral("clean boot"));
    QSignalSpy failed(view, &SnapshotsView::actionFailed);
    view->rename(m_first, QStringLiteral("bad\nlabel"));
    QCOMPARE(failed.count(), 1);
    QCOMPARE(model->snapshotAt(model->indexOf(m_first))->label, QStringLiteral("clean boot"));
    m_failures.clear();
    if (auto *box = view->findChild<QMessageBox *>())
        box->close();

    // Delete second (it has the safety snapshot and the fork's snapshot below it): they take
    // its parent, here and in the helper.
    const QModelIndexList children = [&] {
        QModelIndexList list;
        const QModelIndex second = model->indexOf(m_second);
        for (int row = 0; row < model->rowCount(second); ++row)
            list.append(model->index(row, 0, second));
        return list;
    }();
    QCOMPARE(children.size(), 2);
    const QStringList childIdsBefore {idAt(children.at(0)), idAt(children.at(1))};
    // The re-read the removal schedules (the model's "reread" timer), and its answer applied.
    auto *reread = model->findChild<QTimer *>(QStringLiteral("reread"));
    QVERIFY(reread);
    QObject tracking;
    bool rereadFired = false;
    bool rereadApplied = false;
    connect(reread, &QTimer::timeout, &tracking, [&] {
        rereadFired = true;
        rereadApplied = false;
    });
    connect(model, &SnapshotTimelineModel::loaded, &tracking, [&] { rereadApplied = rereadFired; });
    view->selectSnapshot(m_second);
    view->deleteAction()->trigger();
    auto *box = qobject_cast<QMessageBox *>(view->pendingDialog());
    QVERIFY(box);
    QVERIFY(box->informativeText().contains(QStringLiteral("cannot be undone")));
    buttonWithText(box, QStringLiteral("&Delete"))->click();
    QTRY_VERIFY(!model->indexOf(m_second).isValid());
    for (const QString &child : childIdsBefore) {
        QCOMPARE(idAt(model->indexOf(child).parent()), m_first);
        QCOMPARE(helperSnapshot(child).value(QStringLiteral("parent")).toString(), m_first);
    }
    QVERIFY(helperSnapshot(m_second).isEmpty());
    // After the re-read the tree still agrees (no reset back to an old shape).
    QTRY_VERIFY(rereadApplied && !reread->isActive());
    QCOMPARE(childIds(*model, model->indexOf(m_first)).size(), 3);
}

void TestSnapshotTimeline::contextMenuOffersTheActions()
{
    QVERIFY(!m_first.isEmpty());
    SnapshotsView *view = m_window->snapshotsView();
    SnapshotTimelineView *timeline = view->timeline();
    timeline->resize(900, timeline->sizeHint().height());
    const QRect marker = timeline->markerRect(view->model()->indexOf(m_first));
    QVERIFY(!marker.isEmpty());
    QContextMenuEvent event(QContextMenuEvent::Mouse, marker.center(),
                            timeline->mapToGlobal(marker.center()));
    QApplication::sendEvent(timeline, &event);
    QCOMPARE(view->currentSnapshot(), m_first);
    QMenu *menu = nullptr;
    QTRY_VERIFY((menu = view->findChild<QMenu *>()) != nullptr && menu->isVisible());
    QStringList texts;
    for (QAction *action : menu->actions()) {
        if (!action->isSeparator())
            texts.append(action->text());
    }
    QCOMPARE(texts,
             (QStringList {QStringLiteral("&Restore…"), QStringLiteral("&Fork…"),
                           QStringLiteral("Re&name…"), QStringLiteral("&Pin"),
                           QStringLiteral("&Delete…"), QStringLiteral("&Take Snapshot…"),
                           QStringLiteral("&Automatic Snapshots…")}));
    // An item picked from the menu goes to the helper.
    QVERIFY(menu->actions().contains(view->pinAction()));
    view->pinAction()->trigger();
    const QPointer<QMenu> first(menu); // deletes itself once closed
    menu->close();
    QTRY_VERIFY(view->model()->indexOf(m_first).data(SnapshotTimelineModel::PinnedRole).toBool());
    bool pinnedThere = false;
    const QJsonArray listed = RpcTestClient::result(rpc(QStringLiteral("snapshot.list"),
                                                        {{QStringLiteral("name"), kName}}))
                                  .value(QStringLiteral("snapshots"))
                                  .toArray();
    for (const QJsonValue &value : listed) {
        if (value.toObject().value(QStringLiteral("id")).toString() == m_first)
            pinnedThere = value.toObject().value(QStringLiteral("pinned")).toBool();
    }
    QVERIFY(pinnedThere);
    // The keyboard opens the same menu (Menu key / Shift+F10) on the current snapshot.
    QContextMenuEvent keyboard(QContextMenuEvent::Keyboard, QPoint(), QPoint());
    QApplication::sendEvent(timeline, &keyboard);
    QMenu *again = nullptr;
    QTRY_VERIFY([&] {
        for (QMenu *candidate : view->findChildren<QMenu *>()) {
            if (candidate != first.data() && candidate->isVisible())
                again = candidate;
        }
        return again != nullptr;
    }());
    QVERIFY(again->actions().contains(view->pinAction()));
    QCOMPARE(view->pinAction()->text(), QStringLiteral("Un&pin"));
    again->close();
}

void TestSnapshotTimeline::scheduleDialogSetsRetention()
{
    QVERIFY(m_window);
    SnapshotsView *view = m_window->snapshotsView();
    view->scheduleAction()->trigger();
    auto *dialog = qobject_cast<ScheduleDialog *>(view->pendingDialog());
    QVERIFY(dialog);
    QVERIFY(!dialog->enabledBox()->isChecked());
    QVERIFY(!dialog->intervalBox()->isEnabled());
    dialog->enabledBox()->setChecked(true);
    QVERIFY(dialog->intervalBox()->isEnabled());
    dialog->intervalBox()->setValue(30);
    dialog->hourlyBox()->setValue(12);
    dialog->dailyBox()->setValue(3);
    dialog->accept();
    QTRY_COMPARE(view->model()->schedule().intervalMinutes, 30);
    QCOMPARE(view->model()->schedule().dailyDays, 3);
    const QJsonObject stored = RpcTestClient::result(
        rpc(QStringLiteral("snapshot.schedule"), {{QStringLiteral("name"), kName}}));
    QCOMPARE(stored.value(QStringLiteral("intervalMinutes")).toInt(), 30);
    QCOMPARE(stored.value(QStringLiteral("hourlyHours")).toInt(), 12);
    QCOMPARE(stored.value(QStringLiteral("dailyDays")).toInt(), 3);
    // The retention window the timeline shades starts three days back.
    QTRY_VERIFY(
        qAbs(view->model()->retainedSince().secsTo(QDateTime::currentDateTimeUtc().addDays(-3)))
        < 120);
    QVERIFY(view->statusText().contains(QStringLiteral("every 30 min")));
}

void TestSnapshotTimeline::pauseAndResumeShowAsStates()
{
    QVERIFY(m_window);
    SandboxTableModel *sandboxes = m_window->model();
    m_window->table()->selectRow(sandboxes->rowOf(kName));
    auto stateText = [&] {
        return sandboxes->index(sandboxes->rowOf(kName), SandboxTableModel::StateColumn)
            .data()
            .toString();
    };
    auto sidebarTip = [&] {
        const QList<QTreeWidgetItem *> items =
            m_window->sidebar()->findItems(kName, Qt::MatchExactly | Qt::MatchRecursive);
        return items.isEmpty() ? QString() : items.constFirst()->toolTip(0);
    };
    QAction *pause = nullptr;
    QAction *resume = nullptr;
    for (QAction *action : m_window->findChildren<QAction *>()) {
        if (action->text() == QStringLiteral("&Pause") && action->parent() == m_window.get())
            pause = action;
        if (action->text() == QStringLiteral("Res&ume"))
            resume = action;
    }
    QVERIFY(pause && resume);
    QTRY_VERIFY(pause->isEnabled());
    QVERIFY(!resume->isEnabled());
    pause->trigger();
    QTRY_COMPARE(stateText(), QStringLiteral("Paused"));
    QTRY_COMPARE(sidebarTip(), QStringLiteral("Paused"));
    QTRY_VERIFY(resume->isEnabled());
    QVERIFY(!pause->isEnabled());
    QCOMPARE(
        RpcTestClient::result(rpc(QStringLiteral("sandbox.get"), {{QStringLiteral("name"), kName}}))
            .value(QStringLiteral("state"))
            .toString(),
        QStringLiteral("paused"));
    // A paused guest can still be snapshotted from the timeline.
    QVERIFY(m_window->snapshotsView()->takeSnapshotAction()->isEnabled());
    resume->trigger();
    QTRY_COMPARE(stateText(), QStringLiteral("Running"));
    QTRY_COMPARE(sidebarTip(), QStringLiteral("Running"));
    QVERIFY(m_failures.isEmpty());
}

void TestSnapshotTimeline::forkWhoseGuestKeepsItsIdentityWarns()
{
    QVERIFY(m_window);
    SnapshotsView *view = m_window->snapshotsView();
    SandboxTableModel *sandboxes = m_window->model();
    // The earlier fork is not needed any more: one guest less for the emulated CPUs.
    QVERIFY(rpc(QStringLiteral("sandbox.kill"), {{QStringLiteral("name"), kFork}})
                .contains(QStringLiteral("result")));
    // The original, restored in place earlier, confirmed its identity: no warning.
    m_window->table()->selectRow(sandboxes->rowOf(kName));
    QString details = m_window->details()->text();
    QVERIFY2(details.contains(QStringLiteral("Started: from snapshot")), qPrintable(details));
    QVERIFY(m_window->details()->identityWarningText().isEmpty());

    // A snapshot whose guest agent cannot apply a new name (tst_guestidentity's way:
    // /etc/hostname is a directory), then the original is put right again.
    GuestConsole console(m_helper->socketPath(), kName);
    QVERIFY(!console.run("rm -f /etc/hostname; mkdir /etc/hostname").isNull());
    const QJsonObject broken = RpcTestClient::result(
        rpc(QStringLiteral("snapshot.create"),
            {{QStringLiteral("name"), kName}, {QStringLiteral("label"), QStringLiteral("broken")}},
            kSnapshotTimeoutMs));
    const QString brokenId = broken.value(QStringLiteral("id")).toString();
    QVERIFY(!brokenId.isEmpty());
    QVERIFY(!console.run("rmdir /etc/hostname; hostname > /etc/hostname").isNull());

    // Forked from the timeline: it runs, and the window says at once what is wrong and what
    // to do.
    const QString name = QStringLiteral("tl-stale");
    QTRY_VERIFY(view->model()->indexOf(brokenId).isValid());
    view->selectSnapshot(brokenId);
    QTRY_VERIFY(view->forkAction()->isEnabled());
    view->forkAction()->trigger();
    auto *dialog = qobject_cast<ForkDialog *>(view->pendingDialog());
    QVERIFY(dialog);
    dialog->nameEdit()->setText(name);
    QSignalSpy forked(view, &SnapshotsView::forked);
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
    QTRY_VERIFY_WITH_TIMEOUT(!forked.isEmpty() || !m_failures.isEmpty(), kSnapshotTimeoutMs);
    QVERIFY2(m_failures.isEmpty(), qPrintable(m_failures.join(u'\n')));
    auto *box = qobject_cast<QMessageBox *>(view->pendingDialog());
    QVERIFY2(box, qPrintable(view->statusText()));
    QVERIFY2(box->text().contains(QStringLiteral("did not confirm its new identity")),
             qPrintable(box->text()));
    QVERIFY2(box->informativeText().contains(QStringLiteral("Restart %1").arg(name)),
             qPrintable(box->informativeText()));
    QVERIFY2(box->informativeText().contains(QStringLiteral("step name")),
             qPrintable(box->informativeText()));
    QVERIFY2(view->statusText().contains(QStringLiteral("Restart %1").arg(name)),
             qPrintable(view->statusText()));
    QAbstractButton *restartNow = buttonWithText(box, QStringLiteral("&Restart Now"));
    QVERIFY(restartNow);

    // The table's badge and the details say it too, with the helper's words.
    const QString helperWords =
        RpcTestClient::result(rpc(QStringLiteral("sandbox.get"), {{QStringLiteral("name"), name}}))
            .value(QStringLiteral("identityWarning"))
            .toString();
    QVERIFY(!helperWords.isEmpty());
    QTRY_VERIFY(sandboxes->rowOf(name) >= 0);
    const QModelIndex row = sandboxes->index(sandboxes->rowOf(name), SandboxTableModel::NameColumn);
    QCOMPARE(row.data(SandboxTableModel::IdentityWarningRole).toString(), helperWords);
    QVERIFY(!row.data(Qt::DecorationRole).isNull());
    QVERIFY(row.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Restart the sandbox")));
    QVERIFY(row.data(Qt::ToolTipRole).toString().contains(helperWords));
    m_window->table()->selectRow(row.row());
    details = m_window->details()->text();
    QVERIFY2(details.contains(QStringLiteral("Started: from snapshot")), qPrintable(details));
    QVERIFY2(m_window->details()->identityWarningText().contains(helperWords),
             qPrintable(m_window->details()->identityWarningText()));
    QVERIFY(!m_window->details()->restartButton()->isHidden());

    // What the message offers is what fixes it: Restart Now stops the guest and starts it
    // again, and the new guest has its own identity (a cold boot, or a template start whose
    // guest confirmed it).
    // Stopped is passed through at once (the start follows), so it is caught as it passes.
    bool stoppedWithoutBadge = false;
    const QMetaObject::Connection watch =
        connect(sandboxes, &QAbstractItemModel::dataChanged, this, [&] {
            const int at = sandboxes->rowOf(name);
            if (at >= 0 && sandboxes->sandboxAt(at)->state == SandboxState::Stopped)
                stoppedWithoutBadge = sandboxes->index(at, 0).data(Qt::DecorationRole).isNull();
        });
    restartNow->click();
    QTRY_VERIFY_WITH_TIMEOUT(stoppedWithoutBadge, 120000);
    disconnect(watch);
    QTRY_VERIFY_WITH_TIMEOUT(sandboxes->sandboxAt(sandboxes->rowOf(name))->state
                                     == SandboxState::Running
                                 || !m_failures.isEmpty(),
                             120000);
    QVERIFY2(m_failures.isEmpty(), qPrintable(m_failures.join(u'\n')));
    const Sandbox *again = sandboxes->sandboxAt(sandboxes->rowOf(name));
    QVERIFY(again->identityWarning.isEmpty());
    QVERIFY(again->startedFrom == StartSource::Boot || again->startedFrom == StartSource::Template);
    QVERIFY(sandboxes->index(sandboxes->rowOf(name), 0).data(Qt::DecorationRole).isNull());
    m_window->table()->selectRow(sandboxes->rowOf(name));
    QVERIFY(m_window->details()->identityWarningText().isEmpty());
    QVERIFY(m_window->details()->restartButton()->isHidden());
    qInfo("restarted: %s",
          qPrintable(m_window->details()->text().replace(u'\n', QStringLiteral("; "))));
    QVERIFY(rpc(QStringLiteral("sandbox.kill"), {{QStringLiteral("name"), name}})
                .contains(QStringLiteral("result")));
}

QTEST_MAIN(TestSnapshotTimeline)
#include "tst_snapshottimeline.moc"

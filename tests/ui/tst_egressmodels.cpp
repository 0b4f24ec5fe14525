#include "core/model/egressreason.h"
#include "core/policy/policymatcher.h"
#include "ui/bindingtablemodel.h"
#include "ui/destinationcountmodel.h"
#include "ui/dryrunmodel.h"
#include "ui/egresseventmodel.h"
#include "ui/egressfilterproxy.h"
#include "ui/egressmapview.h"
#include "ui/egressview.h"
#include "ui/learnlistmodel.h"
#include "ui/policydiff.h"
#include "ui/policyrulemodel.h"
#include "ui/policytext.h"
#include "ui/probingmonitor.h"
#include "ui/resources.h"
#include "ui/secretlistmodel.h"

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QJsonArray>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTranslator>
#include <QUndoStack>

using namespace airlock;

namespace {

// Recorded events in the shape of EgressEvent::toJson (docs/gateway.md, "Events").
QJsonObject makeEvent(const QString &sandbox, const QString &name, bool allowed,
                      const QString &reason, const QString &method = QStringLiteral("GET"),
                      const QString &path = QStringLiteral("/"), int port = 443)
{
    return {
        {QStringLiteral("time"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
        {QStringLiteral("sandbox"), sandbox},
        {QStringLiteral("layer"), QStringLiteral("http")},
        {QStringLiteral("verdict"), allowed ? QStringLiteral("allowed") : QStringLiteral("denied")},
        {QStringLiteral("reason"), reason},
        {QStringLiteral("name"), name},
        {QStringLiteral("sni"), name},
        {QStringLiteral("host"), name},
        {QStringLiteral("port"), port},
        {QStringLiteral("method"), method},
        {QStringLiteral("path"), path}};
}

QJsonObject notification(qint64 seq, const QJsonObject &e)
{
    return {{QStringLiteral("sandbox"), e.value(QStringLiteral("sandbox"))},
            {QStringLiteral("seq"), seq},
            {QStringLiteral("event"), e}};
}

// Every string any role of any cell holds, for "the model never holds X" checks.
QStringList allStrings(QAbstractItemModel &model)
{
    QStringList strings;
    for (int row = 0; row < model.rowCount(); ++row) {
        for (int column = 0; column < model.columnCount(); ++column) {
            for (int role = 0; role < Qt::UserRole + 16; ++role)
                strings.append(model.index(row, column).data(role).toString());
        }
    }
    return strings;
}

} // namespace

/// The window's egress, policy and credential models with recorded events (no helper needed).
class TestEgressModels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { initUiResources(); }
    void ruleModelValidatesLikeTheGateway_data();
    void ruleModelValidatesLikeTheGateway();
    void ruleModelUndoRedo();
    void policyDiff();
    void eventModelRedactsAndFilters();
    void everyReasonHasWords_data();
    void everyReasonHasWords();
    void historyAndLiveAreKeptOnce();
    void eventTableHeadersFitInGerman();
    void destinationsAndMap();
    void repeatsFoldIntoOneRow();
    void mapSumsUpWhatDoesNotFit();
    void mapFollowsTheSelectedSandbox();
    void probingAlert();
    void summariesCountInFull();
    void learnModeCollectsDeniedOnly();
    void allowThisHostProposesRule();
    void dryRunModel();
    void secretAndBindingModels();
};

void TestEgressModels::ruleModelValidatesLikeTheGateway_data()
{
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("problemContains"); // empty: no problem

    QTest::newRow("ok") << int(PolicyRuleModel::HostColumn) << "pypi.org"
                        << "";
    QTest::newRow("upper case is canonicalized") << int(PolicyRuleModel::HostColumn) << "PyPI.org."
                                                 << "";
    QTest::newRow("ip literal") << int(PolicyRuleModel::HostColumn) << "127.0.0.1"
                                << "IP address";
    QTest::newRow("inet_aton spelling") << int(PolicyRuleModel::HostColumn) << "0x7f.1"
                                        << "IP address";
    QTest::newRow("too broad") << int(PolicyRuleModel::HostColumn) << "*.test"
                               << "top-level domain";
    QTest::newRow("userinfo") << int(PolicyRuleModel::HostColumn) << "user@pypi.org"
                              << "'@'";
    QTest::newRow("port in host") << int(PolicyRuleModel::HostColumn) << "pypi.org:443"
                                  << "Ports column";
    QTest::newRow("bad port") << int(PolicyRuleModel::PortsColumn) << "443, 70000"
                              << "70000";
    QTest::newRow("duplicate port") << int(PolicyRuleModel::PortsColumn) << "443 443"
                                    << "twice";
    QTest::newRow("lower-case method") << int(PolicyRuleModel::MethodsColumn) << "get"
                                       << "case-sensitive";
    QTest::newRow("dot segment") << int(PolicyRuleModel::PathsColumn) << "/a/../b"
                                 << "..";
    QTest::newRow("query in path") << int(PolicyRuleModel::PathsColumn) << "/a?x"
                                   << "'?'";
}

void TestEgressModels::ruleModelValidatesLikeTheGateway()
{
    QFETCH(int, column);
    QFETCH(QString, text);
    QFETCH(QString, problemContains);

    PolicyRuleModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setPolicy(EgressPolicy {{EgressRule {QStringLiteral("pypi.org")}}});
    QVERIFY(model.setData(model.index(0, column), text));
    const QString problem = model.index(0, column).data(PolicyRuleModel::ProblemRole).toString();
    if (problemContains.isEmpty()) {
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        auto policy = model.policy();
        QVERIFY(policy);
        // The same verdict as the gateway's own check of the built rule.
        QVERIFY(airlock::policy::PolicyMatcher::create(*policy).has_value());
        if (column == PolicyRuleModel::HostColumn)
            QCOMPARE(policy->rules.first().host, QStringLiteral("pypi.org"));
    } else {
        QVERIFY2(problem.contains(problemContains), qPrintable(problem));
        QCOMPARE(model.index(0, PolicyRuleModel::ProblemColumn).data().toString(), problem);
        QVERIFY(!model.policy());
        // The gateway refuses the same input.
        EgressRule rule;
        rule.host = model.draftAt(0).host;
        QVERIFY(column != PolicyRuleModel::HostColumn
                || !airlock::policy::PolicyMatcher::create(EgressPolicy {{rule}}).has_value());
    }
}

void TestEgressModels::ruleModelUndoRedo()
{
    PolicyRuleModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setPolicy({});
    model.addEmptyRule();
    QVERIFY(model.setData(model.index(0, PolicyRuleModel::HostColumn), QStringLiteral("a.test")));
    model.addRules({EgressRule {QStringLiteral("b.test")}}, QStringLiteral("add"));
    model.removeRules({0});
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.draftAt(0).host, QStringLiteral("b.test"));
    model.undoStack()->undo(); // remove
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.draftAt(0).host, QStringLiteral("a.test"));
    model.undoStack()->undo(); // add b.test
    model.undoStack()->undo(); // edit host
    QCOMPARE(model.draftAt(0).host, QString());
    model.undoStack()->redo();
    QCOMPARE(model.draftAt(0).host, QStringLiteral("a.test"));
    model.setHelperErrors(
        {{0, QStringLiteral("host"), QStringLiteral("rule 0, field 'host': no")}});
    QCOMPARE(model.rowProblem(0), QStringLiteral("rule 0, field 'host': no"));
    QVERIFY(model.setData(model.index(0, PolicyRuleModel::CommentColumn), QStringLiteral("x")));
    QVERIFY(model.rowProblem(0).isEmpty());
}

void TestEgressModels::policyDiff()
{
    const EgressRule a {QStringLiteral("a.test")};
    const EgressRule b {QStringLiteral("b.test")};
    EgressRule b2 = b;
    b2.methods = {QStringLiteral("GET")};
    const EgressRule c {QStringLiteral("c.test")};
    const QList<PolicyChange> changes =
        PolicyDiff::compute(EgressPolicy {{a, b}}, EgressPolicy {{a, b2, c}});
    QCOMPARE(changes.size(), 2);
    QCOMPARE(changes.at(0).kind, PolicyChange::Kind::Changed);
    QCOMPARE(changes.at(0).after.host, QStringLiteral("b.test"));
    QVERIFY(PolicyDiff::describe(changes.at(0)).contains(QStringLiteral("methods any → GET")));
    QCOMPARE(changes.at(1).kind, PolicyChange::Kind::Added);
    QCOMPARE(changes.at(1).afterIndex, 2);
    const QList<PolicyChange> removed =
        PolicyDiff::compute(EgressPolicy {{a, c}}, EgressPolicy {{c}});
    QCOMPARE(removed.size(), 1);
    QCOMPARE(removed.first().kind, PolicyChange::Kind::Removed);
    QVERIFY(PolicyDiff::compute(EgressPolicy {{a}}, EgressPolicy {{a}}).isEmpty());
}

void TestEgressModels::eventModelRedactsAndFilters()
{
    EgressEventModel model;
    EgressFilterProxy proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(&proxy,
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    QJsonObject leaky = makeEvent(QStringLiteral("agent"), QStringLiteral("pypi.org"), true,
                                  QStringLiteral("allowed"));
    leaky.insert(QStringLiteral("path"), QStringLiteral("/simple/?token=SECRET#frag"));
    QVERIFY(model.handleNotification(QStringLiteral("egress.event"), notification(1, leaky)));
    model.handleNotification(
        QStringLiteral("egress.event"),
        notification(2,
                     makeEvent(QStringLiteral("agent"), QStringLiteral("evil.test"), false,
                               QStringLiteral("host_not_allowed"))));
    model.handleNotification(
        QStringLiteral("egress.event"),
        notification(3,
                     makeEvent(QStringLiteral("other"), QStringLiteral("npmjs.org"), false,
                               QStringLiteral("path_not_allowed"))));
    QVERIFY(!model.handleNotification(QStringLiteral("sandbox.changed"), {}));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.index(0, EgressEventModel::PathColumn).data().toString(),
             QStringLiteral("/simple/"));
    QVERIFY(!allStrings(model).join(QString()).contains(QStringLiteral("SECRET")));
    QCOMPARE(model.index(1, EgressEventModel::VerdictColumn).data().toString(),
             QStringLiteral("Denied"));
    QCOMPARE(model.index(1, EgressEventModel::ReasonColumn).data().toString(),
             QStringLiteral("Host not allowed"));

    proxy.setSandbox(QStringLiteral("agent"));
    QCOMPARE(proxy.rowCount(), 2);
    proxy.setVerdict(EgressFilterProxy::Verdict::Denied);
    QCOMPARE(proxy.rowCount(), 1);
    proxy.setSandbox({});
    QCOMPARE(proxy.rowCount(), 2);
    proxy.setText(QStringLiteral("NPMJS"));
    QCOMPARE(proxy.rowCount(), 1);
    proxy.setText(QStringLiteral("path not allowed"));
    QCOMPARE(proxy.rowCount(), 1);
}

void TestEgressModels::everyReasonHasWords_data()
{
    // Every reason an egress event can carry, gateway and helper alike: the one reason table
    // (core/model/egressreason.h; docs/gateway.md "Events", protocol.md EgressEvent).
    QTest::addColumn<QString>("reason");
    QSet<QString> reasons;
    for (const EgressReasonInfo &row : egressReasons())
        reasons.insert(wireName(row.reason));
    QStringList sorted(reasons.cbegin(), reasons.cend());
    sorted.sort();
    QVERIFY(sorted.size() >= 55);
    for (const QString &reason : std::as_const(sorted))
        QTest::newRow(qPrintable(reason)) << reason;
}

void TestEgressModels::everyReasonHasWords()
{
    QFETCH(QString, reason);
    const QString english = PolicyText::reasonText(reason);
    QVERIFY2(!english.isEmpty() && english != reason, qPrintable(english));
    QVERIFY2(!english.contains(u'_'), qPrintable(english));
    // And in German, from the translation the window loads (translations/airlock_de.ts).
    static QTranslator german;
    static const bool loaded = german.load(QStringLiteral(":/i18n/airlock_de.qm"));
    QVERIFY(loaded);
    const QString translated = german.translate("PolicyText", english.toUtf8().constData());
    QVERIFY2(!translated.isEmpty() && translated != english, qPrintable(english));
    // The table shows the words, the search finds the code and the words.
    EgressEventModel model;
    QJsonObject e = makeEvent(QStringLiteral("agent"), QStringLiteral("pkg.test"), false, reason);
    QVERIFY(model.handleNotification(QStringLiteral("egress.event"), notification(1, e)));
    QCOMPARE(model.index(0, EgressEventModel::ReasonColumn).data().toString(), english);
    const QString search = model.index(0, 0).data(EgressEventModel::SearchTextRole).toString();
    QVERIFY(search.contains(reason) && search.contains(english));
}

void TestEgressModels::eventTableHeadersFitInGerman()
{
    QTranslator german;
    QVERIFY(german.load(QStringLiteral(":/i18n/airlock_de.qm")));
    QCoreApplication::installTranslator(&german);
    const auto english = qScopeGuard([&german] { QCoreApplication::removeTranslator(&german); });
    EgressView view(nullptr, nullptr);
    QTableView *table = view.eventTable();
    QCOMPARE(table->model()->headerData(EgressEventModel::VerdictColumn, Qt::Horizontal),
             QVariant(QStringLiteral("Entscheidung")));
    for (int column = 0; column < EgressEventModel::ColumnCount; ++column) {
        const int needed = table->horizontalHeader()->sectionSizeHint(column);
        QVERIFY2(table->columnWidth(column) >= needed,
                 qPrintable(QStringLiteral("%1: %2 px of %3")
                                .arg(table->model()->headerData(column, Qt::Horizontal).toString())
                                .arg(table->columnWidth(column))
                                .arg(needed)));
    }
}

void TestEgressModels::historyAndLiveAreKeptOnce()
{
    EgressEventModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy added(&model, &EgressEventModel::entryAdded);
    const QJsonObject e1 = makeEvent(QStringLiteral("agent"), QStringLiteral("a.test"), true,
                                     QStringLiteral("allowed"));
    model.handleNotification(QStringLiteral("egress.event"), notification(5, e1));
    const QJsonObject history {
        {QStringLiteral("name"), QStringLiteral("agent")},
        {QStringLiteral("events"),
         QJsonArray {QJsonObject {{QStringLiteral("seq"), 4},
                                  {QStringLiteral("event"),
                                   makeEvent(QStringLiteral("agent"), QStringLiteral("b.test"),
                                             false, QStringLiteral("host_not_allowed"))}},
                     QJsonObject {{QStringLiteral("seq"), 5}, {QStringLiteral("event"), e1}}}}};
    QCOMPARE(model.addHistory(history), 1);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.addHistory(history), 0);
    QCOMPARE(added.count(), 2);
    QCOMPARE(added.at(1).at(1).toBool(), false); // history is not live
}

void TestEgressModels::destinationsAndMap()
{
    DestinationCountModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (int i = 0; i < 3; ++i)
        model.add(
            *EgressEntry::fromJson(makeEvent(QStringLiteral("agent"), QStringLiteral("pypi.org"),
                                             true, QStringLiteral("allowed")),
                                   {}));
    model.add(*EgressEntry::fromJson(makeEvent(QStringLiteral("agent"), QStringLiteral("pypi.org"),
                                               false, QStringLiteral("method_not_allowed")),
                                     {}));
    model.add(*EgressEntry::fromJson(makeEvent(QStringLiteral("agent"), QStringLiteral("evil.test"),
                                               false, QStringLiteral("host_not_allowed")),
                                     {}));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, DestinationCountModel::AllowedColumn).data().toInt(), 3);
    QCOMPARE(model.index(0, DestinationCountModel::DeniedColumn).data().toInt(), 1);

    EgressMapView map;
    map.setModel(&model);
    map.setSandbox(QStringLiteral("agent"));
    QCOMPARE(map.summary(),
             QStringLiteral("pypi.org: 3 allowed, 1 denied\nevil.test: 0 allowed, "
                            "1 denied"));
    QCOMPARE(map.accessibleDescription(), map.summary());
    map.resize(500, 400);
    QImage image(map.size(), QImage::Format_ARGB32);
    map.render(&image); // paints without a screen
    model.add(*EgressEntry::fromJson(makeEvent(QStringLiteral("agent"), QStringLiteral("new.test"),
                                               true, QStringLiteral("allowed")),
                                     {}));
    QVERIFY(map.accessibleDescription().contains(QStringLiteral("new.test: 1 allowed")));
}

void TestEgressModels::repeatsFoldIntoOneRow()
{
    EgressEventModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy added(&model, &EgressEventModel::entryAdded);
    auto lookup = [](const QString &name, const QString &type, const QDateTime &time) {
        QJsonObject e = makeEvent(QStringLiteral("agent"), name, false,
                                  QStringLiteral("host_not_allowed"), {}, {}, 53);
        e.insert(QStringLiteral("layer"), QStringLiteral("dns"));
        e.insert(QStringLiteral("dnsType"), type);
        e.remove(QStringLiteral("sni"));
        e.remove(QStringLiteral("host"));
        e.insert(QStringLiteral("time"), time.toString(Qt::ISODateWithMs));
        return e;
    };
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    // One lookup asks A and AAAA: one row that says both.
    model.handleNotification(
        QStringLiteral("egress.event"),
        notification(1, lookup(QStringLiteral("evil.test"), QStringLiteral("A"), t0)));
    model.handleNotification(
        QStringLiteral("egress.event"),
        notification(2,
                     lookup(QStringLiteral("evil.test"), QStringLiteral("AAAA"), t0.addMSecs(3))));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0, EgressEventModel::LayerColumn).data().toString(),
             QStringLiteral("DNS A, AAAA"));
    QCOMPARE(model.index(0, 0).data(EgressEventModel::CountRole).toLongLong(), 2);
    QVERIFY(model.index(0, EgressEventModel::ReasonColumn).data().toString().contains(u'2'));
    QCOMPARE(added.count(), 2); // counters still see every decision
    // A retry loop folds as well; another name, or the same one after a pause, gets its row.
    model.handleNotification(
        QStringLiteral("egress.event"),
        notification(3, lookup(QStringLiteral("evil.test"), QStringLiteral("A"), t0.addSecs(2))));
    model.handleNotification(
        QStringLiteral("egress.event"),
        notification(4, lookup(QStringLiteral("other.test"), QStringLiteral("A"), t0.addSecs(3))));
    const qint64 pause = EgressEventModel::kFoldWindowMs + 1000;
    model.handleNotification(QStringLiteral("egress.event"),
                             notification(5,
                                          lookup(QStringLiteral("evil.test"), QStringLiteral("A"),
                                                 t0.addSecs(2).addMSecs(pause))));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.index(0, 0).data(EgressEventModel::CountRole).toLongLong(), 3);
    QCOMPARE(model.index(1, EgressEventModel::NameColumn).data().toString(),
             QStringLiteral("other.test:53"));
    QCOMPARE(model.index(2, 0).data(EgressEventModel::CountRole).toLongLong(), 1);
    QCOMPARE(model.index(1, EgressEventModel::LayerColumn).data().toString(),
             QStringLiteral("DNS A"));
    // An HTTP decision is another decision, even for the same name.
    QJsonObject request = makeEvent(QStringLiteral("agent"), QStringLiteral("evil.test"), false,
                                    QStringLiteral("host_not_allowed"));
    request.insert(QStringLiteral("time"), t0.addSecs(13).toString(Qt::ISODateWithMs));
    model.handleNotification(QStringLiteral("egress.event"), notification(6, request));
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.index(3, EgressEventModel::LayerColumn).data().toString(),
             QStringLiteral("HTTP"));

    // History with the same repeats folds the same way, and brings nothing twice.
    EgressEventModel fromHistory;
    QJsonArray events;
    for (int i = 0; i < 4; ++i)
        events.append(QJsonObject {
            {QStringLiteral("seq"), 10 + i},
            {QStringLiteral("event"),
             lookup(QStringLiteral("evil.test"),
                    i % 2 ? QStringLiteral("AAAA") : QStringLiteral("A"), t0.addMSecs(100 * i))}});
    const QJsonObject history {{QStringLiteral("name"), QStringLiteral("agent")},
                               {QStringLiteral("events"), events}};
    QCOMPARE(fromHistory.addHistory(history), 4);
    QCOMPARE(fromHistory.rowCount(), 1);
    QCOMPARE(fromHistory.index(0, 0).data(EgressEventModel::CountRole).toLongLong(), 4);
    QCOMPARE(fromHistory.addHistory(history), 0);
    QCOMPARE(fromHistory.index(0, 0).data(EgressEventModel::CountRole).toLongLong(), 4);
}

void TestEgressModels::mapSumsUpWhatDoesNotFit()
{
    QList<DestinationCountModel::Destination> destinations;
    for (int i = 0; i < 40; ++i) {
        DestinationCountModel::Destination d;
        d.sandbox = QStringLiteral("agent");
        d.name = QStringLiteral("host%1.test").arg(i);
        d.allowed = i; // host39 has the most
        d.denied = 1;
        destinations.append(d);
    }
    QCOMPARE(EgressMapView::shownDestinations(destinations.mid(0, 12), 12).size(), 12);
    const auto shown = EgressMapView::shownDestinations(destinations, 12);
    QCOMPARE(shown.size(), 12);
    QCOMPARE(shown.constFirst().name, QStringLiteral("host39.test"));
    QCOMPARE(shown.at(10).name, QStringLiteral("host29.test"));
    QCOMPARE(shown.constLast().name, QStringLiteral("29 others"));
    qint64 allowed = 0;
    for (int i = 0; i <= 28; ++i)
        allowed += i;
    QCOMPARE(shown.constLast().allowed, allowed);
    QCOMPARE(shown.constLast().denied, 29);

    // Drawn in a window-sized map: 40 destinations paint, and the text still lists all.
    DestinationCountModel model;
    for (const auto &d : std::as_const(destinations))
        model.add(*EgressEntry::fromJson(
            makeEvent(QStringLiteral("agent"), d.name, true, QStringLiteral("allowed")), {}));
    EgressMapView map;
    map.setModel(&model);
    map.setSandbox(QStringLiteral("agent"));
    map.resize(420, 380);
    QImage image(map.size(), QImage::Format_ARGB32);
    map.render(&image);
    QCOMPARE(map.summary().count(u'\n'), 39);
}

void TestEgressModels::mapFollowsTheSelectedSandbox()
{
    EgressView view(nullptr, nullptr);
    QVERIFY(view.map()->sandbox().isEmpty());
    // The filter shows every sandbox: the map shows the one selected in the main table.
    view.setSelectedSandbox(QStringLiteral("agent"));
    QCOMPARE(view.map()->sandbox(), QStringLiteral("agent"));
    view.setSelectedSandbox({});
    QVERIFY(view.map()->sandbox().isEmpty());
}

void TestEgressModels::probingAlert()
{
    ProbingMonitor monitor;
    monitor.setThreshold(3);
    QSignalSpy started(&monitor, &ProbingMonitor::probingStarted);
    QSignalSpy ended(&monitor, &ProbingMonitor::probingEnded);
    const auto denied =
        *EgressEntry::fromJson(makeEvent(QStringLiteral("agent"), QStringLiteral("x.test"), false,
                                         QStringLiteral("host_not_allowed")),
                               {});
    const auto allowed =
        *EgressEntry::fromJson(makeEvent(QStringLiteral("agent"), QStringLiteral("y.test"), true,
                                         QStringLiteral("allowed")),
                               {});
    monitor.record(denied);
    monitor.record(allowed);
    monitor.record(denied);
    QCOMPARE(started.count(), 0);
    monitor.record(denied);
    QCOMPARE(started.count(), 1);
    QCOMPARE(started.first().at(0).toString(), QStringLiteral("agent"));
    QCOMPARE(started.first().at(1).toInt(), 3);
    QVERIFY(monitor.isProbing(QStringLiteral("agent")));
    monitor.evaluate(QDateTime::currentDateTimeUtc().addSecs(61));
    QCOMPARE(ended.count(), 1);
    QVERIFY(!monitor.isProbing(QStringLiteral("agent")));
}

// A flood of denials reaches the window as summaries (`count`, the gateway's event rate limit):
// the probing alert, the destination counters and the table must see every decision, or the
// flood that should raise the alert would be the one that hides.
void TestEgressModels::summariesCountInFull()
{
    QJsonObject summary = makeEvent(QStringLiteral("agent"), QStringLiteral("x.test"), false,
                                    QStringLiteral("host_not_allowed"));
    summary.insert(QStringLiteral("count"), 250);
    const auto entry = *EgressEntry::fromJson(summary, {});
    QCOMPARE(entry.count, 250);
    // Garbage counts are one decision, never zero or negative.
    const QJsonArray garbage {0, -5, QStringLiteral("9")};
    for (const QJsonValue &bad : garbage) {
        QJsonObject odd = summary;
        odd.insert(QStringLiteral("count"), bad);
        QCOMPARE(EgressEntry::fromJson(odd, {})->count, 1);
    }

    ProbingMonitor monitor;
    monitor.setThreshold(ProbingMonitor::kDefaultThreshold);
    QSignalSpy started(&monitor, &ProbingMonitor::probingStarted);
    monitor.record(entry);
    QCOMPARE(started.count(), 1);
    QCOMPARE(started.first().at(1).toInt(), 250);
    QCOMPARE(monitor.deniedLastMinute(QStringLiteral("agent")), 250);
    monitor.evaluate(QDateTime::currentDateTimeUtc().addSecs(61));
    QCOMPARE(monitor.deniedLastMinute(QStringLiteral("agent")), 0);
    QVERIFY(!monitor.isProbing(QStringLiteral("agent")));

    DestinationCountModel destinations;
    destinations.add(entry);
    destinations.add(
        *EgressEntry::fromJson(makeEvent(QStringLiteral("agent"), QStringLiteral("x.test"), false,
                                         QStringLiteral("host_not_allowed")),
                               {}));
    QCOMPARE(destinations.index(0, DestinationCountModel::DeniedColumn).data().toInt(), 251);

    EgressEventModel events;
    events.handleNotification(QStringLiteral("egress.event"), notification(1, summary));
    const QString reason = events.index(0, EgressEventModel::ReasonColumn).data().toString();
    QVERIFY2(reason.contains(QStringLiteral("250")), qPrintable(reason));
    QVERIFY2(reason.startsWith(PolicyText::reasonText(QStringLiteral("host_not_allowed"))),
             qPrintable(reason));
}

void TestEgressModels::learnModeCollectsDeniedOnly()
{
    LearnListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto entry = [](const QString &sandbox, const QString &name, bool allowed,
                          const QString &reason, const QString &method) {
        return *EgressEntry::fromJson(makeEvent(sandbox, name, allowed, reason, method), {});
    };
    model.record(entry(QStringLiteral("agent"), QStringLiteral("pypi.org"), false,
                       QStringLiteral("host_not_allowed"), QStringLiteral("GET")));
    QCOMPARE(model.rowCount(), 0); // not learning yet
    model.setLearning(QStringLiteral("agent"), true);
    model.record(entry(QStringLiteral("agent"), QStringLiteral("pypi.org"), false,
                       QStringLiteral("host_not_allowed"), QStringLiteral("GET")));
    model.record(entry(QStringLiteral("agent"), QStringLiteral("pypi.org"), false,
                       QStringLiteral("host_not_allowed"), QStringLiteral("HEAD")));
    model.record(entry(QStringLiteral("agent"), QStringLiteral("ok.test"), true,
                       QStringLiteral("allowed"), QStringLiteral("GET")));
    model.record(entry(QStringLiteral("agent"), QStringLiteral("bad.test"), false,
                       QStringLiteral("sni_host_mismatch"), QStringLiteral("GET")));
    model.record(entry(QStringLiteral("other"), QStringLiteral("npmjs.org"), false,
                       QStringLiteral("host_not_allowed"), QStringLiteral("GET")));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.candidateAt(0).count, 2);
    const QList<EgressRule> rules = model.rulesFor({0});
    QCOMPARE(rules.size(), 1);
    QCOMPARE(rules.first().host, QStringLiteral("pypi.org"));
    QCOMPARE(rules.first().methods, (QStringList {QStringLiteral("GET"), QStringLiteral("HEAD")}));
    QVERIFY(rules.first().validate());
    model.removeRows({0});
    QCOMPARE(model.rowCount(), 0);
}

void TestEgressModels::allowThisHostProposesRule()
{
    EgressView view(nullptr, nullptr);
    QSignalSpy proposed(&view, &EgressView::allowRequested);
    view.events()->handleNotification(
        QStringLiteral("egress.event"),
        notification(1,
                     makeEvent(QStringLiteral("agent"), QStringLiteral("Files.PythonHosted.org"),
                               false, QStringLiteral("host_not_allowed"), QStringLiteral("GET"),
                               QStringLiteral("/packages/x?sig=1"), 8443)));
    view.events()->handleNotification(
        QStringLiteral("egress.event"),
        notification(2,
                     makeEvent(QStringLiteral("agent"), QStringLiteral("ok.test"), true,
                               QStringLiteral("allowed"))));
    view.eventTable()->selectRow(1);
    view.allowSelected(); // allowed: nothing to propose
    QCOMPARE(proposed.count(), 0);
    view.eventTable()->selectRow(0);
    view.allowSelected();
    QCOMPARE(proposed.count(), 1);
    QCOMPARE(proposed.first().at(0).toString(), QStringLiteral("agent"));
    const auto rules = proposed.first().at(1).value<QList<EgressRule>>();
    QCOMPARE(rules.size(), 1);
    QCOMPARE(rules.first().host, QStringLiteral("files.pythonhosted.org"));
    QCOMPARE(rules.first().ports, (QList<quint16> {8443}));
    QCOMPARE(rules.first().methods, QStringList {QStringLiteral("GET")});
    QVERIFY(rules.first().pathPrefixes.isEmpty());
    QVERIFY(rules.first().validate());
    QCOMPARE(view.destinations()->rowCount(), 2);
}

void TestEgressModels::dryRunModel()
{
    DryRunModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QJsonObject result {
        {QStringLiteral("name"), QStringLiteral("agent")},
        {QStringLiteral("evaluated"), 4},
        {QStringLiteral("changes"),
         QJsonArray {QJsonObject {
             {QStringLiteral("seq"), 3},
             {QStringLiteral("event"),
              makeEvent(QStringLiteral("agent"), QStringLiteral("pypi.org"), false,
                        QStringLiteral("host_not_allowed"))},
             {QStringLiteral("before"),
              QJsonObject {{QStringLiteral("verdict"), QStringLiteral("denied")},
                           {QStringLiteral("reason"), QStringLiteral("host_not_allowed")},
                           {QStringLiteral("rule"), QJsonValue()}}},
             {QStringLiteral("after"),
              QJsonObject {{QStringLiteral("verdict"), QStringLiteral("allowed")},
                           {QStringLiteral("reason"), QStringLiteral("allowed")},
                           {QStringLiteral("rule"), 0}}}}}}};
    QVERIFY(model.setResult(result));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.newlyAllowed(), 1);
    QCOMPARE(model.newlyDenied(), 0);
    QCOMPARE(model.index(0, DryRunModel::ChangeColumn).data().toString(),
             QStringLiteral("Newly allowed"));
    QCOMPARE(model.index(0, DryRunModel::AfterColumn).data().toString(),
             QStringLiteral("Allowed by rule (rule 1)"));
    QVERIFY(!model.setResult({}));
}

void TestEgressModels::secretAndBindingModels()
{
    SecretListModel secrets;
    QAbstractItemModelTester secretTester(&secrets,
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(secrets.resetFromList(
        {{QStringLiteral("secrets"),
          QJsonArray {
              QJsonObject {{QStringLiteral("name"), QStringLiteral("tok")},
                           {QStringLiteral("fingerprint"), QStringLiteral("0123456789abcdef")},
                           {QStringLiteral("useCount"), 2},
                           {QStringLiteral("ownerUid"), 1001},
                           {QStringLiteral("owner"), QStringLiteral("alice")},
                           {QStringLiteral("bindings"), QJsonArray {1}}}}}}));
    QCOMPARE(secrets.rowCount(), 1);
    QCOMPARE(secrets.index(0, SecretListModel::LastUsedColumn).data().toString(),
             QStringLiteral("never"));
    QCOMPARE(secrets.headerData(SecretListModel::OwnerColumn, Qt::Horizontal).toString(),
             QStringLiteral("Owner"));
    QCOMPARE(secrets.index(0, SecretListModel::OwnerColumn).data().toString(),
             QStringLiteral("alice"));
    QVERIFY(secrets.index(0, SecretListModel::OwnerColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("1001")));
    // A uid the helper's host has no name for is shown as such; an older helper's row
    // (no owner fields) has an empty cell.
    secrets.upsert(
        {{QStringLiteral("name"), QStringLiteral("a-first")}, {QStringLiteral("ownerUid"), 4242}});
    QCOMPARE(secrets.rowOf(QStringLiteral("a-first")), 0);
    QCOMPARE(secrets.index(0, SecretListModel::OwnerColumn).data().toString(),
             QStringLiteral("uid 4242"));
    secrets.upsert({{QStringLiteral("name"), QStringLiteral("a-first")}});
    QCOMPARE(secrets.index(0, SecretListModel::OwnerColumn).data().toString(), QString());
    secrets.remove(QStringLiteral("a-first"));
    QCOMPARE(secrets.rowCount(), 1);

    BindingTableModel bindings;
    QAbstractItemModelTester bindingTester(&bindings,
                                           QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(bindings.resetFromList(
        {{QStringLiteral("bindings"),
          QJsonArray {QJsonObject {
              {QStringLiteral("id"), 1},
              {QStringLiteral("sandbox"), QStringLiteral("agent")},
              {QStringLiteral("secret"), QStringLiteral("tok")},
              {QStringLiteral("host"), QStringLiteral("api.github.com")},
              {QStringLiteral("pathPrefix"), QStringLiteral("/repos")},
              {QStringLiteral("placement"),
               QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                            {QStringLiteral("header"), QStringLiteral("Authorization")},
                            {QStringLiteral("template"), QStringLiteral("Bearer {secret}")}}},
              {QStringLiteral("placeholderVariable"), QStringLiteral("AIRLOCK_SECRET_TOK")},
              {QStringLiteral("stats"), QJsonObject {{QStringLiteral("injections"), 5}}}}}}}));
    QCOMPARE(bindings.rowCount(), 1);
    QCOMPARE(bindings.index(0, BindingTableModel::TemplateColumn).data().toString(),
             QStringLiteral("Authorization: Bearer {secret}"));
    QVERIFY(bindings.index(0, BindingTableModel::WarningColumn).data().toString().isEmpty());
    bindings.setPolicy(QStringLiteral("agent"), EgressPolicy::denyAll());
    QVERIFY(bindings.index(0, BindingTableModel::WarningColumn)
                .data()
                .toString()
                .contains(QStringLiteral("does not allow")));
    EgressRule github {QStringLiteral("api.github.com")};
    bindings.setPolicy(QStringLiteral("agent"), EgressPolicy {{github}});
    QVERIFY(bindings.index(0, BindingTableModel::WarningColumn).data().toString().isEmpty());
    github.pathPrefixes = {QStringLiteral("/users")};
    bindings.setPolicy(QStringLiteral("agent"), EgressPolicy {{github}});
    QVERIFY(!bindings.index(0, 0).data(BindingTableModel::WarningRole).toString().isEmpty());
}

QTEST_MAIN(TestEgressModels)
#include "tst_egressmodels.moc"

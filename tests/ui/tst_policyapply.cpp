// Editing and applying a policy in the real PolicyEditor changes what the real gateway decides
// for a running guest, and the egress view's model shows both verdicts (issue 6).
//
//   guest ──tap── [helper ns: airlockd, airlock-gateway, table] ──veth 198.51.100.0/24──
//   [upstream ns: pkg.test 198.51.100.10:80 (plain HTTP), DNS 198.51.100.53]
//
// The topology is tst_egresse2e's: 198.51.100.0/24 is TEST-NET-2 (RFC 5737), assigned only inside
// namespaces this test made, none with a default route. The busybox guest speaks plain HTTP with
// nc (its TLS client cannot talk to the gateway; see tst_egresse2e).

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "gatewaytopology.h"
#include "rpctestclient.h"
#include "ui/allowdecision.h"
#include "ui/denialbar.h"
#include "ui/denialnotifier.h"
#include "ui/denialprompt.h"
#include "ui/egresseventmodel.h"
#include "ui/egressview.h"
#include "ui/mainwindow.h"
#include "ui/policyeditor.h"
#include "ui/policyrulemodel.h"
#include "ui/resources.h"
#include "ui/sandboxtablemodel.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace airlock;
using airlock::test::GatewayTopology;
using airlock::test::RpcTestClient;
using airlock::test::ServerEndpoint;

namespace {

const QString kName = QStringLiteral("apply");
const QHostAddress kPkgAddress = airlock::test::topo::PkgServer;
constexpr int kBootTimeoutMs = 120000;

QPushButton *buttonNamed(QWidget *parent, const QString &accessibleName)
{
    for (QPushButton *button : parent->findChildren<QPushButton *>()) {
        if (button->accessibleName() == accessibleName)
            return button;
    }
    return nullptr;
}

} // namespace

class TestPolicyApply : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void deniedDestinationIsAskedAboutAndAllowedOnlyWhenAnswered();
    void appliedPolicyChangesTheGatewaysVerdict();

private:
    /// Types a command on the guest console (a raw client of its own) and waits until
    /// `needle` shows up after it.
    bool runInGuest(const QByteArray &command, const QByteArray &needle, int timeoutMs);
    bool waitForConsole(const QByteArray &needle, qsizetype from, int timeoutMs);
    /// `fetch NAME PATH [ADDRESS]` in the guest: its output up to the fetch-rc= line.
    QByteArray fetch(const QByteArray &arguments);
    /// The rows of the window's egress model about pkg.test at the http layer.
    QList<EgressEntry> httpEntries() const;
    /// The rules of the sandbox's applied policy, as the helper holds them.
    QJsonArray appliedRules();

    std::unique_ptr<GatewayTopology> m_net;
    std::unique_ptr<RpcTestClient> m_console;
    std::unique_ptr<HelperClient> m_client;
    std::unique_ptr<MainWindow> m_window;
    QByteArray m_text;
};

bool TestPolicyApply::waitForConsole(const QByteArray &needle, qsizetype from, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (m_text.indexOf(needle, from) < 0) {
        if (deadline.hasExpired())
            return false;
        // The window's own client lives on this thread's event loop: keep it turning.
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        const auto message = m_console->readMessage(50);
        if (message && message->value(QStringLiteral("method")).toString() == u"console.output")
            m_text += QByteArray::fromBase64(message->value(QStringLiteral("params"))
                                                 .toObject()
                                                 .value(QStringLiteral("data"))
                                                 .toString()
                                                 .toLatin1());
    }
    return true;
}

bool TestPolicyApply::runInGuest(const QByteArray &command, const QByteArray &needle, int timeoutMs)
{
    const qsizetype from = m_text.size();
    m_console->call(
        QStringLiteral("console.write"),
        QJsonObject {{QStringLiteral("name"), kName},
                     {QStringLiteral("data"), QString::fromLatin1((command + '\n').toBase64())}});
    return waitForConsole(needle, from, timeoutMs);
}

QByteArray TestPolicyApply::fetch(const QByteArray &arguments)
{
    const qsizetype from = m_text.size();
    if (!runInGuest("fetch " + arguments, "fetch-rc=", 60000))
        return m_text.mid(from);
    waitForConsole("\n", m_text.indexOf("fetch-rc=", from), 5000);
    return m_text.mid(from);
}

QList<EgressEntry> TestPolicyApply::httpEntries() const
{
    QList<EgressEntry> entries;
    for (const EgressEntry &entry : m_window->egressView()->events()->entries()) {
        if (entry.sandbox == kName && entry.layer == u"http" && entry.name == u"pkg.test")
            entries.append(entry);
    }
    return entries;
}

QJsonArray TestPolicyApply::appliedRules()
{
    const QJsonObject answer = RpcTestClient::result(
        m_console->call(QStringLiteral("policy.get"), {{QStringLiteral("name"), kName}}));
    return answer.value(QStringLiteral("policy"))
        .toObject()
        .value(QStringLiteral("rules"))
        .toArray();
}

void TestPolicyApply::initTestCase()
{
    initUiResources();
    if (::geteuid() != 0)
        QSKIP("needs root (network namespaces, taps, nftables)");
    if (qEnvironmentVariable("AIRLOCK_GATEWAY").isEmpty())
        QSKIP("AIRLOCK_GATEWAY is not set (run through ctest)");
    m_net = std::make_unique<GatewayTopology>(
        GatewayTopology::Options {.tag = QStringLiteral("pa"),
                                  .side = GatewayTopology::Side::Helper,
                                  .hosts = {{QStringLiteral("pkg.test"), kPkgAddress},
                                            {QStringLiteral("mirror.test"), kPkgAddress}},
                                  .servers = {{QStringLiteral("pkg"),
                                               kPkgAddress,
                                               80,
                                               ServerEndpoint::Kind::Http,
                                               {},
                                               ServerEndpoint::Answer::Hello}}});
    QVERIFY2(
        QFileInfo::exists(m_net->helper().imageStore() + QStringLiteral("/default/image.json")),
        "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_net->start(), qPrintable(m_net->lastError()));

    // A new sandbox has the deny-all policy; boot it and get a shell.
    m_console = std::make_unique<RpcTestClient>(m_net->helper().socketPath());
    QVERIFY(m_console->hello());
    QVERIFY(m_console->call(QStringLiteral("sandbox.create"), {{QStringLiteral("name"), kName}})
                .contains(QStringLiteral("result")));
    const QJsonObject started =
        m_console->call(QStringLiteral("sandbox.start"), {{QStringLiteral("name"), kName}}, 60000);
    QVERIFY2(started.contains(QStringLiteral("result")),
             QJsonDocument(started).toJson().constData());
    const QJsonObject attached = RpcTestClient::result(
        m_console->call(QStringLiteral("console.attach"), {{QStringLiteral("name"), kName}}));
    m_text = QByteArray::fromBase64(attached.value(QStringLiteral("data")).toString().toLatin1());

    m_client = std::make_unique<HelperClient>(
        std::make_unique<LocalSocketTransport>(m_net->helper().socketPath()),
        QStringLiteral("tst_policyapply"));
    m_window = std::make_unique<MainWindow>(m_client.get());
    m_window->show();
    m_client->connectToHelper();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->model()->rowOf(kName) >= 0, 10000);

    QVERIFY2(waitForConsole("airlock-guest ready", 0, kBootTimeoutMs), m_text.constData());
    QVERIFY(runInGuest("echo boot-$((40+2))", "boot-42", 30000));
    // As in tst_egresse2e: resolve through the gateway's DNS with nslookup, then plain HTTP
    // with nc; prints fetch-rc=dns when the name does not resolve.
    QVERIFY(runInGuest(
        "fetch() { a=$(nslookup -type=a \"$1\" 2>/dev/null | awk '/^Address/ {x=$NF} END "
        "{print x}');"
        " case \"$a\" in *:53|'') a=\"${3:-}\";; esac; [ -n \"$a\" ] || { echo fetch-rc=dns;"
        " return; }; printf 'GET %s HTTP/1.1\\r\\nHost: %s\\r\\nConnection: close\\r\\n\\r\\n'"
        " \"$2\" \"$1\" | nc -w 20 \"$a\" 80; echo fetch-rc=$?; }; echo fetch-$((6*7))",
        "fetch-42", 10000));
}

void TestPolicyApply::cleanupTestCase()
{
    m_window.reset();
    m_client.reset();
    m_console.reset();
    m_net.reset(); // airlockd and its guest, the servers, the upstream namespace
}

void TestPolicyApply::deniedDestinationIsAskedAboutAndAllowedOnlyWhenAnswered()
{
    QVERIFY(m_window);
    DenialNotifier *denials = m_window->denials();
    DenialBar *bar = m_window->denialBar();
    const QByteArray address = kPkgAddress.toString().toLatin1();
    const QString pkg = QStringLiteral("pkg.test");
    const QString mirror = QStringLiteral("mirror.test");

    // A request the policy denies is news: a notification (the status bar here) and, without a
    // tray (offscreen), the bar above the sections.
    QByteArray output = fetch("pkg.test /seen/a " + address);
    QVERIFY2(output.contains("HTTP/1.1 403"), output.constData());
    QTRY_VERIFY_WITH_TIMEOUT(denials->isOpen(kName, pkg), 15000);
    QTRY_COMPARE(m_window->lastNotification(), QStringLiteral("apply was denied pkg.test."));
    QTRY_VERIFY(bar->isVisible());
    QVERIFY2(bar->text().contains(QStringLiteral("pkg.test (apply)")), qPrintable(bar->text()));

    // The prompt is open: the request stays denied while the person decides.
    QTest::mouseClick(bar->promptButton(), Qt::LeftButton);
    QPointer<DenialPrompt> prompt = m_window->denialPrompt(kName, pkg);
    QVERIFY(prompt);
    QVERIFY(prompt->isVisible());
    const qint64 deniedBefore = denials->find(kName, pkg)->count;
    output = fetch("pkg.test /seen/a " + address);
    QVERIFY2(output.contains("HTTP/1.1 403"), output.constData());
    QTRY_VERIFY_WITH_TIMEOUT(denials->find(kName, pkg)->count > deniedBefore, 15000);
    // Closed without an answer: denied, the policy untouched, no more news about it.
    QSignalSpy news(denials, &DenialNotifier::notificationDue);
    QVERIFY(prompt->close());
    QTRY_VERIFY(!prompt);
    QVERIFY(!denials->isOpen(kName, pkg));
    QCOMPARE(appliedRules().size(), 0);
    const qint64 deniedWhileOpen = denials->find(kName, pkg)->count;
    output = fetch("pkg.test /seen/a " + address);
    QVERIFY2(output.contains("HTTP/1.1 403"), output.constData());
    QTRY_VERIFY_WITH_TIMEOUT(denials->find(kName, pkg)->count > deniedWhileOpen, 15000);
    QCOMPARE(news.count(), 0);
    QVERIFY(bar->isHidden());

    // Another name: allowed only what was seen, applied through policy.set and recorded in
    // the rule's comment.
    output = fetch("mirror.test /seen/b " + address);
    QVERIFY2(output.contains("HTTP/1.1 403"), output.constData());
    QTRY_VERIFY_WITH_TIMEOUT(denials->isOpen(kName, mirror), 15000);
    prompt = m_window->openDenialPrompt(kName, mirror);
    QVERIFY(prompt);
    QCOMPARE(prompt->choice(), AllowDecision::Answer::AllowSeen);
    QVERIFY2(prompt->changeText().startsWith(
                 QStringLiteral("+ mirror.test  ports 80  methods GET  paths /seen/b  — allowed")),
             qPrintable(prompt->changeText()));
    QSignalSpy answered(prompt->decision(), &AllowDecision::answered);
    QTest::mouseClick(prompt->allowButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(answered.count(), 1, 15000);
    QCOMPARE(answered.constFirst().constFirst().value<AllowDecision::Answer>(),
             AllowDecision::Answer::AllowSeen);
    const QJsonArray rules = appliedRules();
    QCOMPARE(rules.size(), 1);
    const QJsonObject rule = rules.at(0).toObject();
    QCOMPARE(rule.value(QStringLiteral("host")).toString(), mirror);
    QCOMPARE(rule.value(QStringLiteral("ports")).toArray(), QJsonArray {80});
    QCOMPARE(rule.value(QStringLiteral("methods")).toArray(), QJsonArray {QStringLiteral("GET")});
    QCOMPARE(rule.value(QStringLiteral("pathPrefixes")).toArray(),
             QJsonArray {QStringLiteral("/seen/b")});
    QVERIFY2(rule.value(QStringLiteral("comment"))
                 .toString()
                 .contains(QStringLiteral("at the Allow? prompt on ")),
             qPrintable(rule.value(QStringLiteral("comment")).toString()));
    QVERIFY(!denials->find(kName, mirror));
    // And it is recorded as the prompt's answer: who, through what, the rule it added.
    const QJsonObject recorded =
        RpcTestClient::result(
            m_console->call(QStringLiteral("policy.history"),
                            {{QStringLiteral("name"), kName}, {QStringLiteral("limit"), 1}}))
            .value(QStringLiteral("changes"))
            .toArray()
            .at(0)
            .toObject();
    QCOMPARE(recorded.value(QStringLiteral("source")).toString(), QStringLiteral("allow-prompt"));
    QCOMPARE(recorded.value(QStringLiteral("added")).toArray(), QJsonArray {rule});
    QVERIFY(recorded.value(QStringLiteral("uid")).isDouble());

    // The gateway enforces exactly that: the path seen passes, another is still denied, and
    // pkg.test was never allowed.
    output = fetch("mirror.test /seen/b " + address);
    QVERIFY2(output.contains("HTTP/1.1 200"), output.constData());
    QVERIFY2(output.contains("hello mirror.test /seen/b"), output.constData());
    output = fetch("mirror.test /elsewhere " + address);
    QVERIFY2(output.contains("HTTP/1.1 403"), output.constData());
    output = fetch("pkg.test /seen/a " + address);
    QVERIFY2(output.contains("HTTP/1.1 403"), output.constData());

    // Back to deny-all for the next test.
    RpcTestClient::result(m_console->call(
        QStringLiteral("policy.set"),
        {{QStringLiteral("name"), kName},
         {QStringLiteral("policy"),
          QJsonObject {{QStringLiteral("version"), 1}, {QStringLiteral("rules"), QJsonArray()}}}}));
    QCOMPARE(appliedRules().size(), 0);
}

void TestPolicyApply::appliedPolicyChangesTheGatewaysVerdict()
{
    QVERIFY(m_window);
    EgressEventModel *events = m_window->egressView()->events();
    QAbstractItemModelTester tester(events, QAbstractItemModelTester::FailureReportingMode::Fatal);
    // The test before let one request through to mirror.test, on the same server.
    const qsizetype served = m_net->upstream().requests(QStringLiteral("pkg")).size();

    // Denied: no rule names pkg.test. By name it does not even resolve; dialled by address the
    // gateway answers 403 itself and pkg.test never sees the request.
    QByteArray output = fetch("pkg.test /before");
    QVERIFY2(output.contains("fetch-rc=dns"), output.constData());
    output = fetch("pkg.test /before " + kPkgAddress.toString().toLatin1());
    QVERIFY2(output.contains("HTTP/1.1 403"), output.constData());
    QTRY_VERIFY_WITH_TIMEOUT(
        !httpEntries().isEmpty() && httpEntries().constLast().path == u"/before", 15000);
    EgressEntry denied = httpEntries().constLast();
    QVERIFY(!denied.allowed);
    QCOMPARE(denied.reason, QStringLiteral("host_not_allowed"));
    QCOMPARE(denied.path, QStringLiteral("/before"));
    QVERIFY(m_net->settle());
    QCOMPARE(m_net->upstream().requests(QStringLiteral("pkg")).size(), served);

    // The person edits the policy in the editor: Add Rule, type the host, set the port.
    m_window->table()->selectRow(m_window->model()->rowOf(kName));
    PolicyEditor *editor = m_window->openPolicyEditor(kName);
    QVERIFY(editor);
    QTRY_VERIFY(editor->isLoaded());
    QCOMPARE(editor->model()->rowCount(), 0); // deny-all
    QPushButton *apply = buttonNamed(editor, QStringLiteral("Apply policy"));
    QVERIFY(apply);
    QVERIFY(!apply->isEnabled());
    QAction *addRule = nullptr;
    for (QAction *action : editor->actions()) {
        if (action->text() == QStringLiteral("&Add Rule"))
            addRule = action;
    }
    QVERIFY(addRule);
    addRule->trigger();
    auto *hostEdit = editor->table()->findChild<QLineEdit *>();
    QVERIFY2(hostEdit, "Add Rule opens the host cell's editor");
    QTest::keyClicks(hostEdit, QStringLiteral("pkg.test"));
    QTest::keyClick(hostEdit, Qt::Key_Return); // the delegate commits on the next turn
    PolicyRuleModel *rules = editor->model();
    QTRY_COMPARE(rules->index(0, PolicyRuleModel::HostColumn).data().toString(),
                 QStringLiteral("pkg.test"));
    QVERIFY(rules->setData(rules->index(0, PolicyRuleModel::PortsColumn), QStringLiteral("80")));
    QVERIFY2(editor->pendingChangesText().startsWith(QStringLiteral("+ rule 1")),
             qPrintable(editor->pendingChangesText()));
    // Nothing reached the helper yet: still denied.
    output = fetch("pkg.test /pending " + kPkgAddress.toString().toLatin1());
    QVERIFY2(output.contains("HTTP/1.1 403"), output.constData());

    QSignalSpy applied(editor, &PolicyEditor::applied);
    QVERIFY(apply->isEnabled());
    QTest::mouseClick(apply, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(applied.count() == 1, 15000);
    QVERIFY2(editor->statusText().contains(QStringLiteral("Applied")),
             qPrintable(editor->statusText()));

    // Allowed now: the name resolves, the request reaches pkg.test, the view shows it.
    output = fetch("pkg.test /after");
    QVERIFY2(output.contains("HTTP/1.1 200"), output.constData());
    QVERIFY2(output.contains("hello pkg.test /after"), output.constData());
    QTRY_VERIFY_WITH_TIMEOUT(httpEntries().constLast().path == u"/after", 15000);
    const EgressEntry allowed = httpEntries().constLast();
    QVERIFY(allowed.allowed);
    QCOMPARE(allowed.reason, QStringLiteral("allowed"));
    QCOMPARE(allowed.method, QStringLiteral("GET"));
    QCOMPARE(m_net->upstream().requests(QStringLiteral("pkg")).size(), served + 1);

    // Both verdicts as the table shows them, and the pending one denied too.
    QStringList verdicts;
    for (int row = 0; row < events->rowCount(); ++row) {
        const EgressEntry &entry = events->entryAt(row);
        if (entry.layer == u"http" && entry.name == u"pkg.test")
            verdicts.append(
                entry.path + QLatin1Char(' ')
                + events->index(row, EgressEventModel::VerdictColumn).data().toString());
    }
    QVERIFY2(verdicts.contains(QStringLiteral("/before Denied")), qPrintable(verdicts.join(u',')));
    QVERIFY2(verdicts.contains(QStringLiteral("/pending Denied")), qPrintable(verdicts.join(u',')));
    QVERIFY2(verdicts.contains(QStringLiteral("/after Allowed")), qPrintable(verdicts.join(u',')));
}

QTEST_MAIN(TestPolicyApply)
#include "tst_policyapply.moc"

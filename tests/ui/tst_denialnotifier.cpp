// The decision logic of denial notifications and the "Allow?" prompt, without a helper:
// grouping per sandbox and name, the per-sandbox rate limit on an injected clock, answered
// destinations, and that nothing but an applied answer allows (no allow on close, Escape or
// timeout; OpenSnitch #1017 and #878 are the bugs this guards against).

#include "ui/allowdecision.h"
#include "ui/denialbar.h"
#include "ui/denialnotifier.h"
#include "ui/denialprompt.h"
#include "ui/resources.h"

#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QTimeZone>

using namespace airlock;

namespace {

const QDateTime kStart = QDateTime(QDate(2026, 12, 3), QTime(18, 0), Qt::UTC);

EgressEntry denial(const QString &sandbox, const QString &name, int port = 443,
                   const QString &method = QStringLiteral("GET"),
                   const QString &path = QStringLiteral("/"),
                   const QString &reason = QStringLiteral("host_not_allowed"))
{
    EgressEntry entry;
    entry.time = kStart;
    entry.lastTime = kStart;
    entry.sandbox = sandbox;
    entry.layer = method.isEmpty() ? QStringLiteral("dns") : QStringLiteral("http");
    entry.allowed = false;
    entry.reason = reason;
    entry.name = name;
    entry.port = port;
    entry.method = method;
    entry.path = path;
    return entry;
}

} // namespace

class TestDenialNotifier : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { initUiResources(); }
    void init() { m_now = kStart; }
    void groupsPerSandboxAndName();
    void ignoresWhatNoRuleDecides();
    void rateLimitsNewsPerSandbox();
    void answeredDestinationsAreNoNews();
    void rulesFromWhatWasSeen();
    void decisionNeverAllowsByItself();
    void promptTimeoutKeepsDenied();
    void promptClosedOrEscapedKeepsDenied();
    void promptAllowFailingKeepsDenied();
    void barNamesWhatWaits();

private:
    DenialNotifier::Clock clock()
    {
        return [this] { return m_now; };
    }
    QDateTime m_now;
};

void TestDenialNotifier::groupsPerSandboxAndName()
{
    DenialNotifier notifier(clock());
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("pkg.test"), 443,
                           QStringLiteral("GET"), QStringLiteral("/a")));
    m_now = m_now.addSecs(1);
    EgressEntry summary = denial(QStringLiteral("agent"), QStringLiteral("PKG.test."), 8443,
                                 QStringLiteral("POST"), QStringLiteral("/b"));
    summary.count = 5; // a summary of the gateway's event rate limit counts in full
    notifier.record(summary);
    notifier.record(denial(QStringLiteral("other"), QStringLiteral("pkg.test")));

    const QList<DeniedDestination> open = notifier.open();
    QCOMPARE(open.size(), 2);
    QCOMPARE(open.at(0).sandbox, QStringLiteral("agent"));
    QCOMPARE(open.at(0).name, QStringLiteral("pkg.test")); // one name, whatever the spelling
    QCOMPARE(open.at(0).count, 6);
    QCOMPARE(open.at(0).ports, (QList<quint16> {443, 8443}));
    QCOMPARE(open.at(0).methods, (QStringList {QStringLiteral("GET"), QStringLiteral("POST")}));
    QCOMPARE(open.at(0).paths, (QStringList {QStringLiteral("/a"), QStringLiteral("/b")}));
    QCOMPARE(open.at(0).first, kStart);
    QCOMPARE(open.at(0).last, kStart.addSecs(1));
    QCOMPARE(open.at(1).sandbox, QStringLiteral("other"));
    QCOMPARE(open.at(1).count, 1);
}

void TestDenialNotifier::ignoresWhatNoRuleDecides()
{
    DenialNotifier notifier(clock());
    QSignalSpy news(&notifier, &DenialNotifier::notificationDue);
    EgressEntry allowed = denial(QStringLiteral("agent"), QStringLiteral("pkg.test"));
    allowed.allowed = true;
    allowed.reason = QStringLiteral("allowed");
    notifier.record(allowed);
    // Refused whatever the policy says: an "Allow?" could not change it.
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("pkg.test"), 443,
                           QStringLiteral("GET"), QStringLiteral("/"),
                           QStringLiteral("private_destination")));
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("pkg.test"), 443,
                           QStringLiteral("GET"), QStringLiteral("/"),
                           QStringLiteral("credential_exfil")));
    // No name a rule could hold.
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("198.51.100.7")));
    notifier.record(denial(QStringLiteral("agent"), QString()));
    QVERIFY(notifier.open().isEmpty());
    QCOMPARE(news.count(), 0);
    // A denial by port, method or path is a rule's decision too.
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("pkg.test"), 443,
                           QStringLiteral("DELETE"), QStringLiteral("/"),
                           QStringLiteral("method_not_allowed")));
    QCOMPARE(notifier.open().size(), 1);
    QCOMPARE(news.count(), 1);
}

void TestDenialNotifier::rateLimitsNewsPerSandbox()
{
    DenialNotifier notifier(clock());
    notifier.setInterval(30000);
    QSignalSpy news(&notifier, &DenialNotifier::notificationDue);

    // The first new name is news at once.
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("a.test")));
    QCOMPARE(news.count(), 1);
    auto first = news.takeFirst().constFirst().value<DenialNotification>();
    QCOMPARE(first.sandbox, QStringLiteral("agent"));
    QCOMPARE(first.names, QStringList {QStringLiteral("a.test")});
    QCOMPARE(DenialNotifier::text(first), QStringLiteral("agent was denied a.test."));

    // Repeats of a known name are never news; new names within the interval are held.
    m_now = kStart.addSecs(1);
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("a.test")));
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("b.test")));
    m_now = kStart.addSecs(2);
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("c.test")));
    QCOMPARE(news.count(), 0);
    QCOMPARE(notifier.nextDue(), kStart.addSecs(30));
    // Another sandbox has its own interval.
    notifier.record(denial(QStringLiteral("other"), QStringLiteral("a.test")));
    QCOMPARE(news.count(), 1);
    QCOMPARE(news.takeFirst().constFirst().value<DenialNotification>().sandbox,
             QStringLiteral("other"));

    m_now = kStart.addMSecs(29999);
    notifier.flush();
    QCOMPARE(news.count(), 0);
    m_now = kStart.addSecs(30);
    notifier.flush();
    QCOMPARE(news.count(), 1);
    const auto held = news.takeFirst().constFirst().value<DenialNotification>();
    QCOMPARE(held.names, (QStringList {QStringLiteral("b.test"), QStringLiteral("c.test")}));
    QCOMPARE(DenialNotifier::text(held),
             QStringLiteral("agent was denied 2 new destinations: b.test, c.test."));
    notifier.flush();
    QCOMPARE(news.count(), 0);
    QVERIFY(!notifier.nextDue().isValid() || notifier.nextDue() > m_now);
}

void TestDenialNotifier::answeredDestinationsAreNoNews()
{
    DenialNotifier notifier(clock());
    QSignalSpy news(&notifier, &DenialNotifier::notificationDue);
    QSignalSpy changed(&notifier, &DenialNotifier::openChanged);
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("a.test")));
    m_now = kStart.addSecs(1);
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("b.test")));
    QCOMPARE(news.count(), 1);
    QCOMPARE(changed.count(), 2);

    // Answered before its news was due: no news, not open, its denials still count.
    notifier.keepDenied(QStringLiteral("agent"), QStringLiteral("b.test"));
    QCOMPARE(changed.count(), 3);
    QVERIFY(!notifier.isOpen(QStringLiteral("agent"), QStringLiteral("b.test")));
    m_now = kStart.addSecs(31);
    notifier.flush();
    QCOMPARE(news.count(), 1);
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("b.test")));
    QCOMPARE(notifier.find(QStringLiteral("agent"), QStringLiteral("b.test"))->count, 2);
    QCOMPARE(news.count(), 1);
    QCOMPARE(notifier.open().size(), 1);

    // Allowed: forgotten, so a later denial (another path the rule does not cover) is news.
    notifier.forget(QStringLiteral("agent"), QStringLiteral("a.test"));
    QVERIFY(notifier.open().isEmpty());
    QVERIFY(!notifier.find(QStringLiteral("agent"), QStringLiteral("a.test")));
    m_now = kStart.addSecs(70);
    notifier.record(denial(QStringLiteral("agent"), QStringLiteral("a.test"), 443,
                           QStringLiteral("GET"), QStringLiteral("/other")));
    QCOMPARE(news.count(), 2);

    notifier.forgetSandbox(QStringLiteral("agent"));
    QVERIFY(notifier.open().isEmpty());
    QVERIFY(!notifier.find(QStringLiteral("agent"), QStringLiteral("b.test")));
}

void TestDenialNotifier::rulesFromWhatWasSeen()
{
    DeniedDestination seen;
    seen.sandbox = QStringLiteral("agent");
    seen.name = QStringLiteral("pkg.test");
    seen.add(denial(QStringLiteral("agent"), QStringLiteral("pkg.test"), 80, QStringLiteral("GET"),
                    QStringLiteral("/simple/")),
             kStart);
    seen.add(denial(QStringLiteral("agent"), QStringLiteral("pkg.test"), 80, QStringLiteral("get"),
                    QStringLiteral("/a b")),
             kStart);
    const EgressRule name = seen.nameRule(QStringLiteral("why"));
    QCOMPARE(name.host, QStringLiteral("pkg.test"));
    QCOMPARE(name.ports, QList<quint16> {80});
    QVERIFY(name.methods.isEmpty());
    QVERIFY(name.pathPrefixes.isEmpty());
    QCOMPARE(name.comment, QStringLiteral("why"));
    const EgressRule exact = seen.seenRule(QStringLiteral("why"));
    // Only what a rule can hold: "get" is no method token, "/a b" no path prefix.
    QCOMPARE(exact.methods, QStringList {QStringLiteral("GET")});
    QCOMPARE(exact.pathPrefixes, QStringList {QStringLiteral("/simple/")});
    QVERIFY(exact.validate());

    // Only a lookup was denied: no port, method or path seen.
    DeniedDestination lookup;
    lookup.name = QStringLiteral("pkg.test");
    lookup.add(
        denial(QStringLiteral("agent"), QStringLiteral("pkg.test"), -1, QString(), QString()),
        kStart);
    QCOMPARE(lookup.seenRule({}).ports, QList<quint16> {EgressRule::kDefaultPort});
    QVERIFY(lookup.seenRule({}).methods.isEmpty());
    QVERIFY(lookup.seenRule({}).pathPrefixes.isEmpty());
}

void TestDenialNotifier::decisionNeverAllowsByItself()
{
    DeniedDestination destination;
    destination.sandbox = QStringLiteral("agent");
    destination.name = QStringLiteral("pkg.test");
    destination.add(denial(QStringLiteral("agent"), QStringLiteral("pkg.test")), kStart);

    AllowDecision closed(destination);
    QSignalSpy answered(&closed, &AllowDecision::answered);
    QVERIFY(closed.isPending());
    // Neither Pending nor KeepDenied is an allow.
    closed.allowed(AllowDecision::Answer::Pending);
    closed.allowed(AllowDecision::Answer::KeepDenied);
    QVERIFY(closed.isPending());
    closed.closed();
    QCOMPARE(closed.answer(), AllowDecision::Answer::KeepDenied);
    // The first answer is final: a late "allowed" (e.g. a second click) changes nothing.
    closed.allowed(AllowDecision::Answer::AllowSeen);
    closed.keepDenied();
    QCOMPARE(closed.answer(), AllowDecision::Answer::KeepDenied);
    QCOMPARE(answered.count(), 1);

    AllowDecision allowed(destination);
    allowed.allowed(AllowDecision::Answer::AllowName);
    allowed.closed();
    QCOMPARE(allowed.answer(), AllowDecision::Answer::AllowName);

    const EgressRule rule = allowed.ruleFor(AllowDecision::Answer::AllowName, kStart.addSecs(90));
    QVERIFY2(rule.comment.contains(QStringLiteral("2026-12-03 18:01 UTC")),
             qPrintable(rule.comment));
    QVERIFY2(rule.comment.contains(QStringLiteral("1 denied request")), qPrintable(rule.comment));
}

void TestDenialNotifier::promptTimeoutKeepsDenied()
{
    DeniedDestination destination;
    destination.sandbox = QStringLiteral("agent");
    destination.name = QStringLiteral("pkg.test");
    destination.add(denial(QStringLiteral("agent"), QStringLiteral("pkg.test")), kStart);
    AllowDecision decision(destination);
    QSignalSpy answered(&decision, &AllowDecision::answered);
    decision.setTimeout(1);
    QTRY_COMPARE(answered.count(), 1);
    QCOMPARE(answered.constFirst().constFirst().value<AllowDecision::Answer>(),
             AllowDecision::Answer::KeepDenied);

    // The prompt's own timeout closes it, denied.
    DenialPrompt prompt(nullptr, destination);
    prompt.show();
    QVERIFY(QTest::qWaitForWindowExposed(&prompt));
    prompt.decision()->setTimeout(1);
    QTRY_VERIFY(!prompt.isVisible());
    QCOMPARE(prompt.decision()->answer(), AllowDecision::Answer::KeepDenied);
    QCOMPARE(prompt.result(), int(QDialog::Rejected));
}

void TestDenialNotifier::promptClosedOrEscapedKeepsDenied()
{
    DeniedDestination destination;
    destination.sandbox = QStringLiteral("agent");
    destination.name = QStringLiteral("pkg.test");
    destination.add(denial(QStringLiteral("agent"), QStringLiteral("pkg.test"), 80,
                           QStringLiteral("GET"), QStringLiteral("/x")),
                    kStart);
    {
        DenialPrompt prompt(nullptr, destination);
        QVERIFY(prompt.keepDeniedButton()->isDefault());
        QVERIFY(!prompt.allowButton()->isDefault());
        QCOMPARE(prompt.choice(), AllowDecision::Answer::AllowSeen);
        QVERIFY2(prompt.changeText().startsWith(
                     QStringLiteral("+ pkg.test  ports 80  methods GET  paths /x")),
                 qPrintable(prompt.changeText()));
        prompt.setChoice(AllowDecision::Answer::AllowName);
        QVERIFY2(prompt.changeText().startsWith(
                     QStringLiteral("+ pkg.test  ports 80  methods any  paths any  — allowed")),
                 qPrintable(prompt.changeText()));
        prompt.show();
        QVERIFY(QTest::qWaitForWindowExposed(&prompt));
        QVERIFY(prompt.close()); // the window's close button
        QCOMPARE(prompt.decision()->answer(), AllowDecision::Answer::KeepDenied);
    }
    {
        DenialPrompt prompt(nullptr, destination);
        prompt.show();
        QVERIFY(QTest::qWaitForWindowExposed(&prompt));
        QTest::keyClick(&prompt, Qt::Key_Escape);
        QCOMPARE(prompt.decision()->answer(), AllowDecision::Answer::KeepDenied);
        QVERIFY(!prompt.isVisible());
    }
    {
        // Enter presses the default button: Keep Denied.
        DenialPrompt prompt(nullptr, destination);
        prompt.show();
        QVERIFY(QTest::qWaitForWindowExposed(&prompt));
        QTest::keyClick(&prompt, Qt::Key_Return);
        QCOMPARE(prompt.decision()->answer(), AllowDecision::Answer::KeepDenied);
    }
}

void TestDenialNotifier::promptAllowFailingKeepsDenied()
{
    DeniedDestination destination;
    destination.sandbox = QStringLiteral("agent");
    destination.name = QStringLiteral("pkg.test");
    destination.add(denial(QStringLiteral("agent"), QStringLiteral("pkg.test")), kStart);
    DenialPrompt prompt(nullptr, destination); // no helper: the change cannot be applied
    prompt.show();
    QVERIFY(QTest::qWaitForWindowExposed(&prompt));
    QTest::mouseClick(prompt.allowButton(), Qt::LeftButton);
    QTRY_VERIFY(prompt.allowButton()->isEnabled());
    QVERIFY2(prompt.statusText().contains(QStringLiteral("Not connected")),
             qPrintable(prompt.statusText()));
    QVERIFY(prompt.isVisible());
    QVERIFY(prompt.decision()->isPending());
}

void TestDenialNotifier::barNamesWhatWaits()
{
    DenialNotifier notifier(clock());
    QWidget window;
    DenialBar bar(&notifier, &window);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(bar.isHidden());
    for (const char *name : {"a.test", "b.test", "c.test", "d.test"})
        notifier.record(denial(QStringLiteral("agent"), QString::fromLatin1(name)));
    QVERIFY(bar.isVisible());
    QCOMPARE(bar.text(),
             QStringLiteral("Denied, waiting for your answer: a.test (agent), b.test "
                            "(agent), c.test (agent) and 1 more."));
    QSignalSpy prompt(&bar, &DenialBar::promptRequested);
    QTest::mouseClick(bar.promptButton(), Qt::LeftButton);
    QCOMPARE(prompt.count(), 1);
    QCOMPARE(prompt.constFirst(),
             (QVariantList {QStringLiteral("agent"), QStringLiteral("a.test")}));
    // With a tray, the tray icon does the bar's job.
    bar.setTrayAvailable(true);
    QVERIFY(bar.isHidden());
    bar.setTrayAvailable(false);
    QTest::mouseClick(bar.keepAllButton(), Qt::LeftButton);
    QVERIFY(notifier.open().isEmpty());
    QVERIFY(bar.isHidden());
}

QTEST_MAIN(TestDenialNotifier)
#include "tst_denialnotifier.moc"

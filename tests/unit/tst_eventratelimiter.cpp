// The gateway's event rate limit (docs/gateway.md, "Event rate";
// docs/reviews/2026-12-01-credentials-redteam.md#f6) with a test clock: a burst passes, the rest is
// summarized with counts that add up to every decision, alerts have their own bucket, and the
// number of kinds kept apart is bounded.
#include "core/gateway/eventratelimiter.h"

#include <QTest>

using airlock::EgressEvent;
using airlock::EgressLayer;
using airlock::gateway::EventRateLimiter;

namespace {

EgressEvent decision(const QString &name, const QString &path = QStringLiteral("/a"),
                     bool alert = false)
{
    EgressEvent event;
    event.time = QDateTime::currentDateTimeUtc();
    event.sandbox = QStringLiteral("s");
    event.layer = EgressLayer::Http;
    event.allowed = !alert;
    event.reason = alert ? QStringLiteral("credential_exfil") : QStringLiteral("allowed");
    event.name = name;
    event.host = name;
    event.port = 443;
    event.method = QStringLiteral("GET");
    event.path = path;
    event.status = 200;
    event.bytesUp = 10;
    event.bytesDown = 100;
    event.alert = alert;
    if (alert)
        event.binding = 3;
    return event;
}

qint64 decisions(const QList<EgressEvent> &events, bool alerts)
{
    qint64 total = 0;
    for (const EgressEvent &event : events) {
        if (event.alert == alerts)
            total += event.count.value_or(1);
    }
    return total;
}

} // namespace

class TestEventRateLimiter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void burstThenSummaries()
    {
        qint64 now = 0;
        EventRateLimiter limiter([&] { return now; }, false);
        QList<EgressEvent> out;
        connect(&limiter, &EventRateLimiter::passed, this,
                [&](const EgressEvent &event) { out.append(event); });
        for (int i = 0; i < 10000; ++i)
            limiter.submit(decision(QStringLiteral("api.test"), QStringLiteral("/p%1").arg(i % 3)));
        QCOMPARE(out.size(), int(EventRateLimiter::kBurst));
        QCOMPARE(limiter.pendingDecisions(), 10000 - qint64(EventRateLimiter::kBurst));
        limiter.flush();
        QCOMPARE(out.size(), int(EventRateLimiter::kBurst) + 1);
        const EgressEvent &summary = out.last();
        QCOMPARE(summary.count, 10000 - qint64(EventRateLimiter::kBurst));
        QVERIFY(summary.path.isEmpty()); // the paths differed
        QCOMPARE(summary.status, 200); // the status did not
        QCOMPARE(summary.bytesDown, 100 * *summary.count);
        QCOMPARE(summary.name, QStringLiteral("api.test"));
        QVERIFY(summary.detail.contains(QStringLiteral("decisions like this one")));
        QCOMPARE(decisions(out, false), 10000);
        // One second refills kRate tokens.
        now += 1000;
        for (int i = 0; i < 300; ++i)
            limiter.submit(decision(QStringLiteral("api.test")));
        QCOMPARE(out.size(), int(EventRateLimiter::kBurst) + 1 + int(EventRateLimiter::kRate));
    }

    void alertsHaveTheirOwnBucketAndAreNeverLost()
    {
        qint64 now = 0;
        EventRateLimiter limiter([&] { return now; }, false);
        QList<EgressEvent> out;
        connect(&limiter, &EventRateLimiter::passed, this,
                [&](const EgressEvent &event) { out.append(event); });
        for (int i = 0; i < 5000; ++i)
            limiter.submit(decision(QStringLiteral("api.test")));
        // The ordinary bucket is empty; an alert still passes at once.
        out.clear();
        limiter.submit(decision(QStringLiteral("evil.test"), QStringLiteral("/x"), true));
        QCOMPARE(out.size(), 1);
        QVERIFY(out.first().alert);
        QVERIFY(!out.first().count);
        for (int i = 0; i < 1000; ++i)
            limiter.submit(decision(QStringLiteral("evil.test"), QStringLiteral("/x"), true));
        limiter.flush();
        QCOMPARE(decisions(out, true), 1001);
        QVERIFY(out.size() <= int(EventRateLimiter::kAlertBurst) + 2);
        QVERIFY(std::any_of(out.cbegin(), out.cend(), [](const EgressEvent &e) {
            return e.alert && e.count.value_or(0) > 1 && e.binding == 3;
        }));
    }

    void kindsAreBounded()
    {
        qint64 now = 0;
        EventRateLimiter limiter([&] { return now; }, false);
        QList<EgressEvent> out;
        connect(&limiter, &EventRateLimiter::passed, this,
                [&](const EgressEvent &event) { out.append(event); });
        const int total = int(EventRateLimiter::kBurst) + 20000;
        for (int i = 0; i < total; ++i)
            limiter.submit(decision(QStringLiteral("n%1.test").arg(i)));
        out.clear();
        limiter.flush();
        QVERIFY2(out.size() <= EventRateLimiter::kMaxKinds + 1,
                 qPrintable(QString::number(out.size())));
        QCOMPARE(decisions(out, false), 20000);
        QCOMPARE(limiter.pendingDecisions(), 0);
    }
};

QTEST_GUILESS_MAIN(TestEventRateLimiter)
#include "tst_eventratelimiter.moc"

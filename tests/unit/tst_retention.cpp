#include "core/snapshot/retention.h"

#include <QSet>
#include <QTest>

using namespace airlock;

namespace {

const QDateTime kStart(QDate(2025, 3, 1), QTime(0, 7), Qt::UTC);

Snapshot automatic(const QDateTime &time, int serial)
{
    Snapshot s;
    s.id = QStringLiteral("%1").arg(serial, 16, 16, QLatin1Char('0'));
    s.kind = SnapshotKind::Automatic;
    s.createdAt = time;
    return s;
}

} // namespace

class TestRetention : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void simulatedClock_data();
    void simulatedClock();
    void pinnedManualAndSafetyAreKept();
    void newestIsAlwaysKept();
};

void TestRetention::simulatedClock_data()
{
    QTest::addColumn<int>("intervalMinutes");
    QTest::addColumn<int>("days");
    QTest::newRow("every 15 min for 10 days") << 15 << 10;
    QTest::newRow("every 60 min for 9 days") << 60 << 9;
    QTest::newRow("every 7 min for 3 days") << 7 << 3;
}

void TestRetention::simulatedClock()
{
    // The helper's loop: take a snapshot every interval, then apply retention, on a clock that
    // only this test advances.
    QFETCH(int, intervalMinutes);
    QFETCH(int, days);
    const SnapshotSchedule schedule; // hourly for 24 h, daily for 7 days
    QList<Snapshot> kept;
    int serial = 0;
    QDateTime now = kStart;
    const QDateTime end = kStart.addDays(days);
    while (now < end) {
        kept.append(automatic(now, ++serial));
        const QStringList expired = Retention::expired(kept, schedule, now);
        const QSet<QString> gone(expired.begin(), expired.end());
        kept.removeIf([&](const Snapshot &s) { return gone.contains(s.id); });
        now = now.addSecs(intervalMinutes * 60);
    }
    now = now.addSecs(-intervalMinutes * 60); // the time of the last run

    QSet<qint64> hours;
    QSet<qint64> daysSeen;
    for (const Snapshot &s : kept) {
        const qint64 age = s.createdAt.secsTo(now);
        QVERIFY2(age < 7 * 86400, qPrintable(s.createdAt.toString(Qt::ISODate)));
        if (age < 24 * 3600) {
            QVERIFY2(!hours.contains(s.createdAt.toSecsSinceEpoch() / 3600),
                     "two snapshots kept in one hour");
            hours.insert(s.createdAt.toSecsSinceEpoch() / 3600);
        } else {
            QVERIFY2(!daysSeen.contains(s.createdAt.toSecsSinceEpoch() / 86400),
                     "two snapshots kept in one day beyond the hourly window");
        }
        daysSeen.insert(s.createdAt.toSecsSinceEpoch() / 86400);
    }
    // Every hour of the last day that had a snapshot still has one...
    const int expectedHours = qMin(24, int(kStart.secsTo(now) / 3600) + 1);
    QVERIFY2(hours.size() >= expectedHours - 1 && hours.size() <= 25,
             qPrintable(QStringLiteral("%1 hourly").arg(hours.size())));
    // ...and every day of the last week one.
    const int expectedDays = qMin(days, 7);
    QVERIFY2(daysSeen.size() >= expectedDays && daysSeen.size() <= 8,
             qPrintable(QStringLiteral("%1 daily").arg(daysSeen.size())));
    // The kept one of a day is its newest (the last state of the day).
    for (const Snapshot &s : kept) {
        if (s.createdAt.secsTo(now) < 24 * 3600 || s.createdAt.secsTo(now) >= 7 * 86400)
            continue;
        const QDateTime nextTick = s.createdAt.addSecs(intervalMinutes * 60);
        QVERIFY(nextTick.date() != s.createdAt.date() || nextTick > now);
    }
}

void TestRetention::pinnedManualAndSafetyAreKept()
{
    const QDateTime now = kStart.addDays(30);
    QList<Snapshot> snapshots;
    Snapshot pinned = automatic(kStart, 1);
    pinned.pinned = true;
    Snapshot manual = automatic(kStart.addSecs(60), 2);
    manual.kind = SnapshotKind::Manual;
    Snapshot safety = automatic(kStart.addSecs(120), 3);
    safety.kind = SnapshotKind::Safety;
    Snapshot old = automatic(kStart.addSecs(180), 4);
    Snapshot newest = automatic(now.addSecs(-60), 5);
    snapshots << pinned << manual << safety << old << newest;
    QCOMPARE(Retention::expired(snapshots, SnapshotSchedule(), now), QStringList {old.id});
}

void TestRetention::newestIsAlwaysKept()
{
    // A sandbox stopped for a month keeps its last automatic snapshot.
    const QDateTime now = kStart.addDays(40);
    QList<Snapshot> snapshots {automatic(kStart, 1), automatic(kStart.addSecs(3600), 2)};
    QCOMPARE(Retention::expired(snapshots, SnapshotSchedule(), now), QStringList {snapshots[0].id});
    SnapshotSchedule none;
    none.hourlyHours = 0;
    none.dailyDays = 0;
    QCOMPARE(Retention::expired(snapshots, none, kStart.addSecs(3601)),
             QStringList {snapshots[0].id});
    QCOMPARE(Retention::windowStart(SnapshotSchedule(), now), now.addDays(-7));
}

QTEST_APPLESS_MAIN(TestRetention)
#include "tst_retention.moc"

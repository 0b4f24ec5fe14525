#include "core/snapshot/retention.h"

#include <QSet>

#include <algorithm>

namespace airlock {

QStringList Retention::expired(const QList<Snapshot> &snapshots, const SnapshotSchedule &schedule,
                               const QDateTime &now)
{
    QList<const Snapshot *> automatic;
    for (const Snapshot &snapshot : snapshots) {
        if (snapshot.kind == SnapshotKind::Automatic)
            automatic.append(&snapshot);
    }
    // Newest first, so the first one seen in a bucket is the one kept.
    std::sort(automatic.begin(), automatic.end(), [](const Snapshot *a, const Snapshot *b) {
        return a->createdAt != b->createdAt ? a->createdAt > b->createdAt : a->id > b->id;
    });
    const qint64 nowSecs = now.toSecsSinceEpoch();
    const qint64 hourlyLimit = qint64(schedule.hourlyHours) * 3600;
    const qint64 dailyLimit = qint64(schedule.dailyDays) * 86400;
    QSet<qint64> hoursTaken;
    QSet<qint64> daysTaken;
    QStringList expired;
    bool newest = true;
    for (const Snapshot *snapshot : automatic) {
        const qint64 time = snapshot->createdAt.toSecsSinceEpoch();
        const qint64 age = nowSecs - time;
        // Buckets by UTC clock hour and day (floor division, also for times before 1970).
        const qint64 hour = time >= 0 ? time / 3600 : (time - 3599) / 3600;
        const qint64 day = time >= 0 ? time / 86400 : (time - 86399) / 86400;
        bool keep = false;
        if (newest || snapshot->pinned) {
            keep = true;
        } else if (age < hourlyLimit && !hoursTaken.contains(hour)) {
            keep = true;
        } else if (age < dailyLimit && !daysTaken.contains(day)) {
            keep = true;
        }
        newest = false;
        if (keep) {
            hoursTaken.insert(hour);
            daysTaken.insert(day);
        } else {
            expired.append(snapshot->id);
        }
    }
    return expired;
}

QDateTime Retention::windowStart(const SnapshotSchedule &schedule, const QDateTime &now)
{
    const qint64 seconds =
        qMax(qint64(schedule.hourlyHours) * 3600, qint64(schedule.dailyDays) * 86400);
    return now.addSecs(-seconds);
}

} // namespace airlock

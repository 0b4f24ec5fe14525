#pragma once

#include "core/model/snapshot.h"

#include <QDateTime>
#include <QList>
#include <QStringList>

namespace airlock {

/// Rolling retention of automatic snapshots (docs/snapshots.md). A pure function of the
/// snapshots, the schedule and the time, so it is tested against a simulated clock.
class Retention
{
public:
    /// Ids of the snapshots to delete at `now` (UTC):
    /// - only automatic snapshots ever expire; manual, safety and pinned ones are kept;
    /// - younger than `hourlyHours`: the newest automatic snapshot of each clock hour is kept;
    /// - younger than `dailyDays`: the newest of each UTC day is kept;
    /// - older: deleted;
    /// - the sandbox's newest automatic snapshot is always kept, so a stopped sandbox never
    ///   loses its last state to the clock.
    static QStringList expired(const QList<Snapshot> &snapshots, const SnapshotSchedule &schedule,
                               const QDateTime &now);
    /// Start of the window retention keeps (now - max(hourly, daily)), for the timeline.
    static QDateTime windowStart(const SnapshotSchedule &schedule, const QDateTime &now);
};

} // namespace airlock

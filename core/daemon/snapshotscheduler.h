#pragma once

#include "core/model/error.h"
#include "core/model/snapshot.h"

#include <QObject>
#include <QTimer>

namespace airlock {

class SandboxService;
class SnapshotArchive;
class SnapshotService;

/// Automatic snapshots and their retention (docs/snapshots.md, "Automatic snapshots and
/// retention"): each sandbox's SnapshotSchedule (kept in the catalog, off by default), and a
/// timer that takes the `automatic` snapshots that are due of running sandboxes (through
/// SnapshotService, stored on a worker) and then deletes what Retention::expired lets go.
class SnapshotScheduler : public QObject
{
    Q_OBJECT
public:
    /// All three must outlive it.
    SnapshotScheduler(SandboxService &sandboxes, SnapshotService &snapshots,
                      SnapshotArchive &archive, QObject *parent = nullptr);

    /// The schedule of `sandbox` (the defaults when none was set). NotFound for an unknown one.
    Result<SnapshotSchedule> schedule(const QString &sandbox) const;
    /// Replaces the schedule of `sandbox`; returns it. NotFound for an unknown sandbox.
    Result<SnapshotSchedule> setSchedule(const QString &sandbox, const SnapshotSchedule &schedule);
    /// Starts the timer, checking every `checkIntervalMs`.
    void start(int checkIntervalMs = 30000);
    /// One pass at SnapshotService's clock time: automatic snapshots that are due (stored on a
    /// worker, see SnapshotService::createAsync), then retention. Public for tests.
    void runSchedules();

private:
    /// Deletes the sandbox's snapshots that retention lets go at `now`, then collects garbage.
    void applyRetention(const QString &sandbox, const QDateTime &now);

    SandboxService &m_sandboxes;
    SnapshotService &m_snapshots;
    SnapshotArchive &m_archive;
    QTimer m_timer;
};

} // namespace airlock

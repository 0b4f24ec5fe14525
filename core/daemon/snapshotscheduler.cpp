#include "core/daemon/snapshotscheduler.h"

#include "core/daemon/sandboxservice.h"
#include "core/daemon/snapshotservice.h"
#include "core/snapshot/retention.h"
#include "core/snapshot/snapshotarchive.h"

#include <QLoggingCategory>
#include <QPointer>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcSnapshots, "airlock.daemon.snapshot")

} // namespace

SnapshotScheduler::SnapshotScheduler(SandboxService &sandboxes, SnapshotService &snapshots,
                                     SnapshotArchive &archive, QObject *parent)
    : QObject(parent), m_sandboxes(sandboxes), m_snapshots(snapshots), m_archive(archive)
{
    connect(&m_timer, &QTimer::timeout, this, &SnapshotScheduler::runSchedules);
}

Result<SnapshotSchedule> SnapshotScheduler::schedule(const QString &sandbox) const
{
    AIRLOCK_TRY(m_sandboxes.get(sandbox));
    return m_archive.catalog().schedule(sandbox);
}

Result<SnapshotSchedule> SnapshotScheduler::setSchedule(const QString &sandbox,
                                                        const SnapshotSchedule &schedule)
{
    AIRLOCK_TRY(m_sandboxes.get(sandbox));
    AIRLOCK_TRY(m_archive.catalog().setSchedule(sandbox, schedule));
    return schedule;
}

void SnapshotScheduler::start(int checkIntervalMs)
{
    m_timer.start(checkIntervalMs);
}

void SnapshotScheduler::runSchedules()
{
    const QDateTime now = m_snapshots.now();
    for (const Sandbox &sandbox : m_sandboxes.list()) {
        const QString &name = sandbox.spec.name;
        const SnapshotSchedule schedule = m_archive.catalog().schedule(name);
        if (schedule.intervalMinutes <= 0)
            continue;
        auto snapshots = m_archive.catalog().list(name);
        if (!snapshots)
            continue;
        QDateTime last;
        for (const Snapshot &snapshot : *snapshots) {
            if (snapshot.kind == SnapshotKind::Automatic && snapshot.createdAt > last)
                last = snapshot.createdAt;
        }
        const bool due = !last.isValid() || last.secsTo(now) >= schedule.intervalMinutes * 60LL;
        if (due && sandbox.state == SandboxState::Running && !m_snapshots.isStoring(name)) {
            // Retention once the new snapshot is stored (it counts as the newest).
            m_snapshots.createAsync(
                name, QString(), SnapshotKind::Automatic,
                [self = QPointer(this), name, now](const Result<Snapshot> &taken) {
                    if (!taken)
                        qCWarning(lcSnapshots, "%s: automatic snapshot failed: %s",
                                  qPrintable(name), qPrintable(taken.error().message));
                    if (self)
                        self->applyRetention(name, now);
                });
            continue;
        }
        applyRetention(name, now);
    }
}

void SnapshotScheduler::applyRetention(const QString &name, const QDateTime &now)
{
    auto snapshots = m_archive.catalog().list(name);
    if (!snapshots)
        return;
    const SnapshotSchedule schedule = m_archive.catalog().schedule(name);
    bool removedAny = false;
    for (const QString &id : Retention::expired(*snapshots, schedule, now)) {
        if (m_snapshots.isInUse(id))
            continue; // the next pass
        if (m_snapshots.discard(name, id))
            removedAny = true;
    }
    // Collecting reads every manifest: only when retention freed something.
    if (removedAny)
        m_archive.collectGarbage();
}

} // namespace airlock

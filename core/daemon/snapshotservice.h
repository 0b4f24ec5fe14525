#pragma once

#include "core/model/error.h"
#include "core/model/snapshot.h"
#include "core/snapshot/snapshotarchive.h"

#include <QObject>
#include <QTimer>

#include <functional>

namespace airlock {

class SandboxService;

/// Snapshots of running guests (docs/snapshots.md): create (pause, device state through QMP
/// migration into a memfd, copy of the RAM file, resume, then store), restore in place (after
/// a safety snapshot), fork into a new sandbox, delete, pin, rename, automatic snapshots with
/// rolling retention. Everything is recorded through the SnapshotArchive, so the store and the
/// registry agree whenever the helper stops.
class SnapshotService : public QObject
{
    Q_OBJECT
public:
    /// Largest device state accepted from a VMM (which is not trusted): 64 MiB.
    static constexpr qint64 kMaxDeviceStateBytes = 64LL * 1024 * 1024;

    SnapshotService(SandboxService &sandboxes, SnapshotArchive &archive, QObject *parent = nullptr);

    /// Reconciles store and registry after a crash and collects garbage; call once at start.
    Result<void> restore();
    /// Starts the automatic snapshot timer, checking every `checkIntervalMs`.
    void startSchedules(int checkIntervalMs = 30000);
    /// Replaces the clock (tests of automatic snapshots and retention).
    void setClock(std::function<QDateTime()> clock) { m_clock = std::move(clock); }

    /// Snapshot of a running or paused sandbox. InvalidState otherwise.
    Result<Snapshot> create(const QString &sandbox, const QString &label,
                            SnapshotKind kind = SnapshotKind::Manual);
    /// Snapshots of a sandbox (all when empty), oldest first. NotFound for an unknown sandbox.
    Result<QList<Snapshot>> list(const QString &sandbox) const;
    Result<Snapshot> get(const QString &id) const;
    QString head(const QString &sandbox) const;
    /// Puts `sandbox` into the state of snapshot `id` (one of its own or another sandbox's with
    /// the same memory size). A running or paused sandbox first gets a safety snapshot
    /// (returned, else nullopt); a stopped one simply starts from the snapshot.
    Result<std::optional<Snapshot>> restoreSnapshot(const QString &sandbox, const QString &id);
    /// A new sandbox `name` started from snapshot `id` while the original runs on. The egress
    /// policy of the snapshot's sandbox is copied (credential bindings are not).
    Result<QString> fork(const QString &id, const QString &name);
    Result<void> remove(const QString &id);
    Result<Snapshot> setPinned(const QString &id, bool pinned);
    Result<Snapshot> rename(const QString &id, const QString &label);
    Result<SnapshotSchedule> schedule(const QString &sandbox) const;
    Result<SnapshotSchedule> setSchedule(const QString &sandbox, const SnapshotSchedule &schedule);
    /// One pass of the scheduler at the clock's time: automatic snapshots that are due, then
    /// retention. Public for tests.
    void runSchedules();

Q_SIGNALS:
    /// A snapshot of `sandbox` was created or changed.
    void snapshotChanged(const QString &sandbox, const airlock::Snapshot &snapshot);
    /// Snapshot `id` of `sandbox` was deleted.
    void snapshotRemoved(const QString &sandbox, const QString &id);

private:
    Result<void> startFrom(const QString &sandbox, const Snapshot &snapshot);
    /// Writes the snapshot's `disk:vda` back as the stopped sandbox's overlay (nothing for
    /// images without a disk). InvalidParams when the snapshot and the image disagree about
    /// having a disk, InvalidState when the image's disk was rebuilt since.
    Result<void> writeDisk(const QString &sandbox, const Manifest &manifest);
    /// The snapshot's `disk:vda` object if it can be restored into the sandbox (nullptr for an
    /// image without a disk), with the errors of writeDisk.
    Result<const Manifest::Object *> diskToRestore(const QString &sandbox,
                                                   const Manifest &manifest) const;
    void onSandboxRemoved(const QString &sandbox);

    SandboxService &m_sandboxes;
    SnapshotArchive &m_archive;
    QTimer m_timer;
    std::function<QDateTime()> m_clock;
};

} // namespace airlock

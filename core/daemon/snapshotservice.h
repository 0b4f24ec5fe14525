#pragma once

#include "core/daemon/operationjournal.h"
#include "core/model/credentialbinding.h"
#include "core/model/error.h"
#include "core/model/snapshot.h"
#include "core/snapshot/snapshotarchive.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <memory>

#include <functional>
#include <memory>
#include <optional>

class QThread;

namespace airlock {

class BindingStore;
class SandboxService;
struct SandboxSpec;

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
    /// Disk overlays copied into the helper's memory by all captures not yet stored, together
    /// (docs/reviews/2026-12-01-guest-channels-round4.md#f3: the guest decides an overlay's size).
    /// An overlay that does not fit is copied into an unnamed file on the state file system instead
    /// (DiskCopy).
    static constexpr qint64 kDiskBytesInMemory = 64LL * 1024 * 1024;

    /// How templates are made (docs/snapshots.md, "Templates").
    struct TemplateOptions
    {
        /// Prepare a missing or stale template in the background: for the default image at
        /// start-up, and for any image and shape a template start missed. Off: only on
        /// request (template.prepare).
        bool automatic = true;
        int readyTimeoutMs = 180000; ///< cold boot to the agent's `ready` (TCG on a busy host)
        int settleMs = 1000; ///< after `ready`: the init starts the console shell
        /// Templates kept at most (airlockd --templates-max); when a new one is made beyond
        /// it, the least recently used go (docs/reviews/2026-12-01-newuser-pass.md#m4: each one
        /// holds its memory in tmpfs, and any group member can ask for new shapes). At least 1.
        int maxTemplates = 4;
    };

    SnapshotService(SandboxService &sandboxes, SnapshotArchive &archive, QObject *parent = nullptr);
    ~SnapshotService() override;

    void setTemplateOptions(const TemplateOptions &options) { m_templateOptions = options; }
    /// Credential bindings, for forks that copy them; none: forks never copy bindings.
    void setBindings(BindingStore *bindings) { m_bindings = bindings; }

    /// Reconciles store and registry after a crash and collects garbage; call once at start
    /// (after SandboxService::restore()). Finishes what a killed helper's fork or restore left
    /// (OperationJournal): a fork whose guest never ran is removed again (with its copied
    /// bindings), a sandbox whose restore was cut short gets a state reason naming the safety
    /// snapshot; template caches of templates that are gone are deleted.
    /// With automatic templates, then starts preparing the default image's template (default
    /// shape) if it has no current one.
    Result<void> restore();
    /// Starts the automatic snapshot timer, checking every `checkIntervalMs`.
    void startSchedules(int checkIntervalMs = 30000);
    /// Replaces the clock (tests of automatic snapshots and retention).
    void setClock(std::function<QDateTime()> clock) { m_clock = std::move(clock); }

    /// Snapshot of a running or paused sandbox. InvalidState otherwise; Busy while another
    /// snapshot of it is being stored.
    Result<Snapshot> create(const QString &sandbox, const QString &label,
                            SnapshotKind kind = SnapshotKind::Manual);
    /// create() that stores on a worker thread: the guest is paused, saved and resumed before
    /// this returns; hashing, compressing and writing the chunks run on a worker; `done` gets
    /// the result on this object's thread (at once for errors of the first part). The event
    /// loop serves other clients meanwhile. Not called when the service is destroyed first.
    void createAsync(const QString &sandbox, const QString &label, SnapshotKind kind,
                     std::function<void(const Result<Snapshot> &)> done);
    /// Snapshots of a sandbox (all when empty), oldest first. NotFound for an unknown sandbox.
    Result<QList<Snapshot>> list(const QString &sandbox) const;
    Result<Snapshot> get(const QString &id) const;
    QString head(const QString &sandbox) const;
    /// Puts `sandbox` into the state of snapshot `id` (one of its own: InvalidParams for
    /// another sandbox's). A running or paused sandbox first gets a safety snapshot, stored on a
    /// worker (createAsync) before its VMM is replaced; `done` gets it (else nullopt: a stopped
    /// sandbox simply starts from the snapshot), or the error, on this object's thread.
    void restoreSnapshot(const QString &sandbox, const QString &id,
                         std::function<void(const Result<std::optional<Snapshot>> &)> done);
    /// What a fork does with the credential bindings of the snapshot's sandbox.
    struct ForkBindings
    {
        bool copy = false; ///< snapshot.fork `bindings`
        /// Why a binding may not be copied (a secret the caller does not own: docs/credentials.md
        /// "Trust model"), or an empty string to copy it. Unset: every binding is copied.
        std::function<QString(const CredentialBinding &)> refuse;
        QList<CredentialBinding> copied; ///< out: as stored for the fork (new ids)
        QStringList leftOut; ///< out: refuse()'s reason for each binding not copied
    };
    /// A new sandbox `name` started from snapshot `id` while the original runs on. The egress
    /// policy of the snapshot's sandbox is copied; its credential bindings only with
    /// `bindings->copy` (then with new placeholders), those refuse() lets through. The guest
    /// gets the fork's own name, addresses, CA and seed files through its agent.
    Result<QString> fork(const QString &id, const QString &name, ForkBindings *bindings = nullptr);

    /// Identifies what a template is made of: SHA-256 over the image (id, kernel arguments,
    /// kernel and initrd size and mtime), the QEMU binary (path, size, mtime), the device
    /// layout, acceleration, vCPUs and memory. A rebuilt image or upgraded QEMU changes it.
    Result<QString> templateKey(const SandboxSpec &shape) const;
    /// The current template for `shape`'s image, vCPUs and memory; nullopt when none.
    std::optional<Snapshot> currentTemplate(const SandboxSpec &shape) const;
    /// Makes a template for `shape` unless a current one exists (returned): boots the image in
    /// an internal guest, waits for its agent, snapshots it (kind `template`, no sandbox),
    /// removes the guest and any stale template of the same image and shape. Returns at once
    /// (nullopt) while that runs; snapshotChanged("", template) reports the result.
    /// With `automatic` (the helper's own background preparations), a shape whose last
    /// preparation failed in this helper run is not tried again.
    Result<std::optional<Snapshot>> prepareTemplate(const SandboxSpec &shape,
                                                    bool automatic = false);
    /// True while a template for `shape` is being prepared.
    bool isPreparing(const SandboxSpec &shape) const;
    /// Deletes a snapshot. Busy while a restore or fork reads it
    /// (docs/reviews/2026-12-01-newuser-pass.md#m6).
    Result<void> remove(const QString &id);
    Result<Snapshot> setPinned(const QString &id, bool pinned);
    Result<Snapshot> rename(const QString &id, const QString &label);
    Result<SnapshotSchedule> schedule(const QString &sandbox) const;
    Result<SnapshotSchedule> setSchedule(const QString &sandbox, const SnapshotSchedule &schedule);
    /// One pass of the scheduler at the clock's time: automatic snapshots that are due (stored
    /// on a worker, see createAsync), then retention. Public for tests.
    void runSchedules();

Q_SIGNALS:
    /// A snapshot of `sandbox` was created or changed.
    void snapshotChanged(const QString &sandbox, const airlock::Snapshot &snapshot);
    /// Snapshot `id` of `sandbox` was deleted.
    void snapshotRemoved(const QString &sandbox, const QString &id);

Q_SIGNALS:
    /// A template preparation for `key` ended without a template (the reason is logged).
    void templateFailed(const QString &key, const QString &reason);

private:
    struct Capture;
    Result<Snapshot> capture(const QString &sandbox, const QString &label, SnapshotKind kind,
                             const QString &templateKey);
    /// The part of a snapshot that needs the guest paused (on this thread).
    Result<std::shared_ptr<Capture>> captureState(const QString &sandbox, const QString &label,
                                                  SnapshotKind kind, const QString &templateKey);
    static std::vector<SnapshotArchive::Object> objectsOf(const Capture &capture);
    /// Records a staged snapshot (this thread), logs and announces it.
    Result<Snapshot> record(const QString &sandbox, const Capture &capture, const Snapshot &staged);
    Result<void> startFrom(const QString &sandbox, const Snapshot &snapshot);
    /// Writes the snapshot's `disk:vda` back as the stopped sandbox's overlay (nothing for
    /// images without a disk). InvalidParams when the snapshot and the image disagree about
    /// having a disk, InvalidState when the image's disk was rebuilt since.
    Result<void> writeDisk(const QString &sandbox, const Manifest &manifest);
    /// The snapshot's `disk:vda` object if it can be restored into the sandbox (nullptr for an
    /// image without a disk), with the errors of writeDisk.
    Result<const Manifest::Object *> diskToRestore(const QString &sandbox,
                                                   const Manifest &manifest) const;
    /// Fills `sandbox`'s memory file from `snapshot` (or, when >= 0, by copying the data
    /// extents of `memorySource`, a file with the same bytes) and returns a memfd with its
    /// device state.
    Result<int> stageState(const QString &sandbox, const Snapshot &snapshot, int memorySource = -1);
    /// A template's memory decompressed into tmpfs beside the RAM files (about the size of its
    /// stored chunks), so template starts copy it in the kernel; made once per helper run.
    QString templateCachePath(const QString &id) const;
    Result<void> cacheTemplate(const Snapshot &snapshot);
    void dropTemplateCache(const QString &id);
    /// SandboxService's template source.
    Result<int> templateState(const QString &sandbox, const SandboxSpec &spec);
    void captureTemplate(const QString &key, const QString &guest, const SandboxSpec &shape);
    void endTemplateGuest(const QString &key, const QString &guest, const QString &failure);
    void onSandboxRemoved(const QString &sandbox);
    /// Deletes the sandbox's snapshots that retention lets go at `now`, then collects garbage.
    void applyRetention(const QString &sandbox, const QDateTime &now);

    SandboxService &m_sandboxes;
    SnapshotArchive &m_archive;
    BindingStore *m_bindings = nullptr;
    QTimer m_timer;
    std::function<QDateTime()> m_clock;
    TemplateOptions m_templateOptions;
    QHash<QString, QString> m_preparing; ///< template key → internal guest preparing it
    QSet<QString> m_storing; ///< sandboxes whose snapshot a worker is storing
    /// Bytes of disk overlays now copied into memory by captures not yet stored, shared with
    /// them (a capture gives its share back when it goes, on whichever thread).
    std::shared_ptr<std::atomic<qint64>> m_diskBytesInMemory =
        std::make_shared<std::atomic<qint64>>(0);
    QSet<QString> m_failedKeys; ///< template keys whose preparation failed in this run
    QList<QThread *> m_workers;
    OperationJournal m_journal;
    /// Snapshots a restore or fork is reading, with how many do: remove() refuses them.
    QHash<QString, int> m_inUse;
    void hold(const QString &id) { ++m_inUse[id]; }
    void release(const QString &id)
    {
        if (--m_inUse[id] <= 0)
            m_inUse.remove(id);
    }
    /// What a killed helper's fork or restore left (restore()).
    void finishInterruptedOperations();
    /// Template caches (tmpfs) of templates no longer in the store.
    void removeStaleTemplateCaches();
    /// Removes the least recently used templates beyond TemplateOptions::maxTemplates, never
    /// `keep` (the one just made).
    void enforceTemplateCap(const QString &keep);
    QHash<QString, QDateTime> m_templateUsed; ///< template id → last start from it (this run)
};

} // namespace airlock

#pragma once

#include "core/daemon/operationjournal.h"
#include "core/daemon/snapshotcapture.h"
#include "core/daemon/workerjobs.h"
#include "core/model/credentialbinding.h"
#include "core/model/error.h"
#include "core/model/sandbox.h"
#include "core/model/snapshot.h"
#include "core/snapshot/snapshotarchive.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace airlock {

class BindingStore;
class SandboxService;

/// Snapshots of running guests (docs/snapshots.md): create (pause, device state through QMP
/// migration into a memfd, copy of the RAM file, resume, then store), restore in place (after
/// a safety snapshot), fork into a new sandbox, delete, pin, rename. Everything is recorded
/// through the SnapshotArchive, so the store and the registry agree whenever the helper stops.
/// Templates are TemplateService's, automatic snapshots and retention SnapshotScheduler's; both
/// take and remove snapshots through this class.
class SnapshotService : public QObject
{
    Q_OBJECT
public:
    /// Largest device state accepted from a VMM (which is not trusted): 64 MiB.
    static constexpr qint64 kMaxDeviceStateBytes = SnapshotCapture::kMaxDeviceStateBytes;
    /// Disk overlays copied into the helper's memory by all captures not yet stored, together
    /// (docs/reviews/2026-12-01-guest-channels-round4.md#f3: the guest decides an overlay's size).
    /// An overlay that does not fit is copied into an unnamed file on the state file system instead
    /// (DiskCopy).
    static constexpr qint64 kDiskBytesInMemory = 64LL * 1024 * 1024;
    /// The manifest object that holds a snapshot's RAM (TemplateService caches it).
    static inline const QString kMemoryObject = QStringLiteral("memory");

    SnapshotService(SandboxService &sandboxes, SnapshotArchive &archive, QObject *parent = nullptr);
    ~SnapshotService() override;

    /// Credential bindings, for forks that copy them; none: forks never copy bindings.
    void setBindings(BindingStore *bindings) { m_bindings = bindings; }

    /// Reconciles store and registry after a crash and collects garbage; call once at start
    /// (after SandboxService::restore()). Finishes what a killed helper's fork or restore left
    /// (OperationJournal): a fork whose guest never ran is removed again (with its copied
    /// bindings), a sandbox whose restore was cut short gets a state reason naming the safety
    /// snapshot.
    Result<void> restore();
    /// Replaces the clock (tests of automatic snapshots and retention).
    void setClock(std::function<QDateTime()> clock) { m_clock = std::move(clock); }
    /// The clock's time (UTC): snapshots' `createdAt`, the scheduler's and templates' "now".
    QDateTime now() const { return m_clock(); }

    /// Snapshot of a running or paused sandbox, taken without blocking the event loop: the
    /// guest is paused, its device state saved and its memory and disk copied (SnapshotCapture,
    /// the copies on a worker), then it runs on while hashing, compressing and writing the
    /// chunks run on another worker; `done` gets the stored snapshot on this object's thread (at
    /// once for errors found before the guest was touched). InvalidState unless running or
    /// paused (also when it stops meanwhile); Busy while another snapshot of it is taken or
    /// stored. Not called when the service is destroyed first.
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
    /// gets the fork's own name, addresses, CA and seed files through its agent. `done` gets
    /// the new sandbox's name once its guest runs (or the error), and `bindings` with what was
    /// copied and left out. The fork gets `labels`, or without them those of the snapshot's
    /// sandbox (while it exists).
    using ForkDone = std::function<void(const Result<QString> &, const ForkBindings &bindings)>;
    void fork(const QString &id, const QString &name, ForkBindings bindings, ForkDone done,
              const std::optional<QMap<QString, QString>> &labels = std::nullopt);

    /// Deletes a snapshot. Busy while a restore or fork reads it (review 2026-12-01, M6).
    Result<void> remove(const QString &id);
    Result<Snapshot> setPinned(const QString &id, bool pinned);
    Result<Snapshot> rename(const QString &id, const QString &label);

    /// The snapshot of TemplateService's running or paused internal guest `guest`: kind
    /// `template`, no sandbox and no parent, `templateKey` recorded (TemplateService::templateKey).
    /// Taken and answered like createAsync().
    void createTemplate(const QString &guest, const QString &label, const QString &templateKey,
                        std::function<void(const Result<Snapshot> &)> done);
    /// A restore staged by stageState(), for SandboxService::start.
    struct StagedRestore
    {
        int deviceState = -1; ///< memfd with the snapshot's device state; the caller's to close
        /// Decompresses the snapshot's memory chunks into the sandbox's new memory file (about a
        /// second for 256 MiB). It touches only that descriptor (closed when the last copy of
        /// the function goes) and the store's immutable chunk files, so it runs on any thread.
        std::function<Result<void>()> fillMemory;
    };
    /// Writes `sandbox`'s disk back from `snapshot` (errors as for a restore), makes its memory
    /// file and a memfd with the device state; the memory itself is left to `fillMemory`.
    /// InvalidParams when the snapshot's memory size is not the sandbox's.
    Result<StagedRestore> stageState(const QString &sandbox, const Snapshot &snapshot);
    /// Descriptors of a start staged by stageWithoutMemory(); both the caller's to close.
    struct StagedState
    {
        int deviceState = -1; ///< memfd with the snapshot's device state
        int memory = -1; ///< the sandbox's new memory file, still empty (read-write)
    };
    /// stageState() up to the memory: the caller fills `memory` (e.g. from a file holding the
    /// same bytes, off the event loop). `manifest`, if given, gets the snapshot's manifest.
    Result<StagedState> stageWithoutMemory(const QString &sandbox, const Snapshot &snapshot,
                                           Manifest *manifest = nullptr);
    /// True while a restore or fork reads snapshot `id` (remove() is Busy then).
    bool isInUse(const QString &id) const { return m_inUse.contains(id); }
    /// True while a snapshot of `sandbox` is taken or stored (another one is Busy then).
    bool isStoring(const QString &sandbox) const { return m_storing.contains(sandbox); }
    /// Removes snapshot `id` of `sandbox` ("" for a template) from the archive and announces it
    /// (snapshotRemoved), without remove()'s in-use check and garbage collection: for passes
    /// that check themselves and collect once (templates, retention). False when the archive
    /// could not remove it.
    bool discard(const QString &sandbox, const QString &id);

Q_SIGNALS:
    /// A snapshot of `sandbox` ("" for a template) was created or changed.
    void snapshotChanged(const QString &sandbox, const airlock::Snapshot &snapshot);
    /// Snapshot `id` of `sandbox` ("" for a template) was deleted.
    void snapshotRemoved(const QString &sandbox, const QString &id);

private:
    struct Capture;
    using Captured = std::function<void(const Result<std::shared_ptr<Capture>> &)>;
    /// createAsync() and createTemplate(): captureState(), then storeAsync().
    void takeSnapshot(const QString &sandbox, const QString &label, SnapshotKind kind,
                      const QString &templateKey,
                      std::function<void(const Result<Snapshot> &)> done);
    /// The part of a snapshot that needs the guest paused (SnapshotCapture); `sandbox` is in
    /// m_storing from the call until the snapshot is stored or failed.
    void captureState(const QString &sandbox, const QString &label, SnapshotKind kind,
                      const QString &templateKey, Captured done);
    /// Stages the capture on a worker, then records it on this thread.
    void storeAsync(const QString &sandbox, const std::shared_ptr<Capture> &capture,
                    std::function<void(const Result<Snapshot> &)> done);
    static std::vector<SnapshotArchive::Object> objectsOf(const Capture &capture);
    /// Records a staged snapshot (this thread), logs and announces it.
    Result<Snapshot> record(const QString &sandbox, const Capture &capture, const Snapshot &staged);
    /// Starts the stopped `sandbox` from `snapshot` (stageState); `done` once its VMM runs.
    void startFrom(const QString &sandbox, const Snapshot &snapshot,
                   std::function<void(const Result<void> &)> done);
    /// fork() up to the start of the new guest: the sandbox made, its policy and bindings
    /// copied, the snapshot held and the fork journalled. Returns the snapshot.
    Result<Snapshot> beginFork(const QString &id, const QString &name, ForkBindings &bindings,
                               const std::optional<QMap<QString, QString>> &labels);
    /// Writes the snapshot's `disk:vda` back as the stopped sandbox's overlay (nothing for
    /// images without a disk). InvalidParams when the snapshot and the image disagree about
    /// having a disk, InvalidState when the image's disk was rebuilt since.
    Result<void> writeDisk(const QString &sandbox, const Manifest &manifest);
    /// The snapshot's `disk:vda` object if it can be restored into the sandbox (nullptr for an
    /// image without a disk), with the errors of writeDisk.
    Result<const Manifest::Object *> diskToRestore(const QString &sandbox,
                                                   const Manifest &manifest) const;
    void onSandboxRemoved(const QString &sandbox);
    /// A start that keeps nothing of the head's state (template, cold boot without a disk)
    /// clears the head.
    void onSandboxChanged(const airlock::Sandbox &sandbox);

    SandboxService &m_sandboxes;
    SnapshotArchive &m_archive;
    BindingStore *m_bindings = nullptr;
    std::function<QDateTime()> m_clock;
    QSet<QString> m_storing; ///< sandboxes whose snapshot is being taken or stored
    /// Bytes of disk overlays now copied into memory by captures not yet stored, shared with
    /// them (a capture gives its share back when it goes, on whichever thread).
    std::shared_ptr<std::atomic<qint64>> m_diskBytesInMemory =
        std::make_shared<std::atomic<qint64>>(0);
    WorkerJobs m_jobs;
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

    QHash<QString, SandboxState> m_lastState; ///< last state seen per sandbox
};

} // namespace airlock

#pragma once

#include "core/daemon/sandboxservice.h"
#include "core/daemon/workerjobs.h"
#include "core/model/error.h"
#include "core/model/sandbox.h"
#include "core/model/snapshot.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QSet>

#include <optional>

namespace airlock {

class SnapshotArchive;
class SnapshotService;
struct SandboxSpec;

/// Templates (docs/snapshots.md, "Templates"): snapshots of a freshly booted guest of one image
/// and shape, which sandbox starts resume instead of booting cold (SandboxService's template
/// source). Prepares them in internal guests (automatically for the default image and for
/// shapes a start missed, or on template.prepare), keeps at most Options::maxTemplates (the
/// least recently used go) and keeps each one's memory decompressed in tmpfs while the helper
/// runs. Snapshots are taken and removed through SnapshotService.
class TemplateService : public QObject
{
    Q_OBJECT
public:
    /// How templates are made (docs/snapshots.md, "Templates").
    struct Options
    {
        /// Prepare a missing or stale template in the background: for the default image at
        /// start-up, and for any image and shape a template start missed. Off: only on
        /// request (template.prepare).
        bool automatic = true;
        int readyTimeoutMs = 180000; ///< cold boot to the agent's `ready` (TCG on a busy host)
        int settleMs = 1000; ///< after `ready`: the init starts the console shell
        /// Templates kept at most (airlockd --templates-max); when a new one is made beyond
        /// it, the least recently used go (review 2026-12-01, M4: each one holds its memory
        /// in tmpfs, and any group member can ask for new shapes). At least 1.
        int maxTemplates = 4;
    };

    /// Becomes `sandboxes`' template source until destroyed. All three must outlive it.
    TemplateService(SandboxService &sandboxes, SnapshotService &snapshots, SnapshotArchive &archive,
                    const Options &options, QObject *parent = nullptr);
    /// Kills template guests still preparing and drops the tmpfs caches.
    ~TemplateService() override;

    /// Call once at start, after SnapshotService::restore(): deletes the template caches of
    /// templates that are gone; with automatic templates, then starts preparing the default
    /// image's template (default shape) if it has no current one.
    void start();

    /// Identifies what a template is made of: SHA-256 over the image (id, kernel arguments,
    /// kernel and initrd size and mtime), the QEMU binary (path, size, mtime), the device
    /// layout, acceleration, vCPUs and memory. A rebuilt image or upgraded QEMU changes it.
    Result<QString> templateKey(const SandboxSpec &shape) const;
    /// The current template for `shape`'s image, vCPUs and memory; nullopt when none.
    std::optional<Snapshot> currentTemplate(const SandboxSpec &shape) const;
    /// Makes a template for `shape` unless a current one exists (returned): boots the image in
    /// an internal guest, waits for its agent, snapshots it (kind `template`, no sandbox),
    /// removes the guest and any stale template of the same image and shape. Returns at once
    /// (nullopt) while that runs; SnapshotService::snapshotChanged("", template) reports the
    /// result. With `automatic` (the helper's own background preparations), a shape whose last
    /// preparation failed in this helper run is not tried again.
    Result<std::optional<Snapshot>> prepareTemplate(const SandboxSpec &shape,
                                                    bool automatic = false);
    /// True while a template for `shape` is being prepared.
    bool isPreparing(const SandboxSpec &shape) const;

Q_SIGNALS:
    /// A template preparation for `key` ended without a template (the reason is logged).
    void templateFailed(const QString &key, const QString &reason);

private:
    /// A template's memory decompressed into tmpfs beside the RAM files (about the size of its
    /// stored chunks), so template starts copy it in the kernel; made once per helper run.
    QString templateCachePath(const QString &id) const;
    /// Makes the cache of `snapshot` on a worker (decompressing its memory takes about a second
    /// for 256 MiB): nothing when it exists or is being made. Starts meanwhile read the chunks.
    void cacheTemplateInBackground(const Snapshot &snapshot);
    void dropTemplateCache(const QString &id);
    /// SandboxService's template source.
    Result<SandboxService::TemplateStart> templateState(const QString &sandbox,
                                                        const SandboxSpec &spec);
    /// The template guest `guest` for `key` runs (or did not start): waits for its agent's
    /// `ready`, then captures it.
    void templateGuestStarted(const QString &key, const QString &guest, const SandboxSpec &shape,
                              const Result<Sandbox> &ran);
    /// Snapshots the ready template guest (SnapshotService::createTemplate, asynchronous).
    /// The template guest's agent channel exists: waits for its ready handshake, then
    /// captures.
    void awaitTemplateGuest(const QString &id, const QString &guest, const SandboxSpec &shape,
                            Vmm *vmm);
    void captureTemplate(const QString &key, const QString &guest, const SandboxSpec &shape);
    /// The template snapshot is stored (or failed): ends the guest, replaces older templates.
    void templateCaptured(const QString &key, const QString &guest, const SandboxSpec &shape,
                          const Result<Snapshot> &made);
    void endTemplateGuest(const QString &key, const QString &guest, const QString &failure);
    /// Template caches (tmpfs) of templates no longer in the store.
    void removeStaleTemplateCaches();
    /// Removes the least recently used templates beyond Options::maxTemplates, never `keep`
    /// (the one just made).
    void enforceTemplateCap(const QString &keep);

    SandboxService &m_sandboxes;
    SnapshotService &m_snapshots;
    SnapshotArchive &m_archive;
    Options m_options;
    QHash<QString, QString> m_preparing; ///< template key → internal guest preparing it
    QSet<QString> m_failedKeys; ///< template keys whose preparation failed in this run
    QHash<QString, QDateTime> m_templateUsed; ///< template id → last start from it (this run)
    QSet<QString> m_caching; ///< template ids whose cache a worker is making
    /// Cache fills; last, so its destructor waits for them before the rest goes.
    WorkerJobs m_jobs;
};

} // namespace airlock

#pragma once

#include "core/model/error.h"
#include "core/snapshot/diskcopy.h"
#include "core/snapshot/sparsecopy.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

class QThread;

namespace airlock {

class Vmm;

/// The part of one snapshot that needs the guest standing still (docs/snapshots.md, "How a
/// snapshot is taken", steps 1-4), taken without blocking the event loop: QMP `stop`, the
/// device state into a memfd (Vmm::saveDeviceState), then on a worker thread the copies of the
/// RAM file and of the root disk's overlay, then QMP `cont` (or `stop` again for a guest that
/// was paused before). Each step starts from the answer to the one before; the event loop
/// serves other clients meanwhile.
///
/// A VMM that exits (or is destroyed) mid-way ends the capture with InvalidState. Destroying
/// the capture (the helper shuts down) waits for a running copy (bounded by the RAM size) and
/// lets a guest it stopped run on when its device state was saved; a save cut short is left to
/// the next helper's crash recovery (Vmm::queryRunning cancels it, CrashRecovery resumes).
class SnapshotCapture : public QObject
{
    Q_OBJECT
public:
    /// Where the state is taken from.
    struct Source
    {
        QString sandbox; ///< for messages and logs
        Vmm *vmm = nullptr;
        bool running = false; ///< running (resumed afterwards) or paused (stays paused)
        QString memoryPath; ///< the RAM file (VmmLaunchConfig::memoryPath)
        QString diskPath; ///< the root disk's overlay; empty: none
        /// The overlay goes into memory (SparseCopy), not into an unnamed file (DiskCopy).
        bool diskInMemory = false;
    };
    /// What was taken. The copies are private: the guest runs on while they are stored.
    struct State
    {
        std::optional<SparseCopy> memory;
        QByteArray deviceState;
        std::optional<SparseCopy> diskInMemory; ///< Source::diskInMemory
        std::optional<DiskCopy> disk; ///< otherwise, when Source::diskPath is set
        qint64 savedMs = 0; ///< from `stop` until the device state was saved
        qint64 copiedMs = 0; ///< copying the RAM file and the overlay
        qint64 pauseMs = 0; ///< from `stop` until `cont` was answered
    };
    using Done = std::function<void(const Result<std::shared_ptr<State>> &)>;

    /// Largest device state accepted from a VMM (which is not trusted).
    static constexpr qint64 kMaxDeviceStateBytes = 64LL * 1024 * 1024;

    explicit SnapshotCapture(Source source, QObject *parent = nullptr);
    ~SnapshotCapture() override;

    /// Starts the capture and returns at once; `done` is called once from the event loop with
    /// the state or the error (the VMM's, OperationFailed for a copy or an oversized device
    /// state, BackendUnavailable when the state file system lacks room for the disk copy). The
    /// guest runs again (or stays paused) before `done`, also after errors, except when pausing
    /// it failed. Not called once this object is destroyed.
    void start(Done done);

private:
    /// What the worker copied.
    struct Copies;
    void saveDeviceState();
    void copyOnWorker();
    void copied(const std::shared_ptr<Copies> &copies);
    /// `cont` (or `stop` for a paused guest), then finish.
    void letGuestRun();
    void assemble();
    void vmmGone();
    void finish(const Result<std::shared_ptr<State>> &result);
    Error stoppedError() const;

    Source m_source;
    QPointer<Vmm> m_vmm;
    Done m_done;
    int m_stateFd = -1; ///< the memfd QEMU writes the device state into
    QElapsedTimer m_paused;
    std::shared_ptr<State> m_state = std::make_shared<State>();
    std::shared_ptr<Copies> m_copies;
    std::optional<Error> m_error; ///< the first error; the guest is still let run
    QThread *m_worker = nullptr;
    bool m_holdsGuest = false; ///< we stopped it and have not let it run again
    bool m_saved = false; ///< the device state is saved (a `cont` is accepted)
    bool m_vmmGone = false;
    bool m_finished = false;
};

} // namespace airlock

#include "core/daemon/snapshotcapture.h"

#include "core/vmm/vmm.h"

#include <QFileInfo>
#include <QLoggingCategory>
#include <QThread>

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcCapture, "airlock.daemon.snapshot")
} // namespace

struct SnapshotCapture::Copies
{
    std::optional<Result<SparseCopy>> memory;
    std::optional<Result<SparseCopy>> diskInMemory;
    std::optional<Result<DiskCopy>> disk;
    qint64 ms = 0;
};

SnapshotCapture::SnapshotCapture(Source source, QObject *parent)
    : QObject(parent), m_source(std::move(source)), m_vmm(m_source.vmm)
{ }

SnapshotCapture::~SnapshotCapture()
{
    // The copy reads files only; it ends on its own, bounded by the RAM file's size.
    if (m_worker) {
        m_worker->wait();
        delete m_worker;
    }
    // Shut down mid-way: a guest that ran must not stay stopped. `cont` is only accepted once
    // the save completed; otherwise the next helper cancels the save and resumes it.
    if (m_holdsGuest && m_source.running && m_saved && m_vmm && !m_vmmGone)
        m_vmm->resume({});
    if (m_stateFd >= 0)
        ::close(m_stateFd);
}

Error SnapshotCapture::stoppedError() const
{
    return Error {
        ErrorKind::InvalidState,
        QStringLiteral("sandbox '%1' stopped while its snapshot was taken").arg(m_source.sandbox)};
}

void SnapshotCapture::start(Done done)
{
    m_done = std::move(done);
    if (!m_vmm)
        return finish(std::unexpected(stoppedError()));
    m_stateFd = ::memfd_create("airlock-device-state", MFD_CLOEXEC);
    if (m_stateFd < 0)
        return finish(fail(
            ErrorKind::OperationFailed,
            QStringLiteral("memfd_create: %1").arg(QString::fromLocal8Bit(std::strerror(errno)))));
    // A killed sandbox's VMM exits and is deleted: whatever step waits then ends here.
    connect(m_vmm, &Vmm::exited, this, &SnapshotCapture::vmmGone);
    connect(m_vmm, &QObject::destroyed, this, &SnapshotCapture::vmmGone);

    // The guest stands still from here until letGuestRun() is answered: the pause time.
    m_paused.start();
    if (!m_source.running)
        return saveDeviceState();
    m_holdsGuest = true;
    m_vmm->pause([self = QPointer(this)](const Result<void> &paused) {
        if (!self || self->m_finished)
            return;
        if (!paused) {
            // As before: a guest that could not be stopped is not resumed either.
            self->m_holdsGuest = false;
            return self->finish(std::unexpected(paused.error()));
        }
        self->saveDeviceState();
    });
}

void SnapshotCapture::saveDeviceState()
{
    if (!m_vmm || m_vmmGone)
        return finish(std::unexpected(stoppedError()));
    m_holdsGuest = true;
    m_vmm->saveDeviceState(m_stateFd, [self = QPointer(this)](const Result<void> &saved) {
        if (!self || self->m_finished)
            return;
        self->m_state->savedMs = self->m_paused.elapsed();
        if (!saved) {
            self->m_error = saved.error();
            return self->letGuestRun();
        }
        self->m_saved = true;
        self->copyOnWorker();
    });
}

void SnapshotCapture::copyOnWorker()
{
    // The copies take tens to hundreds of ms (the RAM's data extents, an overlay): off the
    // event loop. The guest stays stopped meanwhile, so the files do not change.
    const QString memoryPath = m_source.memoryPath;
    const QString diskPath = m_source.diskPath;
    const bool diskInMemory = m_source.diskInMemory;
    auto copies = std::make_shared<Copies>();
    QPointer<SnapshotCapture> self(this);
    m_worker = QThread::create([self, copies, memoryPath, diskPath, diskInMemory] {
        QElapsedTimer timer;
        timer.start();
        copies->memory.emplace(SparseCopy::of(memoryPath));
        // The disk overlay too: QMP stop drained and flushed every block device, and the
        // migration that saved the device state inactivated them (qcow2 caches written back),
        // so the file is complete and unchanging until `cont`.
        if (*copies->memory && !diskPath.isEmpty()) {
            if (diskInMemory)
                copies->diskInMemory.emplace(SparseCopy::of(diskPath));
            else
                copies->disk.emplace(DiskCopy::of(diskPath, QFileInfo(diskPath).absolutePath()));
        }
        copies->ms = timer.elapsed();
        // Delivered on the capture's thread; dropped when it is gone (its destructor waited).
        QMetaObject::invokeMethod(
            self.data(),
            [self, copies] {
                if (self)
                    self->copied(copies);
            },
            Qt::QueuedConnection);
    });
    m_worker->start();
}

void SnapshotCapture::copied(const std::shared_ptr<Copies> &copies)
{
    m_worker->wait();
    delete std::exchange(m_worker, nullptr);
    if (m_finished)
        return;
    m_copies = copies;
    m_state->copiedMs = copies->ms;
    if (m_vmmGone)
        return finish(std::unexpected(stoppedError()));
    letGuestRun();
}

void SnapshotCapture::letGuestRun()
{
    if (!m_vmm || m_vmmGone)
        return finish(std::unexpected(m_error.value_or(stoppedError())));
    // Resumed also after a failure: a snapshot that did not work must not stop the guest.
    const auto after = [self = QPointer(this)](const Result<void> &ran) {
        if (!self || self->m_finished)
            return;
        self->m_holdsGuest = false;
        self->m_state->pauseMs = self->m_paused.elapsed();
        if (!ran)
            qCWarning(lcCapture, "%s: resume after snapshot failed: %s",
                      qPrintable(self->m_source.sandbox), qPrintable(ran.error().message));
        self->assemble();
    };
    if (m_source.running)
        m_vmm->resume(after);
    else
        m_vmm->pause(after);
}

void SnapshotCapture::assemble()
{
    if (m_error)
        return finish(std::unexpected(*m_error));
    Copies &copies = *m_copies;
    if (!*copies.memory)
        return finish(std::unexpected(copies.memory->error()));
    if (copies.disk && !*copies.disk)
        return finish(std::unexpected(copies.disk->error()));
    if (copies.diskInMemory && !*copies.diskInMemory)
        return finish(std::unexpected(copies.diskInMemory->error()));
    struct stat info;
    if (::fstat(m_stateFd, &info) != 0 || info.st_size > kMaxDeviceStateBytes)
        return finish(fail(ErrorKind::OperationFailed,
                           QStringLiteral("the VMM's device state is larger than %1 bytes")
                               .arg(kMaxDeviceStateBytes)));
    QByteArray bytes(qsizetype(info.st_size), Qt::Uninitialized);
    if (::pread(m_stateFd, bytes.data(), size_t(bytes.size()), 0) != bytes.size())
        return finish(
            fail(ErrorKind::OperationFailed, QStringLiteral("cannot read the device state")));
    m_state->deviceState = bytes;
    m_state->memory.emplace(std::move(**copies.memory));
    if (copies.disk)
        m_state->disk.emplace(std::move(**copies.disk));
    if (copies.diskInMemory)
        m_state->diskInMemory.emplace(std::move(**copies.diskInMemory));
    m_copies.reset();
    finish(m_state);
}

void SnapshotCapture::vmmGone()
{
    if (m_vmmGone)
        return;
    m_vmmGone = true;
    m_holdsGuest = false;
    // A step waiting on the VMM gets no answer now; a copy on the worker ends in copied().
    if (!m_worker)
        finish(std::unexpected(m_error.value_or(stoppedError())));
}

void SnapshotCapture::finish(const Result<std::shared_ptr<State>> &result)
{
    if (m_finished)
        return;
    m_finished = true;
    if (m_vmm)
        m_vmm->disconnect(this);
    // A VMM that went away mid-way (killed, exited) says so as for a sandbox that is not
    // running, not as a broken QMP connection.
    Result<std::shared_ptr<State>> outcome = result;
    if (!outcome && outcome.error().kind == ErrorKind::Disconnected)
        outcome = std::unexpected(stoppedError());
    // From the event loop, never inside a VMM's signal or reply: the owner may delete us.
    QMetaObject::invokeMethod(
        this,
        [this, outcome] {
            if (m_done)
                std::exchange(m_done, {})(outcome);
        },
        Qt::QueuedConnection);
}

} // namespace airlock

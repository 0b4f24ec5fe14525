#pragma once

#include "core/model/error.h"

#include <QString>

#include <functional>

class QObject;

namespace airlock {

/// A sandbox's root disk: a qcow2 overlay of its own (copy-on-write) on top of the image's
/// shared, read-only qcow2 root disk (GuestImage::diskPath). The overlay holds everything the
/// guest ever wrote to its disk; it lives in the helper's state dir, is handed to the sandbox's
/// VMM user for each boot, is captured in snapshots as the object `disk:vda`
/// (docs/snapshots.md) and is deleted with the sandbox.
///
/// QEMU is given the base as a separate read-only node and the overlay's `backing` pointing at
/// it (QemuCommand), so the backing file name written in the overlay's header is never used:
/// the header is writable by the VMM user, the image store is the helper's.
class RootDisk
{
public:
    /// The serial of the root disk's virtio-blk device; the guest's /init finds it by this name
    /// (`airlock.root=` on the kernel command line, installers/guest/README.md).
    static constexpr QLatin1StringView kSerial {"airlock-root"};

    /// `qemu-img` from PATH (or $AIRLOCK_QEMU_IMG), empty when missing.
    static QString findQemuImg();

    /// Called once an overlay is made, or with why not.
    using Created = std::function<void(const Result<void> &)>;
    /// Creates an empty overlay at `overlayPath` (mode 0600, root's until chowned) whose backing
    /// file is the qcow2 `basePath` and whose virtual size is the base's, with `qemu-img create`,
    /// and returns at once: `done` is called from the event loop when qemu-img has finished
    /// (killed after 30 s), never once `context` is destroyed. An existing file is replaced.
    /// Errors: BackendUnavailable (no qemu-img), OperationFailed (qemu-img failed: its message).
    static void createOverlay(const QString &overlayPath, const QString &basePath, QObject *context,
                              Created done);
};

} // namespace airlock

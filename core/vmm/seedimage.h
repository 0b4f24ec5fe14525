#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace airlock {

/// One file of a seed image.
struct SeedFile
{
    QString path; ///< relative, e.g. "ca.pem"; the guest extracts it into /run/airlock/
    QByteArray content;
    int mode = 0644;
};

/// The per-boot "seed" disk: a POSIX ustar archive (written with libarchive) attached to the
/// guest as a read-only virtio-blk device with serial `airlock-seed`. The guest's init finds
/// the device by that serial and extracts it into /run/airlock (installers/guest/README.md).
/// It carries what the guest needs at boot and must not come from the image: the sandbox CA
/// certificate and the credential placeholders (`env`; SandboxService::seedFiles lists them).
/// Never secrets: the guest can read all of it.
class SeedImage
{
public:
    /// The serial number the guest looks for in /sys/block/vd*/serial.
    static constexpr QLatin1StringView kSerial {"airlock-seed"};
    /// The image's size is a multiple of this (64 KiB): larger than what the guest kernel's
    /// partition-table probes read, so they find no table instead of a short disk.
    static constexpr int kMinimumSize = 64 * 1024;

    /// Writes `files` to a fresh `path` (an existing file is replaced, never followed), mode
    /// 0644, padded to whole kMinimumSize blocks. Errors: InvalidParams (an absolute path or
    /// "..", a duplicate), OperationFailed (I/O, libarchive's message).
    static Result<void> write(const QString &path, const QList<SeedFile> &files);
};

} // namespace airlock

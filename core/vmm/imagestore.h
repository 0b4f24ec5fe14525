#pragma once

#include "core/model/error.h"
#include "core/model/sandbox.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace airlock {

/// One guest image of the store, as read from `<root>/<id>/image.json` (written by
/// installers/guest/build-image.sh). Paths are absolute host paths inside the store.
struct GuestImage
{
    QString id;
    QString description;
    QString kernelPath; ///< uncompressed ELF vmlinux
    QString initrdPath; ///< initramfs
    /// The shared, read-only root disk (qcow2) every sandbox of the image gets a copy-on-write
    /// overlay of; empty for images that are an initramfs only.
    QString diskPath;
    QString kernelArgs; ///< extra kernel command line from the image
    QString kernelVersion;
    QDateTime createdAt; ///< UTC; invalid when the metadata has none
    /// The VMMs that can boot it, from image.json's `vmms` (names as in `sandbox.create`). An
    /// image.json without the field was built before Firecracker was: QEMU only, never
    /// assumed otherwise.
    QList<VmmKind> vmms {VmmKind::Qemu};

    bool supports(VmmKind kind) const { return vmms.contains(kind); }

    /// The protocol's Image object: `{id, description, kernel, disk, vmms, createdAt}` with file
    /// names only (`disk` null without one; docs/protocol.md). Never carries a host path.
    QJsonObject toJson() const;
    /// What a disk overlay made on this image depends on: the id, build time and size of the
    /// root disk (`"debian 2026-12-01T07:51:03.000Z 141885440"`); empty without a disk. A
    /// rebuilt image has another identity, so overlays of the old one are recognised.
    QString diskIdentity() const;
};

/// The helper's read-only store of guest images: a root-configured directory with one
/// sub-directory per image id. Clients name images by id only; ids are validated like sandbox
/// names, and the kernel, initrd and disk named in image.json must be plain file names inside the
/// image's own directory, so neither a client nor an image file can point the VMM elsewhere.
class ImageStore
{
public:
    /// `rootDir` comes from the helper's configuration (root-owned), never from a client.
    explicit ImageStore(QString rootDir);

    QString rootDir() const { return m_rootDir; }
    /// Every usable image, sorted by id. Broken ones are skipped with a warning in the log.
    QList<GuestImage> list() const;
    /// The image `id`. Errors: InvalidName (not `[a-z0-9][a-z0-9-]{0,62}`), NotFound (no such
    /// image), BackendUnavailable (image.json unreadable or its files missing).
    Result<GuestImage> find(const QString &id) const;

private:
    QString m_rootDir;
};

} // namespace airlock

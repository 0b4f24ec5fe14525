#pragma once

#include "core/model/error.h"

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
    QString kernelArgs; ///< extra kernel command line from the image
    QString kernelVersion;
    QDateTime createdAt; ///< UTC; invalid when the metadata has none

    /// The protocol's Image object: `{id, description, kernel: file name only, createdAt}`
    /// (docs/protocol.md). Never carries a host path.
    QJsonObject toJson() const;
};

/// The helper's read-only store of guest images: a root-configured directory with one
/// sub-directory per image id. Clients name images by id only; ids are validated like sandbox
/// names, and the kernel/initrd named in image.json must be plain file names inside the image's
/// own directory, so neither a client nor an image file can point the VMM elsewhere.
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

#pragma once

#include "core/model/error.h"
#include "core/vmm/imagestore.h"

#include <QSet>
#include <QString>
#include <QStringList>

#include <sys/types.h>

#include <functional>
#include <map>
#include <vector>

class QObject;

namespace airlock {

/// The sandboxes' root disk overlays (RootDisk), STATE/disks/NAME.qcow2: made on the first start
/// of a sandbox whose image has a disk, kept across stops, deleted with the sandbox. Beside each
/// overlay, NAME.qcow2.base records the identity of the image disk it was made on
/// (GuestImage::diskIdentity). The directory is root's; each overlay belongs to its VMM's user
/// while the VMM runs, and to root otherwise.
class SandboxDisks
{
public:
    explicit SandboxDisks(const QString &stateDir);

    QString dir() const { return m_dir; }
    /// Makes the directory (root's, mode 0711).
    Result<void> prepareDir() const;
    QString pathFor(const QString &name) const;
    /// The identity recorded beside `name`'s overlay; empty when it has none.
    QString identityOf(const QString &name) const;
    /// Called once an overlay exists, or with why it could not be made.
    using Made = std::function<void(const Result<void> &)>;
    /// Makes `name`'s overlay on `image`'s disk, with its identity, unless it exists (the first
    /// start), and returns at once; `done` follows from the event loop (qemu-img runs meanwhile),
    /// never once `context` is destroyed. A second call while one is being made waits for it.
    void make(const QString &name, const GuestImage &image, QObject *context, Made done);
    /// Checks that the overlay (make()) belongs to the image's current disk and hands it to
    /// `uid`:`gid`. OperationFailed when the image was rebuilt since or it was never made.
    Result<void> prepare(const QString &name, const GuestImage &image, uid_t uid, gid_t gid) const;
    /// Replaces `name`'s overlay by what `fill` writes into a fresh file, recording that it
    /// belongs to the image disk `identity`. Written beside and renamed into place, so a failure
    /// or crash leaves the previous overlay.
    Result<void> replace(const QString &name, const QString &identity,
                         const std::function<Result<void>(int fd)> &fill) const;
    /// Deletes `name`'s overlay, its identity and a half-written replacement.
    void remove(const QString &name) const;
    /// Hands `name`'s overlay back to root (its VMM is gone; VMM uids are reused).
    void returnToRoot(const QString &name) const;
    /// Deletes the files of sandboxes not in `known` (a helper killed inside a delete) and
    /// half-written ones (an interrupted restore or fork, a snapshot's overlay copy that a kill
    /// caught before its unlink); returns the files removed.
    QStringList removeLeftovers(const QSet<QString> &known) const;

private:
    QString m_dir;
    /// make() calls waiting for the overlay being made, by sandbox name.
    std::map<QString, std::vector<Made>> m_making;
};

} // namespace airlock

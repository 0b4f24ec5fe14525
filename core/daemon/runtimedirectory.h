#pragma once

#include "core/model/error.h"

#include <QString>
#include <QStringList>

#include <sys/types.h>

namespace airlock {

/// The sandboxes' runtime directories, STATE/run/NAME: QMP, console and agent sockets, the pid
/// file, the seed disk and QEMU's log. Each belongs to its VMM's user while the VMM runs (its
/// owner is how a re-adopted VMM's uid is known) and to root otherwise, since VMM uids are
/// reused (docs/reviews/2026-12-01-newuser-pass.md#m1).
class RuntimeDirectory
{
public:
    explicit RuntimeDirectory(const QString &stateDir);

    /// STATE/run.
    QString root() const { return m_root; }
    /// Makes STATE and STATE/run traversable but not listable (0711).
    Result<void> prepareRoot() const;
    QString pathFor(const QString &name) const;
    /// A fresh, empty directory for `name` (leftovers of an earlier run would confuse the new
    /// VMM), mode 0700, owned by `uid`:`gid`. Returns its path.
    Result<QString> prepare(const QString &name, uid_t uid, gid_t gid) const;
    /// The directory's owner: the uid a (re-adopted) VMM runs as; 0 when it is missing.
    uid_t owner(const QString &name) const;
    /// Hands the directory and its entries back to root once the VMM is gone.
    void returnToRoot(const QString &name) const;
    /// Deletes `name`'s directory with everything in it.
    void remove(const QString &name) const;
    /// The names of the directories there are (valid sandbox names only).
    QStringList names() const;

private:
    QString m_stateDir;
    QString m_root;
};

} // namespace airlock

#pragma once

#include "core/model/error.h"

#include <QString>
#include <QStringList>

#include <sys/types.h>

#include <functional>

namespace airlock {

/// The guests' RAM files (docs/snapshots.md): DIR/NAME.ram in a root-owned directory on tmpfs,
/// one per sandbox, living as long as its guest. Names starting with '.' are the snapshot
/// service's template caches and are left alone.
class GuestMemory
{
public:
    /// `dir` empty: /dev/shm/airlock-<hash of stateDir>, so helpers with different state dirs
    /// never meet.
    GuestMemory(const QString &dir, const QString &stateDir);

    QString dir() const { return m_dir; }
    /// The RAM file of sandbox `name` (VmmLaunchConfig::memoryPath).
    QString pathFor(const QString &name) const;
    /// Makes the directory (root's, mode 0711) if it is gone: it is removed with its last file
    /// (docs/reviews/2026-11-30-redteam-pass.md#f7).
    Result<void> ensureDir() const;
    /// Replaces `name`'s RAM file by a fresh, empty (sparse) one of `memoryMib` MiB, owned by
    /// root, and returns its descriptor (the caller closes it). BackendUnavailable when the host
    /// cannot back that much memory (checkCapacity).
    Result<int> create(const QString &name, int memoryMib) const;
    /// BackendUnavailable, with a message saying what is missing, when the directory's free
    /// space or the host's MemAvailable (`meminfoPath`) is below `memoryMib`.
    Result<void> checkCapacity(const QString &name, int memoryMib,
                               const QString &meminfoPath = QStringLiteral("/proc/meminfo")) const;
    /// What this host could ever back, for sandbox.create and `hello`: `ceilingMib` is the
    /// smaller of MemTotal and the size of the tmpfs the RAM files live on; `availableMib` is
    /// MemAvailable now (what start checks, checkCapacity). -1 where unknown.
    struct HostFigures
    {
        qint64 ceilingMib = -1;
        qint64 totalMib = -1; ///< MemTotal
        qint64 availableMib = -1; ///< MemAvailable
        qint64 tmpfsMib = -1; ///< size of the RAM files' file system
    };
    HostFigures hostFigures(const QString &meminfoPath = QStringLiteral("/proc/meminfo")) const;
    /// InvalidParams, with the host's figures, when `memoryMib` is more than the host could
    /// ever back (hostFigures().ceilingMib): refused at create rather than at every start
    /// (docs/reviews: a sandbox that can never start was left behind).
    Result<void> checkCeiling(const QString &name, int memoryMib,
                              const QString &meminfoPath = QStringLiteral("/proc/meminfo")) const;
    /// Gives `name`'s RAM file to `uid`:`gid` (the VMM user).
    Result<void> handOver(const QString &name, uid_t uid, gid_t gid) const;
    /// Deletes `name`'s RAM file, then the directory if that was its last file.
    void remove(const QString &name) const;
    /// Removes the directory when it is empty.
    void removeDirIfEmpty() const;
    /// Deletes every RAM file whose sandbox `isLive` does not accept (a helper killed between
    /// filling one and starting its VMM would keep host RAM in tmpfs forever,
    /// docs/reviews/2026-12-01-newuser-pass.md#m2); returns the files removed.
    QStringList removeStale(const std::function<bool(const QString &name)> &isLive) const;

private:
    QString m_dir;
};

} // namespace airlock

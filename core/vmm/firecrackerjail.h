#pragma once

#include "core/model/error.h"
#include "core/vmm/vmmprocess.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace airlock {

/// What one Firecracker process sees of the host (docs/vmm.md, "Isolation"): its own runtime
/// directory as "/" (API and vsock sockets, logs, device state), the guest's kernel, initrd and
/// seed disk read-only at /kernel, /initrd and /seed, its root disk at /rootfs, the guest
/// memory directory at /memory (root's, mode 0711: only its own RAM file is usable), the device
/// nodes it opens (/dev/kvm, /dev/net/tun, /dev/urandom, /dev/null) and /usr read-only for a
/// binary that is not statically linked (with the merged-/usr links /bin, /lib, /lib64, /sbin).
/// Nothing else: no /etc, /proc, /home, the helper's state or another sandbox's files. This is
/// the layout of Firecracker's jailer (a chroot in a mount namespace of its own) without its
/// copies: the files are bind mounts made in the child before it drops root (SpawnJail).
///
/// The paths Firecracker is given (API bodies, --api-sock) are paths inside: pathInside().
class FirecrackerJail
{
public:
    /// Whether this process may build the jail: CAP_SYS_ADMIN (the mount namespace and binds)
    /// and CAP_SYS_CHROOT in its effective set (/proc/self/status CapEff). The packaged unit
    /// grants neither (docs/packaging.md); Firecracker then runs unjailed, as QEMU does.
    static bool available();

    /// The binary's place inside the jail.
    static constexpr QLatin1StringView kBinary {"/firecracker"};

    /// `runtimeDir`: the jail's root (the VMM user's, 0700); `binary`: the host's Firecracker
    /// executable (bound at kBinary).
    FirecrackerJail(const QString &runtimeDir, const QString &binary);

    /// Makes the host file `hostPath` visible at `/name` inside (or at its own relative path when
    /// it already lies in the runtime directory). Returns its path inside.
    QString addFile(const QString &hostPath, const QString &name, bool readOnly);
    /// Makes the host directory `hostDir` visible, writable, at `/name` inside.
    QString addDirectory(const QString &hostDir, const QString &name);
    /// Makes each host directory of `hostDirs` visible, writable, at its own path inside: for a
    /// wrapper that starts Firecracker from elsewhere (the tests' conformance server).
    void addSharedPaths(const QStringList &hostDirs);

    /// The path inside for a host path in the runtime directory or an added file or directory;
    /// empty for anything else (it is not in the jail).
    QString pathInside(const QString &hostPath) const;

    /// Creates the mount points inside the runtime directory (root's empty files and
    /// directories; a planted entry of the same name is removed first, never followed) and the
    /// merged-/usr links. OperationFailed naming the path on error.
    Result<void> prepare() const;

    /// What VmmProcess::spawn() needs to enter the jail.
    SpawnJail spawnJail() const;

private:
    struct Entry
    {
        QString host;
        QString inside; // absolute, inside the jail
        bool directory = false;
        bool readOnly = true;
        bool device = false;
    };
    void add(Entry entry);

    QString m_root;
    std::vector<Entry> m_entries;
    QStringList m_links; // "/lib" and the like: host symlinks recreated inside
};

} // namespace airlock

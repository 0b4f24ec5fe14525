#pragma once

#include "core/model/error.h"

#include <QString>
#include <QStringList>

#include <optional>
#include <sys/types.h>

namespace airlock {

/// The control group a jailed Firecracker runs in, with its memory, task and CPU limits: the
/// jailer's `--cgroup` part (Firecracker's docs/jailer.md), built by airlockd itself. One group
/// per VMM, `airlock/NAME` in each hierarchy used:
///
/// - cgroup v2 (the unified hierarchy, Debian 12's default; the kernel's cgroup-v2.rst): a
///   cgroup2 mount whose cgroup.controllers offers memory, pids and cpu. The parent `airlock`
///   enables them through cgroup.subtree_control (of the root and of itself), and holds no
///   process itself ("no internal process" rule); the group gets memory.max, pids.max, cpu.max.
/// - cgroup v1 (cgroups(7)): one hierarchy per controller (memory, pids, cpu, wherever each is
///   mounted, alone or co-mounted); the group is made in each, with memory.limit_in_bytes,
///   pids.max, cpu.cfs_period_us and cpu.cfs_quota_us.
///
/// v2 is used when it offers all three controllers, else v1 when it does; a cgroup2 mount
/// without controllers (a v1 host's /sys/fs/cgroup/unified) does not count.
class VmmCgroup
{
public:
    enum class Version { V1, V2 };

    /// What one VMM may use.
    struct Limits
    {
        qint64 memoryBytes = 0; ///< memory.max / memory.limit_in_bytes
        int maxTasks = 0; ///< pids.max: processes and threads together
        int cpus = 0; ///< cpu.max / cfs quota, in whole CPUs per kCpuPeriodUs
    };

    /// The CFS period of the CPU quota, in microseconds (the kernel's default).
    static constexpr qint64 kCpuPeriodUs = 100000;
    /// What a Firecracker process needs beside guest memory: its own heap, thread stacks, the
    /// binary's pages and device buffers. Firecracker's specification promises at most 5 MiB
    /// of overhead; the rest is margin (and room for the tests' Python stand-in).
    static constexpr qint64 kVmmOverheadMib = 64;
    /// Tasks beside the vCPU threads: Firecracker's VMM and API threads and a few more it may
    /// start; it never forks (its seccomp filter forbids it).
    static constexpr int kExtraTasks = 32;
    /// The parent group of every VMM's group, in each hierarchy.
    static constexpr QLatin1StringView kParent {"airlock"};

    /// The limits of a Firecracker with `vcpus` vCPUs and `memoryMib` MiB of guest memory.
    /// Memory is twice the guest's plus kVmmOverheadMib: a snapshot writes the guest memory
    /// into the RAM file on tmpfs, and those pages are charged to the writer's group for as
    /// long as the file exists (cgroup-v2.rst, "Memory Ownership"), beside the guest's own.
    /// CPU: as many CPUs as it has vCPUs (its device emulation shares them).
    static Limits firecrackerLimits(int vcpus, int memoryMib);

    /// The hierarchy this host offers, read from `mounts` (/proc/self/mounts format): its
    /// version and the directory of the `airlock` parent group in the memory, pids and cpu
    /// hierarchies (for v2 three times the same). nullopt when neither version has all three
    /// controllers.
    struct Hierarchy
    {
        Version version = Version::V2;
        QString memory;
        QString pids;
        QString cpu;
        /// The distinct parent directories (v1 controllers may share a mount).
        QStringList parents() const;
    };
    static std::optional<Hierarchy>
    findHierarchy(const QString &mounts = QStringLiteral("/proc/self/mounts"));

    /// Makes group `name` (a single path component) under `airlock` in each hierarchy and
    /// writes `limits`. A leftover empty group of the same name is removed first.
    /// BackendUnavailable when no hierarchy is usable or it refuses a group or a limit
    /// (read-only, a controller that cannot be enabled): the caller runs the VMM without one;
    /// what was made is removed again.
    static Result<VmmCgroup> create(const QString &name, const Limits &limits,
                                    const QString &mounts = QStringLiteral("/proc/self/mounts"));

    /// The group of process `pid` (an adopted VMM's), from /proc/PID/cgroup: nullopt unless it
    /// is in an `airlock/...` group of every hierarchy used.
    static std::optional<VmmCgroup>
    ofProcess(pid_t pid, const QString &mounts = QStringLiteral("/proc/self/mounts"));

    /// Moves process `pid` (a host pid) into the group: its pid into cgroup.procs of each
    /// directory. The caller does it before the process execs, so everything it does is
    /// charged here. OperationFailed naming the file.
    Result<void> attach(pid_t pid) const;

    /// Removes the group's directories (rmdir(2): only an empty group goes; EBUSY while a
    /// task is still in it). True when none is left.
    bool remove() const;

    /// Removes every empty group under `airlock` that a helper left behind (it crashed, or
    /// the VMM exited while no helper watched), except ones named for a live pid
    /// (NAME.PID: another helper is making that group now). Returns how many went.
    static int removeLeftovers(const QString &mounts = QStringLiteral("/proc/self/mounts"));

    Version version() const { return m_version; }
    /// The group's path below the hierarchy root: "/airlock/NAME".
    QString path() const;
    /// The group's directory in the hierarchy of `controller` ("memory", "pids", "cpu").
    QString directory(const QString &controller) const;
    /// The distinct directories of the group.
    QStringList directories() const;

private:
    VmmCgroup(const Hierarchy &hierarchy, const QString &name)
        : m_version(hierarchy.version), m_hierarchy(hierarchy), m_name(name)
    { }

    Version m_version;
    Hierarchy m_hierarchy;
    QString m_name;
};

} // namespace airlock

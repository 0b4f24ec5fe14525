#pragma once

#include "core/model/sandbox.h"

#include <QString>

#include <sys/types.h>

#include <optional>
#include <vector>

namespace airlock {

/// What the helper will boot guests with, and why not KVM when it is not.
struct KvmProbeResult
{
    Acceleration acceleration = Acceleration::Tcg;
    QString warning; ///< empty with KVM; otherwise one sentence for people, e.g. in `hello`
};

/// Decides between KVM and TCG. Opening /dev/kvm is not enough: under nested virtualisation it
/// opens but guests die with "KVM internal error" (see the architecture page), so a probe guest
/// is booted with -accel kvm and must get as far as printing the kernel banner.
class KvmProbe
{
public:
    struct Config
    {
        QString kernelPath; ///< the default image's vmlinux; no initrd needed
        QString kvmDevice = QStringLiteral("/dev/kvm");
        uid_t vmmUid = 0; ///< the probe runs as the VMM user, like real guests (0: as caller)
        gid_t vmmGid = 0;
        /// Supplementary groups of the probe, as every VMM gets them (deviceGroup()); empty:
        /// those of vmmUid's passwd entry.
        std::vector<gid_t> vmmGroups;
        /// Read for the CPU's virtualisation flags when saying why KVM is not usable.
        QString cpuinfoPath = QStringLiteral("/proc/cpuinfo");
        int timeoutMs = 8000; ///< for the banner; a working KVM prints it in well under 1 s
    };

    /// Runs the probe; blocks for up to `timeoutMs` (call it once, at helper start-up).
    static KvmProbeResult run(const Config &config);

    /// The group that lets a VMM open `device`: the device's group when that group may read and
    /// write it and is not root's (the Debian default is root:kvm 0660). A helper started by
    /// hand gives it to every VMM as a supplementary group, as the package's sysusers file
    /// does for `airlock-vmm` (docs/packaging.md). nullopt when the group does not help.
    static std::optional<gid_t> deviceGroup(const QString &device);
    /// Why a process of `uid` with `groups` may not open `device` read-write, with the fix, or
    /// an empty string when it may (uid 0: always may).
    static QString accessProblem(const QString &device, uid_t uid,
                                 const std::vector<gid_t> &groups);
    /// Why `device` is missing, judged from the CPU flags in `cpuinfoPath` (no vmx/svm under a
    /// hypervisor: nested virtualisation is off; none on bare metal: off in the firmware;
    /// present: the module is not loaded), with what to do.
    static QString missingDeviceReason(const QString &device, const QString &cpuinfoPath);
};

} // namespace airlock

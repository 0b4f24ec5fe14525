#pragma once

#include "core/model/sandbox.h"

#include <QString>

#include <sys/types.h>

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
        int timeoutMs = 8000; ///< for the banner; a working KVM prints it in well under 1 s
    };

    /// Runs the probe; blocks for up to `timeoutMs` (call it once, at helper start-up).
    static KvmProbeResult run(const Config &config);
};

} // namespace airlock

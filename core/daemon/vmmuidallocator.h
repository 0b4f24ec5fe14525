#pragma once

#include "core/model/error.h"

#include <QString>

#include <sys/types.h>

#include <vector>

namespace airlock {

/// Chooses the uid of a new VMM (SandboxServiceConfig::vmmUidBase + a slot) and of its gateway
/// (gatewayUidBase + the same slot). A uid is free when no VMM of this helper has it and no
/// process on the host runs as it or as its gateway uid: another helper's VMMs use the same
/// ranges (docs/reviews/2026-12-01-newuser-pass.md#m1).
class VmmUidAllocator
{
public:
    static constexpr int kSlots = 65536;

    /// `sharedUid` is every VMM's uid when `vmmUidBase` is 0 (tests without root). Each helper
    /// starts its search at `firstSlot` (firstSlotFor()), so two helpers starting guests at the
    /// same moment rarely even try the same uid.
    VmmUidAllocator(uid_t sharedUid, uid_t vmmUidBase, uid_t gatewayUidBase, int firstSlot);

    /// The first slot the helper with state dir `stateDir` tries (from its instance tag).
    static int firstSlotFor(const QString &stateDir);
    /// A uid that is not in `ours` (this helper's running VMMs) and whose slot no uid in
    /// `inUse` occupies in either range. Busy when every slot is taken.
    Result<uid_t> allocate(const std::vector<uid_t> &ours, const std::vector<uid_t> &inUse) const;
    /// allocate() against every process on the host (uidsInUse()).
    Result<uid_t> allocate(const std::vector<uid_t> &ours) const
    {
        return allocate(ours, uidsInUse());
    }
    /// The gateway's uid for a VMM running as `vmmUid`: the same slot in the gateway range,
    /// or `vmmUid` itself without separate ranges.
    uid_t gatewayUidFor(uid_t vmmUid) const;
    /// Every uid (real, effective, saved, fs) of every process in /proc.
    static std::vector<uid_t> uidsInUse();

private:
    uid_t m_sharedUid;
    uid_t m_vmmUidBase;
    uid_t m_gatewayUidBase;
    int m_firstSlot;
};

} // namespace airlock

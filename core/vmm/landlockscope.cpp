#include "core/vmm/landlockscope.h"

#include <cerrno>
#include <cstdint>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace airlock {

namespace {

/// struct landlock_ruleset_attr as of ABI 6. Debian 12's kernel headers (6.1) end after
/// handled_access_fs; the kernel takes the size it is given, so the later fields are named
/// here.
struct RulesetAttr
{
    std::uint64_t handledAccessFs;
    std::uint64_t handledAccessNet;
    std::uint64_t scoped;
};

constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
constexpr std::uint64_t kScopeSignal = 1ULL << 1;

} // namespace

int LandlockScope::abiVersion()
{
    const long abi =
        ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : int(abi);
}

int LandlockScope::createRuleset()
{
    if (!available()) {
        errno = EOPNOTSUPP;
        return -1;
    }
    const RulesetAttr attr {0, 0, kScopeAbstractUnixSocket | kScopeSignal};
    // Landlock ruleset descriptors are close-on-exec from birth.
    return int(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
}

int LandlockScope::restrictSelf(int ruleset) noexcept
{
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return errno;
    if (::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
        return errno;
    return 0;
}

} // namespace airlock

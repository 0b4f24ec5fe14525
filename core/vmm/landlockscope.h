#pragma once

namespace airlock {

/// Landlock's scoping (Linux 6.12, Landlock ABI 6; landlock(7) and the kernel's
/// userspace-api/landlock.rst, "Scope flags"): a process restricted by it can neither connect
/// to abstract Unix sockets nor signal processes outside its Landlock domain. A jailed
/// Firecracker shares the host's network namespace (its tap is opened by name there), and its
/// seccomp filters let it create AF_UNIX sockets only (for vsock); a chroot hides path-named
/// sockets but not abstract ones, which live in the network namespace. This closes that.
class LandlockScope
{
public:
    /// The kernel's Landlock ABI version, 0 when Landlock is missing or disabled.
    static int abiVersion();
    /// Whether the kernel offers the scopes (ABI 6 or later).
    static bool available() { return abiVersion() >= 6; }
    /// A ruleset descriptor scoping abstract Unix sockets and signals and handling no file
    /// system or network access (those stay as they are), close-on-exec; -1 with errno set when
    /// the kernel cannot (ENOSYS, EOPNOTSUPP, EINVAL before ABI 6). Made by the parent so the
    /// forked child only makes system calls.
    static int createRuleset();
    /// In the forked child: PR_SET_NO_NEW_PRIVS (landlock_restrict_self needs it without
    /// CAP_SYS_ADMIN), then restricts the calling thread by `ruleset`. Async-signal-safe;
    /// returns 0 or the errno of the failing call.
    static int restrictSelf(int ruleset) noexcept;
};

} // namespace airlock

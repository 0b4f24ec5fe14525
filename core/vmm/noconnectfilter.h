#pragma once

namespace airlock {

/// A seccomp filter (seccomp(2), the kernel's seccomp_filter.rst) that answers connect(2) with
/// EACCES and lets every other system call through to the filters below it. A jailed
/// Firecracker runs in the host's network namespace; Firecracker's own filters let it create
/// AF_UNIX stream sockets (for its API and vsock sockets) and connect them anywhere, which
/// reaches the abstract Unix sockets of that namespace (a chroot does not hide those). Airlock
/// needs no connect from Firecracker: the helper connects to its API and vsock sockets, never
/// the other way round (guest-initiated vsock connections, which Firecracker would connect to
/// `uds_path_PORT`, are not used). Firecracker's own filters stack on top of this one.
class NoConnectFilter
{
public:
    /// In the forked child, before exec: PR_SET_NO_NEW_PRIVS (an unprivileged process may only
    /// install a filter with it), then the filter. x86-64 only: a call of another ABI (x32,
    /// i386) is answered with ENOSYS, so no other numbering reaches connect unfiltered.
    /// Async-signal-safe; returns 0 or the errno of the failing call.
    static int install() noexcept;
};

} // namespace airlock

#pragma once

namespace airlock {

/// The listening socket systemd passed to this process through socket activation, following
/// sd_listen_fds(3): LISTEN_PID must equal our pid and LISTEN_FDS be at least 1; the socket is
/// file descriptor 3 (SD_LISTEN_FDS_START). Returns -1 when there is none. Clears the
/// variables so that child processes (the VMMs) do not believe the socket is theirs.
int takeInheritedListenSocket();

} // namespace airlock

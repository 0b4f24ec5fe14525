// airlock-console: the console relay of one Firecracker VMM (docs/vmm.md, "airlock-console").
// Only wiring; the logic lives in core/consolerelay. Started by airlockd as the VMM's own uid
// with PR_SET_NO_NEW_PRIVS and no capabilities, beside the firecracker process whose stdin and
// stdout it holds, and left running when the helper exits: a restarted helper connects to
// RUNDIR/console.sock again. It exits when Firecracker's stdout ends.

#include "core/consolerelay/consolerelay.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace {

void usage()
{
    std::fprintf(stderr,
                 "usage: airlock-console --guest-in FD --guest-out FD --listen FD\n"
                 "Relays a Firecracker VMM's serial console (the write end of its stdin, the read\n"
                 "end of its stdout) to one client at a time on the listening socket FD.\n"
                 "Started by airlockd.\n");
}

/// An open descriptor number, else -1.
int descriptor(const char *text)
{
    char *end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 0 || value > 1024
        || ::fcntl(int(value), F_GETFD) < 0)
        return -1;
    return int(value);
}

} // namespace

int main(int argc, char *argv[])
{
    // Firecracker runs as the same uid: without this it could ptrace the relay and read or type
    // on a console the helper believes to be the guest's serial port only.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    airlock::ConsoleRelay::Descriptors fds;
    for (int i = 1; i < argc; ++i) {
        const std::string_view option(argv[i]);
        if (option == "--help" || option == "-h") {
            usage();
            return 0;
        }
        if (option == "--version") {
            std::printf("airlock-console %s\n", AIRLOCK_VERSION);
            return 0;
        }
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        const int fd = descriptor(argv[++i]);
        if (option == "--guest-in")
            fds.guestIn = fd;
        else if (option == "--guest-out")
            fds.guestOut = fd;
        else if (option == "--listen")
            fds.listener = fd;
        else {
            usage();
            return 2;
        }
    }
    if (fds.guestIn < 0 || fds.guestOut < 0 || fds.listener < 0) {
        std::fprintf(stderr,
                     "airlock-console: --guest-in, --guest-out and --listen must name "
                     "open file descriptors\n");
        return 2;
    }
    // Its memory is two 64 KiB queues; 32 MiB bounds a bug without touching that (soft = hard:
    // it cannot be raised again).
#ifndef __SANITIZE_ADDRESS__
    const rlimit data {rlim_t(32) << 20, rlim_t(32) << 20};
    ::setrlimit(RLIMIT_DATA, &data);
#endif
    std::signal(SIGPIPE, SIG_IGN);

    airlock::ConsoleRelay relay(fds);
    const int error = relay.run();
    if (error != 0) {
        std::fprintf(stderr, "airlock-console: %s\n", std::strerror(error));
        return 1;
    }
    std::fprintf(stderr,
                 "airlock-console: Firecracker's console ended (%llu clients, %llu output bytes "
                 "dropped)\n",
                 static_cast<unsigned long long>(relay.clients()),
                 static_cast<unsigned long long>(relay.droppedBytes()));
    return 0;
}

// airlock-agent: the guest agent, protocol 2 (docs/agent-protocol.md). Started by the guest's
// busybox init after the contract script, again whenever it exits (installers/guest/files/
// inittab); serves the virtio-serial port named org.airlock.agent whose host end belongs to
// airlockd, or, in a guest with a virtio vsock device and no such port (Firecracker), listens
// on vsock port 1024 (--vsock PORT names one). For tests it runs on the host too:
// --socket PATH connects to a listening Unix socket (again after each disconnect), --fd N
// uses an inherited connected descriptor, --sysroot DIR and --ip PROGRAM keep the identity
// refresh away from the host's own files and network.

#include "guest/agent/agent.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace {

constexpr const char *kUsage =
    "usage: airlock-agent [--port NAME | --vsock PORT | --socket PATH | --fd N] [--sysroot DIR]\n"
    "                     [--ip PROGRAM] [--passwd FILE] [--group FILE] [--version]\n";

int usage()
{
    std::fputs(kUsage, stderr);
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    using airlock::guest::Channel;
    Channel::Kind kind = Channel::Kind::VirtioPort;
    std::string address = "org.airlock.agent";
    int fd = -1;
    bool chosen = false; // a channel option was given: no fallback to vsock
    airlock::guest::Agent::Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
        const char *v = nullptr;
        if (arg == "--version") {
            std::puts("airlock-agent " AIRLOCK_VERSION " (protocol 2)");
            return 0;
        } else if (arg == "--port" && (v = value())) {
            kind = Channel::Kind::VirtioPort;
            address = v;
            chosen = true;
        } else if (arg == "--vsock" && (v = value())) {
            kind = Channel::Kind::Vsock;
            address = v;
            chosen = true;
            unsigned port = 0;
            const std::string_view text(v);
            if (std::from_chars(text.data(), text.data() + text.size(), port).ec != std::errc())
                return usage();
        } else if (arg == "--socket" && (v = value())) {
            kind = Channel::Kind::UnixSocket;
            address = v;
            chosen = true;
        } else if (arg == "--fd" && (v = value())) {
            kind = Channel::Kind::Fd;
            chosen = true;
            const std::string_view text(v);
            if (std::from_chars(text.data(), text.data() + text.size(), fd).ec != std::errc()
                || fd < 0)
                return usage();
        } else if (arg == "--sysroot" && (v = value())) {
            options.spawn.sysroot = v;
            options.identity.sysroot = v;
        } else if (arg == "--ip" && (v = value())) {
            options.identity.ipCommand = v;
        } else if (arg == "--passwd" && (v = value())) {
            options.spawn.passwdPath = v;
        } else if (arg == "--group" && (v = value())) {
            options.spawn.groupPath = v;
        } else {
            return usage();
        }
    }
    umask(022);
    // Which host channel this guest has: its virtio-serial port (QEMU), else a virtio vsock
    // device (Firecracker has no virtio-serial). Both appear once their modules are loaded.
    for (int tries = 0; !chosen && tries < 50; ++tries) {
        if (!airlock::guest::findVirtioPort(address).empty())
            break;
        if (airlock::guest::vsockAvailable()) {
            kind = Channel::Kind::Vsock;
            address = std::to_string(Channel::kVsockPort);
            break;
        }
        usleep(100 * 1000);
    }
    Channel channel(kind, address, fd);
    // The port appears once virtio_console is loaded; the shell agent waited five seconds.
    for (int tries = 0; !channel.open() && tries < 50; ++tries) {
        if (kind == Channel::Kind::Fd)
            break;
        if (kind == Channel::Kind::VirtioPort && !airlock::guest::findVirtioPort(address).empty())
            break; // the port is there, only no host yet: the loop waits for one
        usleep(100 * 1000);
    }
    if (!channel.connected() && kind != Channel::Kind::VirtioPort
        && kind != Channel::Kind::UnixSocket && kind != Channel::Kind::Vsock) {
        std::fprintf(stderr, "airlock-agent: cannot open the channel\n");
        return 1;
    }
    if (kind == Channel::Kind::VirtioPort && airlock::guest::findVirtioPort(address).empty()) {
        std::fprintf(stderr, "airlock-agent: no %s port\n", address.c_str());
        return 1;
    }
    if (!channel.connected())
        channel.lost(); // retried by the loop
    airlock::guest::Agent agent(channel, std::move(options));
    return agent.run();
}

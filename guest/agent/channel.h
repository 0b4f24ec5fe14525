#pragma once

#include <chrono>
#include <string>

namespace airlock::guest {

/// The agent's end of the host channel, and its reconnection:
/// - VirtioPort (the guest): /dev/vportNpM whose /sys/class/virtio-ports/*/name is
///   org.airlock.agent, opened once read-write (a port admits one opener). While no host is
///   connected the port polls POLLHUP and reads end of file; the agent then waits and checks
///   again every kRetryMs, keeping the descriptor.
/// - Vsock (Firecracker guests, which have no virtio-serial): listens on AF_VSOCK port
///   `address` (VMADDR_CID_ANY) and accepts one host connection at a time; when it is lost the
///   next is accepted (the listener stays; accept is polled every kRetryMs). The host reaches it
///   through Firecracker's vsock socket with `CONNECT <port>` (docs/vmm.md, "Guest agent").
/// - UnixSocket (tests): connects to a listening socket, and again after the host closed it.
/// - Fd (tests): an inherited connected descriptor; its end of file ends the agent.
class Channel
{
public:
    enum class Kind { VirtioPort, Vsock, UnixSocket, Fd };
    /// The port the agent listens on over vsock (FirecrackerVmm::kAgentVsockPort on the host).
    static constexpr unsigned kVsockPort = 1024;
    using Clock = std::chrono::steady_clock;
    static constexpr int kRetryMs = 200;

    Channel(Kind kind, std::string address, int fd = -1);
    ~Channel();
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;

    /// Finds and opens the port or socket. False when there is none (yet).
    bool open();
    /// The descriptor while connected, else -1.
    int fd() const { return m_connected ? m_fd : -1; }
    bool connected() const { return m_connected; }
    /// True when the channel can never come back (an Fd at end of file).
    bool finished() const { return m_finished; }
    /// The host went away (end of file, POLLHUP, a write error).
    void lost();
    /// Tries to (re)connect when it is time; true when a new host connection starts now.
    bool retry(Clock::time_point now);
    /// When retry() wants to run next (only while disconnected).
    Clock::time_point nextRetry() const { return m_nextRetry; }

private:
    bool openPort();
    bool connectSocket();
    bool acceptVsock();

    Kind m_kind;
    std::string m_address;
    int m_fd = -1;
    int m_listener = -1; ///< Vsock only
    bool m_connected = false;
    bool m_finished = false;
    Clock::time_point m_nextRetry {};
};

/// The path of the virtio port named `name` (/dev/vport0p1), or empty.
std::string findVirtioPort(const std::string &name);

/// True when a virtio vsock device is bound to its transport driver (a Firecracker guest:
/// /sys/bus/virtio/drivers/vmw_vsock_virtio_transport/virtio*).
bool vsockAvailable();

} // namespace airlock::guest

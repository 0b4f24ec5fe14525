#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace airlock {

/// The console of one Firecracker VMM, kept across helper restarts (docs/vmm.md,
/// "airlock-console"). Firecracker's serial console is its stdin and stdout; this relay holds the
/// other ends of those pipes and serves them on a listening Unix socket (RUNDIR/console.sock,
/// bound by airlockd), as QEMU serves its console chardev:
///
/// - One client at a time; a newer client replaces the older (closed at once), as a restarted
///   helper must get the console although the old connection was never closed cleanly.
/// - Output is never held back: Firecracker's stdout is read whenever it has bytes, so a slow or
///   absent client can never stall the guest's serial port. Output while nobody is connected is
///   dropped (QEMU's `wait=off` chardev does the same), and output a connected client does not
///   take is queued up to kBufferBytes, the rest dropped (droppedBytes()).
/// - Input is back-pressured: bytes are read from the client only while the queue towards
///   Firecracker's stdin has room (kBufferBytes), so a guest that reads nothing makes the client's
///   writes block, never this process's memory grow.
/// - Bytes are relayed, never parsed; nothing a client sends can do more than type on the
///   guest's console.
///
/// run() returns when Firecracker's stdout reaches end of file: Firecracker has exited (nothing
/// else holds the write end). Memory is the two fixed buffers, whatever the traffic.
class ConsoleRelay
{
public:
    /// The descriptors the relay owns (closed by the destructor): the write end of
    /// Firecracker's stdin, the read end of its stdout, and a listening stream socket.
    struct Descriptors
    {
        int guestIn = -1;
        int guestOut = -1;
        int listener = -1;
    };

    /// Bound of each direction's queue, bytes.
    static constexpr std::size_t kBufferBytes = 64 * 1024;
    /// Largest read from Firecracker's stdout per wake-up, bytes.
    static constexpr std::size_t kReadBytes = 16 * 1024;

    explicit ConsoleRelay(Descriptors descriptors);
    ~ConsoleRelay();
    ConsoleRelay(const ConsoleRelay &) = delete;
    ConsoleRelay &operator=(const ConsoleRelay &) = delete;

    /// Makes the descriptors non-blocking and relays until Firecracker's stdout ends. Returns 0
    /// then, or the errno of a failed poll(2) or fcntl(2).
    int run();

    /// Output bytes dropped so far: nobody connected, or the client's queue full.
    std::uint64_t droppedBytes() const { return m_dropped; }
    /// Clients accepted so far.
    std::uint64_t clients() const { return m_clients; }

private:
    /// A bounded FIFO of bytes: appended at the back, taken from the front.
    class Queue
    {
    public:
        std::size_t size() const { return m_bytes.size() - m_head; }
        std::size_t room() const { return kBufferBytes - size(); }
        bool empty() const { return size() == 0; }
        const char *data() const { return m_bytes.data() + m_head; }
        /// Appends what fits; returns how many bytes did.
        std::size_t append(const char *bytes, std::size_t count);
        void consume(std::size_t count);
        void clear();

    private:
        std::vector<char> m_bytes;
        std::size_t m_head = 0;
    };

    void acceptClient();
    void closeClient();
    /// false at end of file (or an error) on Firecracker's stdout.
    bool readGuest();
    void writeGuest();
    void readClient();
    void writeClient();

    Descriptors m_fds;
    int m_client = -1;
    Queue m_toGuest;
    Queue m_toClient;
    std::uint64_t m_dropped = 0;
    std::uint64_t m_clients = 0;
};

} // namespace airlock

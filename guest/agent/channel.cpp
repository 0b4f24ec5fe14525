#include "guest/agent/channel.h"

#include "guest/agent/sysfile.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/vm_sockets.h>

namespace airlock::guest {

std::string findVirtioPort(const std::string &name)
{
    DIR *dir = ::opendir("/sys/class/virtio-ports");
    if (!dir)
        return {};
    std::string found;
    while (const dirent *entry = ::readdir(dir)) {
        const std::string port = entry->d_name;
        if (port.starts_with("."))
            continue;
        const auto text = readSmallFile("/sys/class/virtio-ports/" + port + "/name", 4096);
        if (text && (*text == name || *text == name + "\n")) {
            found = "/dev/" + port;
            break;
        }
    }
    ::closedir(dir);
    return found;
}

bool vsockAvailable()
{
    // A bound virtio vsock device, not just the AF_VSOCK family (the vsock core module alone
    // also accepts socket(AF_VSOCK), in a QEMU guest too).
    DIR *dir = ::opendir("/sys/bus/virtio/drivers/vmw_vsock_virtio_transport");
    if (!dir)
        return false;
    bool found = false;
    while (const dirent *entry = ::readdir(dir))
        found = found || std::string_view(entry->d_name).starts_with("virtio");
    ::closedir(dir);
    return found;
}

Channel::Channel(Kind kind, std::string address, int fd)
    : m_kind(kind), m_address(std::move(address)), m_fd(fd)
{ }

Channel::~Channel()
{
    if (m_fd >= 0)
        ::close(m_fd);
    if (m_listener >= 0)
        ::close(m_listener);
}

bool Channel::open()
{
    switch (m_kind) {
    case Kind::VirtioPort:
        return openPort();
    case Kind::Vsock:
        return acceptVsock();
    case Kind::UnixSocket:
        return connectSocket();
    case Kind::Fd:
        if (m_fd < 0)
            return false;
        ::fcntl(m_fd, F_SETFL, ::fcntl(m_fd, F_GETFL) | O_NONBLOCK);
        ::fcntl(m_fd, F_SETFD, FD_CLOEXEC);
        m_connected = true;
        return true;
    }
    return false;
}

bool Channel::openPort()
{
    if (m_fd < 0) {
        const std::string port = findVirtioPort(m_address);
        if (port.empty())
            return false;
        m_fd = ::open(port.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (m_fd < 0)
            return false;
    }
    // No host on the other end: POLLHUP (drivers/char/virtio_console.c).
    pollfd probe {m_fd, POLLIN, 0};
    ::poll(&probe, 1, 0);
    m_connected = !(probe.revents & POLLHUP);
    return m_connected;
}

bool Channel::acceptVsock()
{
    if (m_listener < 0) {
        const int listener = ::socket(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (listener < 0)
            return false;
        sockaddr_vm address {};
        address.svm_family = AF_VSOCK;
        address.svm_cid = VMADDR_CID_ANY;
        address.svm_port = static_cast<unsigned>(std::stoul(m_address));
        // A backlog of one: the host connects once at a time; a second waits for the first.
        if (::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
            || ::listen(listener, 1) != 0) {
            ::close(listener);
            return false;
        }
        m_listener = listener;
    }
    const int connection = ::accept4(m_listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (connection < 0)
        return false; // EAGAIN: no host yet
    m_fd = connection;
    m_connected = true;
    return true;
}

bool Channel::connectSocket()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0)
        return false;
    sockaddr_un address {};
    address.sun_family = AF_UNIX;
    if (m_address.size() >= sizeof address.sun_path)
        return false;
    std::memcpy(address.sun_path, m_address.data(), m_address.size());
    if (::connect(m_fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        ::close(m_fd);
        m_fd = -1;
        return false;
    }
    ::fcntl(m_fd, F_SETFL, ::fcntl(m_fd, F_GETFL) | O_NONBLOCK);
    m_connected = true;
    return true;
}

void Channel::lost()
{
    m_connected = false;
    m_nextRetry = Clock::now() + std::chrono::milliseconds(kRetryMs);
    switch (m_kind) {
    case Kind::VirtioPort:
        break; // the port stays open; the next host is seen by retry()
    case Kind::Vsock:
    case Kind::UnixSocket:
        ::close(m_fd);
        m_fd = -1;
        break;
    case Kind::Fd:
        m_finished = true;
        break;
    }
}

bool Channel::retry(Clock::time_point now)
{
    if (m_connected || m_finished || now < m_nextRetry)
        return false;
    m_nextRetry = now + std::chrono::milliseconds(kRetryMs);
    return open();
}

} // namespace airlock::guest

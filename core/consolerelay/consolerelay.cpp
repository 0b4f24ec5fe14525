#include "core/consolerelay/consolerelay.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock {

namespace {
int setNonBlocking(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return errno;
    return 0;
}

void closeFd(int &fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}
} // namespace

std::size_t ConsoleRelay::Queue::append(const char *bytes, std::size_t count)
{
    const std::size_t taken = std::min(count, room());
    // Allocated once: the queue never holds more than kBufferBytes.
    if (m_bytes.capacity() < kBufferBytes)
        m_bytes.reserve(kBufferBytes);
    // Compact before growing: the vector never holds more than kBufferBytes live bytes plus
    // what was consumed since the last compaction.
    if (m_head > 0 && m_head + size() + taken > kBufferBytes) {
        m_bytes.erase(m_bytes.begin(), m_bytes.begin() + std::ptrdiff_t(m_head));
        m_head = 0;
    }
    m_bytes.insert(m_bytes.end(), bytes, bytes + taken);
    return taken;
}

void ConsoleRelay::Queue::consume(std::size_t count)
{
    m_head += std::min(count, size());
    if (m_head == m_bytes.size())
        clear();
}

void ConsoleRelay::Queue::clear()
{
    m_bytes.clear();
    m_head = 0;
}

ConsoleRelay::ConsoleRelay(Descriptors descriptors) : m_fds(descriptors) { }

ConsoleRelay::~ConsoleRelay()
{
    closeClient();
    closeFd(m_fds.guestIn);
    closeFd(m_fds.guestOut);
    closeFd(m_fds.listener);
}

int ConsoleRelay::run()
{
    for (const int fd : {m_fds.guestIn, m_fds.guestOut, m_fds.listener}) {
        if (const int error = setNonBlocking(fd))
            return error;
    }
    for (;;) {
        pollfd fds[4] = {};
        fds[0] = {m_fds.listener, POLLIN, 0};
        fds[1] = {m_fds.guestOut, POLLIN, 0};
        fds[2] = {m_toGuest.empty() ? -1 : m_fds.guestIn, POLLOUT, 0};
        const int client = m_client;
        short clientEvents = 0;
        if (m_toGuest.room() > 0)
            clientEvents |= POLLIN;
        if (!m_toClient.empty())
            clientEvents |= POLLOUT;
        // A client whose input cannot be taken and that has no output pending is still watched
        // for hang-up (poll reports POLLHUP and POLLERR whatever was asked).
        fds[3] = {client, clientEvents, 0};
        if (::poll(fds, 4, -1) < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        // Output first: whatever Firecracker wrote before a new client came belongs to no one.
        if (fds[1].revents && !readGuest()) {
            // Firecracker is gone; hand the client what is queued if it takes it now.
            if (m_client >= 0)
                writeClient();
            return 0;
        }
        if (fds[2].revents)
            writeGuest();
        // The client polled for, unless it was closed since.
        if (client >= 0 && client == m_client && fds[3].revents) {
            if (fds[3].revents & (POLLIN | POLLHUP | POLLERR))
                readClient();
            if (m_client == client && (fds[3].revents & POLLOUT))
                writeClient();
        }
        if (fds[0].revents)
            acceptClient();
    }
}

void ConsoleRelay::acceptClient()
{
    const int fd = ::accept4(m_fds.listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return; // EAGAIN, or a client that went away before it was accepted
    // The newer client replaces the older: a restarted helper connects while the connection of
    // the one that died may not have been closed yet.
    closeClient();
    m_client = fd;
    ++m_clients;
}

void ConsoleRelay::closeClient()
{
    closeFd(m_client);
    // Output queued for the old client is not the new one's; input it sent still goes to the
    // guest, which accepted it as typed.
    m_dropped += m_toClient.size();
    m_toClient.clear();
}

bool ConsoleRelay::readGuest()
{
    char buffer[kReadBytes];
    ssize_t got;
    do {
        got = ::read(m_fds.guestOut, buffer, sizeof buffer);
    } while (got < 0 && errno == EINTR);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return true;
    if (got <= 0)
        return false;
    const std::size_t taken =
        m_client >= 0 ? m_toClient.append(buffer, std::size_t(got)) : std::size_t(0);
    m_dropped += std::size_t(got) - taken;
    if (taken > 0)
        writeClient();
    return true;
}

void ConsoleRelay::writeGuest()
{
    while (!m_toGuest.empty()) {
        const ssize_t put = ::write(m_fds.guestIn, m_toGuest.data(), m_toGuest.size());
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (put < 0) {
            // Firecracker closed its stdin (it is exiting): the input has nowhere to go. The
            // relay ends with its stdout.
            m_toGuest.clear();
            return;
        }
        m_toGuest.consume(std::size_t(put));
    }
}

void ConsoleRelay::readClient()
{
    char buffer[kBufferBytes];
    const std::size_t want = m_toGuest.room();
    if (want == 0) {
        // Only a hang-up can be seen now; the input waits until the guest took what is queued.
        pollfd probe {m_client, POLLIN, 0};
        if (::poll(&probe, 1, 0) == 1 && (probe.revents & (POLLHUP | POLLERR))
            && !(probe.revents & POLLIN))
            closeClient();
        return;
    }
    ssize_t got;
    do {
        got = ::recv(m_client, buffer, want, 0);
    } while (got < 0 && errno == EINTR);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (got <= 0) {
        closeClient();
        return;
    }
    m_toGuest.append(buffer, std::size_t(got));
    writeGuest();
}

void ConsoleRelay::writeClient()
{
    while (m_client >= 0 && !m_toClient.empty()) {
        const ssize_t put =
            ::send(m_client, m_toClient.data(), m_toClient.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (put < 0) {
            closeClient();
            return;
        }
        m_toClient.consume(std::size_t(put));
    }
}

} // namespace airlock

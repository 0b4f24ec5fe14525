#include "guest/agent/connection.h"

#include <algorithm>
#include <cerrno>
#include <sys/uio.h>
#include <unistd.h>

namespace airlock::guest {

using namespace agentwire;

Connection::Connection() : m_decoder(Sender::Host) { }

void Connection::reset(int fd)
{
    m_fd = fd;
    m_decoder.reset();
    m_out.clear();
    m_frontWritten = 0;
    m_queued = 0;
}

void Connection::dropQueued()
{
    if (m_out.empty())
        return;
    const bool keepFront = m_frontWritten > 0;
    Bytes front = keepFront ? std::move(m_out.front()) : Bytes();
    m_out.clear();
    m_queued = 0;
    if (keepFront) {
        m_queued = front.size() - m_frontWritten;
        m_out.push_back(std::move(front));
    } else {
        m_frontWritten = 0;
    }
}

Connection::ReadResult Connection::read(std::size_t budget,
                                        const std::function<void(const Frame &)> &handle,
                                        const std::function<void(ProtocolError)> &failed)
{
    std::uint8_t buffer[64 * 1024];
    while (budget > 0) {
        const ssize_t n = ::read(m_fd, buffer, std::min(sizeof buffer, budget));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN ? ReadResult::Ok : ReadResult::Closed;
        if (n == 0)
            return ReadResult::Closed;
        budget -= std::size_t(n);
        ByteView bytes(buffer, std::size_t(n));
        while (!bytes.empty() || m_decoder.hasFrame()) {
            bytes = bytes.subspan(m_decoder.feed(bytes));
            if (const auto error = m_decoder.error()) {
                // The rest of the bytes are searched for the host's next Hello.
                failed(*error);
                m_decoder.resync();
                continue;
            }
            if (!m_decoder.hasFrame())
                continue;
            handle(m_decoder.frame());
            m_decoder.pop();
        }
    }
    return ReadResult::Ok;
}

bool Connection::flush()
{
    while (!m_out.empty()) {
        iovec vectors[64];
        int count = 0;
        for (auto it = m_out.begin(); it != m_out.end() && count < 64; ++it, ++count) {
            const std::size_t skip = count == 0 ? m_frontWritten : 0;
            vectors[count].iov_base = it->data() + skip;
            vectors[count].iov_len = it->size() - skip;
        }
        const ssize_t n = ::writev(m_fd, vectors, count);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN;
        std::size_t written = std::size_t(n);
        m_queued -= written;
        while (written > 0) {
            const std::size_t left = m_out.front().size() - m_frontWritten;
            if (written < left) {
                m_frontWritten += written;
                break;
            }
            written -= left;
            m_out.pop_front();
            m_frontWritten = 0;
        }
    }
    return true;
}

void Connection::send(MessageType type, std::uint32_t stream, std::uint64_t request,
                      ByteView payload, std::uint16_t flags)
{
    Bytes frame = encodeFrame(type, stream, request, payload, flags);
    m_queued += frame.size();
    m_out.push_back(std::move(frame));
}

} // namespace airlock::guest

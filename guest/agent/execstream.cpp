#include "guest/agent/execstream.h"

#include <algorithm>
#include <cerrno>
#include <unistd.h>

namespace airlock::guest {

using namespace agentwire;

ExecStream::ExecStream(Connection &connection, std::uint32_t id, std::uint64_t request,
                       ChildProcess &child, ProcessTable &table)
    : Stream(connection, id, request), m_child(child), m_table(table), m_pid(child.pid())
{
    m_table.attach(m_pid, this);
}

void ExecStream::start()
{
    if (auto payload = Started {std::uint32_t(m_pid)}.encode())
        send(MessageType::Started, *payload);
    if (!m_child.stdinClosed() && m_child.stdinFd() >= 0)
        grant(kStdinWindow);
}

void ExecStream::detach()
{
    if (m_table.attachedStream(m_pid) == this)
        m_table.detach(m_pid);
}

void ExecStream::cancel()
{
    detach();
    failWith(ErrorCode::Canceled, "detached; the process runs on");
}

void ExecStream::drop()
{
    detach();
    Stream::drop();
}

std::optional<ProtocolError> ExecStream::onFrame(const Frame &frame)
{
    switch (frame.header.type) {
    case MessageType::Stdin:
        if (!m_receiveCredit.spend(frame.payload.size()))
            return ProtocolError::CreditExceeded;
        if (m_child.stdinClosed() || m_stdinEndRequested) {
            // Input after the end, or for a process that closed its stdin: dropped, and the
            // credit comes back so that the host is never stuck.
            m_stdinUngranted += std::uint32_t(frame.payload.size());
        } else {
            m_stdin.insert(m_stdin.end(), frame.payload.begin(), frame.payload.end());
        }
        return std::nullopt;
    case MessageType::StdinClose:
        if (!frame.payload.empty())
            return ProtocolError::BadPayload;
        m_stdinEndRequested = true;
        if (m_stdin.empty())
            m_child.closeStdin();
        return std::nullopt;
    case MessageType::Signal: {
        const auto request = SignalRequest::decode(frame.payload);
        if (!request)
            return ProtocolError::BadPayload;
        m_child.signal(int(request->signal));
        return std::nullopt;
    }
    case MessageType::Resize: {
        const auto request = ResizeRequest::decode(frame.payload);
        if (!request)
            return ProtocolError::BadPayload;
        m_child.resize(request->rows, request->cols);
        return std::nullopt;
    }
    default:
        return ProtocolError::Unexpected;
    }
}

void ExecStream::pollInterest(std::vector<PollInterest> &out)
{
    if (finished())
        return;
    const bool wantOutput = sendable() > 0;
    const int in = m_child.stdinClosed() ? -1 : m_child.stdinFd();
    const bool wantInput = in >= 0 && !m_stdin.empty();
    if (m_child.stdoutFd() >= 0) {
        short events = wantOutput ? POLLIN : 0;
        if (in == m_child.stdoutFd() && wantInput)
            events |= POLLOUT;
        if (events)
            out.push_back({m_child.stdoutFd(), events, this, id()});
    }
    if (m_child.stderrFd() >= 0 && wantOutput)
        out.push_back({m_child.stderrFd(), POLLIN, this, id()});
    if (wantInput && in != m_child.stdoutFd())
        out.push_back({in, POLLOUT, this, id()});
}

void ExecStream::ready(int fd, short revents)
{
    if (finished())
        return;
    if ((revents & POLLOUT) && fd == m_child.stdinFd())
        writeInput();
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
        if (fd == m_child.stdoutFd())
            readOutput(false);
        else if (fd == m_child.stderrFd())
            readOutput(true);
    }
    if ((revents & (POLLERR | POLLHUP)) && fd == m_child.stdinFd() && fd != m_child.stdoutFd()) {
        m_stdinUngranted += std::uint32_t(m_stdin.size());
        m_stdin.clear();
        m_child.closeStdin();
    }
}

void ExecStream::readOutput(bool fromStderr)
{
    const int fd = fromStderr ? m_child.stderrFd() : m_child.stdoutFd();
    const std::size_t room = sendable();
    if (fd < 0 || room == 0)
        return;
    std::uint8_t buffer[kMaxPayloadBytes];
    const ssize_t n = ::read(fd, buffer, room);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        // End of file, or EIO from a PTY master whose slave side is all closed.
        fromStderr ? m_child.closeStderr() : m_child.closeStdout();
        return;
    }
    m_sendCredit.spend(std::uint64_t(n));
    send(fromStderr ? MessageType::Stderr : MessageType::Stdout, ByteView(buffer, std::size_t(n)));
}

void ExecStream::writeInput()
{
    const int fd = m_child.stdinFd();
    while (!m_stdin.empty()) {
        const ssize_t n = ::write(fd, m_stdin.data(), m_stdin.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n <= 0) {
            // EPIPE: the process closed its input; what it never read is dropped.
            m_stdinUngranted += std::uint32_t(m_stdin.size());
            m_stdin.clear();
            m_child.closeStdin();
            break;
        }
        m_stdin.erase(m_stdin.begin(), m_stdin.begin() + n);
        m_stdinUngranted += std::uint32_t(n);
    }
    if (m_stdin.empty() && m_stdinEndRequested)
        m_child.closeStdin();
}

void ExecStream::poke()
{
    if (finished())
        return;
    // Re-grant input credit in quarters of the window: fewer Credit frames.
    if (m_stdinUngranted >= kStdinWindow / 4 || (m_stdinUngranted > 0 && m_stdin.empty())) {
        grant(m_stdinUngranted);
        m_stdinUngranted = 0;
    }
    if (!m_child.finished())
        return;
    if (auto payload = m_child.exitStatus().encode())
        send(MessageType::Exit, *payload);
    finish();
    m_table.remove(m_pid); // destroys m_child: nothing of it is used after this
}

} // namespace airlock::guest

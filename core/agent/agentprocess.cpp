#include "core/agent/agentprocess.h"

#include "core/agent/agentclient.h"

#include <QIODevice>
#include <QPointer>

namespace airlock::agent {

using namespace agentwire;

AgentProcess::AgentProcess(AgentClient *client, quint32 id, quint64 request, quint32 timeoutMs)
    : AgentStream(client, id, request), m_timeoutMs(timeoutMs)
{ }

void AgentProcess::grantInitialCredit()
{
    grant(m_client->limits().window);
}

QByteArray AgentProcess::take(QByteArray &buffer, qint64 maxBytes)
{
    const qint64 n = maxBytes < 0 ? buffer.size() : std::min<qint64>(maxBytes, buffer.size());
    QByteArray out = buffer.first(n);
    buffer.remove(0, n);
    m_consumed += quint32(n);
    // Credit back in quarters of the window: fewer Credit frames, the pipe still flows.
    if (m_client && isOpen() && m_consumed >= m_client->limits().window / 4) {
        grant(m_consumed);
        m_consumed = 0;
        updateStall();
    }
    return out;
}

QByteArray AgentProcess::readStdout(qint64 maxBytes)
{
    return take(m_stdout, maxBytes);
}

QByteArray AgentProcess::readStderr(qint64 maxBytes)
{
    return take(m_stderr, maxBytes);
}

qint64 AgentProcess::stdinRoom() const
{
    if (!m_client || !isOpen() || m_stdinCloseRequested)
        return 0;
    return std::max<qint64>(0, qint64(m_client->limits().window) - m_stdin.size());
}

qint64 AgentProcess::writeStdin(QByteArrayView data)
{
    const qint64 n = std::min<qint64>(data.size(), stdinRoom());
    if (n <= 0)
        return 0;
    m_stdin.append(data.first(n));
    pump();
    return n;
}

void AgentProcess::closeStdin()
{
    if (!isOpen())
        return;
    m_stdinCloseRequested = true;
    pump();
}

void AgentProcess::sendSignal(int signal)
{
    if (auto payload = SignalRequest {quint32(signal)}.encode())
        send(MessageType::Signal, *payload);
}

void AgentProcess::resize(quint16 rows, quint16 cols)
{
    if (auto payload = ResizeRequest {rows, cols}.encode())
        send(MessageType::Resize, *payload);
}

void AgentProcess::detach()
{
    cancelInGuest();
}

void AgentProcess::pump()
{
    if (!m_client || !isOpen() || !isStarted())
        return;
    QIODevice *device = m_client->m_device;
    qint64 sent = 0;
    while (!m_stdin.isEmpty() && m_sendCredit.available() > 0
           && device->bytesToWrite() < m_client->limits().writeBufferBytes) {
        const qint64 n = std::min<qint64>(
            {m_stdin.size(), qint64(m_sendCredit.available()), qint64(kMaxPayloadBytes)});
        m_sendCredit.spend(quint64(n));
        send(MessageType::Stdin,
             ByteView(reinterpret_cast<const std::uint8_t *>(m_stdin.constData()), std::size_t(n)));
        m_stdin.remove(0, n);
        sent += n;
    }
    if (m_stdin.isEmpty() && m_stdinCloseRequested && !m_stdinCloseSent) {
        m_stdinCloseSent = true;
        send(MessageType::StdinClose);
    }
    if (sent > 0)
        emit stdinWritten(sent);
}

void AgentProcess::updateStall()
{
    if (!isStarted())
        return; // the request timeout set when it was opened runs until Started
    // With a timeout the guest must end the process by then; without one a quiet process is
    // not a stalled guest. A consumer that does not read is not the guest's fault either.
    const bool waiting = m_timeoutMs > 0 && m_receiveCredit.available() > 0;
    if (!waiting || !m_client) {
        stall(false);
        return;
    }
    armDeadline(qint64(m_timeoutMs) + m_client->limits().requestTimeoutMs);
}

std::optional<ProtocolError> AgentProcess::handleFrame(const Frame &frame)
{
    switch (frame.header.type) {
    case MessageType::Started: {
        const auto started = Started::decode(frame.payload);
        if (!started)
            return ProtocolError::BadPayload;
        if (isStarted())
            return ProtocolError::Unexpected;
        m_pid = started->pid;
        updateStall();
        emit this->started(m_pid);
        return std::nullopt;
    }
    case MessageType::Stdout:
    case MessageType::Stderr: {
        if (!isStarted())
            return ProtocolError::Unexpected;
        if (!m_receiveCredit.spend(frame.payload.size()))
            return ProtocolError::CreditExceeded;
        const bool out = frame.header.type == MessageType::Stdout;
        (out ? m_stdout : m_stderr)
            .append(reinterpret_cast<const char *>(frame.payload.data()),
                    qsizetype(frame.payload.size()));
        updateStall();
        if (out)
            emit readyReadStdout();
        else
            emit readyReadStderr();
        return std::nullopt;
    }
    case MessageType::Credit:
        return takeCredit(frame);
    case MessageType::Exit: {
        const auto status = ExitStatus::decode(frame.payload);
        if (!status)
            return ProtocolError::BadPayload;
        if (!isStarted())
            return ProtocolError::Unexpected;
        m_exit = *status;
        close();
        emit finished(*status);
        return std::nullopt;
    }
    case MessageType::Error:
        return takeGuestError(frame);
    default:
        return ProtocolError::Unexpected;
    }
}

} // namespace airlock::agent

#pragma once

#include "core/agent/agentstream.h"
#include "core/agentwire/messages.h"

#include <QByteArray>

namespace airlock::agent {

/// A process in the guest (AgentClient::exec or attach). Output arrives as readyReadStdout /
/// readyReadStderr and waits in this object until readStdout()/readStderr() take it; credit
/// goes back to the guest only as it is taken, so at most Limits::window bytes of output are
/// ever held here and a consumer that stops reading stops the process (its pipe fills in the
/// guest). finished() comes after the last output; what is still buffered stays readable.
///
/// Deleting it, or detach(), leaves the process running in the guest (attach() by pid later,
/// as E2B's Connect does).
class AgentProcess : public AgentStream
{
    Q_OBJECT
public:
    /// The process id in the guest, once started().
    quint32 pid() const { return m_pid; }
    bool isStarted() const { return m_pid != 0; }
    /// Set once finished().
    const std::optional<agentwire::ExitStatus> &exitStatus() const { return m_exit; }

    qint64 stdoutAvailable() const { return m_stdout.size(); }
    qint64 stderrAvailable() const { return m_stderr.size(); }
    /// Takes up to `maxBytes` (all with -1) of the buffered output and credits the guest.
    QByteArray readStdout(qint64 maxBytes = -1);
    QByteArray readStderr(qint64 maxBytes = -1);

    /// Queues input for the process (requires ExecRequest::stdinOpen or a PTY); returns how
    /// many bytes were taken: at most stdinRoom() (Limits::window minus what waits).
    qint64 writeStdin(QByteArrayView data);
    qint64 stdinRoom() const;
    /// End of input once what is queued was sent (a PTY gets its EOF character).
    void closeStdin();
    /// Signal number 1..64 to the process group.
    void sendSignal(int signal);
    /// New PTY size.
    void resize(quint16 rows, quint16 cols);
    /// Stops following the process; it runs on in the guest. No signal follows.
    void detach();

signals:
    void started(quint32 pid);
    void readyReadStdout();
    void readyReadStderr();
    /// Input went to the guest: stdinRoom() grew.
    void stdinWritten(qint64 bytes);
    /// The process ended and all its output arrived.
    void finished(const agentwire::ExitStatus &status);

private:
    friend class AgentClient;
    AgentProcess(AgentClient *client, quint32 id, quint64 request, quint32 timeoutMs);
    /// After the opening frame: the output credit.
    void grantInitialCredit();
    std::optional<agentwire::ProtocolError> handleFrame(const agentwire::Frame &frame) override;
    void pump() override;
    qint64 buffered() const override { return m_stdout.size() + m_stderr.size() + m_stdin.size(); }
    QByteArray take(QByteArray &buffer, qint64 maxBytes);
    void updateStall();

    quint32 m_timeoutMs;
    quint32 m_pid = 0;
    QByteArray m_stdout;
    QByteArray m_stderr;
    quint32 m_consumed = 0; ///< read by the consumer, not yet credited
    QByteArray m_stdin;
    bool m_stdinCloseRequested = false;
    bool m_stdinCloseSent = false;
    std::optional<agentwire::ExitStatus> m_exit;
};

} // namespace airlock::agent

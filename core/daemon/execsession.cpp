#include "core/daemon/execsession.h"

#include "core/agent/agentprocess.h"
#include "core/daemon/agentjson.h"
#include "core/protocol/message.h"
#include "core/protocol/methods.h"

#include <QScopedValueRollback>
#include <QTimer>

namespace airlock {

namespace notification = protocol::notification;

ExecSession::ExecSession(RpcServer &server, quint64 client, QString sandbox,
                         agent::AgentProcess *process, bool acceptsInput, QObject *parent)
    : QObject(parent)
    , m_server(server)
    , m_client(client)
    , m_sandbox(std::move(sandbox))
    , m_process(process)
    , m_acceptsInput(acceptsInput)
{
    // The process stays the agent client's child: when the channel goes (the sandbox stops),
    // the client deletes it without a signal, and destroyed() is how we learn of it.
    using agent::AgentProcess;
    connect(process, &QObject::destroyed, this, [this] {
        if (m_ended)
            return;
        notify(notification::ExecExit,
               {{QStringLiteral("error"),
                 QJsonObject {{QStringLiteral("kind"), QStringLiteral("agent_unavailable")},
                              {QStringLiteral("message"),
                               QStringLiteral("the sandbox's agent channel closed")}}}});
        end();
    });
    connect(process, &AgentProcess::started, this, [this](quint32 pid) {
        m_pid = pid;
        Q_EMIT started(pid);
        pumpInput();
    });
    connect(process, &AgentProcess::readyReadStdout, this, &ExecSession::pumpOutput);
    connect(process, &AgentProcess::readyReadStderr, this, &ExecSession::pumpOutput);
    connect(process, &AgentProcess::finished, this, &ExecSession::pumpOutput);
    connect(process, &AgentProcess::stdinWritten, this, &ExecSession::pumpInput);
    connect(process, &AgentProcess::failed, this, &ExecSession::onFailed);
    connect(&m_server, &RpcServer::clientWritten, this, [this](quint64 id) {
        if (id == m_client)
            pumpOutput();
    });
    connect(&m_server, &RpcServer::clientDisconnected, this, [this](quint64 id) {
        if (id == m_client)
            detach();
    });
}

ExecSession::~ExecSession()
{
    for (PendingInput &pending : m_input)
        pending.reply(fail(ErrorKind::InvalidState, QStringLiteral("the exec session ended")));
    // Frees the stream in the agent client; a process still running runs on in the guest.
    delete m_process.data();
}

bool ExecSession::notify(const char *method, QJsonObject params)
{
    params.insert(QStringLiteral("sandbox"), m_sandbox);
    params.insert(QStringLiteral("pid"), qint64(m_pid));
    return m_server.send(m_client,
                         protocol::encodeNotification(QString::fromLatin1(method), params));
}

void ExecSession::pumpOutput()
{
    if (m_ended || !m_process || !m_process->isStarted())
        return;
    while (m_server.pendingOutputBytes(m_client) < kHighWaterBytes) {
        const bool haveOut = m_process->stdoutAvailable() > 0;
        const bool haveErr = m_process->stderrAvailable() > 0;
        if (!haveOut && !haveErr)
            break;
        const bool fromStdout = haveOut && (m_stdoutNext || !haveErr);
        m_stdoutNext = !fromStdout;
        const QByteArray chunk =
            fromStdout ? m_process->readStdout(kChunkBytes) : m_process->readStderr(kChunkBytes);
        if (!notify(notification::ExecOutput,
                    {{QStringLiteral("stream"),
                      fromStdout ? QStringLiteral("stdout") : QStringLiteral("stderr")},
                     {QStringLiteral("data"), QString::fromLatin1(chunk.toBase64())}})) {
            detach(); // the client is gone or was dropped for not reading
            return;
        }
    }
    const bool drained = m_process->stdoutAvailable() == 0 && m_process->stderrAvailable() == 0;
    if (drained && m_process->exitStatus()) {
        notify(notification::ExecExit, agentjson::exitStatus(*m_process->exitStatus()));
        end();
    }
}

void ExecSession::onFailed(const agent::AgentError &error)
{
    if (m_ended)
        return;
    const Error failure = agentjson::toError(error);
    if (!m_process || !m_process->isStarted()) {
        Q_EMIT startFailed(failure);
        end();
        return;
    }
    // What output arrived before the failure still goes out first, within the same bound; what
    // does not fit now is lost with the stream (it failed: the guest cannot be asked again).
    pumpOutput();
    if (m_ended)
        return;
    notify(notification::ExecExit,
           {{QStringLiteral("error"),
             QJsonObject {{QStringLiteral("kind"), errorKindName(failure.kind)},
                          {QStringLiteral("message"), failure.message}}}});
    end();
}

void ExecSession::input(const QByteArray &data, bool eof, RpcServer::Reply reply)
{
    if (m_ended || !m_process)
        return reply(fail(ErrorKind::InvalidState, QStringLiteral("the process has ended")));
    if (!m_acceptsInput)
        return reply(
            fail(ErrorKind::InvalidState, QStringLiteral("the process was started without stdin")));
    if (eof)
        m_acceptsInput = false; // later input would wait behind a closed stdin forever
    if (m_queuedInput + data.size() > kMaxQueuedInputBytes)
        return reply(fail(ErrorKind::Busy,
                          QStringLiteral("more than %1 bytes of input wait for the process")
                              .arg(kMaxQueuedInputBytes)));
    m_queuedInput += data.size();
    m_input.push_back({data, eof, std::move(reply)});
    pumpInput();
}

void ExecSession::pumpInput()
{
    // writeStdin() emits stdinWritten, which calls us again, from inside the loop below.
    if (!m_process || !m_process->isStarted() || m_pumpingInput)
        return;
    const QScopedValueRollback guard(m_pumpingInput, true);
    while (!m_input.empty()) {
        PendingInput &front = m_input.front();
        while (!front.data.isEmpty()) {
            const qint64 taken = m_process->writeStdin(front.data);
            if (taken == 0)
                return; // stdinWritten calls again
            front.data.remove(0, taken);
            m_queuedInput -= taken;
        }
        if (front.eof)
            m_process->closeStdin();
        RpcServer::Reply reply = std::move(front.reply);
        m_input.pop_front();
        reply(QJsonValue(QJsonObject()));
    }
}

void ExecSession::detach()
{
    if (m_ended)
        return;
    if (m_process)
        m_process->detach();
    end();
}

void ExecSession::end()
{
    if (m_ended)
        return;
    m_ended = true;
    // From the event loop: the owner deletes us, and may be inside one of our calls now.
    QTimer::singleShot(0, this, &ExecSession::ended);
}

} // namespace airlock

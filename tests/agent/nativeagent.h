#pragma once

#include "core/agent/agentclient.h"

#include <QLocalServer>
#include <QLocalSocket>
#include <QProcess>
#include <QTemporaryDir>

#include <memory>

namespace airlock::test {

/// The real airlock-agent binary run natively on the host (no guest): it connects to a
/// QLocalServer in a temporary folder (--socket), its identity refresh writes under
/// sysroot() (--sysroot) and runs a recording `ip` (--ip) that logs its arguments to
/// ipLog() and fails when the file ipFail() exists. connect() accepts its next connection and
/// hands it to a started AgentClient; the agent reconnects by itself after a disconnect.
class NativeAgent
{
public:
    NativeAgent();
    ~NativeAgent();

    /// Starts the agent process; false when it could not be started.
    bool start();
    /// Waits for the agent's next connection, writes `before` to it (a stale half frame), and
    /// makes a started client on it with `limits`.
    std::unique_ptr<agent::AgentClient> connect(agent::AgentClient::Limits limits = {},
                                                const QByteArray &before = {});
    /// The client of connect() once ready, or nullptr.
    std::unique_ptr<agent::AgentClient> connectReady(agent::AgentClient::Limits limits = {},
                                                     const QByteArray &before = {});

    QString path() const { return m_dir.path(); }
    QString sysroot() const { return m_dir.path() + QStringLiteral("/sysroot"); }
    QString ipLog() const { return m_dir.path() + QStringLiteral("/ip.log"); }
    QString ipFail() const { return m_dir.path() + QStringLiteral("/ip.fail"); }
    qint64 pid() const { return m_process.processId(); }

private:
    QTemporaryDir m_dir;
    QLocalServer m_server;
    QProcess m_process;
};

} // namespace airlock::test

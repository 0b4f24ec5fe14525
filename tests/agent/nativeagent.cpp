#include "nativeagent.h"

#include <QFile>
#include <QSignalSpy>
#include <QTest>

namespace airlock::test {

NativeAgent::NativeAgent()
{
    m_server.setSocketOptions(QLocalServer::UserAccessOption);
}

NativeAgent::~NativeAgent()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
}

bool NativeAgent::start()
{
    if (!m_dir.isValid() || !m_server.listen(m_dir.path() + QStringLiteral("/agent.sock")))
        return false;
    QFile ip(m_dir.path() + QStringLiteral("/ip"));
    if (!ip.open(QIODevice::WriteOnly))
        return false;
    ip.write(QStringLiteral("#!/bin/sh\necho \"$*\" >>'%1'\n[ ! -e '%2' ]\n")
                 .arg(ipLog(), ipFail())
                 .toUtf8());
    ip.close();
    ip.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_process.start(QStringLiteral(AIRLOCK_AGENT_BINARY),
                    {QStringLiteral("--socket"), m_server.fullServerName(),
                     QStringLiteral("--sysroot"), sysroot(), QStringLiteral("--ip"),
                     m_dir.path() + QStringLiteral("/ip")});
    return m_process.waitForStarted(10000);
}

namespace {
constexpr int kConnectTimeoutMs = 10000;
}

std::unique_ptr<agent::AgentClient> NativeAgent::connect(agent::AgentClient::Limits limits,
                                                         const QByteArray &before)
{
    if (!m_server.hasPendingConnections() && !m_server.waitForNewConnection(kConnectTimeoutMs))
        return nullptr;
    QLocalSocket *socket = m_server.nextPendingConnection();
    if (!socket)
        return nullptr;
    socket->setParent(nullptr);
    if (!before.isEmpty()) {
        socket->write(before);
        socket->waitForBytesWritten(kConnectTimeoutMs);
    }
    auto client = std::make_unique<agent::AgentClient>(socket, limits);
    client->start();
    return client;
}

std::unique_ptr<agent::AgentClient> NativeAgent::connectReady(agent::AgentClient::Limits limits,
                                                              const QByteArray &before)
{
    const int timeoutMs = kConnectTimeoutMs;
    auto client = connect(limits, before);
    if (!client)
        return nullptr;
    QSignalSpy ready(client.get(), &agent::AgentClient::ready);
    QSignalSpy failed(client.get(), &agent::AgentClient::failed);
    if (!QTest::qWaitFor([&] { return !ready.isEmpty() || !failed.isEmpty(); }, timeoutMs)
        || ready.isEmpty())
        return nullptr;
    return client;
}

} // namespace airlock::test

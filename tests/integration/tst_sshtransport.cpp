// The SSH transport against Debian's real sshd (SshServer) and a real airlockd (HelperProcess)
// as the "remote" helper on the same machine: host key rules, authentication, the bridge
// fallback, disconnection and reconnection. HelperClient runs unchanged on top.

#include "core/client/helperclient.h"
#include "core/ssh/sshtransport.h"
#include "helperprocess.h"
#include "resultcheck.h"
#include "scriptedprompter.h"
#include "sshserver.h"

#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include <unistd.h>

using airlock::Error;
using airlock::HelperClient;
using airlock::SshEndpoint;
using airlock::SshSecretQuestion;
using airlock::SshTransport;
using airlock::test::HelperProcess;
using airlock::test::ScriptedPrompter;
using airlock::test::SshServer;

namespace {

QString airlockctlPath()
{
    return qEnvironmentVariable("AIRLOCK_AIRLOCKCTL",
                                QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlockctl/airlockctl"));
}

/// What `ssh-keygen -lf` prints as the fingerprint of a public key file.
QString fingerprintOf(const QString &publicKeyFile)
{
    QProcess keygen;
    keygen.start(QStringLiteral("ssh-keygen"), {QStringLiteral("-lf"), publicKeyFile});
    keygen.waitForFinished();
    return QString::fromLatin1(keygen.readAllStandardOutput().split(' ').value(1));
}

QStringList sandboxNames(HelperClient &client)
{
    QStringList names;
    const auto answer = client.callSync(QStringLiteral("sandbox.list"), {});
    if (!answer)
        return {QStringLiteral("error: ") + answer.error().message};
    for (const QJsonValue &sandbox :
         answer->toObject().value(QStringLiteral("sandboxes")).toArray())
        names.append(sandbox.toObject().value(QStringLiteral("name")).toString());
    return names;
}

} // namespace

class TestSshTransport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();

    void listAndConsoleOverSsh();
    void unknownHostKeyAsksAndIsRemembered();
    void changedHostKeyIsRefused();
    void wrongPasswordIsAnAuthenticationError();
    void keyWithPassphrase();
    void sshdKilledThenBack();
    void silentServerDetectedByKeepalive();
    void bridgeFallbackWhenStreamLocalForbidden();
    void bridgeFallbackReportsMissingCommand();
    void airlockctlHost();

private:
    /// Root with the unencrypted key and a known_hosts that trusts `server`.
    SshEndpoint endpointFor(const SshServer &server, bool trustHostKey = true);
    std::unique_ptr<HelperClient> clientFor(const SshEndpoint &endpoint,
                                            airlock::SshPrompter *prompter = nullptr,
                                            SshTransport **transport = nullptr);

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<SshServer> m_sshd;
};

void TestSshTransport::initTestCase()
{
    QVERIFY2(QFile::exists(QStringLiteral("/usr/sbin/sshd")),
             "openssh-server is required (installers/dev/packages.txt)");
    m_helper = std::make_unique<HelperProcess>();
    QVERIFY2(!m_helper->useUnbootableImageStore().isEmpty(), qPrintable(m_helper->lastError()));
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    m_sshd = std::make_unique<SshServer>();
    QVERIFY2(m_sshd->start(), qPrintable(m_sshd->lastError()));
}

void TestSshTransport::init()
{
    QFile::remove(m_sshd->knownHostsPath());
}

SshEndpoint TestSshTransport::endpointFor(const SshServer &server, bool trustHostKey)
{
    SshEndpoint endpoint;
    endpoint.user = QStringLiteral("root");
    endpoint.host = QStringLiteral("127.0.0.1");
    endpoint.port = server.port();
    endpoint.socketPath = m_helper->socketPath();
    endpoint.identityFile = server.clientKeyPath();
    endpoint.knownHostsFile = server.tempPath() + QStringLiteral("/known_hosts");
    endpoint.configFile = QStringLiteral("none");
    endpoint.remoteCommand = airlockctlPath();
    if (trustHostKey) {
        QFile knownHosts(endpoint.knownHostsFile);
        if (knownHosts.open(QIODevice::WriteOnly | QIODevice::Truncate))
            knownHosts.write(server.knownHostsLine().toUtf8() + '\n');
    }
    return endpoint;
}

std::unique_ptr<HelperClient> TestSshTransport::clientFor(const SshEndpoint &endpoint,
                                                          airlock::SshPrompter *prompter,
                                                          SshTransport **transport)
{
    auto owned = std::make_unique<SshTransport>(endpoint, prompter);
    if (transport)
        *transport = owned.get();
    return std::make_unique<HelperClient>(std::move(owned), QStringLiteral("tst_sshtransport"));
}

void TestSshTransport::listAndConsoleOverSsh()
{
    SshTransport *transport = nullptr;
    auto client = clientFor(endpointFor(*m_sshd), nullptr, &transport);
    const auto connected = client->connectSync(15000);
    QVERIFY_RESULT(connected);
    QCOMPARE(transport->state(), SshTransport::State::Connected);
    QVERIFY(!transport->usesBridge());
    QCOMPARE(client->helloResult().value(QStringLiteral("protocol")).toInt(), 1);

    const auto created = client->callSync(QStringLiteral("sandbox.create"),
                                          {{QStringLiteral("name"), QStringLiteral("remote-a")}});
    QVERIFY_RESULT(created);
    QVERIFY(sandboxNames(*client).contains(QStringLiteral("remote-a")));

    // The console of a sandbox that has not booted: attached, scrollback empty, seq 0.
    const auto attached = client->callSync(QStringLiteral("console.attach"),
                                           {{QStringLiteral("name"), QStringLiteral("remote-a")}});
    QVERIFY_RESULT(attached);
    QCOMPARE(attached->toObject().value(QStringLiteral("seq")).toInt(-1), 0);
    const auto write = client->callSync(QStringLiteral("console.write"),
                                        {{QStringLiteral("name"), QStringLiteral("remote-a")},
                                         {QStringLiteral("data"), QStringLiteral("aGk=")}});
    QVERIFY(!write);
    QCOMPARE(write.error().kind, airlock::ErrorKind::InvalidState);
    QVERIFY(client->callSync(QStringLiteral("console.detach"),
                             {{QStringLiteral("name"), QStringLiteral("remote-a")}}));
    QVERIFY(client->callSync(QStringLiteral("sandbox.delete"),
                             {{QStringLiteral("name"), QStringLiteral("remote-a")}}));
    QVERIFY(!sandboxNames(*client).contains(QStringLiteral("remote-a")));
}

void TestSshTransport::unknownHostKeyAsksAndIsRemembered()
{
    const SshEndpoint endpoint = endpointFor(*m_sshd, false);
    const QString expected =
        fingerprintOf(m_sshd->tempPath() + QStringLiteral("/ssh_host_ed25519_key.pub"));
    QVERIFY(expected.startsWith(QStringLiteral("SHA256:")));

    ScriptedPrompter no;
    SshTransport *transport = nullptr;
    auto refused = clientFor(endpoint, &no, &transport);
    QVERIFY(!refused->connectSync(15000));
    QCOMPARE(transport->state(), SshTransport::State::HostKeyRejected);
    QCOMPARE(no.hostKeyQuestions.size(), 1);
    QCOMPARE(no.hostKeyQuestions.first().fingerprint, expected);
    QCOMPARE(no.hostKeyQuestions.first().keyType, QStringLiteral("ssh-ed25519"));
    QVERIFY(!QFile::exists(endpoint.knownHostsFile));

    ScriptedPrompter yes;
    yes.acceptHostKeys = true;
    auto accepted = clientFor(endpoint, &yes);
    QVERIFY(accepted->connectSync(15000));
    QCOMPARE(yes.hostKeyQuestions.size(), 1);
    QFile knownHosts(endpoint.knownHostsFile);
    QVERIFY(knownHosts.open(QIODevice::ReadOnly));
    QVERIFY(knownHosts.readAll().contains(
        QStringLiteral("[127.0.0.1]:%1").arg(m_sshd->port()).toUtf8()));

    // Now known: nobody is asked.
    ScriptedPrompter again;
    auto known = clientFor(endpoint, &again);
    QVERIFY(known->connectSync(15000));
    QCOMPARE(again.hostKeyQuestions.size(), 0);
}

void TestSshTransport::changedHostKeyIsRefused()
{
    SshServer other;
    QVERIFY2(other.start(), qPrintable(other.lastError()));
    SshEndpoint endpoint = endpointFor(other);
    // The same server, now with another key: what a man in the middle looks like.
    other.kill();
    QVERIFY(other.regenerateHostKey());
    QVERIFY2(other.start(), qPrintable(other.lastError()));

    ScriptedPrompter prompter;
    prompter.acceptHostKeys = true; // would say yes: must not even be asked
    SshTransport *transport = nullptr;
    auto client = clientFor(endpoint, &prompter, &transport);
    const auto connected = client->connectSync(15000);
    QVERIFY(!connected);
    QCOMPARE(transport->state(), SshTransport::State::HostKeyChanged);
    QVERIFY2(connected.error().message.contains(QStringLiteral("host key")),
             qPrintable(connected.error().message));
    QVERIFY(connected.error().message.contains(QStringLiteral("ssh-keygen -R")));
    QCOMPARE(prompter.hostKeyQuestions.size(), 0);
    QCOMPARE(prompter.secretQuestions.size(), 0);
}

void TestSshTransport::wrongPasswordIsAnAuthenticationError()
{
    SshServer server(SshServer::Options {.passwordAuthentication = true});
    QVERIFY2(server.start(), qPrintable(server.lastError()));
    const QString user = server.createPasswordUser(QStringLiteral("s3cret-pw"));
    QVERIFY2(!user.isEmpty(), qPrintable(server.lastError()));
    SshEndpoint endpoint = endpointFor(server);
    endpoint.user = user;
    endpoint.identityFile.clear();

    ScriptedPrompter wrong;
    wrong.secrets = {QStringLiteral("nope"), QStringLiteral("still-no"), QStringLiteral("x")};
    SshTransport *transport = nullptr;
    auto client = clientFor(endpoint, &wrong, &transport);
    const auto refused = client->connectSync(30000);
    QVERIFY(!refused);
    QCOMPARE(transport->state(), SshTransport::State::AuthenticationFailed);
    QVERIFY2(refused.error().message.contains(QStringLiteral("authentication failed")),
             qPrintable(refused.error().message));
    QVERIFY(!wrong.secretQuestions.isEmpty());
    QCOMPARE(wrong.secretQuestions.first().kind, SshSecretQuestion::Kind::Password);
    QVERIFY(!wrong.secretQuestions.first().retry);
    if (wrong.secretQuestions.size() > 1)
        QVERIFY(wrong.secretQuestions.at(1).retry);

    // The right one gets through to the helper (the user is in the airlock group).
    ScriptedPrompter right;
    right.secrets = {QStringLiteral("s3cret-pw")};
    auto good = clientFor(endpoint, &right);
    const auto connected = good->connectSync(30000);
    QVERIFY_RESULT(connected);
    QVERIFY(!sandboxNames(*good).contains(QStringLiteral("error")));
}

void TestSshTransport::keyWithPassphrase()
{
    SshEndpoint endpoint = endpointFor(*m_sshd);
    endpoint.identityFile = m_sshd->clientKeyWithPassphrasePath();

    ScriptedPrompter prompter;
    prompter.secrets = {QStringLiteral("wrong passphrase"), SshServer::clientKeyPassphrase()};
    SshTransport *transport = nullptr;
    auto client = clientFor(endpoint, &prompter, &transport);
    const auto connected = client->connectSync(15000);
    QVERIFY_RESULT(connected);
    QCOMPARE(prompter.secretQuestions.size(), 2);
    QCOMPARE(prompter.secretQuestions.at(0).kind, SshSecretQuestion::Kind::Passphrase);
    QCOMPARE(prompter.secretQuestions.at(0).identityFile, endpoint.identityFile);
    QVERIFY(prompter.secretQuestions.at(1).retry);

    // Reconnecting reuses the decrypted key: no new question.
    client->disconnectFromHelper();
    QVERIFY(client->connectSync(15000));
    QCOMPARE(prompter.secretQuestions.size(), 2);

    // Cancelling the passphrase is an authentication failure, not a hang.
    ScriptedPrompter cancel;
    SshTransport *cancelled = nullptr;
    auto other = clientFor(endpoint, &cancel, &cancelled);
    QVERIFY(!other->connectSync(15000));
    QCOMPARE(cancelled->state(), SshTransport::State::AuthenticationFailed);
    QCOMPARE(cancel.secretQuestions.size(), 1);
}

void TestSshTransport::sshdKilledThenBack()
{
    SshServer server;
    QVERIFY2(server.start(), qPrintable(server.lastError()));
    SshTransport *transport = nullptr;
    auto client = clientFor(endpointFor(server), nullptr, &transport);
    client->setAutoReconnect(true);
    QSignalSpy lost(client.get(), &HelperClient::connectionLost);
    QSignalSpy ready(client.get(), &HelperClient::ready);
    client->connectToHelper();
    QVERIFY(ready.wait(15000));

    server.kill();
    QVERIFY(lost.wait(5000));
    const Error error = lost.first().first().value<Error>();
    QVERIFY2(error.message.contains(QStringLiteral("127.0.0.1")), qPrintable(error.message));
    QVERIFY(transport->state() != SshTransport::State::Connected);

    // Back on the same port after a retry failed without it: the client reconnects by itself
    // (backoff 0.5 s doubling).
    QTRY_VERIFY_WITH_TIMEOUT(lost.count() >= 2, 10000);
    QVERIFY2(server.start(), qPrintable(server.lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(client->state() == HelperClient::State::Ready, 20000);
    QCOMPARE(transport->state(), SshTransport::State::Connected);
    QVERIFY(!sandboxNames(*client).contains(QStringLiteral("error")));
}

void TestSshTransport::silentServerDetectedByKeepalive()
{
    SshServer server;
    QVERIFY2(server.start(), qPrintable(server.lastError()));
    auto transport = std::make_unique<SshTransport>(endpointFor(server));
    transport->setKeepalive(300, 3);
    SshTransport *raw = transport.get();
    HelperClient client(std::move(transport), QStringLiteral("tst_sshtransport"));
    QVERIFY(client.connectSync(15000));
    QSignalSpy lost(&client, &HelperClient::connectionLost);

    // Idle but alive: keepalives are answered, the connection stays. Six keepalives mean six
    // intervals without other traffic, twice the three that end an unanswered connection.
    QTRY_VERIFY_WITH_TIMEOUT(raw->keepalivesSent() >= 6, 10000);
    QCOMPARE(lost.size(), 0);
    QCOMPARE(raw->state(), SshTransport::State::Connected);

    // Stopped server: the socket stays open, only the missing keepalive answers tell.
    server.freeze(true);
    const bool noticed = lost.wait(5000);
    server.freeze(false);
    QVERIFY(noticed);
    QVERIFY2(lost.first().first().value<Error>().message.contains(QStringLiteral("keepalive")),
             qPrintable(lost.first().first().value<Error>().message));
}

void TestSshTransport::bridgeFallbackWhenStreamLocalForbidden()
{
    SshServer server(SshServer::Options {.allowStreamLocalForwarding = false});
    QVERIFY2(server.start(), qPrintable(server.lastError()));
    SshTransport *transport = nullptr;
    auto client = clientFor(endpointFor(server), nullptr, &transport);
    const auto connected = client->connectSync(15000);
    QVERIFY_RESULT(connected);
    QVERIFY(transport->usesBridge());
    const auto created = client->callSync(QStringLiteral("sandbox.create"),
                                          {{QStringLiteral("name"), QStringLiteral("bridged")}});
    QVERIFY_RESULT(created);
    QVERIFY(sandboxNames(*client).contains(QStringLiteral("bridged")));
    QVERIFY(client->callSync(QStringLiteral("sandbox.delete"),
                             {{QStringLiteral("name"), QStringLiteral("bridged")}}));
}

void TestSshTransport::bridgeFallbackReportsMissingCommand()
{
    SshServer server(SshServer::Options {.allowStreamLocalForwarding = false});
    QVERIFY2(server.start(), qPrintable(server.lastError()));
    SshEndpoint endpoint = endpointFor(server);
    endpoint.remoteCommand = QStringLiteral("/nonexistent/airlockctl");
    auto client = clientFor(endpoint);
    const auto connected = client->connectSync(15000);
    QVERIFY(!connected);
    QVERIFY2(connected.error().message.contains(QStringLiteral("/nonexistent/airlockctl")),
             qPrintable(connected.error().message));
}

void TestSshTransport::airlockctlHost()
{
    // The real CLI without a controlling terminal (setsid): nothing can be asked.
    auto run = [&](const QStringList &arguments, QByteArray *output) {
        QProcess ctl;
        ctl.setProcessChannelMode(QProcess::MergedChannels);
        ctl.setChildProcessModifier([] { ::setsid(); });
        ctl.start(airlockctlPath(), arguments);
        ctl.waitForFinished(30000);
        *output = ctl.readAll();
        return ctl.exitStatus() == QProcess::NormalExit ? ctl.exitCode() : -1;
    };
    const SshEndpoint endpoint = endpointFor(*m_sshd);
    const QStringList common {
        QStringLiteral("--host"),        QStringLiteral("root@127.0.0.1:%1").arg(m_sshd->port()),
        QStringLiteral("--socket"),      m_helper->socketPath(),
        QStringLiteral("--identity"),    endpoint.identityFile,
        QStringLiteral("--known-hosts"), endpoint.knownHostsFile,
        QStringLiteral("--ssh-config"),  QStringLiteral("none")};
    QByteArray output;
    const int created =
        run(common + QStringList {QStringLiteral("create"), QStringLiteral("via-cli")}, &output);
    QVERIFY2(created == 0, output.constData());
    const int listed = run(common + QStringList {QStringLiteral("list")}, &output);
    QVERIFY2(listed == 0, output.constData());
    QVERIFY2(output.contains("via-cli"), output.constData());
    QCOMPARE(run(common + QStringList {QStringLiteral("rm"), QStringLiteral("via-cli")}, &output),
             0);

    // Unknown host key and nobody to ask: refused, with the fingerprint, nothing written.
    QFile::remove(endpoint.knownHostsFile);
    QCOMPARE(run(common + QStringList {QStringLiteral("list")}, &output), 1);
    QVERIFY2(output.contains("SHA256:") && output.contains("not accepted"), output.constData());
    QVERIFY(!QFile::exists(endpoint.knownHostsFile));

    QCOMPARE(run({QStringLiteral("--host"), QStringLiteral("root@:22"), QStringLiteral("list")},
                 &output),
             2);
}

QTEST_GUILESS_MAIN(TestSshTransport)
#include "tst_sshtransport.moc"

// `airlockctl --host` exec and cp over real OpenSSH (sshd on loopback, tests/support/sshserver.h)
// into a real TCG guest through a real airlockd: output and exit status, stdin, a file of several
// 512 KiB chunks into the guest and back byte for byte, and exec over the bridge fallback (an
// sshd that forbids streamlocal forwarding, so airlockctl runs `airlockctl bridge` there).
#include "guestconsole.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "sshserver.h"

#include <QCryptographicHash>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using airlock::test::GuestConsole;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;
using airlock::test::SshServer;

namespace {

const QString kName = QStringLiteral("remote");

QString airlockctlPath()
{
    return qEnvironmentVariable("AIRLOCK_AIRLOCKCTL",
                                QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlockctl/airlockctl"));
}

/// What one airlockctl run printed and how it ended.
struct Run
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

} // namespace

class TestAgentSsh : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void execOverSsh();
    void copyBothWaysOverSsh();
    void execOverTheBridgeFallback();

private:
    /// airlockctl --host root@127.0.0.1:PORT ... `arguments`, without a controlling terminal.
    Run ctl(const SshServer &server, const QStringList &arguments, const QByteArray &input = {});

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<SshServer> m_sshd;
    std::unique_ptr<SshServer> m_bridgeOnly;
    QTemporaryDir m_dir;
};

void TestAgentSsh::initTestCase()
{
    QVERIFY2(QFile::exists(QStringLiteral("/usr/sbin/sshd")),
             "openssh-server is required (installers/dev/packages.txt)");
    m_helper = std::make_unique<HelperProcess>();
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    RpcTestClient client(m_helper->socketPath());
    QVERIFY(client.call(QStringLiteral("sandbox.create"), {{QStringLiteral("name"), kName}})
                .contains(QStringLiteral("result")));
    QCOMPARE(RpcTestClient::result(client.call(QStringLiteral("sandbox.start"),
                                               {{QStringLiteral("name"), kName}}, 120000))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("running"));
    // sshd starts while the guest boots.
    m_sshd = std::make_unique<SshServer>();
    QVERIFY2(m_sshd->start(), qPrintable(m_sshd->lastError()));
    SshServer::Options noForwarding;
    noForwarding.allowStreamLocalForwarding = false;
    m_bridgeOnly = std::make_unique<SshServer>(noForwarding);
    QVERIFY2(m_bridgeOnly->start(), qPrintable(m_bridgeOnly->lastError()));
    for (const SshServer *server : {m_sshd.get(), m_bridgeOnly.get()}) {
        QFile knownHosts(server->tempPath() + QStringLiteral("/known_hosts"));
        QVERIFY(knownHosts.open(QIODevice::WriteOnly | QIODevice::Truncate));
        knownHosts.write(server->knownHostsLine().toUtf8() + '\n');
    }
    GuestConsole console(m_helper->socketPath(), kName);
    QVERIFY(console.waitFor("airlock-guest ready", 0, 180000) >= 0);
}

void TestAgentSsh::cleanupTestCase()
{
    m_sshd.reset();
    m_bridgeOnly.reset();
    m_helper.reset(); // stops airlockd and kills its QEMU
}

Run TestAgentSsh::ctl(const SshServer &server, const QStringList &arguments,
                      const QByteArray &input)
{
    QProcess process;
    // No controlling terminal: nothing may be asked (the host key is known).
    process.setChildProcessModifier([] { ::setsid(); });
    process.start(
        airlockctlPath(),
        QStringList {
            QStringLiteral("--host"), QStringLiteral("root@127.0.0.1:%1").arg(server.port()),
            QStringLiteral("--socket"), m_helper->socketPath(), QStringLiteral("--identity"),
            server.clientKeyPath(), QStringLiteral("--known-hosts"),
            server.tempPath() + QStringLiteral("/known_hosts"), QStringLiteral("--ssh-config"),
            QStringLiteral("none"), QStringLiteral("--remote-airlockctl"), airlockctlPath()}
            + arguments);
    if (!process.waitForStarted())
        return {};
    process.write(input);
    process.closeWriteChannel();
    Run run;
    if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished();
    } else if (process.exitStatus() == QProcess::NormalExit) {
        run.exitCode = process.exitCode();
    }
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

void TestAgentSsh::execOverSsh()
{
    const Run failing =
        ctl(*m_sshd,
            {QStringLiteral("exec"), kName, QStringLiteral("--"), QStringLiteral("sh"),
             QStringLiteral("-c"), QStringLiteral("echo out; echo err >&2; hostname; exit 3")});
    QCOMPARE(failing.exitCode, 3);
    QCOMPARE(failing.out, QByteArray("out\n") + kName.toUtf8() + '\n');
    QCOMPARE(failing.err, QByteArray("err\n"));

    const Run piped =
        ctl(*m_sshd,
            {QStringLiteral("exec"), QStringLiteral("-i"), kName, QStringLiteral("--"),
             QStringLiteral("tr"), QStringLiteral("a-z"), QStringLiteral("A-Z")},
            "hello over ssh\n");
    QCOMPARE(piped.exitCode, 0);
    QCOMPARE(piped.out, QByteArray("HELLO OVER SSH\n"));

    const Run missing = ctl(*m_sshd,
                            {QStringLiteral("exec"), QStringLiteral("nosuch"), QStringLiteral("--"),
                             QStringLiteral("true")});
    QCOMPARE(missing.exitCode, 125);
}

void TestAgentSsh::copyBothWaysOverSsh()
{
    // Three 512 KiB chunks and a bit: every append path of cp.
    QByteArray content(3 * 512 * 1024 + 12345, Qt::Uninitialized);
    QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(content.data()),
                                          content.size() / 4);
    const QString source = m_dir.filePath(QStringLiteral("up.bin"));
    QFile file(source);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(content);
    file.close();
    QVERIFY(file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));

    const Run up =
        ctl(*m_sshd, {QStringLiteral("cp"), source, kName + QStringLiteral(":/workspace/up.bin")});
    QVERIFY2(up.exitCode == 0, up.err.constData());
    const Run sum = ctl(*m_sshd,
                        {QStringLiteral("exec"), kName, QStringLiteral("--"), QStringLiteral("sh"),
                         QStringLiteral("-c"),
                         QStringLiteral("sha256sum /workspace/up.bin; "
                                        "stat -c %a /workspace/up.bin")});
    QCOMPARE(sum.exitCode, 0);
    QCOMPARE(sum.out.left(64),
             QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex());
    QVERIFY2(sum.out.endsWith("\n700\n"), sum.out.constData()); // the mode travelled

    const QString back = m_dir.filePath(QStringLiteral("down.bin"));
    const Run down =
        ctl(*m_sshd, {QStringLiteral("cp"), kName + QStringLiteral(":/workspace/up.bin"), back});
    QVERIFY2(down.exitCode == 0, down.err.constData());
    QFile copied(back);
    QVERIFY(copied.open(QIODevice::ReadOnly));
    QVERIFY(copied.readAll() == content);

    const Run absent =
        ctl(*m_sshd, {QStringLiteral("cp"), kName + QStringLiteral(":/workspace/none"), back});
    QCOMPARE(absent.exitCode, 1);
}

void TestAgentSsh::execOverTheBridgeFallback()
{
    const Run run = ctl(*m_bridgeOnly,
                        {QStringLiteral("exec"), kName, QStringLiteral("--"), QStringLiteral("sh"),
                         QStringLiteral("-c"), QStringLiteral("hostname; exit 4")});
    QCOMPARE(run.exitCode, 4);
    QCOMPARE(run.out, kName.toUtf8() + '\n');
}

QTEST_GUILESS_MAIN(TestAgentSsh)
#include "tst_agentssh.moc"

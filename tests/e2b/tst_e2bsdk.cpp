// The E2B-compatible endpoint end to end (docs/e2b.md): a real airlockd, airlock-e2b as an
// unprivileged member of group airlock, and the pinned e2b SDK (e2b_sdk_install) running
// sdk.test.mjs with Node's test runner against real guests. Also: airlock-e2b refuses root,
// keeps its key 0600, prints the URLs it serves, and answers a body over its limit with 413.

#include "e2bendpoint.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "sshserver.h"
#include "testuser.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTcpSocket>
#include <QTest>

#include <memory>

#include <sys/stat.h>

using namespace airlock::test;

namespace {

constexpr int kNodeTimeoutMs = 840000;

} // namespace

class TestE2bSdk : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void refusesRoot();
    void printsItsOwnAddress();
    void keyFileIsTheUsers();
    void oversizedBodyIs413();
    void sdkSuite();
    void timeoutsAndTokensOutliveARestart();
    void helperOverSsh();

private:
    /// Runs `node SCRIPT ARGUMENTS` in the SDK folder; its exit code, and its stdout.
    int node(const QStringList &arguments, QByteArray *out = nullptr);

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<TestUser> m_user;
    std::unique_ptr<E2bEndpoint> m_e2b;
};

void TestE2bSdk::initTestCase()
{
    QVERIFY2(QFileInfo(qEnvironmentVariable("AIRLOCK_E2B")).isExecutable(),
             "AIRLOCK_E2B is not set (run through ctest)");
    if (const QString why = E2bEndpoint::sdkSkipReason(QStringLiteral(AIRLOCK_E2B_TEST_DIR));
        !why.isEmpty())
        QSKIP(qPrintable(why));
    QVERIFY2(E2bEndpoint::sdkInstalled(QStringLiteral(AIRLOCK_E2B_TEST_DIR)),
             "the e2b SDK is not installed (the e2b_sdk_install test does it)");
    m_helper = std::make_unique<HelperProcess>();
    QVERIFY2(QFileInfo::exists(m_helper->imageStore() + QStringLiteral("/default/image.json")),
             "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    m_user = std::make_unique<TestUser>();
    QVERIFY2(m_user->isValid(), qPrintable(m_user->lastError()));
    m_e2b = std::make_unique<E2bEndpoint>(*m_helper, *m_user);
    QVERIFY2(m_e2b->start(), qPrintable(m_e2b->lastError()));
}

void TestE2bSdk::cleanupTestCase()
{
    m_e2b.reset();
    m_user.reset();
    m_helper.reset(); // stops airlockd and kills its QEMUs
}

void TestE2bSdk::refusesRoot()
{
    QProcess root;
    root.start(qEnvironmentVariable("AIRLOCK_E2B"), {QStringLiteral("--print-env")});
    QVERIFY(root.waitForFinished(10000));
    QCOMPARE(root.exitCode(), 1);
    QVERIFY(root.readAllStandardError().contains("refusing to run as root"));
}

void TestE2bSdk::printsItsOwnAddress()
{
    const auto printed = m_e2b->printedEnvironment();
    const QString url = QStringLiteral("http://127.0.0.1:%1").arg(m_e2b->port());
    QCOMPARE(printed.value(QStringLiteral("E2B_API_URL")), url);
    QCOMPARE(printed.value(QStringLiteral("E2B_SANDBOX_URL")), url);
}

void TestE2bSdk::keyFileIsTheUsers()
{
    const QByteArray path =
        QFile::encodeName(m_e2b->home() + QStringLiteral("/.config/airlock/e2b-api-key"));
    struct stat st
    {
    };
    QCOMPARE(::stat(path.constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));
    QCOMPARE(st.st_uid, m_user->uid());
    QFile file(QString::fromLocal8Bit(path));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromLatin1(file.readAll().trimmed()),
             m_e2b->printedEnvironment().value(QStringLiteral("E2B_API_KEY")));
}

void TestE2bSdk::oversizedBodyIs413()
{
    // A control API body over 1 MiB is refused from its Content-Length alone.
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, m_e2b->port());
    QVERIFY(socket.waitForConnected(5000));
    socket.write("POST /v2/sandboxes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-KEY: "
                 + m_e2b->printedEnvironment().value(QStringLiteral("E2B_API_KEY")).toLatin1()
                 + "\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{");
    QByteArray answer;
    while (socket.waitForReadyRead(5000))
        answer += socket.readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 413"), answer.constData());
    QVERIFY2(answer.contains("\"code\":413"), answer.constData());
    QCOMPARE(socket.state(), QAbstractSocket::UnconnectedState);
}

void TestE2bSdk::sdkSuite()
{
    QProcess node;
    QProcessEnvironment env = m_e2b->clientEnvironment();
    // For the policy check through airlockctl (AIRLOCK_AIRLOCKCTL comes from ctest).
    env.insert(QStringLiteral("AIRLOCK_SOCKET"), m_helper->socketPath());
    node.setProcessEnvironment(env);
    node.setWorkingDirectory(QStringLiteral(AIRLOCK_E2B_TEST_DIR));
    node.setProcessChannelMode(QProcess::ForwardedChannels);
    node.start(QStringLiteral("node"),
               {QStringLiteral("--test"), QStringLiteral("--test-reporter=spec"),
                QStringLiteral("sdk.test.mjs")});
    QVERIFY2(node.waitForStarted(), "node is missing: installers/dev/install-deps.sh installs it");
    QVERIFY2(node.waitForFinished(kNodeTimeoutMs), "the SDK suite did not finish");
    QCOMPARE(node.exitStatus(), QProcess::NormalExit);
    QCOMPARE(node.exitCode(), 0);
}

int TestE2bSdk::node(const QStringList &arguments, QByteArray *out)
{
    QProcess node;
    node.setProcessEnvironment(m_e2b->clientEnvironment());
    node.setWorkingDirectory(QStringLiteral(AIRLOCK_E2B_TEST_DIR));
    node.setProcessChannelMode(out ? QProcess::ForwardedErrorChannel : QProcess::ForwardedChannels);
    node.start(QStringLiteral("node"), arguments);
    if (!node.waitForFinished(kNodeTimeoutMs) || node.exitStatus() != QProcess::NormalExit)
        return -1;
    if (out)
        *out = node.readAllStandardOutput();
    return node.exitCode();
}

void TestE2bSdk::timeoutsAndTokensOutliveARestart()
{
    QByteArray made;
    QCOMPARE(node({QStringLiteral("lifetime.mjs"), QStringLiteral("create")}, &made), 0);
    const QJsonObject ids = QJsonDocument::fromJson(made.trimmed()).object();
    const QString shortName =
        QStringLiteral("e2b-") + ids.value(QStringLiteral("short")).toString();
    const QString longId = ids.value(QStringLiteral("long")).toString();
    const QDateTime shortEnd = QDateTime::fromMSecsSinceEpoch(
        qint64(ids.value(QStringLiteral("shortEndAt")).toDouble()), Qt::UTC);
    QVERIFY2(!longId.isEmpty() && shortEnd.isValid(), made.constData());

    // Down while the short one's time runs out.
    m_e2b->stop();
    const QString stateFile =
        m_e2b->home() + QStringLiteral("/.local/state/airlock/e2b-sandboxes.json");
    struct stat st
    {
    };
    QCOMPARE(::stat(QFile::encodeName(stateFile).constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));
    QTRY_VERIFY_WITH_TIMEOUT(QDateTime::currentDateTimeUtc() > shortEnd, 30000);
    RpcTestClient client(m_helper->socketPath());
    const auto names = [&client] {
        QStringList found;
        const QJsonObject answer = client.call(QStringLiteral("sandbox.list"), {});
        for (const QJsonValue &value :
             RpcTestClient::result(answer).value(QStringLiteral("sandboxes")).toArray())
            found.append(value.toObject().value(QStringLiteral("name")).toString());
        return found;
    };
    QVERIFY2(names().contains(shortName), "nobody kills it while airlock-e2b is down");

    // Back up: the expired one goes at once, the other answers to its old token.
    QVERIFY2(m_e2b->start(), qPrintable(m_e2b->lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(!names().contains(shortName), 30000);
    QCOMPARE(node({QStringLiteral("lifetime.mjs"), QStringLiteral("check"), longId}), 0);
    QVERIFY(!names().contains(QStringLiteral("e2b-") + longId));
}

void TestE2bSdk::helperOverSsh()
{
    // airlock-e2b --host: the helper through real OpenSSH on loopback (root's login there),
    // with the key and known_hosts in the user's own files: nothing may be asked.
    SshServer sshd;
    QVERIFY2(sshd.start(), qPrintable(sshd.lastError()));
    const QString key = m_e2b->home() + QStringLiteral("/id_ssh");
    const QString knownHosts = m_e2b->home() + QStringLiteral("/known_hosts");
    QVERIFY(QFile::copy(sshd.clientKeyPath(), key));
    QFile hosts(knownHosts);
    QVERIFY(hosts.open(QIODevice::WriteOnly));
    hosts.write(sshd.knownHostsLine().toUtf8() + '\n');
    hosts.close();
    for (const QString &path : {key, knownHosts}) {
        const QByteArray native = QFile::encodeName(path);
        QCOMPARE(::chown(native.constData(), m_user->uid(), m_user->gid()), 0);
        QCOMPARE(::chmod(native.constData(), 0600), 0);
    }
    m_e2b->stop();
    m_e2b->setExtraArguments({QStringLiteral("--host"),
                              QStringLiteral("root@127.0.0.1:%1").arg(sshd.port()),
                              QStringLiteral("--identity"), key, QStringLiteral("--known-hosts"),
                              knownHosts, QStringLiteral("--ssh-config"), QStringLiteral("none")});
    QVERIFY2(m_e2b->start(), qPrintable(m_e2b->lastError()));
    QCOMPARE(node({QStringLiteral("smoke.mjs")}), 0);
    m_e2b->stop();
}

QTEST_GUILESS_MAIN(TestE2bSdk)
#include "tst_e2bsdk.moc"

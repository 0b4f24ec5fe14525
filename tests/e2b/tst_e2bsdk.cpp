// The E2B-compatible endpoint end to end (docs/e2b.md): a real airlockd, airlock-e2b as an
// unprivileged member of group airlock, and the pinned e2b SDK (e2b_sdk_install) running
// sdk.test.mjs with Node's test runner against real guests. Also: airlock-e2b refuses root,
// keeps its key 0600, and answers a body over its limit with 413.

#include "helperprocess.h"
#include "testuser.h"

#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include <sys/stat.h>
#include <unistd.h>

using namespace airlock::test;

namespace {

constexpr int kNodeTimeoutMs = 840000;

QString airlockE2b()
{
    return qEnvironmentVariable("AIRLOCK_E2B");
}

quint16 freePort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    return probe.serverPort();
}

} // namespace

class TestE2bSdk : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void refusesRoot();
    void keyFileIsTheUsers();
    void oversizedBodyIs413();
    void sdkSuite();

private:
    QProcessEnvironment userEnvironment() const;

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<TestUser> m_user;
    QString m_home;
    quint16 m_port = 0;
    QProcess m_server;
    QMap<QString, QString> m_env;
};

QProcessEnvironment TestE2bSdk::userEnvironment() const
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HOME"), m_home);
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home + QStringLiteral("/.config"));
    env.insert(QStringLiteral("XDG_STATE_HOME"), m_home + QStringLiteral("/.local/state"));
    return env;
}

void TestE2bSdk::initTestCase()
{
    QVERIFY2(QFileInfo(airlockE2b()).isExecutable(), "AIRLOCK_E2B is not set (run through ctest)");
    QVERIFY2(
        QFileInfo::exists(QStringLiteral(AIRLOCK_E2B_TEST_DIR "/node_modules/e2b/package.json")),
        "the e2b SDK is not installed (the e2b_sdk_install test does it)");
    m_helper = std::make_unique<HelperProcess>();
    QVERIFY2(QFileInfo::exists(m_helper->imageStore() + QStringLiteral("/default/image.json")),
             "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    m_user = std::make_unique<TestUser>();
    QVERIFY2(m_user->isValid(), qPrintable(m_user->lastError()));
    m_home = m_helper->tempPath() + QStringLiteral("/e2b-home");
    QVERIFY(QDir().mkpath(m_home));
    QCOMPARE(::chown(QFile::encodeName(m_home).constData(), m_user->uid(), m_user->gid()), 0);
    QCOMPARE(::chmod(QFile::encodeName(m_home).constData(), 0700), 0);

    m_port = freePort();
    QVERIFY(m_port != 0);
    m_server.setProcessEnvironment(userEnvironment());
    m_server.setProcessChannelMode(QProcess::SeparateChannels);
    m_server.setReadChannel(QProcess::StandardOutput);
    connect(&m_server, &QProcess::readyReadStandardError, this,
            [this] { std::fputs(m_server.readAllStandardError().constData(), stderr); });
    m_user->runAs(m_server);
    m_server.start(airlockE2b(),
                   {QStringLiteral("--port"), QString::number(m_port), QStringLiteral("--socket"),
                    m_helper->socketPath()});
    QVERIFY2(m_server.waitForStarted(), qPrintable(m_server.errorString()));
    // It says so once it listens.
    QByteArray said;
    while (!said.contains("listening on") && m_server.state() == QProcess::Running)
        if (m_server.waitForReadyRead(20000))
            said += m_server.readAllStandardOutput();
        else
            break;
    QVERIFY2(said.contains("listening on http://127.0.0.1:" + QByteArray::number(m_port)),
             said.constData());

    QProcess print;
    print.setProcessEnvironment(userEnvironment());
    m_user->runAs(print);
    print.start(airlockE2b(),
                {QStringLiteral("--port"), QString::number(m_port), QStringLiteral("--print-env")});
    QVERIFY(print.waitForFinished(10000));
    QCOMPARE(print.exitCode(), 0);
    const QString line = QString::fromUtf8(print.readAllStandardOutput()).trimmed();
    static const QRegularExpression pattern(QStringLiteral(
        "^export E2B_API_KEY=(e2b_[0-9a-f]{40}) E2B_API_URL=(\\S+) E2B_SANDBOX_URL=(\\S+)$"));
    const auto match = pattern.match(line);
    QVERIFY2(match.hasMatch(), qPrintable(line));
    const QString url = QStringLiteral("http://127.0.0.1:%1").arg(m_port);
    QCOMPARE(match.captured(2), url);
    QCOMPARE(match.captured(3), url);
    m_env.insert(QStringLiteral("E2B_API_KEY"), match.captured(1));
    m_env.insert(QStringLiteral("E2B_API_URL"), match.captured(2));
    m_env.insert(QStringLiteral("E2B_SANDBOX_URL"), match.captured(3));
}

void TestE2bSdk::cleanupTestCase()
{
    if (m_server.state() == QProcess::Running) {
        m_server.terminate();
        if (!m_server.waitForFinished(5000))
            m_server.kill();
        m_server.waitForFinished(2000);
    }
    m_user.reset();
    m_helper.reset(); // stops airlockd and kills its QEMUs
}

void TestE2bSdk::refusesRoot()
{
    QProcess root;
    root.start(airlockE2b(), {QStringLiteral("--print-env")});
    QVERIFY(root.waitForFinished(10000));
    QCOMPARE(root.exitCode(), 1);
    QVERIFY(root.readAllStandardError().contains("refusing to run as root"));
}

void TestE2bSdk::keyFileIsTheUsers()
{
    const QByteArray path =
        QFile::encodeName(m_home + QStringLiteral("/.config/airlock/e2b-api-key"));
    struct stat st
    {
    };
    QCOMPARE(::stat(path.constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));
    QCOMPARE(st.st_uid, m_user->uid());
    QFile file(QString::fromLocal8Bit(path));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromLatin1(file.readAll().trimmed()),
             m_env.value(QStringLiteral("E2B_API_KEY")));
}

void TestE2bSdk::oversizedBodyIs413()
{
    // A control API body over 1 MiB is refused from its Content-Length alone.
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, m_port);
    QVERIFY(socket.waitForConnected(5000));
    socket.write("POST /v2/sandboxes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-KEY: "
                 + m_env.value(QStringLiteral("E2B_API_KEY")).toLatin1()
                 + "\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{");
    QByteArray answer;
    while (!answer.contains("\r\n\r\n") && socket.waitForReadyRead(5000))
        answer += socket.readAll();
    while (socket.waitForReadyRead(1000))
        answer += socket.readAll();
    QVERIFY2(answer.startsWith("HTTP/1.1 413"), answer.constData());
    QVERIFY2(answer.contains("\"code\":413"), answer.constData());
}

void TestE2bSdk::sdkSuite()
{
    QProcess node;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (auto it = m_env.cbegin(); it != m_env.cend(); ++it)
        env.insert(it.key(), it.value());
    env.remove(QStringLiteral("E2B_DEBUG"));
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

QTEST_GUILESS_MAIN(TestE2bSdk)
#include "tst_e2bsdk.moc"

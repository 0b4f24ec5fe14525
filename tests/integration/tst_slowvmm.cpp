// One slow VMM or gateway must not stall airlockd: a real helper whose QEMU (or
// airlock-gateway) is a wrapper that waits at a gate (a FIFO the test holds) before it becomes
// the real program. While one sandbox's start is pending there, other clients' requests are
// answered, and the start is answered once the gate opens.
#include "helperprocess.h"
#include "rpctestclient.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {
const QString kSlow = QStringLiteral("slow");
/// Bounds only: each wait ends at its fact, these only end a test whose fact never comes.
constexpr int kGateTimeoutMs = 30000;
constexpr int kAnswerTimeoutMs = 60000;
/// Far below QemuMicrovm's 10 s socket deadline: an answer in this time was not held up by the
/// pending start.
constexpr int kOtherClientTimeoutMs = 3000;

QJsonObject named(const QString &name)
{
    return QJsonObject {{QStringLiteral("name"), name}};
}
} // namespace

class TestSlowVmm : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void othersAreAnsweredWhileAStartIsPending();
    void othersAreAnsweredWhileAGatewayStarts();

private:
    /// Opens the gate's writing end once the wrapper waits at it (a FIFO opens for writing
    /// without blocking only while it has a reader); -1 when it never does.
    static int waitForWrapperAtGate(const QString &gate);
    /// The next answer (not a notification) `client` reads; nullopt when none comes in time.
    static std::optional<QJsonObject> answerTo(RpcTestClient &client);
    /// Writes `dir`/`name`: a script that waits for a line on the FIFO `gate` (made here), then
    /// execs `program` with its arguments. Empty on failure.
    static QString writeGatedWrapper(const QString &dir, const QString &name,
                                     const QString &program, const QString &gate);

    std::unique_ptr<HelperProcess> m_helper;
    QString m_gate;
};

void TestSlowVmm::initTestCase()
{
    const QString qemu = QStandardPaths::findExecutable(QStringLiteral("qemu-system-x86_64"));
    if (qemu.isEmpty())
        QSKIP("qemu-system-x86_64 is not installed");
    m_helper = std::make_unique<HelperProcess>();
    const QString image = m_helper->imageStore() + QStringLiteral("/default/image.json");
    QVERIFY2(
        QFileInfo::exists(image),
        qPrintable(
            QStringLiteral("no guest image at %1 (the guest_image fixture builds it)").arg(image)));
    // The VMM user runs the wrapper: it must reach both, and nothing else.
    m_gate = m_helper->tempPath() + QStringLiteral("/slowqemu/gate");
    const QString wrapper = writeGatedWrapper(m_helper->tempPath() + QStringLiteral("/slowqemu"),
                                              QStringLiteral("qemu-system-x86_64"), qemu, m_gate);
    QVERIFY(!wrapper.isEmpty());
    // airlockd inherits it: every VMM it starts is the wrapper.
    qputenv("AIRLOCK_QEMU", QFile::encodeName(wrapper));
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    qunsetenv("AIRLOCK_QEMU");
}

void TestSlowVmm::cleanupTestCase()
{
    m_helper.reset(); // stops airlockd and kills any QEMU (or wrapper) it left
}

QString TestSlowVmm::writeGatedWrapper(const QString &dir, const QString &name,
                                       const QString &program, const QString &gate)
{
    if (!QDir().mkpath(dir) || ::chmod(QFile::encodeName(dir).constData(), 0755) != 0)
        return {};
    if (::mkfifo(QFile::encodeName(gate).constData(), 0666) != 0
        || ::chmod(QFile::encodeName(gate).constData(), 0666) != 0)
        return {};
    const QString wrapper = dir + u'/' + name;
    QFile script(wrapper);
    if (!script.open(QIODevice::WriteOnly))
        return {};
    script.write(QStringLiteral("#!/bin/sh\n"
                                "# Holds the program's start until the test writes a line.\n"
                                "read line < '%1'\n"
                                "exec '%2' \"$@\"\n")
                     .arg(gate, program)
                     .toUtf8());
    script.close();
    if (::chmod(QFile::encodeName(wrapper).constData(), 0755) != 0)
        return {};
    return wrapper;
}

std::optional<QJsonObject> TestSlowVmm::answerTo(RpcTestClient &client)
{
    for (;;) {
        std::optional<QJsonObject> message = client.readMessage(kAnswerTimeoutMs);
        if (!message || message->contains(QStringLiteral("id")))
            return message;
    }
}

int TestSlowVmm::waitForWrapperAtGate(const QString &gate)
{
    int fd = -1;
    const bool reached = QTest::qWaitFor(
        [&gate, &fd] {
            fd = ::open(QFile::encodeName(gate).constData(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
            return fd >= 0 || errno != ENXIO;
        },
        kGateTimeoutMs);
    return reached ? fd : -1;
}

void TestSlowVmm::othersAreAnsweredWhileAStartIsPending()
{
    RpcTestClient starter(m_helper->socketPath());
    QVERIFY(starter.hello());
    QCOMPARE(RpcTestClient::result(starter.call(QStringLiteral("sandbox.create"),
                                                {{QStringLiteral("name"), kSlow},
                                                 {QStringLiteral("memoryMib"), 256}}))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("stopped"));
    // Sent, not awaited: the answer comes when the VMM runs.
    const QJsonObject request {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                               {QStringLiteral("id"), 4711},
                               {QStringLiteral("method"), QStringLiteral("sandbox.start")},
                               {QStringLiteral("params"), named(kSlow)}};
    QVERIFY(starter.sendRaw(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n'));

    // The fact: the VMM process exists and waits at the gate, so its start is pending.
    const int gate = waitForWrapperAtGate(m_gate);
    QVERIFY2(gate >= 0, "the wrapper never reached its gate");

    // Meanwhile another client is served: a new connection, its hello and two requests.
    RpcTestClient other(m_helper->socketPath());
    QVERIFY(other.isConnected());
    QVERIFY(other.hello(kOtherClientTimeoutMs));
    const QJsonObject list = RpcTestClient::result(
        other.call(QStringLiteral("sandbox.list"), {}, kOtherClientTimeoutMs));
    const QJsonArray sandboxes = list.value(QStringLiteral("sandboxes")).toArray();
    QCOMPARE(sandboxes.size(), 1);
    QCOMPARE(sandboxes.first().toObject().value(QStringLiteral("state")).toString(),
             QStringLiteral("starting"));
    // A second start of the same sandbox is refused at once, not queued behind the first.
    QCOMPARE(RpcTestClient::errorKind(
                 other.call(QStringLiteral("sandbox.start"), named(kSlow), kOtherClientTimeoutMs)),
             QStringLiteral("invalid_state"));
    // The starter has had no answer yet: everything it was sent is handled (the other
    // client's answers came after its request), and the start is still pending.
    QCOMPARE(RpcTestClient::result(
                 other.call(QStringLiteral("sandbox.get"), named(kSlow), kOtherClientTimeoutMs))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("starting"));

    // Open the gate: the wrapper becomes QEMU, and the start is answered.
    QCOMPARE(::write(gate, "go\n", 3), ssize_t(3));
    ::close(gate);
    const std::optional<QJsonObject> answer = answerTo(starter);
    QVERIFY2(answer, "sandbox.start was never answered");
    QCOMPARE(answer->value(QStringLiteral("id")).toInt(), 4711);
    const QJsonObject started = RpcTestClient::result(*answer);
    QVERIFY2(started.value(QStringLiteral("state")).toString() == u"running",
             QJsonDocument(*answer).toJson().constData());
    QVERIFY(started.value(QStringLiteral("vmmPid")).toInteger() > 0);

    QCOMPARE(RpcTestClient::result(other.call(QStringLiteral("sandbox.kill"), named(kSlow)))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("stopped"));
    QVERIFY(other.call(QStringLiteral("sandbox.delete"), named(kSlow))
                .contains(QStringLiteral("result")));
}

void TestSlowVmm::othersAreAnsweredWhileAGatewayStarts()
{
    const QString gateway = qEnvironmentVariable("AIRLOCK_GATEWAY");
    if (gateway.isEmpty())
        QSKIP("AIRLOCK_GATEWAY is not set (ctest sets it)");
    // Its own helper: the gateway program is a helper option, the wrapper holds it at a gate.
    QTemporaryDir dir(QDir::tempPath() + QStringLiteral("/airlock-slowgw-XXXXXX"));
    QVERIFY(dir.isValid());
    QCOMPARE(::chmod(QFile::encodeName(dir.path()).constData(), 0755), 0);
    const QString gate = dir.filePath(QStringLiteral("gate"));
    const QString wrapper =
        writeGatedWrapper(dir.path(), QStringLiteral("airlock-gateway"), gateway, gate);
    QVERIFY(!wrapper.isEmpty());
    HelperProcess helper({QStringLiteral("--gateway"), wrapper});
    const QString log = dir.filePath(QStringLiteral("airlockd.log"));
    helper.setOutputFile(log);
    QVERIFY2(helper.start(), qPrintable(helper.lastError()));

    RpcTestClient starter(helper.socketPath());
    QVERIFY(starter.hello());
    QVERIFY(starter
                .call(QStringLiteral("sandbox.create"),
                      {{QStringLiteral("name"), kSlow}, {QStringLiteral("memoryMib"), 256}})
                .contains(QStringLiteral("result")));
    const QJsonObject request {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                               {QStringLiteral("id"), 4712},
                               {QStringLiteral("method"), QStringLiteral("sandbox.start")},
                               {QStringLiteral("params"), named(kSlow)}};
    QVERIFY(starter.sendRaw(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n'));

    // The fact: the gateway process exists and waits at the gate, before its "ready".
    const int gateFd = waitForWrapperAtGate(gate);
    QVERIFY2(gateFd >= 0, "the gateway wrapper never reached its gate");

    RpcTestClient other(helper.socketPath());
    QVERIFY(other.hello(kOtherClientTimeoutMs));
    const QJsonArray sandboxes =
        RpcTestClient::result(other.call(QStringLiteral("sandbox.list"), {}, kOtherClientTimeoutMs))
            .value(QStringLiteral("sandboxes"))
            .toArray();
    QCOMPARE(sandboxes.size(), 1);
    QCOMPARE(sandboxes.first().toObject().value(QStringLiteral("state")).toString(),
             QStringLiteral("starting"));
    // A policy set now must be the one the guest meets: three rules, sent to the starting
    // gateway before its VMM runs.
    const QJsonObject policy {
        {QStringLiteral("version"), 1},
        {QStringLiteral("rules"),
         QJsonArray {QJsonObject {{QStringLiteral("host"), QStringLiteral("a.test")}},
                     QJsonObject {{QStringLiteral("host"), QStringLiteral("b.test")}},
                     QJsonObject {{QStringLiteral("host"), QStringLiteral("c.test")}}}}};
    QVERIFY(other
                .call(QStringLiteral("policy.set"),
                      {{QStringLiteral("name"), kSlow}, {QStringLiteral("policy"), policy}},
                      kOtherClientTimeoutMs)
                .contains(QStringLiteral("result")));

    QCOMPARE(::write(gateFd, "go\n", 3), ssize_t(3));
    ::close(gateFd);
    const std::optional<QJsonObject> answer = answerTo(starter);
    QVERIFY2(answer, "sandbox.start was never answered");
    QCOMPARE(answer->value(QStringLiteral("id")).toInt(), 4712);
    QVERIFY2(RpcTestClient::result(*answer).value(QStringLiteral("state")).toString() == u"running",
             QJsonDocument(*answer).toJson().constData());
    // The gateway confirmed the policy set while it started (generation 1, three rules).
    QTRY_VERIFY_WITH_TIMEOUT(
        [&log] {
            QFile file(log);
            return file.open(QIODevice::ReadOnly)
                && file.readAll().contains(
                    "slow: the gateway applied policy generation 1 (3 rules)");
        }(),
        kAnswerTimeoutMs);

    QVERIFY(other.call(QStringLiteral("sandbox.kill"), named(kSlow))
                .contains(QStringLiteral("result")));
    QVERIFY(other.call(QStringLiteral("sandbox.delete"), named(kSlow))
                .contains(QStringLiteral("result")));
}

QTEST_GUILESS_MAIN(TestSlowVmm)
#include "tst_slowvmm.moc"

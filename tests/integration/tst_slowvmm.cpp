// One slow VMM must not stall airlockd: a real helper whose QEMU is a wrapper that waits at a
// gate (a FIFO the test holds) before it becomes the real QEMU. While one sandbox's start is
// pending there, other clients' requests are answered, and the start is answered once the gate
// opens.
#include "helperprocess.h"
#include "rpctestclient.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStandardPaths>
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

private:
    /// Opens the gate's writing end once the wrapper waits at it (a FIFO opens for writing
    /// without blocking only while it has a reader); -1 when it never does.
    int waitForWrapperAtGate();

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
    const QString dir = m_helper->tempPath() + QStringLiteral("/slowqemu");
    QVERIFY(QDir().mkpath(dir));
    QCOMPARE(::chmod(QFile::encodeName(dir).constData(), 0755), 0);
    m_gate = dir + QStringLiteral("/gate");
    QCOMPARE(::mkfifo(QFile::encodeName(m_gate).constData(), 0666), 0);
    QCOMPARE(::chmod(QFile::encodeName(m_gate).constData(), 0666), 0);
    const QString wrapper = dir + QStringLiteral("/qemu-system-x86_64");
    QFile script(wrapper);
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write(QStringLiteral("#!/bin/sh\n"
                                "# Holds the VMM's start until the test writes a line.\n"
                                "read line < '%1'\n"
                                "exec '%2' \"$@\"\n")
                     .arg(m_gate, qemu)
                     .toUtf8());
    script.close();
    QCOMPARE(::chmod(QFile::encodeName(wrapper).constData(), 0755), 0);
    // airlockd inherits it: every VMM it starts is the wrapper.
    qputenv("AIRLOCK_QEMU", QFile::encodeName(wrapper));
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    qunsetenv("AIRLOCK_QEMU");
}

void TestSlowVmm::cleanupTestCase()
{
    m_helper.reset(); // stops airlockd and kills any QEMU (or wrapper) it left
}

int TestSlowVmm::waitForWrapperAtGate()
{
    int fd = -1;
    const bool reached = QTest::qWaitFor(
        [this, &fd] {
            fd = ::open(QFile::encodeName(m_gate).constData(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
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
    const int gate = waitForWrapperAtGate();
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
    std::optional<QJsonObject> answer;
    for (;;) {
        answer = starter.readMessage(kAnswerTimeoutMs);
        if (!answer || answer->contains(QStringLiteral("id")))
            break;
    }
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

QTEST_GUILESS_MAIN(TestSlowVmm)
#include "tst_slowvmm.moc"

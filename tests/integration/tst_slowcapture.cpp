// A snapshot capture must not stall airlockd: a real helper and a real guest whose QEMU the test
// holds still (every thread in a ptrace stop, ProcessFreeze) before asking for a snapshot, so the
// capture waits at its first QMP command for as long as the test holds that gate. Meanwhile another
// client's hello and sandbox.list are answered, and pausing or snapshotting the guest again is
// busy; once QEMU continues the snapshot is answered and the guest runs on. A sandbox killed
// mid-capture ends the capture with an error and the helper serves on.
#include "guestconsole.h"
#include "helperprocess.h"
#include "processfreeze.h"
#include "rpctestclient.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStandardPaths>
#include <QTest>

using airlock::test::GuestConsole;
using airlock::test::HelperProcess;
using airlock::test::ProcessFreeze;
using airlock::test::RpcTestClient;

namespace {
const QString kName = QStringLiteral("capture");
/// Bounds only: each wait ends at its fact, these only end a test whose fact never comes.
constexpr int kBootTimeoutMs = 90000;
constexpr int kGateTimeoutMs = 30000;
constexpr int kAnswerTimeoutMs = 60000;
/// Below the 5 s a QMP command may take before it counts as unanswered: an answer in this
/// time was not held up by the capture waiting for QEMU.
constexpr int kOtherClientTimeoutMs = 3000;

QJsonObject named(const QString &name)
{
    return QJsonObject {{QStringLiteral("name"), name}};
}

QByteArray request(int id, const QString &method, const QJsonObject &params)
{
    const QJsonObject message {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                               {QStringLiteral("id"), id},
                               {QStringLiteral("method"), method},
                               {QStringLiteral("params"), params}};
    return QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
}

/// The next response (a message with an id), skipping notifications; nullopt on timeout.
std::optional<QJsonObject> nextResponse(RpcTestClient &client, int timeoutMs)
{
    for (;;) {
        auto message = client.readMessage(timeoutMs);
        if (!message || message->contains(QStringLiteral("id")))
            return message;
    }
}

} // namespace

class TestSlowCapture : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void othersAreAnsweredWhileACaptureIsPending();
    void killMidCaptureEndsIt();

private:
    /// Holds the sandbox's QEMU still (m_freeze); its pid, or 0.
    qint64 holdQemu();

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<GuestConsole> m_console;
    ProcessFreeze m_freeze;
};

void TestSlowCapture::initTestCase()
{
    if (QStandardPaths::findExecutable(QStringLiteral("qemu-system-x86_64")).isEmpty())
        QSKIP("qemu-system-x86_64 is not installed");
    m_helper = std::make_unique<HelperProcess>();
    const QString image = m_helper->imageStore() + QStringLiteral("/default/image.json");
    QVERIFY2(
        QFileInfo::exists(image),
        qPrintable(
            QStringLiteral("no guest image at %1 (the guest_image fixture builds it)").arg(image)));
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    RpcTestClient client(m_helper->socketPath());
    QVERIFY(client
                .call(QStringLiteral("sandbox.create"),
                      {{QStringLiteral("name"), kName}, {QStringLiteral("memoryMib"), 256}})
                .contains(QStringLiteral("result")));
    QCOMPARE(RpcTestClient::result(
                 client.call(QStringLiteral("sandbox.start"), named(kName), kAnswerTimeoutMs))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("running"));
    m_console = std::make_unique<GuestConsole>(m_helper->socketPath(), kName);
    QVERIFY(m_console->waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0);
}

void TestSlowCapture::cleanupTestCase()
{
    // A failed test may leave QEMU held: let it go so the helper can end it.
    m_freeze.release();
    m_console.reset();
    m_helper.reset(); // stops airlockd and kills its QEMU
}

qint64 TestSlowCapture::holdQemu()
{
    RpcTestClient client(m_helper->socketPath());
    const qint64 pid =
        RpcTestClient::result(client.call(QStringLiteral("sandbox.get"), named(kName)))
            .value(QStringLiteral("vmmPid"))
            .toInteger();
    // The fact: every thread of it stands still (it answers no QMP command until released).
    if (pid <= 0 || !m_freeze.freeze(pid_t(pid)))
        return 0;
    return pid;
}

void TestSlowCapture::othersAreAnsweredWhileACaptureIsPending()
{
    const qint64 qemu = holdQemu();
    QVERIFY2(qemu > 0, "QEMU could not be held");

    // Sent, not awaited: the snapshot is answered once QEMU runs again. The sandbox.get behind
    // it on the same connection is the fact that the helper has taken up the snapshot (one
    // connection's requests are read in order) and returned to its event loop.
    RpcTestClient snapshotter(m_helper->socketPath());
    QVERIFY(snapshotter.sendRaw(request(4711, QStringLiteral("snapshot.create"),
                                        {{QStringLiteral("name"), kName},
                                         {QStringLiteral("label"), QStringLiteral("held")}})
                                + request(4712, QStringLiteral("sandbox.get"), named(kName))));
    auto first = nextResponse(snapshotter, kOtherClientTimeoutMs);
    QVERIFY2(first, "sandbox.get behind a pending snapshot was not answered");
    QCOMPARE(first->value(QStringLiteral("id")).toInt(), 4712);

    // Meanwhile another client is served: a new connection, its hello and a list.
    RpcTestClient other(m_helper->socketPath());
    QVERIFY(other.isConnected());
    QVERIFY(other.hello(kOtherClientTimeoutMs));
    const QJsonArray sandboxes =
        RpcTestClient::result(other.call(QStringLiteral("sandbox.list"), {}, kOtherClientTimeoutMs))
            .value(QStringLiteral("sandboxes"))
            .toArray();
    QCOMPARE(sandboxes.size(), 1);
    QCOMPARE(sandboxes.first().toObject().value(QStringLiteral("name")).toString(), kName);
    // The capture holds the guest: another snapshot, a pause and a stop are refused at once.
    QCOMPARE(RpcTestClient::errorKind(other.call(QStringLiteral("snapshot.create"), named(kName),
                                                 kOtherClientTimeoutMs)),
             QStringLiteral("busy"));
    QCOMPARE(RpcTestClient::errorKind(
                 other.call(QStringLiteral("vm.pause"), named(kName), kOtherClientTimeoutMs)),
             QStringLiteral("busy"));
    QCOMPARE(RpcTestClient::errorKind(
                 other.call(QStringLiteral("sandbox.stop"), named(kName), kOtherClientTimeoutMs)),
             QStringLiteral("busy"));
    // Still pending: nothing more for the snapshotter.
    QVERIFY2(!snapshotter.socket().waitForReadyRead(0)
                 && snapshotter.socket().bytesAvailable() == 0,
             "the snapshot was answered while QEMU was stopped");

    // Open the gate: QEMU answers, the capture goes on and the snapshot is answered.
    m_freeze.release();
    auto answer = nextResponse(snapshotter, kAnswerTimeoutMs);
    QVERIFY2(answer, "snapshot.create was never answered");
    QCOMPARE(answer->value(QStringLiteral("id")).toInt(), 4711);
    const QJsonObject snapshot = RpcTestClient::result(*answer);
    QVERIFY2(snapshot.value(QStringLiteral("label")).toString() == u"held",
             QJsonDocument(*answer).toJson().constData());
    QVERIFY(snapshot.value(QStringLiteral("logicalBytes")).toInteger() >= 256LL * 1024 * 1024);
    // The guest runs on after its snapshot, as after any other.
    QCOMPARE(RpcTestClient::result(other.call(QStringLiteral("sandbox.get"), named(kName)))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("running"));
    QCOMPARE(m_console->run("echo after-$((40+2))").trimmed(), QByteArray("after-42"));
}

void TestSlowCapture::killMidCaptureEndsIt()
{
    const qint64 qemu = holdQemu();
    QVERIFY2(qemu > 0, "QEMU could not be held");
    RpcTestClient snapshotter(m_helper->socketPath());
    QVERIFY(snapshotter.sendRaw(request(4713, QStringLiteral("snapshot.create"), named(kName))
                                + request(4714, QStringLiteral("sandbox.get"), named(kName))));
    auto first = nextResponse(snapshotter, kOtherClientTimeoutMs);
    QVERIFY2(first, "sandbox.get behind a pending snapshot was not answered");
    QCOMPARE(first->value(QStringLiteral("id")).toInt(), 4714);

    // SIGKILL ends a held process too (the tracer sees it go); the capture waiting for it ends
    // with an error.
    RpcTestClient other(m_helper->socketPath());
    QCOMPARE(RpcTestClient::result(other.call(QStringLiteral("sandbox.kill"), named(kName)))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("stopped"));
    m_freeze.release();
    auto answer = nextResponse(snapshotter, kAnswerTimeoutMs);
    QVERIFY2(answer, "snapshot.create was never answered");
    QCOMPARE(answer->value(QStringLiteral("id")).toInt(), 4713);
    QVERIFY2(RpcTestClient::errorKind(*answer) == u"invalid_state",
             QJsonDocument(*answer).toJson().constData());
    // Nothing half-made was recorded, and the helper serves on.
    QVERIFY(other.hello(kOtherClientTimeoutMs));
    const QJsonArray snapshots =
        RpcTestClient::result(other.call(QStringLiteral("snapshot.list"), named(kName)))
            .value(QStringLiteral("snapshots"))
            .toArray();
    QCOMPARE(snapshots.size(), 1); // the one of the test before
    QVERIFY(other.call(QStringLiteral("sandbox.delete"), named(kName))
                .contains(QStringLiteral("result")));
}

QTEST_GUILESS_MAIN(TestSlowCapture)
#include "tst_slowcapture.moc"

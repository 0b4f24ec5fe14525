// A sandbox's whole life through a real airlockd and a real QEMU guest (TCG): create, start,
// console, two attached clients, helper restart with re-adoption, a VMM that dies while the
// helper is down, stop, kill, delete. One guest is shared by the functions in order; each
// function leaves the guest in the state the next one documents.

#include "helperprocess.h"
#include "rpctestclient.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <csignal>
#include <unistd.h>

using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {

const QString kName = QStringLiteral("life");
constexpr int kBootTimeoutMs = 90000;

QJsonObject named(const QString &name)
{
    return QJsonObject {{QStringLiteral("name"), name}};
}

bool processExists(qint64 pid)
{
    return pid > 0 && QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid))
        && ::kill(pid_t(pid), 0) == 0;
}

// Gone means reaped: a zombie still has its /proc entry and takes signals.
bool waitForProcessGone(qint64 pid, int timeoutMs)
{
    return QTest::qWaitFor([pid] { return !processExists(pid); }, timeoutMs);
}

/// One attached console: collects replay and output, checks sequence numbers as it goes.
class ConsoleReader
{
public:
    explicit ConsoleReader(const QString &socketPath) : m_client(socketPath) { }

    bool attach(const QString &sandbox)
    {
        m_sandbox = sandbox;
        const QJsonObject result =
            RpcTestClient::result(m_client.call(QStringLiteral("console.attach"), named(sandbox)));
        if (!result.contains(QStringLiteral("seq")))
            return false;
        m_seq = result.value(QStringLiteral("seq")).toInteger();
        m_text = QByteArray::fromBase64(result.value(QStringLiteral("data")).toString().toLatin1());
        return true;
    }

    /// Waits until the console output since `from` contains `needle`; returns the offset after
    /// it, or -1 on timeout.
    qsizetype waitFor(const QByteArray &needle, qsizetype from, int timeoutMs)
    {
        QDeadlineTimer deadline(timeoutMs);
        for (;;) {
            const qsizetype at = m_text.indexOf(needle, from);
            if (at >= 0)
                return at + needle.size();
            if (deadline.hasExpired())
                return -1;
            readOne(int(qMax<qint64>(1, deadline.remainingTime())));
        }
    }

    /// Reads notifications until this reader has seen chunk `seq`; false on timeout.
    bool catchUp(qint64 seq, int timeoutMs)
    {
        QDeadlineTimer deadline(timeoutMs);
        while (m_seq < seq) {
            if (deadline.hasExpired())
                return false;
            readOne(int(qMax<qint64>(1, deadline.remainingTime())));
        }
        return true;
    }

    /// Appends the next console.output chunk of this sandbox, if one comes in time.
    void readOne(int timeoutMs)
    {
        auto notification = m_client.waitForNotification(
            QStringLiteral("console.output"),
            [this](const QJsonObject &p) {
                return p.value(QStringLiteral("sandbox")).toString() == m_sandbox;
            },
            timeoutMs);
        if (!notification)
            return;
        const QJsonObject params = notification->value(QStringLiteral("params")).toObject();
        const qint64 seq = params.value(QStringLiteral("seq")).toInteger();
        // Sequence numbers go up by one per chunk, with no gap after the replay.
        if (seq != m_seq + 1)
            m_seqErrors.append(QStringLiteral("expected seq %1, got %2").arg(m_seq + 1).arg(seq));
        m_seq = seq;
        m_text +=
            QByteArray::fromBase64(params.value(QStringLiteral("data")).toString().toLatin1());
    }

    qint64 seq() const { return m_seq; }

    bool type(const QByteArray &bytes)
    {
        const QJsonObject answer =
            m_client.call(QStringLiteral("console.write"),
                          {{QStringLiteral("name"), m_sandbox},
                           {QStringLiteral("data"), QString::fromLatin1(bytes.toBase64())}});
        return answer.contains(QStringLiteral("result"));
    }

    qsizetype size() const { return m_text.size(); }
    const QByteArray &text() const { return m_text; }
    QStringList seqErrors() const { return m_seqErrors; }
    RpcTestClient &client() { return m_client; }

private:
    RpcTestClient m_client;
    QString m_sandbox;
    qint64 m_seq = 0;
    QByteArray m_text;
    QStringList m_seqErrors;
};

} // namespace

class TestHelperLifecycle : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void createAndStart();
    void consoleShowsReadyAndAnswers();
    void twoClientsShareOneConsole();
    void deleteRunningIsBusy();
    void eachVmmRunsAsItsOwnUser();
    void helperRestartReadoptsRunningGuest();
    void registrySurvivesRestart();
    void vmmDiedWhileHelperWasDown();
    void stopPowersOffAndQemuIsGone();
    void killStopsAtOnce();
    void deleteRemovesEverything();

private:
    QJsonObject get(const QString &name);
    /// Starts `kName` and returns its VMM pid (0 on failure).
    qint64 startGuest();
    /// Attaches a reader and waits for the guest's ready line.
    bool waitForReady(ConsoleReader &reader);

    std::unique_ptr<HelperProcess> m_helper;
    qint64 m_vmmPid = 0;
};

void TestHelperLifecycle::initTestCase()
{
    m_helper = std::make_unique<HelperProcess>();
    const QString image = m_helper->imageStore() + QStringLiteral("/default/image.json");
    QVERIFY2(
        QFileInfo::exists(image),
        qPrintable(
            QStringLiteral("no guest image at %1 (the guest_image fixture builds it)").arg(image)));
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
}

void TestHelperLifecycle::cleanupTestCase()
{
    m_helper.reset(); // stops airlockd and kills any QEMU it left
}

QJsonObject TestHelperLifecycle::get(const QString &name)
{
    RpcTestClient client(m_helper->socketPath());
    return RpcTestClient::result(client.call(QStringLiteral("sandbox.get"), named(name)));
}

qint64 TestHelperLifecycle::startGuest()
{
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject answer = client.call(QStringLiteral("sandbox.start"), named(kName), 60000);
    const QJsonObject sandbox = RpcTestClient::result(answer);
    if (sandbox.value(QStringLiteral("state")).toString() != u"running") {
        qWarning("start failed: %s", QJsonDocument(answer).toJson().constData());
        return 0;
    }
    return sandbox.value(QStringLiteral("vmmPid")).toInteger();
}

bool TestHelperLifecycle::waitForReady(ConsoleReader &reader)
{
    if (!reader.attach(kName))
        return false;
    if (reader.waitFor("airlock-guest ready", 0, kBootTimeoutMs) < 0) {
        qWarning("console so far:\n%s", reader.text().right(2000).constData());
        return false;
    }
    return true;
}

void TestHelperLifecycle::createAndStart()
{
    RpcTestClient client(m_helper->socketPath());
    QVERIFY(client.hello());
    QVERIFY(RpcTestClient::result(client.call(QStringLiteral("events.subscribe"))).isEmpty());
    const QJsonObject created = RpcTestClient::result(
        client.call(QStringLiteral("sandbox.create"),
                    {{QStringLiteral("name"), kName}, {QStringLiteral("memoryMib"), 256}}));
    QCOMPARE(created.value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
    QCOMPARE(created.value(QStringLiteral("acceleration")).toString(), QStringLiteral("unknown"));

    m_vmmPid = startGuest();
    QVERIFY(m_vmmPid > 0);
    QVERIFY(processExists(m_vmmPid));
    const QJsonObject running = get(kName);
    QCOMPARE(running.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    const QString acceleration = running.value(QStringLiteral("acceleration")).toString();
    QVERIFY2(acceleration == u"tcg" || acceleration == u"kvm", qPrintable(acceleration));
    QVERIFY(!running.value(QStringLiteral("startedAt")).isNull());
    const auto changed =
        client.waitForNotification(QStringLiteral("sandbox.changed"), [](const QJsonObject &p) {
            return p.value(QStringLiteral("sandbox")).toObject().value(QStringLiteral("state"))
                == QStringLiteral("running");
        });
    QVERIFY(changed);
    // The runtime dir is private to the VMM user.
    const QFileInfo runtimeDir(m_helper->stateDir() + QStringLiteral("/run/") + kName);
    QVERIFY(runtimeDir.isDir());
    QVERIFY(!runtimeDir.permission(QFile::ReadOther));
    QVERIFY(runtimeDir.ownerId() != 0);
}

void TestHelperLifecycle::consoleShowsReadyAndAnswers()
{
    ConsoleReader reader(m_helper->socketPath());
    QVERIFY(waitForReady(reader));
    const qsizetype before = reader.size();
    QVERIFY(reader.type("echo $((6*7))\n"));
    // "42" on a line of its own: the typed command echoes "6*7", never "42".
    QVERIFY2(reader.waitFor("\n42", before, 30000) >= 0, reader.text().right(500).constData());
    QVERIFY2(reader.seqErrors().isEmpty(), qPrintable(reader.seqErrors().join(u'\n')));
}

void TestHelperLifecycle::twoClientsShareOneConsole()
{
    ConsoleReader first(m_helper->socketPath());
    ConsoleReader second(m_helper->socketPath());
    QVERIFY(first.attach(kName));
    QVERIFY(second.attach(kName));
    // Both replay the same scrollback, which holds the boot; output that arrived between the
    // two attaches reaches the first as notifications.
    QVERIFY(first.text().contains("airlock-guest ready"));
    QVERIFY(first.catchUp(second.seq(), 30000));
    QCOMPARE(first.seq(), second.seq());
    QCOMPARE(second.text(), first.text());

    const qsizetype a0 = first.size();
    const qsizetype b0 = second.size();
    QVERIFY(second.type("echo from-b-$((1+1))\n"));
    QVERIFY2(first.waitFor("from-b-2\r\n", a0, 30000) >= 0, first.text().right(300).constData());
    QVERIFY2(second.waitFor("from-b-2\r\n", b0, 30000) >= 0, second.text().right(300).constData());

    const qsizetype a1 = first.size();
    const qsizetype b1 = second.size();
    QVERIFY(first.type("echo from-a-$((2+1))\n"));
    QVERIFY(first.waitFor("from-a-3\r\n", a1, 30000) >= 0);
    QVERIFY(second.waitFor("from-a-3\r\n", b1, 30000) >= 0);
    QVERIFY(first.seqErrors().isEmpty());
    QVERIFY(second.seqErrors().isEmpty());

    // Detached, a client hears nothing more, yet may still type.
    QVERIFY(
        RpcTestClient::result(first.client().call(QStringLiteral("console.detach"), named(kName)))
            .isEmpty());
    // Output sent before the detach (the prompt after from-a-3) came ahead of its answer.
    first.client().takeNotifications();
    const qsizetype b2 = second.size();
    QVERIFY(first.type("echo detached-$((3+4))\n"));
    QVERIFY(second.waitFor("detached-7\r\n", b2, 30000) >= 0);
    QVERIFY(first.client().hello());
    const auto stray = first.client().takeNotifications();
    for (const QJsonObject &n : stray)
        QVERIFY(n.value(QStringLiteral("method")).toString() != u"console.output");
}

/// The uid in /proc/<pid>/status, or -1.
static qint64 processUid(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("Uid:"))
            return line.mid(4).trimmed().split('\t').first().toLongLong();
    }
    return -1;
}

void TestHelperLifecycle::eachVmmRunsAsItsOwnUser()
{
    // A guest that escapes into its QEMU must not reach another sandbox's QEMU: each VMM runs
    // as its own unprivileged uid, which owns its runtime dir.
    RpcTestClient client(m_helper->socketPath());
    const QString other = QStringLiteral("life-other");
    QVERIFY(client.call(QStringLiteral("sandbox.create"), named(other))
                .contains(QStringLiteral("result")));
    const QJsonObject started = client.call(QStringLiteral("sandbox.start"), named(other), 60000);
    QVERIFY2(started.contains(QStringLiteral("result")),
             QJsonDocument(started).toJson().constData());
    const qint64 otherPid =
        RpcTestClient::result(started).value(QStringLiteral("vmmPid")).toInteger();
    const qint64 uid = processUid(m_vmmPid);
    const qint64 otherUid = processUid(otherPid);
    QVERIFY(uid > 0);
    QVERIFY(otherUid > 0);
    QVERIFY(uid != otherUid);
    QCOMPARE(qint64(QFileInfo(m_helper->stateDir() + QStringLiteral("/run/") + kName).ownerId()),
             uid);
    QCOMPARE(qint64(QFileInfo(m_helper->stateDir() + QStringLiteral("/run/") + other).ownerId()),
             otherUid);
    QVERIFY(client.call(QStringLiteral("sandbox.kill"), named(other))
                .contains(QStringLiteral("result")));
    QVERIFY(waitForProcessGone(otherPid, 10000));
    QVERIFY(client.call(QStringLiteral("sandbox.delete"), named(other))
                .contains(QStringLiteral("result")));
}

void TestHelperLifecycle::deleteRunningIsBusy()
{
    RpcTestClient client(m_helper->socketPath());
    QCOMPARE(RpcTestClient::errorKind(client.call(QStringLiteral("sandbox.delete"), named(kName))),
             QStringLiteral("busy"));
    QCOMPARE(RpcTestClient::errorKind(client.call(QStringLiteral("sandbox.start"), named(kName))),
             QStringLiteral("invalid_state"));
}

void TestHelperLifecycle::helperRestartReadoptsRunningGuest()
{
    QVERIFY2(m_helper->stop(), qPrintable(m_helper->lastError()));
    // SIGTERM leaves guests alone.
    QVERIFY(processExists(m_vmmPid));
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));

    const QJsonObject sandbox = get(kName);
    QCOMPARE(sandbox.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    QCOMPARE(sandbox.value(QStringLiteral("vmmPid")).toInteger(), m_vmmPid);
    QCOMPARE(sandbox.value(QStringLiteral("stateReason")).toString(), QString());

    // The console is reconnected: the same shell answers again.
    ConsoleReader reader(m_helper->socketPath());
    QVERIFY(reader.attach(kName));
    const qsizetype before = reader.size();
    QVERIFY(reader.type("echo $((6*7))\n"));
    QVERIFY2(reader.waitFor("\n42", before, 30000) >= 0, reader.text().right(500).constData());
}

void TestHelperLifecycle::registrySurvivesRestart()
{
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject created =
        RpcTestClient::result(client.call(QStringLiteral("sandbox.create"),
                                          {{QStringLiteral("name"), QStringLiteral("keeper")},
                                           {QStringLiteral("vcpus"), 2},
                                           {QStringLiteral("memoryMib"), 128}}));
    QVERIFY(!created.isEmpty());
    QVERIFY(m_helper->restart());
    QCOMPARE(get(QStringLiteral("keeper")), created);
    RpcTestClient after(m_helper->socketPath());
    const QJsonArray list = RpcTestClient::result(after.call(QStringLiteral("sandbox.list")))
                                .value(QStringLiteral("sandboxes"))
                                .toArray();
    QCOMPARE(list.size(), 2);
    QCOMPARE(list.at(0).toObject().value(QStringLiteral("name")).toString(),
             QStringLiteral("keeper"));
    QCOMPARE(list.at(1).toObject().value(QStringLiteral("name")).toString(), kName);
    QVERIFY(RpcTestClient::result(
                after.call(QStringLiteral("sandbox.delete"), named(QStringLiteral("keeper"))))
                .isEmpty());
}

void TestHelperLifecycle::vmmDiedWhileHelperWasDown()
{
    QVERIFY(m_helper->stop());
    QVERIFY(processExists(m_vmmPid));
    QCOMPARE(::kill(pid_t(m_vmmPid), SIGKILL), 0);
    QVERIFY(waitForProcessGone(m_vmmPid, 10000));
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));

    const QJsonObject sandbox = get(kName);
    QCOMPARE(sandbox.value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
    QVERIFY2(sandbox.value(QStringLiteral("stateReason"))
                 .toString()
                 .contains(QStringLiteral("not running")),
             qPrintable(sandbox.value(QStringLiteral("stateReason")).toString()));
    QCOMPARE(sandbox.value(QStringLiteral("vmmPid")).toInteger(), 0);
    QVERIFY(sandbox.value(QStringLiteral("startedAt")).isNull());
    m_vmmPid = 0;
}

void TestHelperLifecycle::stopPowersOffAndQemuIsGone()
{
    m_vmmPid = startGuest();
    QVERIFY(m_vmmPid > 0);
    QCOMPARE(get(kName).value(QStringLiteral("stateReason")).toString(), QString());
    ConsoleReader reader(m_helper->socketPath());
    QVERIFY(waitForReady(reader));

    RpcTestClient client(m_helper->socketPath());
    QVERIFY(RpcTestClient::result(client.call(QStringLiteral("events.subscribe"))).isEmpty());
    const QJsonObject stopping = RpcTestClient::result(
        client.call(QStringLiteral("sandbox.stop"),
                    {{QStringLiteral("name"), kName}, {QStringLiteral("timeoutMs"), 5000}}));
    QCOMPARE(stopping.value(QStringLiteral("state")).toString(), QStringLiteral("stopping"));
    const auto stopped = client.waitForNotification(
        QStringLiteral("sandbox.changed"),
        [](const QJsonObject &p) {
            return p.value(QStringLiteral("sandbox")).toObject().value(QStringLiteral("state"))
                == QStringLiteral("stopped");
        },
        30000);
    QVERIFY(stopped);
    const QJsonObject sandbox = stopped->value(QStringLiteral("params"))
                                    .toObject()
                                    .value(QStringLiteral("sandbox"))
                                    .toObject();
    // A requested stop leaves no reason behind.
    QCOMPARE(sandbox.value(QStringLiteral("stateReason")).toString(), QString());
    QVERIFY(waitForProcessGone(m_vmmPid, 10000));
    QCOMPARE(get(kName).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
}

void TestHelperLifecycle::killStopsAtOnce()
{
    m_vmmPid = startGuest();
    QVERIFY(m_vmmPid > 0);
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject killed =
        RpcTestClient::result(client.call(QStringLiteral("sandbox.kill"), named(kName)));
    QCOMPARE(killed.value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
    QCOMPARE(killed.value(QStringLiteral("vmmPid")).toInteger(), 0);
    QVERIFY(waitForProcessGone(m_vmmPid, 10000));
    QCOMPARE(RpcTestClient::errorKind(client.call(QStringLiteral("sandbox.kill"), named(kName))),
             QStringLiteral("invalid_state"));
    // Still stopped once the VMM's exit has been seen: the helper reaped it (gone above) and
    // answered the second kill after that.
    QCOMPARE(get(kName).value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
}

void TestHelperLifecycle::deleteRemovesEverything()
{
    RpcTestClient client(m_helper->socketPath());
    QVERIFY(RpcTestClient::result(client.call(QStringLiteral("sandbox.delete"), named(kName)))
                .isEmpty());
    QCOMPARE(RpcTestClient::errorKind(client.call(QStringLiteral("sandbox.get"), named(kName))),
             QStringLiteral("not_found"));
    QVERIFY(!QFileInfo::exists(m_helper->stateDir() + QStringLiteral("/run/") + kName));
    QVERIFY(m_helper->restart());
    RpcTestClient after(m_helper->socketPath());
    QVERIFY(RpcTestClient::result(after.call(QStringLiteral("sandbox.list")))
                .value(QStringLiteral("sandboxes"))
                .toArray()
                .isEmpty());
    QCOMPARE(m_helper->killLeftoverProcesses(), 0);
    // No guest left: a helper that stops leaves no RAM file directory on /dev/shm
    // (docs/reviews/2026-11-30-redteam-pass.md#f7: one empty directory was left per run).
    const QByteArray hash = QCryptographicHash::hash(
        QFile::encodeName(QDir(m_helper->stateDir()).absolutePath()), QCryptographicHash::Sha256);
    const QString memoryDir =
        QStringLiteral("/dev/shm/airlock-") + QString::fromLatin1(hash.toHex().left(12));
    QVERIFY(m_helper->stop());
    QVERIFY2(!QFileInfo::exists(memoryDir), qPrintable(memoryDir));
}

QTEST_GUILESS_MAIN(TestHelperLifecycle)
#include "tst_helperlifecycle.moc"

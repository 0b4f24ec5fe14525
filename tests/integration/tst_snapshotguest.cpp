// Snapshots of a real guest (TCG) through a real airlockd (docs/snapshots.md): pause and
// resume, a value in a tmpfs that comes back on restore, a fork that starts from a snapshot and
// changes independently of the original, and store growth after dirtying a known amount of
// guest memory. One guest (plus its fork) is shared by the functions in order.

#include "guestconsole.h"
#include "helperprocess.h"
#include "rpctestclient.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTest>

using airlock::test::GuestConsole;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {

const QString kName = QStringLiteral("snap");
const QString kFork = QStringLiteral("snapfork");
constexpr int kBootTimeoutMs = 90000;
constexpr int kDirtyMiB = 32;

QJsonObject named(const QString &name)
{
    return QJsonObject {{QStringLiteral("name"), name}};
}

} // namespace

class TestSnapshotGuest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void pauseAndResume();
    void snapshotWhileRunning();
    void growthAfterDirtyingKnownAmount();
    void restoreBringsMemoryBack();
    void forkRunsIndependently();
    void timelineRecordsTheTree();
    void pinRenameDelete();
    void coldStartLeavesTheRestoredLineage();

private:
    QJsonObject call(const QString &method, const QJsonObject &params, int timeoutMs = 120000);

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<RpcTestClient> m_events;
    std::unique_ptr<GuestConsole> m_console;
    QJsonObject m_first; ///< snapshot with /dev/shm/v = one
    QJsonObject m_second; ///< snapshot with /dev/shm/v = two
    QJsonObject m_safety;
};

void TestSnapshotGuest::initTestCase()
{
    m_helper = std::make_unique<HelperProcess>();
    QVERIFY2(QFileInfo::exists(m_helper->imageStore() + QStringLiteral("/default/image.json")),
             "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    m_events = std::make_unique<RpcTestClient>(m_helper->socketPath());
    QVERIFY(m_events->call(QStringLiteral("events.subscribe")).contains(QStringLiteral("result")));
    QJsonObject answer = call(QStringLiteral("sandbox.create"), named(kName));
    QVERIFY(answer.contains(QStringLiteral("result")));
    answer = call(QStringLiteral("sandbox.start"), named(kName));
    QCOMPARE(RpcTestClient::result(answer).value(QStringLiteral("state")).toString(),
             QStringLiteral("running"));
    m_console = std::make_unique<GuestConsole>(m_helper->socketPath(), kName);
    QVERIFY(m_console->waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0);
}

void TestSnapshotGuest::cleanupTestCase()
{
    m_console.reset();
    m_events.reset();
    m_helper.reset(); // stops airlockd and kills its QEMUs
}

QJsonObject TestSnapshotGuest::call(const QString &method, const QJsonObject &params, int timeoutMs)
{
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject answer = client.call(method, params, timeoutMs);
    if (!answer.contains(QStringLiteral("result")))
        qWarning("%s: %s", qPrintable(method), QJsonDocument(answer).toJson().constData());
    return answer;
}

void TestSnapshotGuest::pauseAndResume()
{
    QCOMPARE(m_console->run("echo one > /dev/shm/v; cat /dev/shm/v").trimmed(), QByteArray("one"));
    QJsonObject paused = RpcTestClient::result(call(QStringLiteral("vm.pause"), named(kName)));
    QCOMPARE(paused.value(QStringLiteral("state")).toString(), QStringLiteral("paused"));
    QCOMPARE(RpcTestClient::errorKind(call(QStringLiteral("vm.pause"), named(kName))),
             QStringLiteral("invalid_state"));
    // A paused guest does not answer; keystrokes wait until it runs again.
    const qsizetype before = m_console->text().size();
    RpcTestClient typer(m_helper->socketPath());
    const QByteArray line = "\necho P$((20+1))\n";
    typer.call(QStringLiteral("console.write"),
               {{QStringLiteral("name"), kName},
                {QStringLiteral("data"), QString::fromLatin1(line.toBase64())}});
    QVERIFY(m_console->waitFor("P21", before, 1500) < 0);
    QJsonObject resumed = RpcTestClient::result(call(QStringLiteral("vm.resume"), named(kName)));
    QCOMPARE(resumed.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    QVERIFY(m_console->waitFor("P21", before, 30000) >= 0);
}

void TestSnapshotGuest::snapshotWhileRunning()
{
    // The chunks are stored on a worker: another client is served before the snapshot's answer.
    RpcTestClient snapshotter(m_helper->socketPath());
    const QJsonObject request {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                               {QStringLiteral("id"), 7},
                               {QStringLiteral("method"), QStringLiteral("snapshot.create")},
                               {QStringLiteral("params"),
                                QJsonObject {{QStringLiteral("name"), kName},
                                             {QStringLiteral("label"), QStringLiteral("one")}}}};
    QVERIFY(snapshotter.sendRaw(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n'));
    QElapsedTimer timer;
    timer.start();
    QVERIFY(call(QStringLiteral("sandbox.list"), {}).contains(QStringLiteral("result")));
    const qint64 otherMs = timer.elapsed();
    QVERIFY2(!snapshotter.socket().waitForReadyRead(0)
                 && snapshotter.socket().bytesAvailable() == 0,
             "the snapshot was answered before another client's call");
    const auto answer = snapshotter.readMessage(120000);
    QVERIFY(answer);
    qInfo("another client answered after %lld ms, the snapshot after %lld ms",
          static_cast<long long>(otherMs), static_cast<long long>(timer.elapsed()));
    m_first = RpcTestClient::result(*answer);
    QCOMPARE(m_first.value(QStringLiteral("label")).toString(), QStringLiteral("one"));
    QCOMPARE(m_first.value(QStringLiteral("kind")).toString(), QStringLiteral("manual"));
    QVERIFY(m_first.value(QStringLiteral("logicalBytes")).toInteger() >= 256LL * 1024 * 1024);
    QVERIFY(m_first.value(QStringLiteral("newBytes")).toInteger() > 0);
    qInfo("first snapshot: %lld bytes logical, %lld new, %lld stored, guest paused %lld ms",
          m_first.value(QStringLiteral("logicalBytes")).toInteger(),
          m_first.value(QStringLiteral("newBytes")).toInteger(),
          m_first.value(QStringLiteral("newStoredBytes")).toInteger(),
          m_first.value(QStringLiteral("pauseMs")).toInteger());
    // The guest runs on afterwards.
    QCOMPARE(m_console->run("cat /dev/shm/v").trimmed(), QByteArray("one"));
    auto notification = m_events->waitForNotification(
        QStringLiteral("snapshot.changed"), [this](const QJsonObject &p) {
            return p.value(QStringLiteral("snapshot")).toObject().value(QStringLiteral("id"))
                == m_first.value(QStringLiteral("id"));
        });
    QVERIFY(notification);
}

void TestSnapshotGuest::growthAfterDirtyingKnownAmount()
{
    // kDirtyMiB of random data into a tmpfs file: guest memory the next snapshot must store.
    QVERIFY(!m_console
                 ->run(QByteArray("dd if=/dev/urandom of=/dev/shm/d bs=1M count=")
                       + QByteArray::number(kDirtyMiB) + " 2>/dev/null; echo two > /dev/shm/v")
                 .isNull());
    m_second = RpcTestClient::result(
        call(QStringLiteral("snapshot.create"),
             {{QStringLiteral("name"), kName}, {QStringLiteral("label"), QStringLiteral("two")}}));
    const qint64 added = m_second.value(QStringLiteral("newBytes")).toInteger();
    const qint64 stored = m_second.value(QStringLiteral("newStoredBytes")).toInteger();
    const qint64 dirtied = kDirtyMiB * 1024LL * 1024;
    qInfo("dirtied %d MiB: snapshot added %.2f MiB (%.2f x), %.2f MiB compressed; paused %lld ms",
          kDirtyMiB, added / 1048576.0, double(added) / double(dirtied), stored / 1048576.0,
          m_second.value(QStringLiteral("pauseMs")).toInteger());
    QCOMPARE(m_second.value(QStringLiteral("parent")).toString(),
             m_first.value(QStringLiteral("id")).toString());
    QVERIFY(added >= dirtied);
    QVERIFY2(added <= dirtied * 5 / 4, "the store grew by more than 1.25 x what changed");
}

void TestSnapshotGuest::restoreBringsMemoryBack()
{
    QCOMPARE(m_console->run("echo three > /dev/shm/v; cat /dev/shm/v").trimmed(),
             QByteArray("three"));
    const QJsonObject result = RpcTestClient::result(
        call(QStringLiteral("snapshot.restore"),
             {{QStringLiteral("name"), kName},
              {QStringLiteral("snapshot"), m_first.value(QStringLiteral("id"))}}));
    QCOMPARE(result.value(QStringLiteral("sandbox")).toObject().value(QStringLiteral("state")),
             QJsonValue(QStringLiteral("running")));
    m_safety = result.value(QStringLiteral("safety")).toObject();
    QCOMPARE(
        result.value(QStringLiteral("sandbox")).toObject().value(QStringLiteral("identityWarning")),
        QJsonValue(QString()));
    QCOMPARE(m_safety.value(QStringLiteral("kind")).toString(), QStringLiteral("safety"));
    // A new VMM: attach again. The tmpfs value is the snapshot's, and the file written after
    // it is gone.
    m_console = std::make_unique<GuestConsole>(m_helper->socketPath(), kName);
    QCOMPARE(m_console->run("cat /dev/shm/v").trimmed(), QByteArray("one"));
    QCOMPARE(m_console->run("ls /dev/shm").trimmed(), QByteArray("v"));
}

void TestSnapshotGuest::forkRunsIndependently()
{
    const QJsonObject forked = RpcTestClient::result(
        call(QStringLiteral("snapshot.fork"),
             {{QStringLiteral("name"), kFork},
              {QStringLiteral("snapshot"), m_second.value(QStringLiteral("id"))}}));
    QCOMPARE(forked.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    QCOMPARE(forked.value(QStringLiteral("startedFrom")).toString(), QStringLiteral("snapshot"));
    QCOMPARE(forked.value(QStringLiteral("identityWarning")).toString(), QString());
    QCOMPARE(forked.value(QStringLiteral("bindingsCopied")).toInt(-1), 0);
    GuestConsole fork(m_helper->socketPath(), kFork);
    QCOMPARE(fork.run("cat /dev/shm/v").trimmed(), QByteArray("two"));
    // The agent gave the fork its own name (tst_guestidentity checks its network).
    QCOMPARE(fork.run("hostname").trimmed(), kFork.toLatin1());
    QCOMPARE(fork.run("echo forked > /dev/shm/v; cat /dev/shm/v").trimmed(), QByteArray("forked"));
    QCOMPARE(m_console->run("cat /dev/shm/v").trimmed(), QByteArray("one"));
    QCOMPARE(m_console->run("echo original > /dev/shm/v; cat /dev/shm/v").trimmed(),
             QByteArray("original"));
    QCOMPARE(fork.run("cat /dev/shm/v").trimmed(), QByteArray("forked"));
    // The original is running while the fork runs: two VMMs.
    QCOMPARE(RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(kName)))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("running"));
}

void TestSnapshotGuest::timelineRecordsTheTree()
{
    const QJsonObject listed =
        RpcTestClient::result(call(QStringLiteral("snapshot.list"), named(kName)));
    const QJsonArray snapshots = listed.value(QStringLiteral("snapshots")).toArray();
    QCOMPARE(snapshots.size(), 3);
    // After the restore the sandbox's state descends from the first snapshot: a new branch.
    QCOMPARE(listed.value(QStringLiteral("head")), m_first.value(QStringLiteral("id")));
    QCOMPARE(m_safety.value(QStringLiteral("parent")), m_second.value(QStringLiteral("id")));
    QCOMPARE(listed.value(QStringLiteral("schedule"))
                 .toObject()
                 .value(QStringLiteral("intervalMinutes")),
             QJsonValue(0));
    // The same through airlockctl: the head is marked, the schedule can be set.
    const QString ctl = qEnvironmentVariable("AIRLOCK_AIRLOCKCTL");
    QVERIFY2(QFileInfo(ctl).isExecutable(), "AIRLOCK_AIRLOCKCTL (ctest sets it)");
    QProcess process;
    process.start(ctl,
                  {QStringLiteral("--socket"), m_helper->socketPath(), QStringLiteral("snapshot"),
                   QStringLiteral("ls"), kName});
    QVERIFY(process.waitForFinished(30000));
    const QString table = QString::fromUtf8(process.readAllStandardOutput());
    QCOMPARE(process.exitCode(), 0);
    QVERIFY2(table.contains(m_first.value(QStringLiteral("id")).toString() + u'*'),
             qPrintable(table));
    QVERIFY2(table.contains(QStringLiteral("safety")), qPrintable(table));
    process.start(ctl,
                  {QStringLiteral("--socket"), m_helper->socketPath(), QStringLiteral("snapshot"),
                   QStringLiteral("schedule"), kName, QStringLiteral("--interval"),
                   QStringLiteral("30")});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 0);
    QCOMPARE(RpcTestClient::result(call(QStringLiteral("snapshot.schedule"), named(kName)))
                 .value(QStringLiteral("intervalMinutes")),
             QJsonValue(30));
    // The fork's next snapshot descends from the snapshot it was made from.
    const QJsonObject forkSnapshot =
        RpcTestClient::result(call(QStringLiteral("snapshot.create"), named(kFork)));
    QCOMPARE(forkSnapshot.value(QStringLiteral("parent")), m_second.value(QStringLiteral("id")));
    QCOMPARE(forkSnapshot.value(QStringLiteral("sandbox")).toString(), kFork);
    // A sandbox restores only its own snapshots: the original's memory is not the fork's.
    const QJsonObject borrowed =
        call(QStringLiteral("snapshot.restore"),
             {{QStringLiteral("name"), kFork},
              {QStringLiteral("snapshot"), m_second.value(QStringLiteral("id"))}});
    QCOMPARE(RpcTestClient::errorKind(borrowed), QStringLiteral("invalid_params"));
    QVERIFY(QJsonDocument(borrowed).toJson().contains("snapshot.fork"));
}

void TestSnapshotGuest::pinRenameDelete()
{
    const QJsonValue id = m_second.value(QStringLiteral("id"));
    QCOMPARE(RpcTestClient::result(
                 call(QStringLiteral("snapshot.pin"), {{QStringLiteral("snapshot"), id}}))
                 .value(QStringLiteral("pinned")),
             QJsonValue(true));
    QCOMPARE(RpcTestClient::result(call(QStringLiteral("snapshot.rename"),
                                        {{QStringLiteral("snapshot"), id},
                                         {QStringLiteral("label"), QStringLiteral("dirty")}}))
                 .value(QStringLiteral("label")),
             QJsonValue(QStringLiteral("dirty")));
    QVERIFY(call(QStringLiteral("snapshot.delete"), {{QStringLiteral("snapshot"), id}})
                .contains(QStringLiteral("result")));
    QCOMPARE(RpcTestClient::errorKind(
                 call(QStringLiteral("snapshot.delete"), {{QStringLiteral("snapshot"), id}})),
             QStringLiteral("not_found"));
    QCOMPARE(RpcTestClient::errorKind(
                 call(QStringLiteral("snapshot.restore"),
                      {{QStringLiteral("name"), kName},
                       {QStringLiteral("snapshot"), QStringLiteral("../../etc/passwd")}})),
             QStringLiteral("invalid_params"));
    // The safety snapshot's parent was the deleted one: it now hangs from the first.
    const QJsonArray left =
        RpcTestClient::result(call(QStringLiteral("snapshot.list"), named(kName)))
            .value(QStringLiteral("snapshots"))
            .toArray();
    QCOMPARE(left.size(), 2);
    for (const QJsonValue &snapshot : left) {
        if (snapshot.toObject().value(QStringLiteral("kind"))
            == QJsonValue(QStringLiteral("safety")))
            QCOMPARE(snapshot.toObject().value(QStringLiteral("parent")),
                     m_first.value(QStringLiteral("id")));
    }
}

// After a restore the head is the restored snapshot; a later start that keeps nothing of it (a
// cold boot or a template start of this disk-less image) ends that lineage: the head is gone
// and the next snapshot is a root, not a child of the restored one.
void TestSnapshotGuest::coldStartLeavesTheRestoredLineage()
{
    QCOMPARE(RpcTestClient::result(call(QStringLiteral("snapshot.list"), named(kName)))
                 .value(QStringLiteral("head")),
             m_first.value(QStringLiteral("id")));
    QVERIFY(call(QStringLiteral("sandbox.kill"), named(kName)).contains(QStringLiteral("result")));
    m_events->takeNotifications();
    const QJsonObject started = call(QStringLiteral("sandbox.start"), named(kName));
    QVERIFY2(started.contains(QStringLiteral("result")),
             QJsonDocument(started).toJson().constData());
    const QString from =
        RpcTestClient::result(started).value(QStringLiteral("startedFrom")).toString();
    QVERIFY2(from == u"boot" || from == u"template", qPrintable(from));
    // The timeline is told (snapshot.changed for the snapshot that was the head).
    const QJsonValue restored = m_first.value(QStringLiteral("id"));
    QVERIFY(m_events->waitForNotification(
        QStringLiteral("snapshot.changed"),
        [&](const QJsonObject &params) {
            return params.value(QStringLiteral("snapshot")).toObject().value(QStringLiteral("id"))
                == restored;
        },
        10000));
    const QJsonObject listed =
        RpcTestClient::result(call(QStringLiteral("snapshot.list"), named(kName)));
    QVERIFY2(listed.value(QStringLiteral("head")).isNull(),
             QJsonDocument(listed).toJson().constData());
    const QJsonObject next =
        RpcTestClient::result(call(QStringLiteral("snapshot.create"), named(kName)));
    QVERIFY2(next.value(QStringLiteral("parent")).isNull()
                 || next.value(QStringLiteral("parent")).toString().isEmpty(),
             QJsonDocument(next).toJson().constData());
}

QTEST_GUILESS_MAIN(TestSnapshotGuest)
#include "tst_snapshotguest.moc"

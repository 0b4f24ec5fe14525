// A helper killed (SIGKILL) in the middle of snapshot.fork and snapshot.restore, and a
// snapshot.delete racing a restore (docs/reviews/2026-12-01-newuser-pass.md#m2, #m3, #m6): the next
// helper removes a fork that never ran and every RAM file whose guest does not run, names the
// safety snapshot of an interrupted restore in the sandbox's state reason, and a snapshot in use
// cannot be deleted. Real airlockd, real QEMU (TCG), one guest shared by the functions in order.

#include "guestconsole.h"
#include "helperprocess.h"
#include "rpctestclient.h"

#include <QCryptographicHash>
#include <QDeadlineTimer>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QTest>

#include <functional>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

using airlock::test::GuestConsole;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {

const QString kName = QStringLiteral("intr");
constexpr int kBootTimeoutMs = 90000;

QJsonObject named(const QString &name)
{
    return QJsonObject {{QStringLiteral("name"), name}};
}

// Waits until `done()` holds, checking it again whenever an entry of `directory` is created,
// renamed, written or removed (inotify): the helper's file operations are the facts, not time.
bool waitInDirectory(const QString &directory, const std::function<bool()> &done, int timeoutMs)
{
    const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd < 0)
        return false;
    const bool watched =
        ::inotify_add_watch(fd, QFile::encodeName(directory).constData(),
                            IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB)
        >= 0;
    const QDeadlineTimer deadline(timeoutMs);
    bool result = false;
    while (watched && !(result = done()) && !deadline.hasExpired()) {
        pollfd entry {fd, POLLIN, 0};
        if (::poll(&entry, 1, int(std::max<qint64>(1, deadline.remainingTime()))) > 0) {
            char events[4096];
            while (::read(fd, events, sizeof events) > 0) { }
        }
    }
    ::close(fd);
    return result;
}

QByteArray request(int id, const QString &method, const QJsonObject &params)
{
    return QJsonDocument(QJsonObject {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                                      {QStringLiteral("id"), id},
                                      {QStringLiteral("method"), method},
                                      {QStringLiteral("params"), params}})
               .toJson(QJsonDocument::Compact)
        + '\n';
}

} // namespace

class TestSnapshotInterrupt : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void deleteDuringRestoreIsBusy();
    void killDuringForkRemovesTheFork();
    void killDuringRestoreNamesTheSafetySnapshot();
    void leftoverMemoryFilesAreRemoved();

private:
    QJsonObject call(const QString &method, const QJsonObject &params, int timeoutMs = 120000);
    /// SandboxService::memoryDir() of the helper.
    QString memoryDir() const;
    /// Waits until `path` exists (polling every 2 ms), then kills the helper; false when it
    /// never appeared.
    bool killWhenExists(const QString &path, int timeoutMs);
    bool restartAfterKill();
    QJsonArray snapshots();

    std::unique_ptr<HelperProcess> m_helper;
    QString m_snapshot; ///< of kName, taken in initTestCase
};

void TestSnapshotInterrupt::initTestCase()
{
    m_helper = std::make_unique<HelperProcess>();
    QVERIFY2(QFileInfo::exists(m_helper->imageStore() + QStringLiteral("/default/image.json")),
             "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    QVERIFY(call(QStringLiteral("sandbox.create"),
                 {{QStringLiteral("name"), kName}, {QStringLiteral("memoryMib"), 256}})
                .contains(QStringLiteral("result")));
    QVERIFY(call(QStringLiteral("sandbox.start"), named(kName)).contains(QStringLiteral("result")));
    {
        GuestConsole console(m_helper->socketPath(), kName);
        QVERIFY(console.waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0);
    }
    const QJsonObject made = RpcTestClient::result(
        call(QStringLiteral("snapshot.create"),
             {{QStringLiteral("name"), kName}, {QStringLiteral("label"), QStringLiteral("base")}}));
    m_snapshot = made.value(QStringLiteral("id")).toString();
    QVERIFY(!m_snapshot.isEmpty());
}

void TestSnapshotInterrupt::cleanupTestCase()
{
    m_helper.reset();
}

QJsonObject TestSnapshotInterrupt::call(const QString &method, const QJsonObject &params,
                                        int timeoutMs)
{
    RpcTestClient client(m_helper->socketPath());
    const QJsonObject answer = client.call(method, params, timeoutMs);
    if (!answer.contains(QStringLiteral("result")))
        qWarning("%s: %s", qPrintable(method), QJsonDocument(answer).toJson().constData());
    return answer;
}

QString TestSnapshotInterrupt::memoryDir() const
{
    const QByteArray hash = QCryptographicHash::hash(
        QFile::encodeName(QDir(m_helper->stateDir()).absolutePath()), QCryptographicHash::Sha256);
    return QStringLiteral("/dev/shm/airlock-") + QString::fromLatin1(hash.toHex().left(12));
}

bool TestSnapshotInterrupt::killWhenExists(const QString &path, int timeoutMs)
{
    const QByteArray encoded = QFile::encodeName(path);
    if (!waitInDirectory(
            QFileInfo(path).path(), [&] { return ::access(encoded.constData(), F_OK) == 0; },
            timeoutMs))
        return false;
    m_helper->kill9();
    return true;
}

bool TestSnapshotInterrupt::restartAfterKill()
{
    // kill9() does not reap: start() needs the old process gone (its state dir lock).
    return m_helper->start();
}

QJsonArray TestSnapshotInterrupt::snapshots()
{
    return RpcTestClient::result(call(QStringLiteral("snapshot.list"), named(kName)))
        .value(QStringLiteral("snapshots"))
        .toArray();
}

void TestSnapshotInterrupt::deleteDuringRestoreIsBusy()
{
    // M6: the delete used to be accepted while the restore stored its safety snapshot; the
    // restore then killed the guest, found no manifest, and left the guest stopped and the
    // safety snapshot with a parent that no longer existed.
    // The helper takes one connection's requests in order: once the list after the restore is
    // answered, the restore has begun (and holds its snapshot).
    RpcTestClient restorer(m_helper->socketPath());
    QVERIFY(restorer.sendRaw(
        request(1, QStringLiteral("snapshot.restore"),
                {{QStringLiteral("name"), kName}, {QStringLiteral("snapshot"), m_snapshot}})
        + request(2, QStringLiteral("sandbox.list"), {})));
    const auto listed = restorer.readMessage(30000);
    QVERIFY(listed);
    QCOMPARE(listed->value(QStringLiteral("id")).toInt(), 2);
    RpcTestClient deleter(m_helper->socketPath());
    const QJsonObject deleted =
        deleter.call(QStringLiteral("snapshot.delete"), {{QStringLiteral("snapshot"), m_snapshot}});
    QCOMPARE(RpcTestClient::errorKind(deleted), QStringLiteral("busy"));
    const auto answer = restorer.readMessage(120000);
    QVERIFY(answer);
    QVERIFY2(answer->contains(QStringLiteral("result")),
             QJsonDocument(*answer).toJson().constData());
    QCOMPARE(RpcTestClient::result(*answer)
                 .value(QStringLiteral("sandbox"))
                 .toObject()
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("running"));
    // Every parent named in the timeline exists.
    QSet<QString> ids;
    const QJsonArray all = snapshots();
    for (const QJsonValue &snapshot : all)
        ids.insert(snapshot.toObject().value(QStringLiteral("id")).toString());
    for (const QJsonValue &snapshot : all) {
        const QString parent = snapshot.toObject().value(QStringLiteral("parent")).toString();
        QVERIFY2(parent.isEmpty() || ids.contains(parent), qPrintable(parent));
    }
}

void TestSnapshotInterrupt::killDuringForkRemovesTheFork()
{
    // M2: killed between creating the fork and starting its VMM, the helper used to leave the
    // fork registered as stopped (without the snapshot's state) and its RAM file in tmpfs.
    const QString fork = QStringLiteral("intr-fork");
    RpcTestClient forker(m_helper->socketPath());
    QVERIFY(forker.sendRaw(
        request(1, QStringLiteral("snapshot.fork"),
                {{QStringLiteral("snapshot"), m_snapshot}, {QStringLiteral("name"), fork}})));
    const QString ram = memoryDir() + u'/' + fork + QStringLiteral(".ram");
    QVERIFY(killWhenExists(ram, 60000));
    QVERIFY2(restartAfterKill(), qPrintable(m_helper->lastError()));
    const QJsonObject got = call(QStringLiteral("sandbox.get"), named(fork));
    if (RpcTestClient::errorKind(got) == u"not_found") {
        QVERIFY(!QFileInfo::exists(ram));
        QVERIFY(!QFileInfo::exists(m_helper->stateDir() + QStringLiteral("/run/") + fork));
    } else {
        // The kill came after its VMM ran: a finished fork, which stays.
        QCOMPARE(RpcTestClient::result(got).value(QStringLiteral("state")).toString(),
                 QStringLiteral("running"));
        qInfo("the kill came after the fork's guest was started");
        QVERIFY(
            call(QStringLiteral("sandbox.kill"), named(fork)).contains(QStringLiteral("result")));
        QVERIFY(
            call(QStringLiteral("sandbox.delete"), named(fork)).contains(QStringLiteral("result")));
    }
    QVERIFY(!QFileInfo::exists(ram));
    // The original ran on.
    QCOMPARE(RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(kName)))
                 .value(QStringLiteral("state"))
                 .toString(),
             QStringLiteral("running"));
}

void TestSnapshotInterrupt::killDuringRestoreNamesTheSafetySnapshot()
{
    // M3: killed after the safety snapshot was stored and the old VMM replaced, the helper used
    // to bring the sandbox back stopped with no reason. The restore writes the RAM file again
    // (a new inode) just before the new VMM starts: that is the moment to kill.
    const QSet<QString> before = [&] {
        QSet<QString> ids;
        for (const QJsonValue &snapshot : snapshots())
            ids.insert(snapshot.toObject().value(QStringLiteral("id")).toString());
        return ids;
    }();
    const QString ram = memoryDir() + u'/' + kName + QStringLiteral(".ram");
    struct stat old
    {
    };
    QCOMPARE(::stat(QFile::encodeName(ram).constData(), &old), 0);
    RpcTestClient restorer(m_helper->socketPath());
    QVERIFY(restorer.sendRaw(
        request(1, QStringLiteral("snapshot.restore"),
                {{QStringLiteral("name"), kName}, {QStringLiteral("snapshot"), m_snapshot}})));
    QVERIFY(waitInDirectory(
        memoryDir(),
        [&] {
            struct stat now
            {
            };
            return ::stat(QFile::encodeName(ram).constData(), &now) == 0
                && now.st_ino != old.st_ino;
        },
        120000));
    m_helper->kill9();
    QVERIFY2(restartAfterKill(), qPrintable(m_helper->lastError()));
    QString safety;
    for (const QJsonValue &snapshot : snapshots()) {
        const QJsonObject object = snapshot.toObject();
        if (!before.contains(object.value(QStringLiteral("id")).toString())
            && object.value(QStringLiteral("kind")).toString() == u"safety")
            safety = object.value(QStringLiteral("id")).toString();
    }
    QVERIFY(!safety.isEmpty());
    const QJsonObject sandbox =
        RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(kName)));
    if (sandbox.value(QStringLiteral("state")).toString() == u"running") {
        qInfo("the kill came after the restored guest was started");
    } else {
        QCOMPARE(sandbox.value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
        const QString reason = sandbox.value(QStringLiteral("stateReason")).toString();
        QVERIFY2(reason.contains(safety) && reason.contains(m_snapshot), qPrintable(reason));
        QVERIFY(!QFileInfo::exists(ram));
        QVERIFY(
            call(QStringLiteral("sandbox.start"), named(kName)).contains(QStringLiteral("result")));
    }
}

void TestSnapshotInterrupt::leftoverMemoryFilesAreRemoved()
{
    // A RAM file whose guest does not run (here: of no sandbox at all) goes at the next start,
    // and with sandbox.delete.
    m_helper->kill9();
    QVERIFY(QDir().mkpath(memoryDir()));
    const QString stray = memoryDir() + QStringLiteral("/stray.ram");
    QFile file(stray);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("guest memory");
    file.close();
    QVERIFY2(restartAfterKill(), qPrintable(m_helper->lastError()));
    QVERIFY(!QFileInfo::exists(stray));
    // The running guest's own file stays.
    QVERIFY(QFileInfo::exists(memoryDir() + u'/' + kName + QStringLiteral(".ram")));
}

QTEST_GUILESS_MAIN(TestSnapshotInterrupt)
#include "tst_snapshotinterrupt.moc"

// The Debian guest image (installers/guest/build-image.sh --variant debian) end to end, booted
// once under TCG and shared by the functions in order:
// - HTTPS through the real gateway: curl and python3 in the guest trust the sandbox CA from the
//   seed disk and reach https://pkg.test/ (a local HTTPS server under a test CA in an
//   "upstream" namespace); https://evil.test/ fails and is never reached; both decisions arrive
//   over RPC as egress.event;
// - its root disk (a qcow2 overlay per sandbox) in snapshots: a file on disk and a value in a
//   tmpfs both come back on restore, a fork starts with the snapshot's disk and memory and then
//   changes independently of the original, and the store grows by about what was written;
// - the disk outlives a cold reboot and goes with the sandbox.
//
//   guest ──tap── [helper ns: airlockd, gateway, table] ──veth 198.51.100.0/24── [upstream ns:
//   pkg.test 198.51.100.10:443, evil.test 198.51.100.66:443, DNS 198.51.100.53]
//
// 198.51.100.0/24 is TEST-NET-2 (RFC 5737), assigned here inside namespaces the test made; no
// namespace has a default route, so nothing can leave the machine (GatewayTopology).

#include "gatewaytopology.h"
#include "guestconsole.h"
#include "rpctestclient.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using airlock::test::GatewayTopology;
using airlock::test::GuestConsole;
using airlock::test::RpcTestClient;
using airlock::test::ServerEndpoint;
namespace topo = airlock::test::topo;

namespace {

const QString kName = QStringLiteral("deb");
const QString kFork = QStringLiteral("debfork");
const QString kImage = QStringLiteral("debian");
/// 1 MiB of new random data into the blocks of /root/inplace (allocated on the first call,
/// overwritten in place after), with direct I/O; and its md5sum read back with direct I/O.
const QByteArray kWriteInPlace = "dd if=/dev/urandom of=/root/inplace bs=64k count=16 "
                                 "oflag=direct conv=notrunc 2>/dev/null; ";
const QByteArray kSumInPlace = "dd if=/root/inplace iflag=direct bs=64k 2>/dev/null | md5sum";
// The trust bundle: its certificates, and the sandbox CA between the init's markers (rcS).
const QByteArray kCertificateCount =
    "grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt";
const QByteArray kMarkedCa = "sed -n '/^# airlock sandbox CA {$/,/^# }$/p' "
                             "/etc/ssl/certs/ca-certificates.crt | md5sum";
const QByteArray kMarkedCaIsTheSeeds =
    "sed -n '/^# airlock sandbox CA {$/,/^# }$/{/^#/d;p}' /etc/ssl/certs/ca-certificates.crt "
    "| cmp -s - /run/airlock/ca.pem && printf 'same '; "
    "cmp -s /run/airlock/ca.pem /usr/local/share/ca-certificates/airlock-sandbox.crt && echo same";
const QHostAddress kPkgAddress = topo::PkgServer;
const QHostAddress kEvilAddress = topo::EvilServer;
constexpr int kBootTimeoutMs = 120000;
constexpr int kDirtyMiB = 64;

QJsonObject named(const QString &name)
{
    return QJsonObject {{QStringLiteral("name"), name}};
}

} // namespace

class TestDebianGuest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void imageListsItsDisk();
    void guestTrustsTheSandboxCa();
    void curlReachesAnAllowedHttpsHost();
    void curlCannotReachADeniedHost();
    void python3RunsAndSpeaksHttps();
    void snapshotHoldsDiskAndMemory();
    void growthAfterWritingKnownAmountToDisk();
    void restoreBringsDiskAndMemoryBack();
    void forkHasTheSnapshotsDiskAndDivergesFromTheOriginal();
    void diskOutlivesAColdRebootAndGoesWithTheSandbox();
    void helperRestartKeepsTheDiskAndDropsLeftovers();
    void overlaysOfARebuiltImageAreRefused();

private:
    QJsonObject call(const QString &method, const QJsonObject &params, int timeoutMs = 120000);
    /// The params of the first egress.event (queued or arriving within `timeoutMs`) whose
    /// event has this name, layer and verdict.
    std::optional<QJsonObject> egress(const QString &name, const QString &layer,
                                      const QString &verdict, int timeoutMs = 15000);
    /// Snapshot of kName with `label`; the Snapshot object.
    QJsonObject snapshot(const QString &label);
    /// Bytes of sandbox `name`'s disk overlay in the helper's state dir, -1 when it has none.
    qint64 overlaySize(const QString &name) const;

    QTemporaryDir m_dir {QDir::tempPath() + QStringLiteral("/airlock-deb-XXXXXX")};
    std::unique_ptr<GatewayTopology> m_net;
    std::unique_ptr<RpcTestClient> m_events;
    std::unique_ptr<GuestConsole> m_console;
    QJsonObject m_first; ///< disk file and tmpfs value "one"
    QString m_imageJson; ///< the test store's image.json
    QByteArray m_firstSum; ///< md5sum of /root/inplace in m_first (written without a sync)
    QByteArray m_dirtySum; ///< the same in m_dirty (overwritten in place)
    QJsonObject m_dirty; ///< after writing kDirtyMiB to the disk; values "two"
};

void TestDebianGuest::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("needs root (network namespaces, taps, nftables)");
    if (qEnvironmentVariable("AIRLOCK_GATEWAY").isEmpty())
        QSKIP("AIRLOCK_GATEWAY is not set (run through ctest)");
    QVERIFY(m_dir.isValid());
    // The VMM's user reads the test's image store below it: the path must be traversable.
    ::chmod(QFile::encodeName(m_dir.path()).constData(), 0711);
    m_net = std::make_unique<GatewayTopology>(GatewayTopology::Options {
        .tag = QStringLiteral("d"),
        .side = GatewayTopology::Side::Helper,
        .hosts = {{QStringLiteral("pkg.test"), kPkgAddress},
                  {QStringLiteral("evil.test"), kEvilAddress}},
        .servers = {{QStringLiteral("pkg"), kPkgAddress, 443, ServerEndpoint::Kind::Https,
                     QStringLiteral("pkg.test"), ServerEndpoint::Answer::Hello},
                    {QStringLiteral("evil"), kEvilAddress, 443, ServerEndpoint::Kind::Https,
                     QStringLiteral("evil.test"), ServerEndpoint::Answer::Hello}}});
    const QString built = m_net->helper().imageStore() + u'/' + kImage;
    QVERIFY2(QFileInfo::exists(built + QStringLiteral("/image.json")),
             "no Debian guest image (the guest_image_debian fixture builds it)");
    // A store of the test's own whose image.json it may rewrite (a "rebuilt" image, at the end),
    // linking to the built image's files; the shared store stays as it is for other tests.
    m_imageJson =
        m_dir.filePath(QStringLiteral("images/") + kImage + QStringLiteral("/image.json"));
    QVERIFY(QDir().mkpath(QFileInfo(m_imageJson).path()));
    ::chmod(QFile::encodeName(m_dir.filePath(QStringLiteral("images"))).constData(), 0755);
    ::chmod(QFile::encodeName(QFileInfo(m_imageJson).path()).constData(), 0755);
    for (const QString &file :
         {QStringLiteral("vmlinux"), QStringLiteral("initrd.img"), QStringLiteral("rootfs.qcow2")})
        QVERIFY(QFile::link(built + u'/' + file, QFileInfo(m_imageJson).path() + u'/' + file));
    QVERIFY(QFile::copy(built + QStringLiteral("/image.json"), m_imageJson));
    m_net->helper().setImageStore(m_dir.filePath(QStringLiteral("images")));
    QVERIFY2(m_net->start(), qPrintable(m_net->lastError()));

    m_events = std::make_unique<RpcTestClient>(m_net->helper().socketPath());
    QVERIFY(m_events->call(QStringLiteral("events.subscribe")).contains(QStringLiteral("result")));
    QVERIFY(call(QStringLiteral("sandbox.create"),
                 {{QStringLiteral("name"), kName}, {QStringLiteral("image"), kImage}})
                .contains(QStringLiteral("result")));
    const QJsonObject policy {
        {QStringLiteral("version"), 1},
        {QStringLiteral("rules"),
         QJsonArray {QJsonObject {{QStringLiteral("host"), QStringLiteral("pkg.test")}}}}};
    QVERIFY(call(QStringLiteral("policy.set"),
                 {{QStringLiteral("name"), kName}, {QStringLiteral("policy"), policy}})
                .contains(QStringLiteral("result")));
    QElapsedTimer boot;
    boot.start();
    const QJsonObject started = call(QStringLiteral("sandbox.start"), named(kName));
    QVERIFY2(started.contains(QStringLiteral("result")),
             QJsonDocument(started).toJson().constData());
    m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kName);
    QVERIFY(m_console->waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0);
    qInfo("Debian guest: sandbox.start to the ready line in %lld ms (TCG)",
          static_cast<long long>(boot.elapsed()));
    // The shell prompt, so typed commands are not lost to the boot.
    QCOMPARE(m_console->run("echo $((40+2))").trimmed(), QByteArray("42"));
}

void TestDebianGuest::cleanupTestCase()
{
    m_console.reset();
    m_events.reset();
    m_net.reset(); // airlockd and its QEMUs, the servers, the upstream namespace
}

QJsonObject TestDebianGuest::call(const QString &method, const QJsonObject &params, int timeoutMs)
{
    RpcTestClient client(m_net->helper().socketPath());
    const QJsonObject answer = client.call(method, params, timeoutMs);
    if (!answer.contains(QStringLiteral("result")))
        qWarning("%s: %s", qPrintable(method), QJsonDocument(answer).toJson().constData());
    return answer;
}

std::optional<QJsonObject> TestDebianGuest::egress(const QString &name, const QString &layer,
                                                   const QString &verdict, int timeoutMs)
{
    // Notifications that do not match stay queued for later checks.
    auto message = m_events->waitForNotification(
        QStringLiteral("egress.event"),
        [&](const QJsonObject &params) {
            const QJsonObject event = params.value(QStringLiteral("event")).toObject();
            return event.value(QStringLiteral("name")).toString() == name
                && event.value(QStringLiteral("layer")).toString() == layer
                && event.value(QStringLiteral("verdict")).toString() == verdict;
        },
        timeoutMs);
    if (!message)
        return std::nullopt;
    return message->value(QStringLiteral("params")).toObject();
}

QJsonObject TestDebianGuest::snapshot(const QString &label)
{
    return RpcTestClient::result(
        call(QStringLiteral("snapshot.create"),
             {{QStringLiteral("name"), kName}, {QStringLiteral("label"), label}}));
}

qint64 TestDebianGuest::overlaySize(const QString &name) const
{
    const QFileInfo overlay(m_net->helper().stateDir() + QStringLiteral("/disks/") + name
                            + QStringLiteral(".qcow2"));
    return overlay.exists() ? overlay.size() : -1;
}

void TestDebianGuest::imageListsItsDisk()
{
    const QJsonArray images = RpcTestClient::result(call(QStringLiteral("image.list"), {}))
                                  .value(QStringLiteral("images"))
                                  .toArray();
    QJsonObject debian;
    for (const QJsonValue &image : images) {
        if (image.toObject().value(QStringLiteral("id")).toString() == kImage)
            debian = image.toObject();
    }
    QCOMPARE(debian.value(QStringLiteral("disk")).toString(), QStringLiteral("rootfs.qcow2"));
    // The guest runs from its own overlay, owned by its VMM's user, never from the shared base.
    const QString overlay = m_net->helper().stateDir() + QStringLiteral("/disks/deb.qcow2");
    struct stat info
    {
    };
    QCOMPARE(::stat(QFile::encodeName(overlay).constData(), &info), 0);
    QVERIFY(info.st_uid != 0);
    QCOMPARE(info.st_mode & 07777, mode_t(0600));
    QCOMPARE(m_console->run("cat /sys/block/vda/serial; echo; findmnt -no SOURCE,FSTYPE /")
                 .trimmed()
                 .replace("\r", ""),
             QByteArray("airlock-root\n/dev/vda ext4"));
}

void TestDebianGuest::guestTrustsTheSandboxCa()
{
    QCOMPARE(m_console->run("hostname").trimmed(), kName.toUtf8());
    // Resolved locally, never asked of the gateway's DNS.
    QCOMPARE(m_console->run("getent hosts deb | tr -s ' \t' ' '").trimmed(),
             QByteArray("127.0.1.1 deb"));
    // The seed's CA is in the bundle once (between the markers) and where
    // update-ca-certificates would pick it up again.
    QCOMPARE(m_console->run("grep -c 'airlock sandbox CA {' /etc/ssl/certs/ca-certificates.crt")
                 .trimmed(),
             QByteArray("1"));
    QCOMPARE(m_console
                 ->run("cmp /run/airlock/ca.pem /usr/local/share/ca-certificates/"
                       "airlock-sandbox.crt && echo same")
                 .trimmed(),
             QByteArray("same"));
}

void TestDebianGuest::curlReachesAnAllowedHttpsHost()
{
    // No -k: curl verifies the gateway's leaf for pkg.test against the sandbox CA.
    const QByteArray output =
        m_console->run("curl -sS --max-time 60 https://pkg.test/hello; echo curl-rc=$?", 90000);
    QVERIFY2(output.contains("hello pkg.test /hello"), output.constData());
    QVERIFY2(output.contains("curl-rc=0"), output.constData());
    // The upstream saw the request, over TLS with the right name (the gateway verified it
    // under the test CA).
    const auto pkg = m_net->upstream().connections(QStringLiteral("pkg"));
    QVERIFY(!m_net->upstream().requests(QStringLiteral("pkg")).isEmpty());
    QVERIFY(std::any_of(pkg.cbegin(), pkg.cend(), [](const airlock::test::ConnectionRecord &c) {
        return c.sni == u"pkg.test";
    }));
    QVERIFY(egress(QStringLiteral("pkg.test"), QStringLiteral("dns"), QStringLiteral("allowed")));
    const auto http =
        egress(QStringLiteral("pkg.test"), QStringLiteral("http"), QStringLiteral("allowed"));
    QVERIFY(http);
    const QJsonObject event = http->value(QStringLiteral("event")).toObject();
    QCOMPARE(event.value(QStringLiteral("path")).toString(), QStringLiteral("/hello"));
    QCOMPARE(event.value(QStringLiteral("status")).toInt(), 200);
}

void TestDebianGuest::curlCannotReachADeniedHost()
{
    const QByteArray byName =
        m_console->run("curl -sS --max-time 30 https://evil.test/; echo curl-rc=$?", 60000);
    QVERIFY2(byName.contains("curl-rc=") && !byName.contains("curl-rc=0"), byName.constData());
    QVERIFY(egress(QStringLiteral("evil.test"), QStringLiteral("dns"), QStringLiteral("denied")));
    // Its real address dialled directly: redirected to the gateway, refused at the ClientHello.
    const QByteArray direct = m_console->run("curl -sS --max-time 30 --resolve evil.test:443:"
                                                 + kEvilAddress.toString().toLatin1()
                                                 + " https://evil.test/; echo curl-rc=$?",
                                             60000);
    QVERIFY2(direct.contains("curl-rc=") && !direct.contains("curl-rc=0"), direct.constData());
    QVERIFY(egress(QStringLiteral("evil.test"), QStringLiteral("tls"), QStringLiteral("denied")));
    QVERIFY(m_net->settle());
    QCOMPARE(m_net->upstream().connections(QStringLiteral("evil")).size(), 0);
    const QJsonObject history = RpcTestClient::result(
        call(QStringLiteral("egress.history"),
             {{QStringLiteral("name"), kName}, {QStringLiteral("limit"), 1000}}));
    const QByteArray text = QJsonDocument(history).toJson(QJsonDocument::Compact);
    QVERIFY(text.contains("\"name\":\"pkg.test\""));
    QVERIFY(text.contains("\"name\":\"evil.test\""));
}

void TestDebianGuest::python3RunsAndSpeaksHttps()
{
    QCOMPARE(m_console->run("python3 -c 'print(sum(range(10)))'").trimmed(), QByteArray("45"));
    // Python's ssl module reads the same bundle (OpenSSL's default paths).
    const QByteArray output =
        m_console->run("python3 -c 'import urllib.request as u; "
                       "print(u.urlopen(\"https://pkg.test/py\", timeout=60).read().decode())'",
                       90000);
    QVERIFY2(output.contains("hello pkg.test /py"), output.constData());
}

void TestDebianGuest::snapshotHoldsDiskAndMemory()
{
    QCOMPARE(m_console
                 ->run("echo one > /root/disk.txt && sync && echo one > /dev/shm/v && "
                       "cat /root/disk.txt /dev/shm/v")
                 .replace("\r", ""),
             QByteArray("one\none\n"));
    // Written with direct I/O and no sync: the data reached QEMU, but the qcow2 metadata that
    // maps it may still be in QEMU's cache; the pause (QMP stop, then the migration that saves
    // the device state) must have written it to the overlay before it is copied. Later
    // overwritten in place (the same blocks), and always read with direct I/O: what these reads
    // see is the overlay's content, never the guest's page cache.
    m_firstSum = m_console->run(kWriteInPlace + kSumInPlace).trimmed();
    QVERIFY(m_firstSum.size() > 32);
    m_first = snapshot(QStringLiteral("one"));
    QVERIFY(!m_first.isEmpty());
    qInfo("first snapshot with a disk (overlay %lld bytes): %lld bytes logical, %lld new, %lld "
          "stored, guest paused %lld ms",
          static_cast<long long>(overlaySize(kName)),
          m_first.value(QStringLiteral("logicalBytes")).toInteger(),
          m_first.value(QStringLiteral("newBytes")).toInteger(),
          m_first.value(QStringLiteral("newStoredBytes")).toInteger(),
          m_first.value(QStringLiteral("pauseMs")).toInteger());
    // Memory and the overlay are both in it.
    QVERIFY(m_first.value(QStringLiteral("logicalBytes")).toInteger()
            >= 256LL * 1024 * 1024 + overlaySize(kName) / 2);
}

void TestDebianGuest::growthAfterWritingKnownAmountToDisk()
{
    // Direct I/O: kDirtyMiB reach the disk without passing through the guest's page cache, so
    // the next snapshot's growth is the disk's (plus the little memory the commands touch).
    m_dirtySum = m_console->run(kWriteInPlace + kSumInPlace).trimmed();
    QVERIFY(m_dirtySum.size() > 32 && m_dirtySum != m_firstSum);
    QVERIFY(!m_console
                 ->run(QByteArray("dd if=/dev/urandom of=/root/dirty bs=1M oflag=direct count=")
                           + QByteArray::number(kDirtyMiB)
                           + " 2>/dev/null; sync; echo two > /root/disk.txt; sync; "
                             "echo two > /dev/shm/v",
                       120000)
                 .isNull());
    const qint64 overlayBefore = overlaySize(kName);
    m_dirty = snapshot(QStringLiteral("dirty"));
    QVERIFY(!m_dirty.isEmpty());
    const qint64 added = m_dirty.value(QStringLiteral("newBytes")).toInteger();
    const qint64 stored = m_dirty.value(QStringLiteral("newStoredBytes")).toInteger();
    const qint64 dirtied = (kDirtyMiB + 1) * 1024LL * 1024; // with /root/inplace
    qInfo("wrote %d MiB to the disk: snapshot added %.2f MiB (%.2f x), %.2f MiB compressed "
          "(random data); overlay %.1f MiB; paused %lld ms",
          kDirtyMiB + 1, added / 1048576.0, double(added) / double(dirtied), stored / 1048576.0,
          overlayBefore / 1048576.0, m_dirty.value(QStringLiteral("pauseMs")).toInteger());
    QCOMPARE(m_dirty.value(QStringLiteral("parent")).toString(),
             m_first.value(QStringLiteral("id")).toString());
    QVERIFY(added >= dirtied);
    QVERIFY2(added <= dirtied * 5 / 4, "the store grew by more than 1.25 x what was written");
}

void TestDebianGuest::restoreBringsDiskAndMemoryBack()
{
    // Now "two" on disk and in memory, and the dirty file (growthAfterWritingKnownAmountToDisk).
    QCOMPARE(m_console->run("cat /root/disk.txt /dev/shm/v").replace("\r", ""),
             QByteArray("two\ntwo\n"));
    const QJsonObject restored = RpcTestClient::result(
        call(QStringLiteral("snapshot.restore"),
             {{QStringLiteral("name"), kName},
              {QStringLiteral("snapshot"), m_first.value(QStringLiteral("id"))}}));
    QCOMPARE(restored.value(QStringLiteral("sandbox")).toObject().value(QStringLiteral("state")),
             QJsonValue(QStringLiteral("running")));
    m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kName);
    QCOMPARE(m_console->run("cat /dev/shm/v").trimmed(), QByteArray("one"));
    // The page cache came back with the memory; dropped, the file is read from the restored
    // overlay (which had "two" in it before the restore), also with direct I/O.
    QCOMPARE(m_console->run("echo 3 > /proc/sys/vm/drop_caches; cat /root/disk.txt").trimmed(),
             QByteArray("one"));
    QCOMPARE(m_console
                 ->run("dd if=/root/disk.txt iflag=direct bs=4096 count=1 2>/dev/null; "
                       "test -e /root/dirty && echo dirty || echo clean")
                 .replace("\r", ""),
             QByteArray("one\nclean\n"));
    QCOMPARE(m_console->run(kSumInPlace).trimmed(), m_firstSum);
}

void TestDebianGuest::forkHasTheSnapshotsDiskAndDivergesFromTheOriginal()
{
    const QJsonObject forked = RpcTestClient::result(
        call(QStringLiteral("snapshot.fork"),
             {{QStringLiteral("name"), kFork},
              {QStringLiteral("snapshot"), m_dirty.value(QStringLiteral("id"))}}));
    QCOMPARE(forked.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    QVERIFY(overlaySize(kFork) > 0);
    GuestConsole fork(m_net->helper().socketPath(), kFork);
    // The shell's prompt names the fork too (docs/reviews/2026-12-01-newuser-pass.md#l6: bash kept
    // the name it read at start, the original's).
    const qsizetype beforePrompt = fork.text().size();
    QVERIFY(!fork.run("true").isNull());
    QVERIFY(fork.waitFor(kFork.toLatin1() + ":~# ", beforePrompt, 10000) >= 0);
    // The agent put the fork's CA between the markers in place of the snapshot's: the bundle
    // holds as many certificates as the original's, and no CA of another sandbox.
    QCOMPARE(fork.run(kCertificateCount).trimmed(), m_console->run(kCertificateCount).trimmed());
    QCOMPARE(fork.run(kMarkedCaIsTheSeeds).trimmed(), QByteArray("same same"));
    QVERIFY(fork.run(kMarkedCa).trimmed() != m_console->run(kMarkedCa).trimmed());
    const QByteArray dropAndRead = "echo 3 > /proc/sys/vm/drop_caches; cat /root/disk.txt";
    const QByteArray dirty = "test -e /root/dirty && echo dirty || echo clean";
    // The snapshot's state: "two" in memory and on disk, with the dirty file; the original
    // runs on from the first snapshot.
    QCOMPARE(fork.run("cat /dev/shm/v").trimmed(), QByteArray("two"));
    QCOMPARE(fork.run(dropAndRead).trimmed(), QByteArray("two"));
    QCOMPARE(fork.run(dirty).trimmed(), QByteArray("dirty"));
    QCOMPARE(fork.run(kSumInPlace).trimmed(), m_dirtySum);
    QCOMPARE(m_console->run(dirty).trimmed(), QByteArray("clean"));
    QCOMPARE(m_console->run(kSumInPlace).trimmed(), m_firstSum);
    // Each changes its own disk and memory.
    QVERIFY(!fork.run("echo forked > /root/disk.txt; echo forked > /dev/shm/v; sync").isNull());
    const QByteArray forkSum = fork.run(kWriteInPlace + kSumInPlace).trimmed();
    QCOMPARE(m_console->run(kSumInPlace).trimmed(), m_firstSum);
    QVERIFY(forkSum != m_dirtySum);
    QCOMPARE(m_console->run(dropAndRead).trimmed(), QByteArray("one"));
    QVERIFY(!m_console->run("echo original > /root/disk.txt; sync").isNull());
    QCOMPARE(fork.run(dropAndRead).trimmed(), QByteArray("forked"));
    QCOMPARE(fork.run("cat /dev/shm/v").trimmed(), QByteArray("forked"));
    QCOMPARE(m_console->run(dropAndRead).trimmed(), QByteArray("original"));
    QCOMPARE(m_console->run("cat /dev/shm/v").trimmed(), QByteArray("one"));
}

void TestDebianGuest::diskOutlivesAColdRebootAndGoesWithTheSandbox()
{
    // The fork is stopped (gracefully: the guest unmounts its disk) and started again: a cold
    // boot from the same overlay. Powered off by the guest itself (the power button), not
    // killed at the timeout: the helper would wait 10 min before that, the test 1 min.
    QVERIFY(call(QStringLiteral("sandbox.stop"),
                 {{QStringLiteral("name"), kFork}, {QStringLiteral("timeoutMs"), 600000}})
                .contains(QStringLiteral("result")));
    QTRY_COMPARE_WITH_TIMEOUT(
        RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(kFork)))
            .value(QStringLiteral("state"))
            .toString(),
        QStringLiteral("stopped"), 60000);
    QVERIFY(call(QStringLiteral("sandbox.start"), named(kFork)).contains(QStringLiteral("result")));
    GuestConsole fork(m_net->helper().socketPath(), kFork);
    QVERIFY(fork.waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0);
    QCOMPARE(fork.run("cat /root/disk.txt").trimmed(), QByteArray("forked"));
    // The sandbox's CA is in the bundle once, after two boots of the same disk and the agent's
    // refresh between them.
    QCOMPARE(
        fork.run("grep -c 'airlock sandbox CA {' /etc/ssl/certs/ca-certificates.crt").trimmed(),
        QByteArray("1"));
    QCOMPARE(fork.run(kCertificateCount).trimmed(), m_console->run(kCertificateCount).trimmed());
    QCOMPARE(fork.run(kMarkedCaIsTheSeeds).trimmed(), QByteArray("same same"));
    QVERIFY(call(QStringLiteral("sandbox.kill"), named(kFork)).contains(QStringLiteral("result")));
    QVERIFY(
        call(QStringLiteral("sandbox.delete"), named(kFork)).contains(QStringLiteral("result")));
    QCOMPARE(overlaySize(kFork), qint64(-1));
    QVERIFY(overlaySize(kName) > 0);
}

void TestDebianGuest::helperRestartKeepsTheDiskAndDropsLeftovers()
{
    // What a helper killed inside sandbox.delete or a restore would leave behind.
    const QString disks = m_net->helper().stateDir() + QStringLiteral("/disks/");
    for (const QString &file : {QStringLiteral("ghost.qcow2"), QStringLiteral("ghost.qcow2.base"),
                                QStringLiteral("deb.qcow2.tmp")}) {
        QFile leftover(disks + file);
        QVERIFY(leftover.open(QIODevice::WriteOnly));
    }
    m_console.reset();
    m_events.reset();
    QVERIFY2(m_net->helper().restart(), qPrintable(m_net->helper().lastError()));
    QVERIFY(!QFile::exists(disks + QStringLiteral("ghost.qcow2")));
    QVERIFY(!QFile::exists(disks + QStringLiteral("ghost.qcow2.base")));
    QVERIFY(!QFile::exists(disks + QStringLiteral("deb.qcow2.tmp")));
    QVERIFY(QFile::exists(disks + QStringLiteral("deb.qcow2.base")));
    // The re-adopted guest runs on from its disk, and its next snapshot still has it.
    m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kName);
    QCOMPARE(m_console->run("cat /root/disk.txt").trimmed(), QByteArray("original"));
    const QJsonObject after = snapshot(QStringLiteral("after restart"));
    QVERIFY(overlaySize(kName) > 0);
    QVERIFY(after.value(QStringLiteral("logicalBytes")).toInteger()
            >= 256LL * 1024 * 1024 + overlaySize(kName));
}

void TestDebianGuest::overlaysOfARebuiltImageAreRefused()
{
    // A rebuild writes a new image.json (and base) while the guest runs on its old base: the
    // sandbox's overlay and its snapshots' disks hold differences from the old base only.
    QFile json(m_imageJson);
    QVERIFY(json.open(QIODevice::ReadOnly));
    QByteArray text = json.readAll();
    json.close();
    const qsizetype at = text.indexOf("\"createdAt\"");
    QVERIFY(at > 0);
    text = text.left(at) + "\"createdAt\": \"2030-01-01T00:00:00.000Z\"\n}\n";
    QVERIFY(json.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(json.write(text), text.size());
    json.close();
    auto count = [this] {
        return RpcTestClient::result(call(QStringLiteral("snapshot.list"), named(kName)))
            .value(QStringLiteral("snapshots"))
            .toArray()
            .size();
    };
    const qsizetype before = count();

    // Refused before anything happens to the running guest (no safety snapshot, no restart).
    auto restore = [this](const QJsonValue &id) {
        return call(QStringLiteral("snapshot.restore"),
                    {{QStringLiteral("name"), kName}, {QStringLiteral("snapshot"), id}});
    };
    const QJsonObject restored = restore(m_first.value(QStringLiteral("id")));
    QCOMPARE(RpcTestClient::errorKind(restored), QStringLiteral("invalid_state"));
    QVERIFY(QJsonDocument(restored).toJson().contains("another build of image"));
    QCOMPARE(count(), before);
    QCOMPARE(m_console->run("cat /root/disk.txt").trimmed(), QByteArray("original"));
    // A snapshot taken now is of the old base's disk, and labelled so.
    const QJsonObject late = snapshot(QStringLiteral("after the rebuild"));
    QCOMPARE(RpcTestClient::errorKind(restore(late.value(QStringLiteral("id")))),
             QStringLiteral("invalid_state"));

    m_console.reset();
    QVERIFY(call(QStringLiteral("sandbox.kill"), named(kName)).contains(QStringLiteral("result")));
    const QJsonObject started = call(QStringLiteral("sandbox.start"), named(kName));
    QCOMPARE(RpcTestClient::errorKind(started), QStringLiteral("operation_failed"));
    QVERIFY2(QJsonDocument(started).toJson().contains("another build of image"),
             QJsonDocument(started).toJson().constData());
    // Nothing was lost: the overlay is still there for the old build.
    QVERIFY(overlaySize(kName) > 0);
}

QTEST_GUILESS_MAIN(TestDebianGuest)
#include "tst_debianguest.moc"

// A guest that did not boot gets its own identity through the guest agent (docs/snapshots.md,
// "Guest agent"): a fork and a template start show their own hostname, MAC, address and CA, and
// their gateway answers DNS for an allowed name; credential bindings reach a fork only when
// asked. And a helper killed while a guest stands still
// (docs/reviews/2026-11-30-redteam-pass.md#f1) resumes it when it comes back. Real airlockd, real
// gateways, TCG guests; the upstream resolver is a test DNS server in a namespace of its own:
//
//   guests ──taps── [helper ns: airlockd, gateways, tables] ──veth 198.51.100.0/24── [upstream
//   ns: DNS 198.51.100.53 answering pkg.test]
//
// 198.51.100.0/24 is TEST-NET-2 (RFC 5737), assigned only inside namespaces this test made.

#include "core/net/helperinstance.h"
#include "core/net/nftablestable.h"
#include "core/net/tapdevice.h"

#include "gatewaytopology.h"
#include "guestconsole.h"
#include "rpctestclient.h"

#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTest>

#include <algorithm>
#include <csignal>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

using airlock::HelperInstance;
using airlock::test::GatewayTopology;
using airlock::test::GuestConsole;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;
using airlock::test::runIp;

namespace {

const QString kOriginal = QStringLiteral("ident");
const QString kFork = QStringLiteral("ident-fork");
const QString kForkWithBindings = QStringLiteral("ident-bound");
const QString kFromTemplate = QStringLiteral("ident-tpl");
constexpr int kBootTimeoutMs = 120000;

QJsonObject named(const QString &name)
{
    return QJsonObject {{QStringLiteral("name"), name}};
}

/// What a guest says about itself, one shell command each.
struct GuestView
{
    QByteArray hostname;
    QByteArray address; ///< "100.96.0.6/30"
    QByteArray mac;
    QByteArray gateway; ///< default route
    QByteArray caSum; ///< md5 of the trust bundle
    QByteArray lookup; ///< nslookup pkg.test
};

GuestView look(GuestConsole &console)
{
    GuestView view;
    view.hostname = console.run("hostname").trimmed();
    view.address = console.run("ip -4 -o addr show eth0 | awk '{print $4}'").trimmed();
    view.mac = console.run("cat /sys/class/net/eth0/address").trimmed();
    view.gateway = console.run("ip route | awk '/^default/ {print $3}'").trimmed();
    view.caSum = console.run("md5sum </etc/ssl/certs/ca-certificates.crt | cut -c1-32").trimmed();
    // Only A: see the note in the report on A+AAAA at once (tst_egresse2e does the same).
    view.lookup = console.run("nslookup -type=a pkg.test 2>&1").trimmed();
    qInfo("%s: %s, %s, gateway %s", view.hostname.constData(), view.address.constData(),
          view.mac.constData(), view.gateway.constData());
    return view;
}

bool processExists(qint64 pid)
{
    return pid > 0 && QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid))
        && ::kill(pid_t(pid), 0) == 0;
}

} // namespace

class TestGuestIdentity : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void forkHasItsOwnIdentity();
    void forkCopiesBindingsOnlyWhenAsked();
    void refreshThatFailsIsNotSilent();
    void restoreInPlaceKeepsItsNetwork();
    void templateStartIsAWorkingSandbox();
    void helperKilledWhilePreparingATemplateLeavesNothing();
    void helperBackAfterGuestWasLeftPausedResumesIt();
    void automaticTemplates();
    void helperKilledDuringSnapshotLeavesGuestRunning();

private:
    QJsonObject call(const QString &method, const QJsonObject &params, int timeoutMs = 120000);
    void expectOwnIdentity(const QString &name, const GuestView &view);
    bool restartAfterKill();
    /// What the guest saw, the upstream DNS server's queries and the gateway's decisions.
    QString diagnose(const QString &sandbox, const QByteArray &lookup);

    std::unique_ptr<GatewayTopology> m_net;
    std::unique_ptr<GuestConsole> m_console;
    GuestView m_original;
    QJsonObject m_snapshot;
};

void TestGuestIdentity::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("needs root (network namespaces, taps, nftables)");
    // Only the test DNS server upstream (pkg.test's address serves nothing).
    m_net = std::make_unique<GatewayTopology>(GatewayTopology::Options {
        .tag = QStringLiteral("gi"),
        .side = GatewayTopology::Side::Helper,
        .hosts = {{QStringLiteral("pkg.test"), airlock::test::topo::PkgServer}}});
    QVERIFY2(
        QFileInfo::exists(m_net->helper().imageStore() + QStringLiteral("/default/image.json")),
        "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_net->start(), qPrintable(m_net->lastError()));

    QJsonObject spec = named(kOriginal);
    spec.insert(QStringLiteral("boot"), QStringLiteral("cold"));
    QVERIFY(call(QStringLiteral("sandbox.create"), spec).contains(QStringLiteral("result")));
    const QJsonObject policy {
        {QStringLiteral("version"), 1},
        {QStringLiteral("rules"),
         QJsonArray {QJsonObject {{QStringLiteral("host"), QStringLiteral("pkg.test")}}}}};
    QVERIFY(call(QStringLiteral("policy.set"),
                 {{QStringLiteral("name"), kOriginal}, {QStringLiteral("policy"), policy}})
                .contains(QStringLiteral("result")));
    const QJsonObject started =
        RpcTestClient::result(call(QStringLiteral("sandbox.start"), named(kOriginal)));
    QCOMPARE(started.value(QStringLiteral("startedFrom")).toString(), QStringLiteral("boot"));
    m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kOriginal);
    QVERIFY(m_console->waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0);
    m_original = look(*m_console);
    QCOMPARE(m_original.hostname, kOriginal.toLatin1());
    QVERIFY2(m_original.lookup.contains("100.112."),
             qPrintable(diagnose(kOriginal, m_original.lookup)));
}

void TestGuestIdentity::cleanupTestCase()
{
    m_console.reset();
    m_net.reset(); // airlockd and its QEMUs, the DNS server, the upstream namespace
}

QJsonObject TestGuestIdentity::call(const QString &method, const QJsonObject &params, int timeoutMs)
{
    RpcTestClient client(m_net->helper().socketPath());
    const QJsonObject answer = client.call(method, params, timeoutMs);
    if (!answer.contains(QStringLiteral("result")))
        qWarning("%s: %s", qPrintable(method), QJsonDocument(answer).toJson().constData());
    return answer;
}

void TestGuestIdentity::expectOwnIdentity(const QString &name, const GuestView &view)
{
    QCOMPARE(view.hostname, name.toLatin1());
    // Its own link: another address and MAC (the table drops any other MAC), its own gateway.
    QVERIFY(!view.address.isEmpty());
    QVERIFY(view.address != m_original.address);
    QVERIFY(view.mac != m_original.mac);
    QVERIFY(view.gateway != m_original.gateway);
    // Its own sandbox CA in place of the original's.
    QVERIFY(view.caSum != m_original.caSum);
    // Its gateway answers DNS for an allowed name (a synthetic address of its own mapping).
    QVERIFY2(view.lookup.contains("100.112."), qPrintable(diagnose(name, view.lookup)));
    QVERIFY2(view.lookup.contains(view.gateway), view.lookup.constData());
}

void TestGuestIdentity::forkHasItsOwnIdentity()
{
    QCOMPARE(m_console->run("echo mark-$((6*7)) > /dev/shm/mark; cat /dev/shm/mark").trimmed(),
             QByteArray("mark-42"));
    m_snapshot = RpcTestClient::result(call(QStringLiteral("snapshot.create"), named(kOriginal)));
    QVERIFY(!m_snapshot.value(QStringLiteral("id")).toString().isEmpty());
    QElapsedTimer timer;
    timer.start();
    const QJsonObject forked = RpcTestClient::result(
        call(QStringLiteral("snapshot.fork"),
             {{QStringLiteral("snapshot"), m_snapshot.value(QStringLiteral("id"))},
              {QStringLiteral("name"), kFork}}));
    qInfo("fork answered after %lld ms", static_cast<long long>(timer.elapsed()));
    QCOMPARE(forked.value(QStringLiteral("startedFrom")).toString(), QStringLiteral("snapshot"));
    QCOMPARE(forked.value(QStringLiteral("identityWarning")).toString(), QString());
    QCOMPARE(forked.value(QStringLiteral("bindingsCopied")).toInt(-1), 0);
    GuestConsole fork(m_net->helper().socketPath(), kFork);
    // The snapshot's memory (the tmpfs file), the fork's identity.
    QCOMPARE(fork.run("cat /dev/shm/mark").trimmed(), QByteArray("mark-42"));
    expectOwnIdentity(kFork, look(fork));
    // Its prompt names it too (PS1 is \h).
    QVERIFY(fork.waitFor(kFork.toLatin1() + ":~#", 0, 10000) >= 0);
    // The original is untouched.
    QCOMPARE(m_console->run("hostname").trimmed(), kOriginal.toLatin1());
    QVERIFY(call(QStringLiteral("sandbox.kill"), named(kFork)).contains(QStringLiteral("result")));
}

void TestGuestIdentity::forkCopiesBindingsOnlyWhenAsked()
{
    QVERIFY(call(QStringLiteral("secret.set"),
                 {{QStringLiteral("name"), QStringLiteral("token")},
                  {QStringLiteral("value"), QStringLiteral("s3cret-value-for-tests")}})
                .contains(QStringLiteral("result")));
    QVERIFY(call(QStringLiteral("binding.add"),
                 {{QStringLiteral("sandbox"), kOriginal},
                  {QStringLiteral("secret"), QStringLiteral("token")},
                  {QStringLiteral("host"), QStringLiteral("pkg.test")}})
                .contains(QStringLiteral("result")));
    const auto bindingsOf = [this](const QString &sandbox) {
        return RpcTestClient::result(
                   call(QStringLiteral("binding.list"), {{QStringLiteral("sandbox"), sandbox}}))
            .value(QStringLiteral("bindings"))
            .toArray();
    };
    // kFork (made before the binding existed) has none; a fork made now copies only on request.
    QCOMPARE(bindingsOf(kFork).size(), 0);
    const QJsonObject bound = RpcTestClient::result(
        call(QStringLiteral("snapshot.fork"),
             {{QStringLiteral("snapshot"), m_snapshot.value(QStringLiteral("id"))},
              {QStringLiteral("name"), kForkWithBindings},
              {QStringLiteral("bindings"), true}}));
    QCOMPARE(bound.value(QStringLiteral("bindingsCopied")).toInt(), 1);
    const QJsonArray copied = bindingsOf(kForkWithBindings);
    QCOMPARE(copied.size(), 1);
    QCOMPARE(copied.at(0).toObject().value(QStringLiteral("host")).toString(),
             QStringLiteral("pkg.test"));
    QVERIFY(copied.at(0).toObject().value(QStringLiteral("id"))
            != bindingsOf(kOriginal).at(0).toObject().value(QStringLiteral("id")));
    {
        // The agent delivered the fork's own seed files: its placeholder for the copied binding
        // (the snapshot was taken before the binding existed, so it carries none).
        GuestConsole fork(m_net->helper().socketPath(), kForkWithBindings);
        const QString env = QString::fromLatin1(fork.run("cat /run/airlock/env", 30000).trimmed());
        static const QRegularExpression line(
            QStringLiteral("^AIRLOCK_SECRET_TOKEN=airlock-placeholder-[0-9a-f]{32}$"));
        QVERIFY2(line.match(env).hasMatch(), qPrintable(env));
        // The running original got its own placeholder when the binding was added
        // (GuestEnvDelivery): another one than the fork's.
        QString original;
        QTRY_VERIFY_WITH_TIMEOUT(line.match(original = QString::fromLatin1(
                                                m_console->run("cat /run/airlock/env").trimmed()))
                                     .hasMatch(),
                                 30000);
        QVERIFY2(original != env, qPrintable(original));
    }
    QVERIFY(call(QStringLiteral("sandbox.kill"), named(kForkWithBindings))
                .contains(QStringLiteral("result")));
    // A fork that copies nothing says so.
    QVERIFY(
        call(QStringLiteral("sandbox.delete"), named(kFork)).contains(QStringLiteral("result")));
    const QJsonObject unbound = RpcTestClient::result(
        call(QStringLiteral("snapshot.fork"),
             {{QStringLiteral("snapshot"), m_snapshot.value(QStringLiteral("id"))},
              {QStringLiteral("name"), kFork}}));
    QCOMPARE(unbound.value(QStringLiteral("bindingsCopied")).toInt(-1), 0);
    QCOMPARE(bindingsOf(kFork).size(), 0);
    QVERIFY(call(QStringLiteral("sandbox.kill"), named(kFork)).contains(QStringLiteral("result")));
}

void TestGuestIdentity::refreshThatFailsIsNotSilent()
{
    // A guest whose agent cannot apply the new name: /etc/hostname is a directory.
    QVERIFY(!m_console->run("rm -f /etc/hostname; mkdir /etc/hostname").isNull());
    const QJsonObject broken =
        RpcTestClient::result(call(QStringLiteral("snapshot.create"), named(kOriginal)));
    QVERIFY(!m_console->run("rmdir /etc/hostname; hostname > /etc/hostname").isNull());
    // Through airlockctl: the fork runs, and the warning is printed, not swallowed.
    const QString ctl = qEnvironmentVariable("AIRLOCK_AIRLOCKCTL");
    QVERIFY2(QFileInfo(ctl).isExecutable(), "AIRLOCK_AIRLOCKCTL (ctest sets it)");
    const QString name = QStringLiteral("ident-broken");
    QProcess process;
    process.start(ctl,
                  {QStringLiteral("--socket"), m_net->helper().socketPath(),
                   QStringLiteral("snapshot"), QStringLiteral("fork"),
                   broken.value(QStringLiteral("id")).toString(), name});
    QVERIFY(process.waitForFinished(120000));
    const QString errors = QString::fromUtf8(process.readAllStandardError());
    QCOMPARE(process.exitCode(), 0);
    QVERIFY2(errors.contains(QStringLiteral("did not confirm its new identity")),
             qPrintable(errors));
    QVERIFY2(errors.contains(QStringLiteral("step name")), qPrintable(errors));
    // The sandbox says so too, for every client.
    const QJsonObject sandbox =
        RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(name)));
    QCOMPARE(sandbox.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    QVERIFY(!sandbox.value(QStringLiteral("identityWarning")).toString().isEmpty());
    // The other steps ran all the same: its network is its own.
    GuestConsole console(m_net->helper().socketPath(), name);
    const GuestView view = look(console);
    QVERIFY(view.address != m_original.address);
    QVERIFY2(view.lookup.contains("100.112."), view.lookup.constData());
    QVERIFY(call(QStringLiteral("sandbox.kill"), named(name)).contains(QStringLiteral("result")));
    // Stopped, the warning is gone with the state it described.
    QCOMPARE(RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(name)))
                 .value(QStringLiteral("identityWarning"))
                 .toString(),
             QString());
}

void TestGuestIdentity::restoreInPlaceKeepsItsNetwork()
{
    const qint64 oldVmm =
        RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(kOriginal)))
            .value(QStringLiteral("vmmPid"))
            .toInteger();
    QVERIFY(oldVmm > 0);
    const QJsonObject restored = RpcTestClient::result(
        call(QStringLiteral("snapshot.restore"),
             {{QStringLiteral("name"), kOriginal},
              {QStringLiteral("snapshot"), m_snapshot.value(QStringLiteral("id"))}}));
    QCOMPARE(restored.value(QStringLiteral("sandbox"))
                 .toObject()
                 .value(QStringLiteral("identityWarning")),
             QJsonValue(QString()));
    // The old VMM's network goes without taking the new one's table or tap along (they have
    // the same names). A late teardown has had its chance once the helper reaped the old VMM
    // (gone, not a zombie) and answered a call after that.
    QVERIFY(QTest::qWaitFor([&] { return !processExists(oldVmm); }, 30000));
    QVERIFY(
        call(QStringLiteral("sandbox.get"), named(kOriginal)).contains(QStringLiteral("result")));
    QString tables;
    QProcess nft;
    nft.start(QStringLiteral("ip"),
              {QStringLiteral("netns"), QStringLiteral("exec"), m_net->helper().networkNamespace(),
               QStringLiteral("nft"), QStringLiteral("list"), QStringLiteral("tables")});
    QVERIFY(nft.waitForFinished(10000));
    tables = QString::fromUtf8(nft.readAllStandardOutput());
    const QString table = airlock::NftablesTable::tableName(
        kOriginal, HelperInstance::tagFor(m_net->helper().stateDir()));
    QVERIFY2(tables.contains(QStringLiteral("inet ") + table), qPrintable(tables));
    QVERIFY2(tables.contains(QStringLiteral("netdev ") + table), qPrintable(tables));
    m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kOriginal);
    QCOMPARE(m_console->run("cat /dev/shm/mark").trimmed(), QByteArray("mark-42"));
    const GuestView view = look(*m_console);
    QCOMPARE(view.hostname, kOriginal.toLatin1());
    QVERIFY2(view.lookup.contains("100.112."), qPrintable(diagnose(kOriginal, view.lookup)));
    m_original = view; // its link may be another one now
}

void TestGuestIdentity::templateStartIsAWorkingSandbox()
{
    // No template yet (--templates off): template.prepare boots one in the background.
    QElapsedTimer timer;
    timer.start();
    QJsonObject prepared;
    QTRY_VERIFY_WITH_TIMEOUT(
        (prepared = RpcTestClient::result(call(QStringLiteral("template.prepare"), {})))
                .value(QStringLiteral("template"))
                .isObject()
            || !prepared.value(QStringLiteral("preparing")).toBool(),
        180000);
    QVERIFY2(prepared.value(QStringLiteral("template")).isObject(),
             "the template preparation ended without a template");
    const QJsonObject made = prepared.value(QStringLiteral("template")).toObject();
    QCOMPARE(made.value(QStringLiteral("kind")).toString(), QStringLiteral("template"));
    QVERIFY(made.value(QStringLiteral("sandbox")).isNull());
    qInfo("template %s ready after %lld ms",
          qPrintable(made.value(QStringLiteral("id")).toString()),
          static_cast<long long>(timer.elapsed()));
    // The preparing guest is nobody's sandbox, and the template is in no sandbox's tree.
    const QJsonArray sandboxes = RpcTestClient::result(call(QStringLiteral("sandbox.list"), {}))
                                     .value(QStringLiteral("sandboxes"))
                                     .toArray();
    for (const QJsonValue &sandbox : sandboxes)
        QVERIFY(!sandbox.toObject()
                     .value(QStringLiteral("name"))
                     .toString()
                     .startsWith(QStringLiteral("airlock-template-")));
    const QJsonArray tree =
        RpcTestClient::result(call(QStringLiteral("snapshot.list"), named(kOriginal)))
            .value(QStringLiteral("snapshots"))
            .toArray();
    for (const QJsonValue &snapshot : tree)
        QVERIFY(snapshot.toObject().value(QStringLiteral("kind"))
                != QJsonValue(QStringLiteral("template")));
    const QJsonArray templates = RpcTestClient::result(call(QStringLiteral("template.list"), {}))
                                     .value(QStringLiteral("templates"))
                                     .toArray();
    QCOMPARE(templates.size(), 1);
    QCOMPARE(templates.at(0).toObject().value(QStringLiteral("current")), QJsonValue(true));
    // Reserved for the helper's own guests.
    QCOMPARE(RpcTestClient::errorKind(call(QStringLiteral("sandbox.create"),
                                           named(QStringLiteral("airlock-template-x")))),
             QStringLiteral("invalid_name"));

    QVERIFY(call(QStringLiteral("sandbox.create"), named(kFromTemplate))
                .contains(QStringLiteral("result")));
    const QJsonObject policy {
        {QStringLiteral("version"), 1},
        {QStringLiteral("rules"),
         QJsonArray {QJsonObject {{QStringLiteral("host"), QStringLiteral("pkg.test")}}}}};
    QVERIFY(call(QStringLiteral("policy.set"),
                 {{QStringLiteral("name"), kFromTemplate}, {QStringLiteral("policy"), policy}})
                .contains(QStringLiteral("result")));
    timer.restart();
    const QJsonObject started =
        RpcTestClient::result(call(QStringLiteral("sandbox.start"), named(kFromTemplate)));
    QCOMPARE(started.value(QStringLiteral("startedFrom")).toString(), QStringLiteral("template"));
    QCOMPARE(started.value(QStringLiteral("identityWarning")).toString(), QString());
    GuestConsole console(m_net->helper().socketPath(), kFromTemplate);
    // The agent prints the ready line after the refresh, as a boot does.
    QVERIFY(console.waitFor("airlock-guest ready", 0, 30000) >= 0);
    QCOMPARE(console.run("echo up-$((40+2))", 30000).trimmed(), QByteArray("up-42"));
    qInfo("template start to a console answer: %lld ms", static_cast<long long>(timer.elapsed()));
    expectOwnIdentity(kFromTemplate, look(console));
    // The template's guest wrote no seed files this sandbox does not have: the CA and the
    // (empty: no bindings) credential environment of SandboxService::seedFiles.
    QCOMPARE(console.run("ls /run/airlock").trimmed(), QByteArray("ca.pem  env"));
    QCOMPARE(console.run("wc -c </run/airlock/env").trimmed(), QByteArray("0"));
}

void TestGuestIdentity::helperKilledWhilePreparingATemplateLeavesNothing()
{
    // Another shape, so a new internal guest boots; kill the helper while it does.
    const QJsonObject shape {{QStringLiteral("memoryMib"), 128}};
    const QJsonObject answer =
        RpcTestClient::result(call(QStringLiteral("template.prepare"), shape));
    QCOMPARE(answer.value(QStringLiteral("preparing")), QJsonValue(true));
    const QDir run(QDir(m_net->helper().stateDir()).filePath(QStringLiteral("run")));
    const QStringList internal =
        run.entryList({QStringLiteral("airlock-template-*")}, QDir::Dirs | QDir::NoDotAndDotDot);
    QCOMPARE(internal.size(), 1);
    const QString guest = internal.first();
    const auto vmmRuns = [&] {
        const QByteArray marker = QFile::encodeName(run.filePath(guest));
        for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
            QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
            if (cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(marker))
                return true;
        }
        return false;
    };
    // Its VMM starts once the guest's gateway reported ready.
    QTRY_VERIFY_WITH_TIMEOUT(vmmRuns(), 30000);
    // Nobody's guest: no client may reach it (what it typed would be in every template start).
    for (const char *method : {"console.attach", "console.write", "sandbox.get", "sandbox.kill",
                               "snapshot.create", "vm.pause"})
        QCOMPARE(RpcTestClient::errorKind(call(QString::fromLatin1(method),
                                               {{QStringLiteral("name"), guest},
                                                {QStringLiteral("data"), QStringLiteral("eA==")}})),
                 QStringLiteral("not_found"));
    // binding.add too, with a secret that exists (docs/reviews/2026-12-01-newuser-pass.md#l5: it
    // leaked an SQL foreign-key error, because the guest exists in memory but not in the registry).
    QVERIFY(call(QStringLiteral("secret.set"),
                 {{QStringLiteral("name"), QStringLiteral("probe")},
                  {QStringLiteral("value"), QStringLiteral("probe-value-for-tests")}})
                .contains(QStringLiteral("result")));
    QCOMPARE(RpcTestClient::errorKind(call(QStringLiteral("binding.add"),
                                           {{QStringLiteral("sandbox"), guest},
                                            {QStringLiteral("secret"), QStringLiteral("probe")},
                                            {QStringLiteral("host"), QStringLiteral("pkg.test")}})),
             QStringLiteral("not_found"));
    QVERIFY(
        call(QStringLiteral("secret.delete"), {{QStringLiteral("name"), QStringLiteral("probe")}})
            .contains(QStringLiteral("result")));
    m_console.reset();
    m_net->helper().kill9();
    QVERIFY2(restartAfterKill(), qPrintable(m_net->helper().lastError()));
    // The new helper killed that VMM and removed its runtime dir, tap and table.
    QVERIFY(!vmmRuns());
    QVERIFY(!run.exists(guest));
    QString links;
    QVERIFY(runIp({QStringLiteral("-n"), m_net->helper().networkNamespace(), QStringLiteral("-o"),
                   QStringLiteral("link"), QStringLiteral("show")},
                  &links));
    QVERIFY2(!links.contains(airlock::TapDevice::interfaceName(
                 guest, HelperInstance::tagFor(m_net->helper().stateDir()))),
             qPrintable(links));
    const QJsonArray templates = RpcTestClient::result(call(QStringLiteral("template.list"), {}))
                                     .value(QStringLiteral("templates"))
                                     .toArray();
    for (const QJsonValue &made : templates)
        QVERIFY(made.toObject().value(QStringLiteral("memoryMib")).toInt() != 128);
    // Its sandboxes were re-adopted as usual.
    m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kOriginal);
    QCOMPARE(m_console->run("echo still-$((40+2))", 30000).trimmed(), QByteArray("still-42"));
}

QString TestGuestIdentity::diagnose(const QString &sandbox, const QByteArray &lookup)
{
    const QJsonObject history = RpcTestClient::result(
        call(QStringLiteral("egress.history"),
             {{QStringLiteral("name"), sandbox}, {QStringLiteral("limit"), 20}}));
    return QString::fromLatin1(lookup) + QStringLiteral("\nupstream queries: ")
        + m_net->dns().queryNames().join(u' ') + QStringLiteral("\ngateway: ")
        + QString::fromUtf8(QJsonDocument(history).toJson(QJsonDocument::Compact));
}

void TestGuestIdentity::automaticTemplates()
{
    // A second helper with --templates auto: it prepares the default image's template at
    // start by itself, and one for a shape a start missed.
    HelperProcess helper({QStringLiteral("--templates"), QStringLiteral("auto")});
    QVERIFY2(helper.start(), qPrintable(helper.lastError()));
    RpcTestClient client(helper.socketPath());
    const auto templates = [&client] {
        return RpcTestClient::result(client.call(QStringLiteral("template.list"), {}))
            .value(QStringLiteral("templates"))
            .toArray();
    };
    const auto waitForTemplate = [&](int memoryMib) {
        return QTest::qWaitFor(
            [&] {
                const QJsonArray made = templates();
                return std::any_of(made.begin(), made.end(), [&](const QJsonValue &one) {
                    return one.toObject().value(QStringLiteral("memoryMib")).toInt() == memoryMib;
                });
            },
            180000);
    };
    QVERIFY2(waitForTemplate(256), "no template of the default image after start");
    QVERIFY(client.call(QStringLiteral("sandbox.create"), named(QStringLiteral("auto-a")))
                .contains(QStringLiteral("result")));
    QCOMPARE(RpcTestClient::result(client.call(QStringLiteral("sandbox.start"),
                                               named(QStringLiteral("auto-a")), 120000))
                 .value(QStringLiteral("startedFrom"))
                 .toString(),
             QStringLiteral("template"));
    // Another shape: this start boots cold and leaves a template behind for the next one.
    QJsonObject spec = named(QStringLiteral("auto-b"));
    spec.insert(QStringLiteral("memoryMib"), 192);
    QVERIFY(client.call(QStringLiteral("sandbox.create"), spec).contains(QStringLiteral("result")));
    QCOMPARE(RpcTestClient::result(client.call(QStringLiteral("sandbox.start"),
                                               named(QStringLiteral("auto-b")), 120000))
                 .value(QStringLiteral("startedFrom"))
                 .toString(),
             QStringLiteral("boot"));
    QVERIFY2(waitForTemplate(192), "no template for the shape the start missed");
    // --cold-boot sandboxes never start from one.
    QJsonObject cold = named(QStringLiteral("auto-c"));
    cold.insert(QStringLiteral("boot"), QStringLiteral("cold"));
    QVERIFY(client.call(QStringLiteral("sandbox.create"), cold).contains(QStringLiteral("result")));
    QCOMPARE(RpcTestClient::result(client.call(QStringLiteral("sandbox.start"),
                                               named(QStringLiteral("auto-c")), 120000))
                 .value(QStringLiteral("startedFrom"))
                 .toString(),
             QStringLiteral("boot"));
}

bool TestGuestIdentity::restartAfterKill()
{
    m_console.reset();
    return m_net->helper().start();
}

void TestGuestIdentity::helperBackAfterGuestWasLeftPausedResumesIt()
{
    // The state a helper killed between a snapshot's pause and its resume leaves behind,
    // made deterministic: with the helper gone, QMP `stop` from here.
    m_console.reset();
    m_net->helper().kill9();
    QLocalSocket qmp;
    qmp.connectToServer(
        QDir(m_net->helper().stateDir())
            .filePath(QStringLiteral("run/") + kOriginal + QStringLiteral("/qmp.sock")));
    QVERIFY(qmp.waitForConnected(5000));
    const auto command = [&qmp](const QByteArray &line) {
        qmp.write(line + '\n');
        qmp.flush();
        QDeadlineTimer deadline(5000);
        while (!deadline.hasExpired()) {
            if (!qmp.canReadLine() && !qmp.waitForReadyRead(100))
                continue;
            while (qmp.canReadLine()) {
                if (qmp.readLine().contains("\"return\""))
                    return true;
            }
        }
        return false;
    };
    QVERIFY(qmp.waitForReadyRead(5000)); // greeting
    qmp.readAll();
    QVERIFY(command(R"({"execute":"qmp_capabilities"})"));
    QVERIFY(command(R"({"execute":"stop"})"));
    qmp.disconnectFromServer();

    QVERIFY2(restartAfterKill(), qPrintable(m_net->helper().lastError()));
    const QJsonObject sandbox =
        RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(kOriginal)));
    QCOMPARE(sandbox.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
    m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kOriginal);
    QCOMPARE(m_console->run("echo back-$((40+2))", 30000).trimmed(), QByteArray("back-42"));
    // resume acts on the real state: the guest runs, so there is nothing to resume.
    QCOMPARE(RpcTestClient::errorKind(call(QStringLiteral("vm.resume"), named(kOriginal))),
             QStringLiteral("invalid_state"));
}

void TestGuestIdentity::helperKilledDuringSnapshotLeavesGuestRunning()
{
    // Some RAM to copy, so the pause lasts; then kill the helper while the snapshot runs: when
    // it opens the guest's RAM file to copy it (the guest paused), and when it closes it again
    // (the disk copy and the resume still to come).
    QVERIFY(
        !m_console->run("dd if=/dev/urandom of=/dev/shm/fill bs=1M count=48 2>/dev/null").isNull());
    const QByteArray hash =
        QCryptographicHash::hash(QFile::encodeName(QDir(m_net->helper().stateDir()).absolutePath()),
                                 QCryptographicHash::Sha256);
    const QByteArray ram =
        QFile::encodeName(QStringLiteral("/dev/shm/airlock-%1/%2.ram")
                              .arg(QString::fromLatin1(hash.toHex().left(12)), kOriginal));
    for (const quint32 moment : {quint32(IN_OPEN), quint32(IN_CLOSE_NOWRITE)}) {
        m_console.reset();
        const int watch = ::inotify_init1(IN_CLOEXEC);
        QVERIFY(watch >= 0);
        const auto closeWatch = qScopeGuard([watch] { ::close(watch); });
        QVERIFY(::inotify_add_watch(watch, ram.constData(), moment) >= 0);
        RpcTestClient client(m_net->helper().socketPath());
        QVERIFY(client.sendRaw(
            QJsonDocument(
                QJsonObject {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                             {QStringLiteral("id"), 1},
                             {QStringLiteral("method"), QStringLiteral("snapshot.create")},
                             {QStringLiteral("params"), named(kOriginal)}})
                .toJson(QJsonDocument::Compact)
            + '\n'));
        pollfd copying {watch, POLLIN, 0};
        QVERIFY2(::poll(&copying, 1, 60000) == 1, "the snapshot never read the guest's RAM");
        m_net->helper().kill9();
        QVERIFY2(restartAfterKill(), qPrintable(m_net->helper().lastError()));
        const QJsonObject sandbox =
            RpcTestClient::result(call(QStringLiteral("sandbox.get"), named(kOriginal)));
        QCOMPARE(sandbox.value(QStringLiteral("state")).toString(), QStringLiteral("running"));
        m_console = std::make_unique<GuestConsole>(m_net->helper().socketPath(), kOriginal);
        QCOMPARE(m_console->run("echo alive-$((40+2))", 30000).trimmed(), QByteArray("alive-42"));
    }
    // And snapshots work again afterwards.
    QVERIFY(call(QStringLiteral("snapshot.create"), named(kOriginal))
                .contains(QStringLiteral("result")));
}

QTEST_GUILESS_MAIN(TestGuestIdentity)
#include "tst_guestidentity.moc"

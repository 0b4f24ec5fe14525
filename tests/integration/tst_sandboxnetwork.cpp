// A sandbox's network through a real airlockd (in a network namespace of its own, see
// HelperProcess), a real airlock-gateway and a real TCG guest: tap, table and an unprivileged,
// capability-free gateway while it runs; policy.set reaching the running gateway; a killed
// gateway restarted with an egress event; re-adoption and leftover cleanup after airlockd is
// killed; nothing left after stop. The functions share one sandbox and run in order.

#include "core/daemon/gatewayprocess.h"
#include "core/net/helperinstance.h"
#include "core/net/nftablestable.h"
#include "core/net/tapdevice.h"
#include "core/vmm/vmmprocess.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "sanitizer.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QScopeGuard>
#include <QTest>

#include <csignal>
#include <fcntl.h>
#include <future>
#include <sched.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using airlock::NftablesTable;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {

const QString kName = QStringLiteral("net");

QJsonObject named(const QString &name)
{
    return QJsonObject {{QStringLiteral("name"), name}};
}

/// Runs `f` on a thread that entered network namespace `ns` (setns(2)), and returns its result.
template<typename F>
auto inNamespace(const QString &ns, F f) -> decltype(f())
{
    std::packaged_task<decltype(f())()> task([ns, f] {
        const int fd = ::open(QFile::encodeName(QStringLiteral("/run/netns/") + ns).constData(),
                              O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0)
            qFatal("cannot enter network namespace %s", qPrintable(ns));
        ::close(fd);
        return f();
    });
    auto result = task.get_future();
    std::thread thread(std::move(task));
    thread.join();
    return result.get();
}

ino_t inode(const QString &path)
{
    struct stat info
    {
    };
    return ::stat(QFile::encodeName(path).constData(), &info) == 0 ? info.st_ino : 0;
}

/// pids of airlock-gateway processes in network namespace `ns`.
QList<qint64> gatewaysIn(const QString &ns)
{
    const ino_t target = inode(QStringLiteral("/run/netns/") + ns);
    QList<qint64> pids;
    for (const QString &entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool isPid = false;
        const qint64 pid = entry.toLongLong(&isPid);
        if (!isPid)
            continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (!cmdline.open(QIODevice::ReadOnly)
            || !cmdline.readAll().contains(QByteArrayLiteral("airlock-gateway\0--control-fd")))
            continue;
        if (inode(QStringLiteral("/proc/%1/ns/net").arg(pid)) == target)
            pids.append(pid);
    }
    return pids;
}

/// `Field:\tvalue` lines of /proc/PID/status.
QMap<QString, QString> procStatus(qint64 pid)
{
    QMap<QString, QString> fields;
    QFile file(QStringLiteral("/proc/%1/status").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return fields;
    for (const QByteArray &line : file.readAll().split('\n')) {
        const qsizetype colon = line.indexOf(':');
        if (colon > 0)
            fields.insert(QString::fromLatin1(line.left(colon)),
                          QString::fromLatin1(line.mid(colon + 1).trimmed()));
    }
    return fields;
}

bool waitFor(const std::function<bool()> &condition, int timeoutMs)
{
    return QTest::qWaitFor(condition, timeoutMs);
}

/// True once process `pid` is stopped (state T in /proc/PID/stat).
bool isStopped(pid_t pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray line = stat.readAll();
    const qsizetype close = line.lastIndexOf(')');
    return close > 0 && line.mid(close + 2, 1) == "T";
}

/// A policy.set request with a fixed id, written without waiting for its answer.
QByteArray policySetRequest(qint64 id, const QString &sandbox, const QJsonArray &rules)
{
    const QJsonObject request {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                               {QStringLiteral("id"), id},
                               {QStringLiteral("method"), QStringLiteral("policy.set")},
                               {QStringLiteral("params"),
                                QJsonObject {{QStringLiteral("name"), sandbox},
                                             {QStringLiteral("policy"),
                                              QJsonObject {{QStringLiteral("version"), 1},
                                                           {QStringLiteral("rules"), rules}}}}}};
    return QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n';
}

/// The next response (not a notification) the client reads, or an empty object.
QJsonObject nextResponse(RpcTestClient &client, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        auto message = client.readMessage(int(deadline.remainingTime()));
        if (!message)
            return {};
        if (!message->contains(QStringLiteral("method")))
            return *message;
    }
    return {};
}

} // namespace

class TestSandboxNetwork : public QObject
{
    Q_OBJECT

private:
    QString ns() const { return m_helper->networkNamespace(); }
    /// The helper's tag in its tap and table names (docs/network.md).
    QString instance() const { return airlock::HelperInstance::tagFor(m_helper->stateDir()); }
    QString tap() const { return airlock::TapDevice::interfaceName(kName, instance()); }
    bool tapExists() const
    {
        return QProcess::execute(QStringLiteral("ip"),
                                 {QStringLiteral("-n"), ns(), QStringLiteral("link"),
                                  QStringLiteral("show"), tap()})
            == 0;
    }
    bool tableLoaded() const
    {
        return inNamespace(ns(),
                           [this] { return bool(NftablesTable::counters(kName, instance())); });
    }
    QStringList leftoverTables() const
    {
        return inNamespace(ns(), [this] {
            return NftablesTable::listLeftoverTables(instance()).value_or(QStringList());
        });
    }
    /// Resolves `name` through the gateway's DNS listener (GW:15053; the guest's port 53 is
    /// redirected there) from the host side of the link.
    void lookup(const QString &name) const
    {
        QProcess::execute(QStringLiteral("ip"),
                          {QStringLiteral("netns"), QStringLiteral("exec"), ns(),
                           QStringLiteral("busybox"), QStringLiteral("nslookup"),
                           QStringLiteral("-type=A"), QStringLiteral("-port=15053"), name,
                           QStringLiteral("100.96.0.1")});
    }
    std::optional<QJsonObject> waitForEgress(const QString &reason, const QString &name,
                                             int timeoutMs = 15000)
    {
        return m_events->waitForNotification(
            QStringLiteral("egress.event"),
            [&](const QJsonObject &params) {
                const QJsonObject event = params.value(QStringLiteral("event")).toObject();
                return params.value(QStringLiteral("sandbox")).toString() == kName
                    && event.value(QStringLiteral("reason")).toString() == reason
                    && (name.isEmpty() || event.value(QStringLiteral("name")).toString() == name);
            },
            timeoutMs);
    }
    QString state()
    {
        RpcTestClient client(m_helper->socketPath());
        return RpcTestClient::result(client.call(QStringLiteral("sandbox.get"), named(kName)))
            .value(QStringLiteral("state"))
            .toString();
    }
    void subscribe()
    {
        m_events = std::make_unique<RpcTestClient>(m_helper->socketPath());
        QVERIFY(m_events->hello());
        QVERIFY(
            m_events->call(QStringLiteral("events.subscribe")).contains(QStringLiteral("result")));
    }

    /// Stops (SIGSTOP) the sandbox's one gateway and returns its pid once it is stopped; 0 when
    /// there is not exactly one or it did not stop.
    pid_t stopTheGateway() const
    {
        const QList<qint64> gateways = gatewaysIn(ns());
        if (gateways.size() != 1)
            return 0;
        const pid_t gateway = pid_t(gateways.first());
        if (::kill(gateway, SIGSTOP) != 0
            || !waitFor([gateway] { return isStopped(gateway); }, 5000))
            return 0;
        return gateway;
    }

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<RpcTestClient> m_events;

private Q_SLOTS:
    void initTestCase()
    {
        if (::geteuid() != 0)
            QSKIP("needs root (network namespaces, taps, nftables)");
        if (qEnvironmentVariable("AIRLOCK_GATEWAY").isEmpty())
            QSKIP("AIRLOCK_GATEWAY is not set (run through ctest)");
        m_helper = std::make_unique<HelperProcess>();
        QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
        subscribe();
        RpcTestClient client(m_helper->socketPath());
        QVERIFY(client.call(QStringLiteral("sandbox.create"), named(kName))
                    .contains(QStringLiteral("result")));
        const QJsonObject started =
            client.call(QStringLiteral("sandbox.start"), named(kName), 60000);
        QCOMPARE(RpcTestClient::result(started).value(QStringLiteral("state")).toString(),
                 QStringLiteral("running"));
    }

    void cleanupTestCase() { m_helper.reset(); }

    void networkIsUpWhileRunning()
    {
        QVERIFY(tapExists());
        QVERIFY(tableLoaded());
        const QList<qint64> gateways = gatewaysIn(ns());
        QCOMPARE(gateways.size(), 1);
        const QMap<QString, QString> status = procStatus(gateways.first());
        // Real, effective, saved and filesystem uid: all unprivileged.
        const QStringList uids = status.value(QStringLiteral("Uid")).split(u'\t');
        QCOMPARE(uids.size(), 4);
        for (const QString &uid : uids)
            QVERIFY2(uid.toUInt() >= 1000, qPrintable(uid));
        QCOMPARE(status.value(QStringLiteral("CapEff")), QStringLiteral("0000000000000000"));
        QCOMPARE(status.value(QStringLiteral("CapPrm")), QStringLiteral("0000000000000000"));
        QCOMPARE(status.value(QStringLiteral("CapBnd")), QStringLiteral("0000000000000000"));
        QCOMPARE(status.value(QStringLiteral("CapAmb")), QStringLiteral("0000000000000000"));
        QCOMPARE(status.value(QStringLiteral("NoNewPrivs")), QStringLiteral("1"));
        // Its own autogroup, weighted below the helper's like a VMM's (sched(7)).
        QFile autogroup(QStringLiteral("/proc/%1/autogroup").arg(gateways.first()));
        if (autogroup.open(QIODevice::ReadOnly)) {
            const QByteArray line = autogroup.readAll().trimmed();
            QVERIFY2(line.endsWith(" nice " + QByteArray::number(airlock::kGuestAutogroupNice)),
                     line.constData());
        }
        // Not dumpable (it holds the CA key, later credentials): no core file, no ptrace by its
        // own uid, and the kernel shows its /proc entries as root's (proc(5), PR_SET_DUMPABLE).
        struct stat procEntry = {};
        QCOMPARE(
            ::stat(
                QFile::encodeName(QStringLiteral("/proc/%1/fd").arg(gateways.first())).constData(),
                &procEntry),
            0);
        QCOMPARE(procEntry.st_uid, uid_t(0));
        QVERIFY(uids.first().toUInt() != 0);
        // Bounded by airlockd (docs/gateway.md, "Resource bounds"): memory and its log file,
        // as hard limits it cannot raise
        // (docs/reviews/2026-12-01-credentials-redteam.md#f5 and #f11).
        QFile limits(QStringLiteral("/proc/%1/limits").arg(gateways.first()));
        QVERIFY(limits.open(QIODevice::ReadOnly));
        const QByteArray table = limits.readAll();
        const airlock::GatewayConfig defaults;
        for (const auto &[label, bytes] :
             {std::pair {QByteArrayLiteral("Max data size"), defaults.maxDataBytes},
              std::pair {QByteArrayLiteral("Max file size"), defaults.maxLogBytes}}) {
            // The sanitized gateway runs without a data limit (AddressSanitizer's shadow).
            if (airlock::test::kSanitized && label == QByteArrayLiteral("Max data size"))
                continue;
            const qsizetype at = table.indexOf(label);
            QVERIFY2(at >= 0, table.constData());
            const QList<QByteArray> columns =
                table.mid(at + label.size(), 60).simplified().split(' ');
            QCOMPARE(columns.value(0), QByteArray::number(bytes));
            QCOMPARE(columns.value(1), QByteArray::number(bytes));
        }
        // Nothing of the helper's leaks in: no file under the state dir but its own log.
        const QString fdDir = QStringLiteral("/proc/%1/fd").arg(gateways.first());
        for (const QString &fd : QDir(fdDir).entryList(QDir::NoDotAndDotDot | QDir::System)) {
            const QString target = QFile::symLinkTarget(fdDir + u'/' + fd);
            if (target.startsWith(m_helper->stateDir()))
                QVERIFY2(target.contains(QStringLiteral("/log/gateway-")), qPrintable(target));
        }
    }

    void policySetReachesTheRunningGateway()
    {
        lookup(QStringLiteral("pkg.test"));
        QVERIFY(waitForEgress(QStringLiteral("host_not_allowed"), QStringLiteral("pkg.test")));
        RpcTestClient client(m_helper->socketPath());
        const QJsonObject policy {
            {QStringLiteral("version"), 1},
            {QStringLiteral("rules"),
             QJsonArray {QJsonObject {{QStringLiteral("host"), QStringLiteral("pkg.test")}}}}};
        QVERIFY(client
                    .call(QStringLiteral("policy.set"),
                          QJsonObject {{QStringLiteral("name"), kName},
                                       {QStringLiteral("policy"), policy}})
                    .contains(QStringLiteral("result")));
        m_events->takeNotifications();
        lookup(QStringLiteral("pkg.test"));
        // Allowed by policy now; the test namespace has no upstream resolver, so the answer
        // fails upstream, but the name is no longer host_not_allowed.
        const auto event = m_events->waitForNotification(
            QStringLiteral("egress.event"),
            [](const QJsonObject &params) {
                const QJsonObject e = params.value(QStringLiteral("event")).toObject();
                return e.value(QStringLiteral("name")).toString() == u"pkg.test"
                    && e.value(QStringLiteral("dnsType")).toString() == u"A";
            },
            15000);
        QVERIFY(event);
        QVERIFY2(event->value(QStringLiteral("event"))
                         .toObject()
                         .value(QStringLiteral("reason"))
                         .toString()
                     != u"host_not_allowed",
                 QJsonDocument(*event).toJson().constData());
        // Stored too, oldest first, with increasing seqs.
        const QJsonObject history =
            RpcTestClient::result(client.call(QStringLiteral("egress.history"), named(kName)));
        const QJsonArray events = history.value(QStringLiteral("events")).toArray();
        QVERIFY(events.size() >= 2);
        QVERIFY(events.first().toObject().value(QStringLiteral("seq")).toInteger()
                < events.last().toObject().value(QStringLiteral("seq")).toInteger());
        const qint64 lastSeq = events.last().toObject().value(QStringLiteral("seq")).toInteger();
        // `since` the first: the rest of that list, in order. The guest's resolver may still be
        // asking (AAAA, retries), so later events may follow; none may come before.
        const qint64 firstSeq = events.first().toObject().value(QStringLiteral("seq")).toInteger();
        const QJsonArray after =
            RpcTestClient::result(client.call(QStringLiteral("egress.history"),
                                              QJsonObject {{QStringLiteral("name"), kName},
                                                           {QStringLiteral("since"), firstSeq}}))
                .value(QStringLiteral("events"))
                .toArray();
        QVERIFY2(after.size() >= events.size() - 1, QJsonDocument(after).toJson().constData());
        for (qsizetype i = 0; i < after.size(); ++i) {
            const qint64 seq = after.at(i).toObject().value(QStringLiteral("seq")).toInteger();
            QVERIFY2(seq > firstSeq, QJsonDocument(after).toJson().constData());
            if (i + 1 < events.size())
                QCOMPARE(seq, events.at(i + 1).toObject().value(QStringLiteral("seq")).toInteger());
        }
        // The audit trail has the same events.
        QFile audit(m_helper->stateDir() + QStringLiteral("/audit/egress.jsonl"));
        QVERIFY(audit.open(QIODevice::ReadOnly));
        QVERIFY(audit.readAll().contains(
            QByteArrayLiteral("\"seq\":%1").replace("%1", QByteArray::number(lastSeq))));
    }

    // Issue 16: policy.set answers only once the gateway confirmed the policy, so "applied" in
    // a client means enforced. With the gateway stopped the answer waits while the helper keeps
    // serving (a later call is answered first); once the gateway runs again and applies it,
    // policy.set answers.
    void policySetAnswersAfterTheGatewayApplied()
    {
        m_events->takeNotifications();
        const pid_t gateway = stopTheGateway();
        QVERIFY(gateway > 0);
        const auto resume = qScopeGuard([gateway] { ::kill(gateway, SIGCONT); });
        RpcTestClient client(m_helper->socketPath());
        const QJsonArray rules {QJsonObject {{QStringLiteral("host"), QStringLiteral("pkg.test")}}};
        QVERIFY(client.sendRaw(policySetRequest(9001, kName, rules)));
        QVERIFY(client.sendRaw(
            QJsonDocument(QJsonObject {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                                       {QStringLiteral("id"), 9002},
                                       {QStringLiteral("method"), QStringLiteral("sandbox.get")},
                                       {QStringLiteral("params"), named(kName)}})
                .toJson(QJsonDocument::Compact)
            + '\n'));
        const QJsonObject first = nextResponse(client, 10000);
        QCOMPARE(first.value(QStringLiteral("id")).toInteger(), 9002);
        QCOMPARE(::kill(gateway, SIGCONT), 0);
        const QJsonObject applied = nextResponse(client, 10000);
        QCOMPARE(applied.value(QStringLiteral("id")).toInteger(), 9001);
        QVERIFY2(applied.contains(QStringLiteral("result")),
                 QJsonDocument(applied).toJson().constData());
        // The helper logged the gateway's confirmation before it answered.
        QFile log(m_helper->stateDir() + QStringLiteral("/log/airlockd.log"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        QVERIFY(log.readAll().contains("the gateway applied policy generation"));
    }

    // A gateway that never confirms costs the caller a Timeout (the policy stays stored and is
    // what a restarted gateway starts with), never the helper's event loop.
    void policySetTimesOutWhenTheGatewayNeverConfirms()
    {
        const pid_t gateway = stopTheGateway();
        QVERIFY(gateway > 0);
        const auto resume = qScopeGuard([gateway] { ::kill(gateway, SIGCONT); });
        RpcTestClient client(m_helper->socketPath());
        const QJsonArray rules {
            QJsonObject {{QStringLiteral("host"), QStringLiteral("stored.test")}}};
        QVERIFY(client.sendRaw(policySetRequest(9003, kName, rules)));
        const QJsonObject answer =
            nextResponse(client, airlock::GatewayProcess::kPolicyAckTimeoutMs + 10000);
        QCOMPARE(answer.value(QStringLiteral("id")).toInteger(), 9003);
        QCOMPARE(RpcTestClient::errorKind(answer), QStringLiteral("timeout"));
        QVERIFY2(answer.value(QStringLiteral("error"))
                     .toObject()
                     .value(QStringLiteral("message"))
                     .toString()
                     .contains(QStringLiteral("has not confirmed")),
                 QJsonDocument(answer).toJson().constData());
        RpcTestClient other(m_helper->socketPath());
        const QJsonObject stored =
            RpcTestClient::result(other.call(QStringLiteral("policy.get"), named(kName)));
        const QJsonArray storedRules = stored.value(QStringLiteral("policy"))
                                           .toObject()
                                           .value(QStringLiteral("rules"))
                                           .toArray();
        QCOMPARE(storedRules.size(), 1);
        QCOMPARE(storedRules.at(0).toObject().value(QStringLiteral("host")).toString(),
                 QStringLiteral("stored.test"));
    }

    void airlockctlShowsEgress()
    {
        const QString ctl = qEnvironmentVariable("AIRLOCK_AIRLOCKCTL");
        QProcess table;
        table.start(
            ctl,
            {QStringLiteral("--socket"), m_helper->socketPath(), QStringLiteral("egress"), kName});
        QVERIFY(table.waitForFinished(10000));
        QCOMPARE(table.exitCode(), 0);
        const QString text = QString::fromUtf8(table.readAllStandardOutput());
        QVERIFY2(text.startsWith(QStringLiteral("TIME")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("dns   denied  host_not_allowed")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("pkg.test")));

        // --follow --json: the stored events, then a new one as it happens.
        QProcess follow;
        follow.start(ctl,
                     {QStringLiteral("--socket"), m_helper->socketPath(), QStringLiteral("egress"),
                      kName, QStringLiteral("--follow"), QStringLiteral("--json"),
                      QStringLiteral("--limit"), QStringLiteral("1")});
        QVERIFY(follow.waitForReadyRead(10000));
        QByteArray seen = follow.readAllStandardOutput();
        QCOMPARE(seen.count('\n'), 1);
        lookup(QStringLiteral("follow.test"));
        QDeadlineTimer deadline(15000);
        while (!seen.contains("follow.test") && !deadline.hasExpired()) {
            follow.waitForReadyRead(500);
            seen += follow.readAllStandardOutput();
        }
        follow.kill();
        follow.waitForFinished();
        QVERIFY2(seen.contains("\"name\":\"follow.test\""), seen.constData());
        for (const QByteArray &line : seen.trimmed().split('\n'))
            QVERIFY2(QJsonDocument::fromJson(line).isObject(), line.constData());
    }

    // A gateway that stops reading its control channel (stuck, or compromised) holds up neither
    // the helper nor the policy: the line that does not fit into the socket waits in a queue,
    // other requests are answered meanwhile, and the gateway is killed and restarted with the
    // stored policy once the queue has made no progress for a while.
    void stuckGatewayNeverStallsTheHelper()
    {
        RpcTestClient events(m_helper->socketPath());
        const QJsonObject before =
            RpcTestClient::result(events.call(QStringLiteral("policy.get"), named(kName)));
        const auto restore = qScopeGuard([&] {
            RpcTestClient again(m_helper->socketPath());
            again.call(QStringLiteral("policy.set"),
                       QJsonObject {{QStringLiteral("name"), kName},
                                    {QStringLiteral("policy"), before.value(u"policy")}});
        });
        const pid_t gateway = stopTheGateway();
        QVERIFY(gateway > 0);
        const auto resume = qScopeGuard([gateway] { ::kill(gateway, SIGCONT); });
        // About 900 KiB of policy: more than a Unix socket's buffers hold.
        QJsonArray rules;
        const QString label(60, QLatin1Char('a')); // labels of at most 63 octets (RFC 1035)
        for (int i = 0; i < 4000; ++i)
            rules.append(QJsonObject {
                {QStringLiteral("host"), QStringLiteral("h%1.%2.%2.%2.test").arg(i).arg(label)}});
        RpcTestClient client(m_helper->socketPath());
        QVERIFY(client.sendRaw(policySetRequest(9101, kName, rules)));
        QVERIFY(client.sendRaw(
            QJsonDocument(QJsonObject {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                                       {QStringLiteral("id"), 9102},
                                       {QStringLiteral("method"), QStringLiteral("sandbox.get")},
                                       {QStringLiteral("params"), named(kName)}})
                .toJson(QJsonDocument::Compact)
            + '\n'));
        // Before the queue, the helper sat in a write to the stopped gateway first.
        const QJsonObject first = nextResponse(client, 10000);
        QVERIFY2(first.value(QStringLiteral("id")).toInteger() == 9102,
                 QJsonDocument(first).toJson().left(2000).constData());
        // The stuck gateway is killed and a new one started, which has the stored policy.
        const QJsonObject applied =
            nextResponse(client, airlock::GatewayProcess::kPolicyAckTimeoutMs + 20000);
        QCOMPARE(applied.value(QStringLiteral("id")).toInteger(), 9101);
        QVERIFY2(applied.contains(QStringLiteral("result")),
                 QJsonDocument(applied).toJson().left(2000).constData());
        QVERIFY(waitFor(
            [&] {
                const QList<qint64> now = gatewaysIn(ns());
                return now.size() == 1 && now.first() != gateway;
            },
            30000));
        QFile log(m_helper->stateDir() + QStringLiteral("/log/airlockd.log"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QByteArray text = log.readAll();
        QVERIFY2(text.contains("has not read its control channel"), text.right(2000).constData());
        // The restart's event comes after the new gateway is up; consuming it here keeps it from
        // answering the next test's wait.
        QVERIFY(waitForEgress(QStringLiteral("gateway_restarted"), QString()));
        QCOMPARE(state(), QStringLiteral("running"));
    }

    void killedGatewayIsRestarted()
    {
        const QList<qint64> before = gatewaysIn(ns());
        QCOMPARE(before.size(), 1);
        m_events->takeNotifications();
        QCOMPARE(::kill(pid_t(before.first()), SIGKILL), 0);
        // The table stays: with the gateway gone, redirected traffic finds no listener.
        QVERIFY(tableLoaded());
        QVERIFY(waitForEgress(QStringLiteral("gateway_restarted"), QString()));
        QVERIFY(waitFor(
            [&] {
                const QList<qint64> now = gatewaysIn(ns());
                return now.size() == 1 && now.first() != before.first();
            },
            15000));
        QCOMPARE(state(), QStringLiteral("running"));
        // The restarted gateway has the stored policy.
        m_events->takeNotifications();
        lookup(QStringLiteral("evil.test"));
        QVERIFY(waitForEgress(QStringLiteral("host_not_allowed"), QStringLiteral("evil.test")));
    }

    void helperCrashReadoptsTheGuest()
    {
        const QList<qint64> before = gatewaysIn(ns());
        m_helper->kill9();
        QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
        subscribe();
        QCOMPARE(state(), QStringLiteral("running"));
        QVERIFY(tapExists());
        QVERIFY(tableLoaded());
        QVERIFY(waitFor([&] { return gatewaysIn(ns()).size() == 1; }, 5000));
        QVERIFY(!before.contains(gatewaysIn(ns()).first()));
    }

    void helperCrashLeftoversAreRemoved()
    {
        RpcTestClient client(m_helper->socketPath());
        const qint64 vmmPid =
            RpcTestClient::result(client.call(QStringLiteral("sandbox.get"), named(kName)))
                .value(QStringLiteral("vmmPid"))
                .toInteger();
        QVERIFY(vmmPid > 0);
        client.abort();
        m_helper->kill9();
        // The guest dies while no helper watches: its tap, table and gateway are leftovers.
        QCOMPARE(::kill(pid_t(vmmPid), SIGKILL), 0);
        QVERIFY(
            waitFor([&] { return !QFile::exists(QStringLiteral("/proc/%1").arg(vmmPid)); }, 5000));
        QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
        subscribe();
        QCOMPARE(state(), QStringLiteral("stopped"));
        QVERIFY(!tapExists());
        QCOMPARE(leftoverTables(), QStringList());
        QVERIFY(waitFor([&] { return gatewaysIn(ns()).isEmpty(); }, 5000));
    }

    // Issue 16, section 4: a link another helper (or the host) already uses is skipped, so two
    // helpers with the default pool on one host do not both take 100.96.0.0/30. The other
    // helper's tap is played by a dummy interface with the first link's gateway address.
    void linkInUseOnTheHostIsSkipped()
    {
        RpcTestClient client(m_helper->socketPath());
        if (state() != u"stopped") {
            client.call(
                QStringLiteral("sandbox.stop"),
                QJsonObject {{QStringLiteral("name"), kName}, {QStringLiteral("timeoutMs"), 2000}});
            QVERIFY(waitFor([&] { return state() == u"stopped"; }, 20000));
        }
        const QString dummy = QStringLiteral("alother0");
        auto ip = [this](const QStringList &args) {
            return QProcess::execute(QStringLiteral("ip"),
                                     QStringList {QStringLiteral("-n"), ns()} + args);
        };
        const auto removeDummy = qScopeGuard([&] {
            ip({QStringLiteral("link"), QStringLiteral("del"), dummy});
        });
        QCOMPARE(ip({QStringLiteral("link"), QStringLiteral("add"), dummy, QStringLiteral("type"),
                     QStringLiteral("veth"), QStringLiteral("peer"), QStringLiteral("name"),
                     QStringLiteral("alother1")}),
                 0);
        QCOMPARE(ip({QStringLiteral("addr"), QStringLiteral("add"), QStringLiteral("100.96.0.1/30"),
                     QStringLiteral("dev"), dummy}),
                 0);
        // An interface named like this helper's own taps and down, as a tap is while it is made
        // (with the classful /8 it shows for a moment then), takes no link.
        const QString own = tap().left(tap().indexOf(u'-')) + QStringLiteral("-zz");
        const auto removeOwn = qScopeGuard([&] {
            ip({QStringLiteral("link"), QStringLiteral("del"), own});
        });
        QCOMPARE(ip({QStringLiteral("link"), QStringLiteral("add"), own, QStringLiteral("type"),
                     QStringLiteral("veth"), QStringLiteral("peer"), QStringLiteral("name"),
                     own + QStringLiteral("p")}),
                 0);
        QCOMPARE(ip({QStringLiteral("addr"), QStringLiteral("add"), QStringLiteral("100.96.0.9/8"),
                     QStringLiteral("dev"), own}),
                 0);
        QCOMPARE(
            RpcTestClient::result(client.call(QStringLiteral("sandbox.start"), named(kName), 60000))
                .value(QStringLiteral("state"))
                .toString(),
            QStringLiteral("running"));
        QProcess show;
        show.start(QStringLiteral("ip"),
                   {QStringLiteral("-n"), ns(), QStringLiteral("-4"), QStringLiteral("addr"),
                    QStringLiteral("show"), QStringLiteral("dev"), tap()});
        QVERIFY(show.waitForFinished(5000));
        const QByteArray addresses = show.readAllStandardOutput();
        QVERIFY2(addresses.contains("inet 100.96.0.5/30"), addresses.constData());
        QFile log(m_helper->stateDir() + QStringLiteral("/log/airlockd.log"));
        QVERIFY(log.open(QIODevice::ReadOnly));
        QVERIFY(log.readAll().contains("link 100.96.0.0/30 is in use on interface alother0"));
        client.call(
            QStringLiteral("sandbox.stop"),
            QJsonObject {{QStringLiteral("name"), kName}, {QStringLiteral("timeoutMs"), 2000}});
        QVERIFY(waitFor([&] { return state() == u"stopped"; }, 20000));
    }

    void stopRemovesEverything()
    {
        RpcTestClient client(m_helper->socketPath());
        QCOMPARE(
            RpcTestClient::result(client.call(QStringLiteral("sandbox.start"), named(kName), 60000))
                .value(QStringLiteral("state"))
                .toString(),
            QStringLiteral("running"));
        QVERIFY(tapExists());
        QVERIFY(tableLoaded());
        QCOMPARE(gatewaysIn(ns()).size(), 1);
        client.call(
            QStringLiteral("sandbox.stop"),
            QJsonObject {{QStringLiteral("name"), kName}, {QStringLiteral("timeoutMs"), 2000}});
        QVERIFY(waitFor([&] { return state() == u"stopped"; }, 20000));
        QVERIFY(!tapExists());
        QCOMPARE(leftoverTables(), QStringList());
        // The gateway is told to exit with its network (killed after a grace period); at nice 10 on
        // a loaded machine it may still be on its way out when the state says stopped.
        QVERIFY(waitFor([&] { return gatewaysIn(ns()).isEmpty(); }, 5000));
        QVERIFY(client.call(QStringLiteral("sandbox.delete"), named(kName))
                    .contains(QStringLiteral("result")));
        QVERIFY(!QFile::exists(m_helper->stateDir() + QStringLiteral("/ca/") + kName));
    }
};

QTEST_GUILESS_MAIN(TestSandboxNetwork)
#include "tst_sandboxnetwork.moc"

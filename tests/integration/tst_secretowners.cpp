// Secrets have owners (docs/credentials.md, "Trust model"): a real airlockd, root and a real
// second host user in group airlock (TestUser), each on its own connection, so the helper sees
// two uids through SO_PEERCRED. The attack of docs/reviews/2026-12-01-newuser-pass.md#h2: a group
// member binds root's secret to a host of their own with a header template of their own, so the
// gateway would send root's token there; or replaces or deletes it. Refused with permission_denied
// naming the owner; the member manages their own secrets; root may do everything; every change
// and every refused attempt is a line of STATE/audit/credentials.jsonl holding no value. A fork
// of a real TCG guest with `bindings: true` copies only the caller's bindings (root: all).
#include "airlockctlrun.h"
#include "guestconsole.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "secretforms.h"
#include "testuser.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTest>

#include <unistd.h>

using airlock::test::containsAnySecretForm;
using airlock::test::GuestConsole;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;
using airlock::test::runAirlockctl;
using airlock::test::TestUser;

namespace {

const QByteArray kRootSecret = QByteArrayLiteral("root-canary-7f3a91c0d2b84e65");
const QByteArray kRootRotated = QByteArrayLiteral("root-rotated-0c9d8e7f6a5b4c3d");
const QByteArray kUserSecret = QByteArrayLiteral("user-canary-19e4b7a2c6d05f83");
const QByteArray kAttackerValue = QByteArrayLiteral("attacker-chosen-5d6e7f8091a2b3c4");

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QString errorMessage(const QJsonObject &answer)
{
    return answer.value(QStringLiteral("error"))
        .toObject()
        .value(QStringLiteral("message"))
        .toString();
}

QJsonObject headerBinding(const QString &sandbox, const QString &secret, const QString &host)
{
    return {{QStringLiteral("sandbox"), sandbox},
            {QStringLiteral("secret"), secret},
            {QStringLiteral("host"), host},
            {QStringLiteral("placement"),
             QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                          {QStringLiteral("header"), QStringLiteral("X-Leak")},
                          {QStringLiteral("template"), QStringLiteral("{secret}")}}}};
}

} // namespace

class TestSecretOwners : public QObject
{
    Q_OBJECT

private:
    using Run = airlock::test::CtlRun;

    /// airlockctl as `user` (null: root).
    Run ctl(const TestUser *user, const QStringList &arguments, const QByteArray &input = {})
    {
        const Run run = runAirlockctl(m_ctl, m_helper->socketPath(), arguments, input, user);
        m_transcript += run.out.toUtf8() + run.err.toUtf8();
        return run;
    }

    QJsonObject call(RpcTestClient &client, const QString &method, const QJsonObject &params = {})
    {
        const QJsonObject answer = client.call(method, params);
        m_transcript += compact(answer);
        return answer;
    }
    QJsonObject asRoot(const QString &method, const QJsonObject &params = {})
    {
        return call(*m_root, method, params);
    }
    QJsonObject asUser(const QString &method, const QJsonObject &params = {})
    {
        return call(*m_userClient, method, params);
    }

    QJsonObject secretInfo(const QString &name)
    {
        const QJsonArray secrets = RpcTestClient::result(asUser(QStringLiteral("secret.list")))
                                       .value(QStringLiteral("secrets"))
                                       .toArray();
        for (const QJsonValue &value : secrets) {
            if (value.toObject().value(QStringLiteral("name")).toString() == name)
                return value.toObject();
        }
        return {};
    }

    QJsonArray bindingsOf(const QString &sandbox)
    {
        return RpcTestClient::result(
                   asUser(QStringLiteral("binding.list"), {{QStringLiteral("sandbox"), sandbox}}))
            .value(QStringLiteral("bindings"))
            .toArray();
    }

    /// The audit trail's lines, parsed.
    QList<QJsonObject> auditLines()
    {
        QFile file(m_helper->stateDir() + QStringLiteral("/audit/credentials.jsonl"));
        if (!file.open(QIODevice::ReadOnly))
            return {};
        QList<QJsonObject> lines;
        for (const QByteArray &line : file.readAll().split('\n')) {
            if (line.isEmpty())
                continue;
            QJsonParseError error {};
            const QJsonDocument document = QJsonDocument::fromJson(line, &error);
            if (error.error != QJsonParseError::NoError || !document.isObject())
                return {}; // every line must be one JSON object
            lines.append(document.object());
        }
        return lines;
    }

    /// The audit lines with all of `fields` equal.
    QList<QJsonObject> audited(const QJsonObject &fields)
    {
        QList<QJsonObject> matching;
        for (const QJsonObject &line : auditLines()) {
            bool all = true;
            for (auto it = fields.constBegin(); it != fields.constEnd(); ++it)
                all = all && line.value(it.key()) == it.value();
            if (all)
                matching.append(line);
        }
        return matching;
    }

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<TestUser> m_user;
    std::unique_ptr<RpcTestClient> m_root;
    std::unique_ptr<RpcTestClient> m_userClient;
    QString m_ctl;
    qint64 m_rootBinding = 0;
    QByteArray m_transcript; ///< every answer and CLI output, searched for values at the end

private Q_SLOTS:
    void initTestCase()
    {
        if (::geteuid() != 0)
            QSKIP("needs root (a second host user, airlockd)");
        m_ctl = qEnvironmentVariable(
            "AIRLOCK_AIRLOCKCTL", QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlockctl/airlockctl"));
        m_helper = std::make_unique<HelperProcess>(
            QStringList {QStringLiteral("--log-level"), QStringLiteral("trace")});
        QVERIFY2(QFileInfo::exists(m_helper->imageStore() + QStringLiteral("/default/image.json")),
                 "no guest image (the guest_image fixture builds it)");
        QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
        // After the helper: it creates group airlock.
        m_user = std::make_unique<TestUser>();
        QVERIFY2(m_user->isValid(), qPrintable(m_user->lastError()));
        m_root = std::make_unique<RpcTestClient>(m_helper->socketPath());
        m_userClient = m_user->connect(m_helper->socketPath());
        QVERIFY(m_root->isConnected());
        QVERIFY(m_userClient && m_userClient->isConnected());
        // Sandboxes stay shared: the user creates one, root another, both may use both.
        QVERIFY(asRoot(QStringLiteral("sandbox.create"),
                       {{QStringLiteral("name"), QStringLiteral("shared")}})
                    .contains(QStringLiteral("result")));
        QVERIFY(asUser(QStringLiteral("sandbox.create"),
                       {{QStringLiteral("name"), QStringLiteral("users")}})
                    .contains(QStringLiteral("result")));

        const QJsonObject set =
            asRoot(QStringLiteral("secret.set"),
                   {{QStringLiteral("name"), QStringLiteral("root-token")},
                    {QStringLiteral("value"), QString::fromLatin1(kRootSecret)}});
        QVERIFY2(set.contains(QStringLiteral("result")), compact(set).constData());
        QCOMPARE(RpcTestClient::result(set).value(QStringLiteral("ownerUid")).toInt(-1), 0);
        const QJsonObject bound =
            asRoot(QStringLiteral("binding.add"),
                   headerBinding(QStringLiteral("shared"), QStringLiteral("root-token"),
                                 QStringLiteral("api.test")));
        QVERIFY2(bound.contains(QStringLiteral("result")), compact(bound).constData());
        m_rootBinding = RpcTestClient::result(bound).value(QStringLiteral("id")).toInteger();
        QVERIFY(m_rootBinding > 0);
    }

    void everyoneListsOwners()
    {
        const QJsonObject info = secretInfo(QStringLiteral("root-token"));
        QCOMPARE(info.value(QStringLiteral("owner")).toString(), QStringLiteral("root"));
        QCOMPARE(info.value(QStringLiteral("ownerUid")).toInt(-1), 0);
        QCOMPARE(info.value(QStringLiteral("fingerprint")).toString().size(), 16);
        QCOMPARE(info.value(QStringLiteral("bindings")).toArray(), QJsonArray {m_rootBinding});
        QVERIFY(!info.contains(QStringLiteral("value")));
        // Bindings of others are listed too (metadata, never a value).
        QCOMPARE(bindingsOf(QStringLiteral("shared")).size(), 1);
    }

    // docs/reviews/2026-12-01-newuser-pass.md#h2: root's token to the attacker's host, with the
    // attacker's template.
    void memberCannotBindRootsSecret()
    {
        for (const QString &sandbox : {QStringLiteral("shared"), QStringLiteral("users")}) {
            const QJsonObject answer = asUser(QStringLiteral("binding.add"),
                                              headerBinding(sandbox, QStringLiteral("root-token"),
                                                            QStringLiteral("attacker.test")));
            QCOMPARE(RpcTestClient::errorKind(answer), QStringLiteral("permission_denied"));
            QVERIFY2(errorMessage(answer).contains(
                         QStringLiteral("secret 'root-token' belongs to root (uid 0)")),
                     qPrintable(errorMessage(answer)));
            QVERIFY(errorMessage(answer).contains(QStringLiteral("bind it")));
        }
        QCOMPARE(bindingsOf(QStringLiteral("users")).size(), 0);
        QCOMPARE(bindingsOf(QStringLiteral("shared")).size(), 1);
        // Through airlockctl as well (the command a person would type).
        const Run cli =
            ctl(m_user.get(),
                {QStringLiteral("binding"), QStringLiteral("add"), QStringLiteral("users"),
                 QStringLiteral("root-token"), QStringLiteral("attacker.test"),
                 QStringLiteral("--header"), QStringLiteral("X-Leak"), QStringLiteral("--template"),
                 QStringLiteral("{secret}")});
        QCOMPARE(cli.exitCode, 1);
        QVERIFY2(cli.err.contains(QStringLiteral("belongs to root")), qPrintable(cli.err));
        QCOMPARE(bindingsOf(QStringLiteral("users")).size(), 0);
    }

    void memberCannotReplaceDeleteOrUnbindRootsSecret()
    {
        const QString fingerprint = secretInfo(QStringLiteral("root-token"))
                                        .value(QStringLiteral("fingerprint"))
                                        .toString();
        // Replacing it would let the attacker choose what the gateway sends for root.
        const QJsonObject replace =
            asUser(QStringLiteral("secret.set"),
                   {{QStringLiteral("name"), QStringLiteral("root-token")},
                    {QStringLiteral("value"), QString::fromLatin1(kAttackerValue)}});
        QCOMPARE(RpcTestClient::errorKind(replace), QStringLiteral("permission_denied"));
        QVERIFY(errorMessage(replace).contains(QStringLiteral("replace it")));
        QCOMPARE(secretInfo(QStringLiteral("root-token")).value(QStringLiteral("fingerprint")),
                 QJsonValue(fingerprint));

        const QJsonObject unbind =
            asUser(QStringLiteral("binding.remove"), {{QStringLiteral("id"), m_rootBinding}});
        QCOMPARE(RpcTestClient::errorKind(unbind), QStringLiteral("permission_denied"));
        QVERIFY(errorMessage(unbind).contains(QStringLiteral("remove its bindings")));
        QCOMPARE(bindingsOf(QStringLiteral("shared")).size(), 1);

        // Without its binding in the way: the owner check, not the busy check, refuses it.
        const QJsonObject remove = asUser(QStringLiteral("secret.delete"),
                                          {{QStringLiteral("name"), QStringLiteral("root-token")}});
        QCOMPARE(RpcTestClient::errorKind(remove), QStringLiteral("permission_denied"));
        QVERIFY(errorMessage(remove).contains(QStringLiteral("delete it")));
        QVERIFY(!secretInfo(QStringLiteral("root-token")).isEmpty());
        const Run cli =
            ctl(m_user.get(),
                {QStringLiteral("secret"), QStringLiteral("rm"), QStringLiteral("root-token")});
        QCOMPARE(cli.exitCode, 1);
        QVERIFY2(cli.err.contains(QStringLiteral("belongs to root")), qPrintable(cli.err));
        // A name nobody stored is not found, for anyone (not "belongs to root").
        QCOMPARE(RpcTestClient::errorKind(
                     asUser(QStringLiteral("secret.delete"),
                            {{QStringLiteral("name"), QStringLiteral("nobody-stored-this")}})),
                 QStringLiteral("not_found"));
    }

    void memberManagesOwnSecrets()
    {
        const Run set =
            ctl(m_user.get(),
                {QStringLiteral("secret"), QStringLiteral("set"), QStringLiteral("user-token")},
                kUserSecret + '\n');
        QVERIFY2(set.exitCode == 0, qPrintable(set.err));
        const QJsonObject info = secretInfo(QStringLiteral("user-token"));
        QCOMPARE(info.value(QStringLiteral("ownerUid")).toInteger(-1), qint64(m_user->uid()));
        QCOMPARE(info.value(QStringLiteral("owner")).toString(), m_user->name());

        const Run list = ctl(m_user.get(), {QStringLiteral("secret"), QStringLiteral("ls")});
        QCOMPARE(list.exitCode, 0);
        QVERIFY2(list.out.startsWith(QStringLiteral("NAME")) && list.out.contains(u"OWNER"),
                 qPrintable(list.out));
        bool sawRoot = false;
        bool sawUser = false;
        for (const QString &line : list.out.split(QLatin1Char('\n'))) {
            const QStringList columns = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
            if (columns.size() < 2)
                continue;
            sawRoot = sawRoot
                || (columns.at(0) == QStringLiteral("root-token")
                    && columns.at(1) == QStringLiteral("root"));
            sawUser = sawUser
                || (columns.at(0) == QStringLiteral("user-token")
                    && columns.at(1) == m_user->name());
        }
        QVERIFY2(sawRoot && sawUser, qPrintable(list.out));

        // Binding their own, into a sandbox root made (sandboxes are shared), and managing it.
        const QJsonObject bound =
            asUser(QStringLiteral("binding.add"),
                   headerBinding(QStringLiteral("shared"), QStringLiteral("user-token"),
                                 QStringLiteral("user.test")));
        QVERIFY2(bound.contains(QStringLiteral("result")), compact(bound).constData());
        const qint64 id = RpcTestClient::result(bound).value(QStringLiteral("id")).toInteger();
        QVERIFY(asUser(QStringLiteral("secret.set"),
                       {{QStringLiteral("name"), QStringLiteral("user-token")},
                        {QStringLiteral("value"), QString::fromLatin1(kUserSecret)}})
                    .contains(QStringLiteral("result")));
        QCOMPARE(RpcTestClient::errorKind(
                     asUser(QStringLiteral("secret.delete"),
                            {{QStringLiteral("name"), QStringLiteral("user-token")}})),
                 QStringLiteral("busy"));
        QVERIFY(asUser(QStringLiteral("binding.remove"), {{QStringLiteral("id"), id}})
                    .contains(QStringLiteral("result")));
        QVERIFY(asUser(QStringLiteral("secret.delete"),
                       {{QStringLiteral("name"), QStringLiteral("user-token")}})
                    .contains(QStringLiteral("result")));
        QVERIFY(secretInfo(QStringLiteral("user-token")).isEmpty());

        // A deleted name is free: whoever stores it next owns it.
        QVERIFY(asRoot(QStringLiteral("secret.set"),
                       {{QStringLiteral("name"), QStringLiteral("user-token")},
                        {QStringLiteral("value"), QString::fromLatin1(kRootRotated)}})
                    .contains(QStringLiteral("result")));
        QCOMPARE(
            secretInfo(QStringLiteral("user-token")).value(QStringLiteral("ownerUid")).toInt(-1),
            0);
        QVERIFY(asRoot(QStringLiteral("secret.delete"),
                       {{QStringLiteral("name"), QStringLiteral("user-token")}})
                    .contains(QStringLiteral("result")));
    }

    void rootMayDoEverything()
    {
        QVERIFY(asUser(QStringLiteral("secret.set"),
                       {{QStringLiteral("name"), QStringLiteral("members-token")},
                        {QStringLiteral("value"), QString::fromLatin1(kUserSecret)}})
                    .contains(QStringLiteral("result")));
        // Root binds, replaces, unbinds and deletes the member's secret; the owner stays.
        const QJsonObject bound =
            asRoot(QStringLiteral("binding.add"),
                   headerBinding(QStringLiteral("users"), QStringLiteral("members-token"),
                                 QStringLiteral("api.test")));
        QVERIFY2(bound.contains(QStringLiteral("result")), compact(bound).constData());
        QVERIFY(asRoot(QStringLiteral("secret.set"),
                       {{QStringLiteral("name"), QStringLiteral("members-token")},
                        {QStringLiteral("value"), QString::fromLatin1(kRootRotated)}})
                    .contains(QStringLiteral("result")));
        QCOMPARE(secretInfo(QStringLiteral("members-token"))
                     .value(QStringLiteral("ownerUid"))
                     .toInteger(-1),
                 qint64(m_user->uid()));
        QVERIFY(asRoot(QStringLiteral("binding.remove"),
                       {{QStringLiteral("id"),
                         RpcTestClient::result(bound).value(QStringLiteral("id"))}})
                    .contains(QStringLiteral("result")));
        QVERIFY(asRoot(QStringLiteral("secret.delete"),
                       {{QStringLiteral("name"), QStringLiteral("members-token")}})
                    .contains(QStringLiteral("result")));

        // Owners survive a restart (registry rows).
        QVERIFY(asUser(QStringLiteral("secret.set"),
                       {{QStringLiteral("name"), QStringLiteral("kept-token")},
                        {QStringLiteral("value"), QString::fromLatin1(kUserSecret)}})
                    .contains(QStringLiteral("result")));
        QVERIFY(m_helper->restart());
        m_root = std::make_unique<RpcTestClient>(m_helper->socketPath());
        m_userClient = m_user->connect(m_helper->socketPath());
        QVERIFY(m_userClient && m_userClient->isConnected());
        QCOMPARE(secretInfo(QStringLiteral("kept-token"))
                     .value(QStringLiteral("ownerUid"))
                     .toInteger(-1),
                 qint64(m_user->uid()));
        QCOMPARE(RpcTestClient::errorKind(
                     asUser(QStringLiteral("binding.add"),
                            headerBinding(QStringLiteral("users"), QStringLiteral("root-token"),
                                          QStringLiteral("attacker.test")))),
                 QStringLiteral("permission_denied"));
    }

    // Copying a binding into a fork binds its secret to the fork: the owner's right too.
    void forkCopiesOnlyTheCallersBindings()
    {
        QVERIFY(asUser(QStringLiteral("binding.add"),
                       headerBinding(QStringLiteral("shared"), QStringLiteral("kept-token"),
                                     QStringLiteral("member.test")))
                    .contains(QStringLiteral("result")));
        QCOMPARE(bindingsOf(QStringLiteral("shared")).size(), 2);
        // The member starts root's sandbox and snapshots it (sandboxes are shared).
        QCOMPARE(
            RpcTestClient::result(
                m_userClient->call(QStringLiteral("sandbox.start"),
                                   {{QStringLiteral("name"), QStringLiteral("shared")}}, 120000))
                .value(QStringLiteral("state"))
                .toString(),
            QStringLiteral("running"));
        {
            GuestConsole console(m_helper->socketPath(), QStringLiteral("shared"));
            QVERIFY(console.waitFor("airlock-guest ready", 0, 120000) >= 0);
        }
        const QJsonObject snapshot = RpcTestClient::result(
            m_userClient->call(QStringLiteral("snapshot.create"),
                               {{QStringLiteral("name"), QStringLiteral("shared")}}, 120000));
        const QString id = snapshot.value(QStringLiteral("id")).toString();
        QVERIFY2(!id.isEmpty(), compact(snapshot).constData());
        const auto fork = [&](RpcTestClient &client, const QString &name) {
            const QJsonObject answer = client.call(QStringLiteral("snapshot.fork"),
                                                   {{QStringLiteral("snapshot"), id},
                                                    {QStringLiteral("name"), name},
                                                    {QStringLiteral("bindings"), true}},
                                                   120000);
            m_transcript += compact(answer);
            return answer;
        };
        const auto secretsOf = [this](const QString &sandbox) {
            QStringList secrets;
            for (const QJsonValue &binding : bindingsOf(sandbox))
                secrets.append(binding.toObject().value(QStringLiteral("secret")).toString());
            return secrets;
        };

        const QJsonObject byMember = fork(*m_userClient, QStringLiteral("fork-member"));
        QVERIFY2(byMember.contains(QStringLiteral("result")), compact(byMember).constData());
        const QJsonObject memberFork = RpcTestClient::result(byMember);
        QCOMPARE(memberFork.value(QStringLiteral("bindingsCopied")).toInt(-1), 1);
        QCOMPARE(memberFork.value(QStringLiteral("bindingsLeftOut")).toInt(-1), 1);
        const QString reason = memberFork.value(QStringLiteral("bindingsLeftOutReason")).toString();
        QVERIFY2(reason.contains(QStringLiteral("binding %1: secret 'root-token' belongs to root "
                                                "(uid 0)")
                                     .arg(m_rootBinding)),
                 qPrintable(reason));
        QCOMPARE(secretsOf(QStringLiteral("fork-member")),
                 QStringList {QStringLiteral("kept-token")});

        const QJsonObject byRoot = fork(*m_root, QStringLiteral("fork-root"));
        QVERIFY2(byRoot.contains(QStringLiteral("result")), compact(byRoot).constData());
        QCOMPARE(RpcTestClient::result(byRoot).value(QStringLiteral("bindingsCopied")).toInt(-1),
                 2);
        QCOMPARE(RpcTestClient::result(byRoot).value(QStringLiteral("bindingsLeftOut")).toInt(-1),
                 0);
        QVERIFY(!RpcTestClient::result(byRoot).contains(QStringLiteral("bindingsLeftOutReason")));
        QCOMPARE(secretsOf(QStringLiteral("fork-root")),
                 (QStringList {QStringLiteral("root-token"), QStringLiteral("kept-token")}));

        // Each copy is an audit line by whoever forked.
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("snapshot.fork")},
                          {QStringLiteral("uid"), qint64(m_user->uid())},
                          {QStringLiteral("sandbox"), QStringLiteral("fork-member")},
                          {QStringLiteral("secret"), QStringLiteral("kept-token")},
                          {QStringLiteral("host"), QStringLiteral("member.test")},
                          {QStringLiteral("snapshot"), id}})
                     .size(),
                 1);
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("snapshot.fork")},
                          {QStringLiteral("sandbox"), QStringLiteral("fork-member")}})
                     .size(),
                 1);
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("snapshot.fork")},
                          {QStringLiteral("uid"), 0},
                          {QStringLiteral("sandbox"), QStringLiteral("fork-root")}})
                     .size(),
                 2);

        // airlockctl names what stayed behind.
        const Run cli = ctl(m_user.get(),
                            {QStringLiteral("snapshot"), QStringLiteral("fork"), id,
                             QStringLiteral("fork-cli"), QStringLiteral("--with-bindings")});
        QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
        QVERIFY2(cli.out.contains(QStringLiteral("1 credential binding copied")),
                 qPrintable(cli.out));
        QVERIFY2(cli.err.contains(QStringLiteral("secrets you do not own were not copied"))
                     && cli.err.contains(QStringLiteral("belongs to root")),
                 qPrintable(cli.err));
        for (const char *name : {"fork-member", "fork-root", "fork-cli", "shared"})
            QVERIFY(asRoot(QStringLiteral("sandbox.kill"),
                           {{QStringLiteral("name"), QString::fromLatin1(name)}})
                        .contains(QStringLiteral("result")));
    }

    void auditTrailNamesWhoAndWhat()
    {
        const QList<QJsonObject> lines = auditLines();
        QVERIFY2(!lines.isEmpty(), "no (or unparsable) STATE/audit/credentials.jsonl");
        for (const QJsonObject &line : lines) {
            QVERIFY(QDateTime::fromString(line.value(QStringLiteral("time")).toString(),
                                          Qt::ISODateWithMs)
                        .isValid());
            QVERIFY(line.contains(QStringLiteral("uid")));
            QVERIFY(!line.value(QStringLiteral("method")).toString().isEmpty());
        }
        const qint64 uid = m_user->uid();
        const QString user = m_user->name();
        // Root's own changes.
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("secret.set")},
                          {QStringLiteral("uid"), 0},
                          {QStringLiteral("user"), QStringLiteral("root")},
                          {QStringLiteral("secret"), QStringLiteral("root-token")},
                          {QStringLiteral("outcome"), QStringLiteral("ok")}})
                     .size(),
                 1);
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("binding.add")},
                          {QStringLiteral("uid"), 0},
                          {QStringLiteral("secret"), QStringLiteral("root-token")},
                          {QStringLiteral("sandbox"), QStringLiteral("shared")},
                          {QStringLiteral("host"), QStringLiteral("api.test")},
                          {QStringLiteral("binding"), m_rootBinding}})
                     .size(),
                 1);
        // The attack: every refused attempt, with who, where and which host (API and CLI).
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("binding.add")},
                          {QStringLiteral("uid"), uid},
                          {QStringLiteral("user"), user},
                          {QStringLiteral("outcome"), QStringLiteral("permission_denied")},
                          {QStringLiteral("secret"), QStringLiteral("root-token")},
                          {QStringLiteral("host"), QStringLiteral("attacker.test")}})
                     .size(),
                 4);
        for (const char *method : {"secret.set", "secret.delete", "binding.remove"})
            QVERIFY2(!audited({{QStringLiteral("method"), QString::fromLatin1(method)},
                               {QStringLiteral("uid"), uid},
                               {QStringLiteral("outcome"), QStringLiteral("permission_denied")},
                               {QStringLiteral("secret"), QStringLiteral("root-token")}})
                          .isEmpty(),
                     method);
        // The member's own changes, and root's on the member's secret.
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("secret.set")},
                          {QStringLiteral("uid"), uid},
                          {QStringLiteral("secret"), QStringLiteral("user-token")},
                          {QStringLiteral("outcome"), QStringLiteral("ok")}})
                     .size(),
                 2);
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("binding.remove")},
                          {QStringLiteral("uid"), uid},
                          {QStringLiteral("secret"), QStringLiteral("user-token")},
                          {QStringLiteral("sandbox"), QStringLiteral("shared")},
                          {QStringLiteral("host"), QStringLiteral("user.test")}})
                     .size(),
                 1);
        QCOMPARE(audited({{QStringLiteral("method"), QStringLiteral("secret.delete")},
                          {QStringLiteral("uid"), 0},
                          {QStringLiteral("secret"), QStringLiteral("members-token")}})
                     .size(),
                 1);
        // Logged at info too, in airlockd's log.
        QByteArray logs;
        QDirIterator files(m_helper->stateDir() + QStringLiteral("/log"), QDir::Files);
        while (files.hasNext()) {
            QFile file(files.next());
            if (file.open(QIODevice::ReadOnly))
                logs += file.readAll();
        }
        int logged = 0;
        for (const QByteArray &line : logs.split('\n'))
            logged += line.contains("credentials: {") && line.contains("\"host\":\"attacker.test\"")
                && line.contains("\"outcome\":\"permission_denied\"");
        QCOMPARE(logged, 4);
    }

    void cleanupTestCase()
    {
        if (!m_helper)
            return;
        m_userClient.reset();
        m_root.reset();
        m_helper->stop();
        // No value in any answer, CLI output, audit line, log file or other file of the state
        // dir (the vault files hold ciphertext).
        for (const QByteArray &secret : {kRootSecret, kRootRotated, kUserSecret, kAttackerValue}) {
            QVERIFY2(!containsAnySecretForm(m_transcript, secret), "a value reached a client");
            QDirIterator files(m_helper->stateDir(), QDir::Files | QDir::Hidden | QDir::System,
                               QDirIterator::Subdirectories);
            int searched = 0;
            while (files.hasNext()) {
                const QString path = files.next();
                QFile file(path);
                if (!file.open(QIODevice::ReadOnly))
                    continue;
                ++searched;
                QVERIFY2(!containsAnySecretForm(file.readAll(), secret), qPrintable(path));
            }
            QVERIFY(searched > 0);
        }
        m_user.reset(); // userdel
    }
};

QTEST_GUILESS_MAIN(TestSecretOwners)
#include "tst_secretowners.moc"

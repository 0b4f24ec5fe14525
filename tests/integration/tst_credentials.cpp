// Credentials through a real airlockd (issue 4, docs/credentials.md): secret.set|list|delete and
// binding.add|list|remove over the socket and through the real airlockctl, and the promise that
// no answer, log line or file ever holds a stored value (docs/redteam-cases.md I4: raw, base64 and
// URL-encoded forms are searched).
#include "airlockctlrun.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "secretforms.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTest>

using airlock::test::containsAnySecretForm;
using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;
using airlock::test::runAirlockctl;

namespace {

const QByteArray kSecret = QByteArrayLiteral("sk-live-canary-5e1f0c7a9b2d4e68");
const QByteArray kCliSecret = QByteArrayLiteral("cli-canary-83d1a0f4c6b2e975");

bool succeeded(const QJsonObject &answer)
{
    return answer.contains(QStringLiteral("result"));
}

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

} // namespace

class TestCredentials : public QObject
{
    Q_OBJECT

private:
    using Run = airlock::test::CtlRun;

    Run ctl(const QStringList &arguments, const QByteArray &input = {})
    {
        const Run run = runAirlockctl(m_ctl, m_helper->socketPath(), arguments, input);
        m_transcript += run.out.toUtf8() + run.err.toUtf8();
        return run;
    }

    QJsonObject call(const QString &method, const QJsonObject &params = {})
    {
        const QJsonObject answer = m_client->call(method, params);
        m_transcript += compact(answer);
        return answer;
    }

    std::unique_ptr<HelperProcess> m_helper;
    std::unique_ptr<RpcTestClient> m_client;
    QString m_ctl;
    QByteArray m_transcript; ///< every answer and CLI output, searched for secrets at the end

private Q_SLOTS:
    void initTestCase()
    {
        m_ctl = qEnvironmentVariable(
            "AIRLOCK_AIRLOCKCTL", QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlockctl/airlockctl"));
        // The most verbose level: a value must not reach the log even there (I4).
        m_helper = std::make_unique<HelperProcess>(
            QStringList {QStringLiteral("--log-level"), QStringLiteral("trace")});
        QVERIFY(!m_helper->useUnbootableImageStore().isEmpty());
        QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
        m_client = std::make_unique<RpcTestClient>(m_helper->socketPath());
        QVERIFY(m_client->isConnected());
        for (const char *name : {"agent", "other"})
            QVERIFY(succeeded(call(QStringLiteral("sandbox.create"),
                                   {{QStringLiteral("name"), QString::fromLatin1(name)}})));
    }

    void secretIsWriteOnly()
    {
        QJsonObject set = call(QStringLiteral("secret.set"),
                               {{QStringLiteral("name"), QStringLiteral("api-token")},
                                {QStringLiteral("value"), QString::fromLatin1(kSecret)}});
        QVERIFY2(succeeded(set), compact(set).constData());
        const QJsonObject info = RpcTestClient::result(set);
        QCOMPARE(info.value(QStringLiteral("name")).toString(), QStringLiteral("api-token"));
        QCOMPARE(info.value(QStringLiteral("fingerprint")).toString().size(), 16);
        QVERIFY(!info.contains(QStringLiteral("value")));

        const QJsonObject list = RpcTestClient::result(call(QStringLiteral("secret.list")));
        const QJsonArray secrets = list.value(QStringLiteral("secrets")).toArray();
        QCOMPARE(secrets.size(), 1);
        QCOMPARE(secrets.at(0).toObject().value(QStringLiteral("fingerprint")),
                 info.value(QStringLiteral("fingerprint")));
        QCOMPARE(secrets.at(0).toObject().value(QStringLiteral("useCount")).toInt(), 0);

        // No method hands a value back, whatever a client tries.
        for (const QString &method : {QStringLiteral("secret.get"), QStringLiteral("secret.read"),
                                      QStringLiteral("secret.value")}) {
            const QJsonObject answer =
                call(method, {{QStringLiteral("name"), QStringLiteral("api-token")}});
            QCOMPARE(RpcTestClient::errorKind(answer), QStringLiteral("method_not_found"));
        }
    }

    void badSecretInput_data()
    {
        QTest::addColumn<QJsonObject>("params");
        QTest::addColumn<QString>("kind");
        QTest::newRow("bad name") << QJsonObject {{QStringLiteral("name"), QStringLiteral("../x")},
                                                  {QStringLiteral("value"),
                                                   QStringLiteral("value-1234")}}
                                  << QStringLiteral("invalid_name");
        QTest::newRow("CRLF") << QJsonObject {{QStringLiteral("name"), QStringLiteral("x")},
                                              {QStringLiteral("value"),
                                               QStringLiteral("token\r\nX-Evil: 1")}}
                              << QStringLiteral("invalid_params");
        QTest::newRow("too short")
            << QJsonObject {{QStringLiteral("name"), QStringLiteral("x")},
                            {QStringLiteral("value"), QStringLiteral("1234")}}
            << QStringLiteral("invalid_params");
        QTest::newRow("no value") << QJsonObject {{QStringLiteral("name"), QStringLiteral("x")}}
                                  << QStringLiteral("invalid_params");
        QTest::newRow("number") << QJsonObject {{QStringLiteral("name"), QStringLiteral("x")},
                                                {QStringLiteral("value"), 42}}
                                << QStringLiteral("invalid_params");
        QTest::newRow("empty") << QJsonObject {{QStringLiteral("name"), QStringLiteral("x")},
                                               {QStringLiteral("value"), QString()}}
                               << QStringLiteral("invalid_params");
    }

    void badSecretInput()
    {
        QFETCH(QJsonObject, params);
        QFETCH(QString, kind);
        QCOMPARE(RpcTestClient::errorKind(call(QStringLiteral("secret.set"), params)), kind);
    }

    void bindingLifecycle()
    {
        const QJsonObject add =
            call(QStringLiteral("binding.add"),
                 {{QStringLiteral("sandbox"), QStringLiteral("agent")},
                  {QStringLiteral("secret"), QStringLiteral("api-token")},
                  {QStringLiteral("host"), QStringLiteral("API.test.")},
                  {QStringLiteral("pathPrefix"), QStringLiteral("/v1")},
                  {QStringLiteral("methods"), QJsonArray {QStringLiteral("GET")}}});
        QVERIFY2(succeeded(add), compact(add).constData());
        const QJsonObject binding = RpcTestClient::result(add);
        QCOMPARE(binding.value(QStringLiteral("host")).toString(), QStringLiteral("api.test"));
        QCOMPARE(binding.value(QStringLiteral("placeholderVariable")).toString(),
                 QStringLiteral("AIRLOCK_SECRET_API_TOKEN"));
        QCOMPARE(binding.value(QStringLiteral("placement"))
                     .toObject()
                     .value(QStringLiteral("template"))
                     .toString(),
                 QStringLiteral("Bearer {secret}"));
        const qint64 id = binding.value(QStringLiteral("id")).toInteger();
        QVERIFY(id > 0);

        // The same binding twice is refused; another sandbox may bind the same secret.
        QCOMPARE(RpcTestClient::errorKind(
                     call(QStringLiteral("binding.add"),
                          {{QStringLiteral("sandbox"), QStringLiteral("agent")},
                           {QStringLiteral("secret"), QStringLiteral("api-token")},
                           {QStringLiteral("host"), QStringLiteral("api.test")},
                           {QStringLiteral("pathPrefix"), QStringLiteral("/v1")},
                           {QStringLiteral("methods"), QJsonArray {QStringLiteral("GET")}}})),
                 QStringLiteral("already_exists"));
        const QJsonObject second =
            call(QStringLiteral("binding.add"),
                 {{QStringLiteral("sandbox"), QStringLiteral("other")},
                  {QStringLiteral("secret"), QStringLiteral("api-token")},
                  {QStringLiteral("host"), QStringLiteral("api.test")},
                  {QStringLiteral("placement"),
                   QJsonObject {{QStringLiteral("type"), QStringLiteral("basic")},
                                {QStringLiteral("username"), QStringLiteral("bot")}}}});
        QVERIFY2(succeeded(second), compact(second).constData());

        const QJsonArray agentBindings =
            RpcTestClient::result(call(QStringLiteral("binding.list"),
                                       {{QStringLiteral("sandbox"), QStringLiteral("agent")}}))
                .value(QStringLiteral("bindings"))
                .toArray();
        QCOMPARE(agentBindings.size(), 1);
        QCOMPARE(agentBindings.at(0).toObject().value(QStringLiteral("id")).toInteger(), id);
        const QJsonArray all = RpcTestClient::result(call(QStringLiteral("binding.list")))
                                   .value(QStringLiteral("bindings"))
                                   .toArray();
        QCOMPARE(all.size(), 2);

        // A bound secret cannot be deleted.
        const QJsonObject busy = call(QStringLiteral("secret.delete"),
                                      {{QStringLiteral("name"), QStringLiteral("api-token")}});
        QCOMPARE(RpcTestClient::errorKind(busy), QStringLiteral("busy"));

        QVERIFY(succeeded(call(QStringLiteral("binding.remove"), {{QStringLiteral("id"), id}})));
        QCOMPARE(RpcTestClient::errorKind(
                     call(QStringLiteral("binding.remove"), {{QStringLiteral("id"), id}})),
                 QStringLiteral("not_found"));

        // Deleting a sandbox takes its bindings with it.
        QVERIFY(succeeded(call(QStringLiteral("sandbox.delete"),
                               {{QStringLiteral("name"), QStringLiteral("other")}})));
        QCOMPARE(RpcTestClient::result(call(QStringLiteral("binding.list")))
                     .value(QStringLiteral("bindings"))
                     .toArray()
                     .size(),
                 0);
        QVERIFY(succeeded(call(QStringLiteral("secret.delete"),
                               {{QStringLiteral("name"), QStringLiteral("api-token")}})));
    }

    void badBindings_data()
    {
        QTest::addColumn<QJsonObject>("params");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("message");
        const auto base = [](const QString &key, const QJsonValue &value) {
            QJsonObject params {{QStringLiteral("sandbox"), QStringLiteral("agent")},
                                {QStringLiteral("secret"), QStringLiteral("known")},
                                {QStringLiteral("host"), QStringLiteral("api.test")}};
            if (value.isUndefined())
                params.remove(key);
            else
                params.insert(key, value);
            return params;
        };
        QTest::newRow("wildcard host")
            << base(QStringLiteral("host"), QStringLiteral("*.api.test"))
            << QStringLiteral("invalid_params") << QStringLiteral("exact host");
        QTest::newRow("ip literal")
            << base(QStringLiteral("host"), QStringLiteral("192.0.2.7"))
            << QStringLiteral("invalid_params") << QStringLiteral("ip_literal");
        QTest::newRow("userinfo") << base(QStringLiteral("host"), QStringLiteral("u@api.test"))
                                  << QStringLiteral("invalid_params") << QStringLiteral("userinfo");
        QTest::newRow("unknown sandbox") << base(QStringLiteral("sandbox"), QStringLiteral("nope"))
                                         << QStringLiteral("not_found") << QString();
        QTest::newRow("unknown secret") << base(QStringLiteral("secret"), QStringLiteral("nope"))
                                        << QStringLiteral("not_found") << QString();
        QTest::newRow("dot segment")
            << base(QStringLiteral("pathPrefix"), QStringLiteral("/a/../b"))
            << QStringLiteral("invalid_params") << QStringLiteral("pathPrefix");
        QTest::newRow("lower method")
            << base(QStringLiteral("methods"), QJsonArray {QStringLiteral("get")})
            << QStringLiteral("invalid_params") << QStringLiteral("methods");
        QTest::newRow("host header")
            << base(QStringLiteral("placement"),
                    QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                                 {QStringLiteral("header"), QStringLiteral("Host")},
                                 {QStringLiteral("template"), QStringLiteral("{secret}")}})
            << QStringLiteral("invalid_params") << QStringLiteral("placement.header");
        QTest::newRow("underscore header")
            << base(QStringLiteral("placement"),
                    QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                                 {QStringLiteral("header"), QStringLiteral("X_Api_Key")},
                                 {QStringLiteral("template"), QStringLiteral("{secret}")}})
            << QStringLiteral("invalid_params") << QStringLiteral("placement.header");
        QTest::newRow("dotted header")
            << base(QStringLiteral("placement"),
                    QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                                 {QStringLiteral("header"), QStringLiteral("X.Api.Key")},
                                 {QStringLiteral("template"), QStringLiteral("{secret}")}})
            << QStringLiteral("invalid_params") << QStringLiteral("placement.header");
        QTest::newRow("method override header") << base(
            QStringLiteral("placement"),
            QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                         {QStringLiteral("header"), QStringLiteral("X-HTTP-Method-Override")},
                         {QStringLiteral("template"), QStringLiteral("{secret}")}})
                                                << QStringLiteral("invalid_params")
                                                << QStringLiteral("placement.header");
        QTest::newRow("client address header")
            << base(QStringLiteral("placement"),
                    QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                                 {QStringLiteral("header"), QStringLiteral("X-Real-IP")},
                                 {QStringLiteral("template"), QStringLiteral("{secret}")}})
            << QStringLiteral("invalid_params") << QStringLiteral("placement.header");
        QTest::newRow("template without token")
            << base(QStringLiteral("placement"),
                    QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                                 {QStringLiteral("template"), QStringLiteral("Bearer x")}})
            << QStringLiteral("invalid_params") << QStringLiteral("placement.template");
        QTest::newRow("template with CRLF")
            << base(QStringLiteral("placement"),
                    QJsonObject {{QStringLiteral("type"), QStringLiteral("header")},
                                 {QStringLiteral("template"),
                                  QStringLiteral("{secret}\r\nHost: evil.test")}})
            << QStringLiteral("invalid_params") << QStringLiteral("placement.template");
        QTest::newRow("basic user with colon")
            << base(QStringLiteral("placement"),
                    QJsonObject {{QStringLiteral("type"), QStringLiteral("basic")},
                                 {QStringLiteral("username"), QStringLiteral("a:b")}})
            << QStringLiteral("invalid_params") << QStringLiteral("placement.username");
        QTest::newRow("unknown field")
            << base(QStringLiteral("port"), 8443) << QStringLiteral("invalid_params")
            << QStringLiteral("unknown field");
    }

    void badBindings()
    {
        QFETCH(QJsonObject, params);
        QFETCH(QString, kind);
        QFETCH(QString, message);
        QVERIFY(succeeded(call(QStringLiteral("secret.set"),
                               {{QStringLiteral("name"), QStringLiteral("known")},
                                {QStringLiteral("value"), QStringLiteral("value-1234")}})));
        const QJsonObject answer = call(QStringLiteral("binding.add"), params);
        QCOMPARE(RpcTestClient::errorKind(answer), kind);
        const QString text = answer.value(QStringLiteral("error"))
                                 .toObject()
                                 .value(QStringLiteral("message"))
                                 .toString();
        QVERIFY2(text.contains(message), qPrintable(text));
    }

    void cliReadsTheValueFromStandardInput()
    {
        // The value comes on stdin; the command line never holds it.
        Run set =
            ctl({QStringLiteral("secret"), QStringLiteral("set"), QStringLiteral("cli-token")},
                kCliSecret + '\n');
        QVERIFY2(set.exitCode == 0, qPrintable(set.err));
        QVERIFY(set.out.contains(QStringLiteral("stored secret 'cli-token'")));
        Run list = ctl({QStringLiteral("secret"), QStringLiteral("ls")});
        QCOMPARE(list.exitCode, 0);
        QVERIFY(list.out.contains(QStringLiteral("cli-token")));
        QVERIFY(list.out.contains(QStringLiteral("FINGERPRINT")));

        Run add = ctl({QStringLiteral("binding"), QStringLiteral("add"), QStringLiteral("agent"),
                       QStringLiteral("cli-token"), QStringLiteral("api.test"),
                       QStringLiteral("--header"), QStringLiteral("X-Api-Key"),
                       QStringLiteral("--template"), QStringLiteral("{secret}")});
        QVERIFY2(add.exitCode == 0, qPrintable(add.err));
        QVERIFY(add.out.contains(QStringLiteral("$AIRLOCK_SECRET_CLI_TOKEN")));
        Run bindings =
            ctl({QStringLiteral("binding"), QStringLiteral("ls"), QStringLiteral("agent")});
        QCOMPARE(bindings.exitCode, 0);
        QVERIFY(bindings.out.contains(QStringLiteral("X-Api-Key: {secret}")));

        // The stored value is exactly what was piped, minus the newline: set it again and the
        // fingerprint does not change.
        const QString before = list.out;
        QCOMPARE(ctl({QStringLiteral("secret"), QStringLiteral("set"), QStringLiteral("cli-token")},
                     kCliSecret)
                     .exitCode,
                 0);
        Run again = ctl({QStringLiteral("secret"), QStringLiteral("ls")});
        const QString fingerprint = RpcTestClient::result(call(QStringLiteral("secret.list")))
                                        .value(QStringLiteral("secrets"))
                                        .toArray()
                                        .at(0)
                                        .toObject()
                                        .value(QStringLiteral("fingerprint"))
                                        .toString();
        QVERIFY(before.contains(fingerprint));

        QCOMPARE(ctl({QStringLiteral("secret"), QStringLiteral("set"), QStringLiteral("empty")}, {})
                     .exitCode,
                 1);
        QCOMPARE(ctl({QStringLiteral("secret"), QStringLiteral("get"), QStringLiteral("cli-token")})
                     .exitCode,
                 2);
        QCOMPARE(
            ctl({QStringLiteral("binding"), QStringLiteral("rm"), QStringLiteral("x")}).exitCode,
            2);
        QCOMPARE(
            ctl({QStringLiteral("binding"), QStringLiteral("add"), QStringLiteral("agent"),
                 QStringLiteral("cli-token"), QStringLiteral("api.test"), QStringLiteral("--basic"),
                 QStringLiteral("u"), QStringLiteral("--header"), QStringLiteral("X")})
                .exitCode,
            2);
    }

    void vaultSurvivesRestartAndDamageIsNamed()
    {
        QVERIFY(m_helper->restart());
        m_client = std::make_unique<RpcTestClient>(m_helper->socketPath());
        const QJsonArray secrets = RpcTestClient::result(call(QStringLiteral("secret.list")))
                                       .value(QStringLiteral("secrets"))
                                       .toArray();
        QVERIFY(secrets.size() >= 1);

        // Damage one file: it is listed with its problem, the others keep working.
        const QString path = m_helper->stateDir() + QStringLiteral("/vault/known.secret");
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        file.seek(20);
        file.write("XXXX");
        file.close();
        const QJsonArray listed = RpcTestClient::result(call(QStringLiteral("secret.list")))
                                      .value(QStringLiteral("secrets"))
                                      .toArray();
        bool sawProblem = false;
        for (const QJsonValue &value : listed) {
            const QJsonObject secret = value.toObject();
            if (secret.value(QStringLiteral("name")).toString() == QStringLiteral("known")) {
                QVERIFY(secret.value(QStringLiteral("problem")).toString().contains(path));
                sawProblem = true;
            }
        }
        QVERIFY(sawProblem);
        const QJsonObject overwrite =
            call(QStringLiteral("secret.set"),
                 {{QStringLiteral("name"), QStringLiteral("known")},
                  {QStringLiteral("value"), QStringLiteral("new-value")}});
        QCOMPARE(RpcTestClient::errorKind(overwrite), QStringLiteral("operation_failed"));

        // A lost key: the helper still serves sandboxes and says what is wrong with the vault.
        QVERIFY(m_helper->stop());
        QVERIFY(QFile::remove(m_helper->stateDir() + QStringLiteral("/vault.key")));
        QVERIFY(m_helper->start());
        m_client = std::make_unique<RpcTestClient>(m_helper->socketPath());
        QVERIFY(succeeded(call(QStringLiteral("sandbox.list"))));
        const QJsonObject unavailable = call(QStringLiteral("secret.list"));
        QCOMPARE(RpcTestClient::errorKind(unavailable), QStringLiteral("backend_unavailable"));
        QVERIFY(compact(unavailable).contains("vault.key"));
        QVERIFY(!QFile::exists(m_helper->stateDir() + QStringLiteral("/vault.key")));
    }

    void cleanupTestCase()
    {
        if (!m_helper)
            return;
        m_helper->stop();
        // I4: no stored value in any answer, CLI output, log file or the state dir's files.
        for (const QByteArray &secret : {kSecret, kCliSecret}) {
            QVERIFY2(!containsAnySecretForm(m_transcript, secret), "a value reached a client");
            QDirIterator files(m_helper->stateDir(), QDir::Files | QDir::Hidden | QDir::System,
                               QDirIterator::Subdirectories);
            while (files.hasNext()) {
                const QString path = files.next();
                QFile file(path);
                if (!file.open(QIODevice::ReadOnly))
                    continue;
                QVERIFY2(!containsAnySecretForm(file.readAll(), secret), qPrintable(path));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestCredentials)
#include "tst_credentials.moc"

// The real airlockctl binary ($AIRLOCK_AIRLOCKCTL) against a real airlockd (HelperProcess) and a
// real QEMU guest on TCG: every command, its output and its exit code.

#include "core/client/helperstartadvice.h"
#include "helperprocess.h"
#include "rpctestclient.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

#include <memory>
#include <vector>

#include <unistd.h>

using airlock::test::HelperProcess;
using airlock::test::RpcTestClient;

namespace {

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
};

constexpr int kBootTimeoutMs = 120000;

} // namespace

class TestAirlockctl : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        // ctest sets both; the fallbacks let the binary run straight from the build tree.
        m_ctl = qEnvironmentVariable(
            "AIRLOCK_AIRLOCKCTL", QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlockctl/airlockctl"));
        if (qEnvironmentVariableIsEmpty("AIRLOCK_AIRLOCKD"))
            qputenv("AIRLOCK_AIRLOCKD", AIRLOCK_BINARY_DIR "/app/airlockd/airlockd");
        QVERIFY2(QFileInfo(m_ctl).isExecutable(), "AIRLOCK_AIRLOCKCTL must name the binary");
        m_helper = std::make_unique<HelperProcess>();
        QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    }

    void cleanupTestCase()
    {
        if (!m_helper)
            return;
        // Kill what a failed test left running before the helper (and its guests) go away.
        for (const char *name : {"ctl-demo", "ctl-kill"})
            ctl({QStringLiteral("kill"), QLatin1String(name)});
        m_helper.reset();
    }

    void versionAndHelp()
    {
        Run run = ctl({QStringLiteral("--version")});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out.trimmed(), QStringLiteral("airlockctl " AIRLOCK_VERSION));
        run = ctl({QStringLiteral("--help")});
        QCOMPARE(run.exitCode, 0);
        for (const char *command : {"create", "list", "info", "start", "stop", "kill", "rm",
                                    "images", "console", "bridge", "policy"})
            QVERIFY2(run.out.contains(QStringLiteral("\n  ") + QLatin1String(command)), command);
        run = ctl({QStringLiteral("stop"), QStringLiteral("--help")});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.startsWith(QStringLiteral("Usage: airlockctl [--socket PATH] stop NAME")));
        QVERIFY(run.out.contains(QStringLiteral("--timeout <SECONDS>")));
    }

    void usageErrorsExitTwo_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("no command") << QStringList() << QStringLiteral("Usage: airlockctl");
        QTest::newRow("unknown command") << QStringList {QStringLiteral("frobnicate")}
                                         << QStringLiteral("unknown command 'frobnicate'");
        QTest::newRow("unknown option")
            << QStringList {QStringLiteral("list"), QStringLiteral("--colour")}
            << QStringLiteral("Unknown option 'colour'");
        QTest::newRow("missing name") << QStringList {QStringLiteral("info")}
                                      << QStringLiteral("usage: airlockctl info NAME");
        QTest::newRow("extra argument") << QStringList {QStringLiteral("list"), QStringLiteral("x")}
                                        << QStringLiteral("list takes no arguments");
        QTest::newRow("vcpus not a number")
            << QStringList {QStringLiteral("create"), QStringLiteral("x"),
                            QStringLiteral("--vcpus"), QStringLiteral("two")}
            << QStringLiteral("--vcpus: 'two' is not a whole number");
        QTest::newRow("socket without path")
            << QStringList {QStringLiteral("--socket")} << QStringLiteral("--socket needs a PATH");
    }

    void usageErrorsExitTwo()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const Run run = ctl(arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
    }

    void noHelperExitsOneWithTheFix()
    {
        const QString missing = m_helper->tempPath() + QStringLiteral("/no-such.sock");
        Run run = ctl({QStringLiteral("--socket"), missing, QStringLiteral("list")}, {}, false);
        QCOMPARE(run.exitCode, 1);
        // systemctl only where airlockd.service is installed (HelperStartAdvice).
        QCOMPARE(run.err.trimmed(),
                 QStringLiteral("airlockctl: airlockd is not running: no socket at %1 (start it "
                                "with: %2)")
                     .arg(missing, airlock::HelperStartAdvice::command(missing)));
        // $AIRLOCK_SOCKET is the default; --socket beats it.
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AIRLOCK_SOCKET"), missing);
        process.setProcessEnvironment(env);
        process.start(m_ctl, {QStringLiteral("list")});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 1);
        QVERIFY(QString::fromUtf8(process.readAllStandardError()).contains(missing));
        process.start(m_ctl,
                      {QStringLiteral("--socket"), m_helper->socketPath(), QStringLiteral("list")});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 0);
    }

    void helperErrorsExitOne_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown sandbox")
            << QStringList {QStringLiteral("info"), QStringLiteral("nosuch")}
            << QStringLiteral("'nosuch'");
        QTest::newRow("start unknown")
            << QStringList {QStringLiteral("start"), QStringLiteral("nosuch")}
            << QStringLiteral("'nosuch'");
        QTest::newRow("rm unknown") << QStringList {QStringLiteral("rm"), QStringLiteral("nosuch")}
                                    << QStringLiteral("'nosuch'");
        QTest::newRow("invalid name")
            << QStringList {QStringLiteral("create"), QStringLiteral("Bad")}
            << QStringLiteral("airlockctl: sandbox name may only contain a-z, 0-9 and '-'");
        // The options the user typed, not the protocol's fields
        // (docs/reviews/2026-12-01-newuser-pass.md#l5).
        QTest::newRow("vcpus out of range")
            << QStringList {QStringLiteral("create"), QStringLiteral("x"),
                            QStringLiteral("--vcpus"), QStringLiteral("99")}
            << QStringLiteral("airlockctl: --vcpus must be between 1 and 32");
        QTest::newRow("memory out of range")
            << QStringList {QStringLiteral("create"), QStringLiteral("x"),
                            QStringLiteral("--memory"), QStringLiteral("99999999")}
            << QStringLiteral("airlockctl: --memory must be between 64 and 65536");
        QTest::newRow("template memory out of range")
            << QStringList {QStringLiteral("template"), QStringLiteral("prepare"),
                            QStringLiteral("--memory"), QStringLiteral("10")}
            << QStringLiteral("airlockctl: --memory must be between");
        QTest::newRow("unknown image")
            << QStringList {QStringLiteral("create"), QStringLiteral("x"),
                            QStringLiteral("--image"), QStringLiteral("nosuch")}
            << QStringLiteral("nosuch");
        QTest::newRow("console of unknown")
            << QStringList {QStringLiteral("console"), QStringLiteral("nosuch")}
            << QStringLiteral("'nosuch'");
    }

    void helperErrorsExitOne()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const Run run = ctl(arguments);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.startsWith(QStringLiteral("airlockctl: ")), qPrintable(run.err));
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
        QVERIFY(run.out.isEmpty());
    }

    void busyHelperIsExplained()
    {
        // docs/reviews/2026-12-01-newuser-pass.md#l5: a full helper printed a Qt logging category
        // ("airlock.client: helper error without id: ...") and then only "closed the connection".
        // 64 clients the helper has accepted (it answered their hello).
        std::vector<std::unique_ptr<RpcTestClient>> held;
        for (int i = 0; i < 64; ++i) {
            held.push_back(std::make_unique<RpcTestClient>(m_helper->socketPath()));
            QVERIFY(held.back()->hello());
        }
        const Run run = ctl({QStringLiteral("list")});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.startsWith(QStringLiteral("airlockctl: airlockd already serves 64 "
                                                   "clients of root")),
                 qPrintable(run.err));
        QVERIFY2(!run.err.contains(QStringLiteral("airlock.client")), qPrintable(run.err));
        held.clear();
        QTRY_COMPARE_WITH_TIMEOUT(ctl({QStringLiteral("list")}).exitCode, 0, 10000);
    }

    void imagesListsTheDefaultImage()
    {
        Run run = ctl({QStringLiteral("images")});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(
            QRegularExpression(QStringLiteral("^default\\s"), QRegularExpression::MultilineOption)
                .match(run.out)
                .hasMatch(),
            qPrintable(run.out));
        // The default image is an initramfs only: no root disk.
        QVERIFY2(QRegularExpression(QStringLiteral("^ID\\s+KERNEL\\s+DISK\\s+CREATED"))
                     .match(run.out)
                     .hasMatch(),
                 qPrintable(run.out));
        QVERIFY2(QRegularExpression(QStringLiteral("^default\\s+vmlinux\\s+-\\s"),
                                    QRegularExpression::MultilineOption)
                     .match(run.out)
                     .hasMatch(),
                 qPrintable(run.out));
        run = ctl({QStringLiteral("--json"), QStringLiteral("images")});
        QCOMPARE(run.exitCode, 0);
        const QJsonArray images = QJsonDocument::fromJson(run.out.toUtf8())
                                      .object()
                                      .value(QStringLiteral("images"))
                                      .toArray();
        QVERIFY(!images.isEmpty());
    }

    void lifecycleWithConsole()
    {
        const QString name = QStringLiteral("ctl-demo");
        Run run = ctl({QStringLiteral("create"), name, QStringLiteral("--memory"),
                       QStringLiteral("256"), QStringLiteral("--vcpus"), QStringLiteral("1")});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out.trimmed(),
                 QStringLiteral("created sandbox 'ctl-demo' (1 vCPU, 256 MiB, image default)"));
        run = ctl({QStringLiteral("create"), name});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains(QStringLiteral("ctl-demo")), qPrintable(run.err));

        run = ctl({QStringLiteral("list")});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.startsWith(QStringLiteral("NAME")));
        {
            // Without KVM, `list` says why once, on stderr (the helper's hello warning).
            RpcTestClient probe(m_helper->socketPath());
            const QString warning =
                RpcTestClient::result(
                    probe.call(QStringLiteral("hello"),
                               {{QStringLiteral("protocol"), 1},
                                {QStringLiteral("client"), QStringLiteral("test")}}))
                    .value(QStringLiteral("accelerationWarning"))
                    .toString();
            QCOMPARE(run.err.count(QStringLiteral("KVM is not usable")), warning.isEmpty() ? 0 : 1);
            if (!warning.isEmpty())
                QVERIFY2(run.err.contains(warning), qPrintable(run.err));
        }
        QVERIFY2(QRegularExpression(QStringLiteral("^ctl-demo\\s+stopped\\s"),
                                    QRegularExpression::MultilineOption)
                     .match(run.out)
                     .hasMatch(),
                 qPrintable(run.out));
        run = ctl({QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(run.exitCode, 0);
        const QJsonArray sandboxes = QJsonDocument::fromJson(run.out.toUtf8())
                                         .object()
                                         .value(QStringLiteral("sandboxes"))
                                         .toArray();
        QVERIFY(std::any_of(sandboxes.begin(), sandboxes.end(), [&](const QJsonValue &v) {
            return v.toObject().value(QStringLiteral("name")).toString() == name;
        }));

        // A console on a stopped sandbox says how to start it.
        run = ctl({QStringLiteral("console"), name});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains(QStringLiteral("airlockctl start ctl-demo")),
                 qPrintable(run.err));

        run = ctl({QStringLiteral("start"), name}, {}, true, kBootTimeoutMs);
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.startsWith(QStringLiteral("started sandbox 'ctl-demo'")),
                 qPrintable(run.out));
        run = ctl({QStringLiteral("start"), name});
        QCOMPARE(run.exitCode, 1); // already running: invalid_state

        run = ctl({QStringLiteral("info"), name});
        QCOMPARE(run.exitCode, 0);
        for (const char *label :
             {"Name:", "State:", "Acceleration:", "Acceleration warning:", "vCPUs:", "Memory:",
              "Image:", "Created:", "Started:", "VMM pid:"})
            QVERIFY2(run.out.contains(QLatin1String(label)), label);
        QVERIFY2(QRegularExpression(QStringLiteral("^State:\\s+running$"),
                                    QRegularExpression::MultilineOption)
                     .match(run.out)
                     .hasMatch(),
                 qPrintable(run.out));
        QVERIFY2(QRegularExpression(QStringLiteral("^Acceleration:\\s+(kvm|tcg)$"),
                                    QRegularExpression::MultilineOption)
                     .match(run.out)
                     .hasMatch(),
                 qPrintable(run.out));

        // Piped stdin is typed into the guest; its answer comes back on stdout.
        QProcess console;
        console.start(
            m_ctl,
            {QStringLiteral("--socket"), m_helper->socketPath(), QStringLiteral("console"), name});
        QVERIFY(console.waitForStarted());
        QByteArray seen;
        QVERIFY2(waitForOutput(console, seen, "airlock-guest ready", kBootTimeoutMs),
                 seen.right(2000).constData());
        console.write("echo $((6*7))\n");
        static const QRegularExpression answer(QStringLiteral("^42\\r?$"),
                                               QRegularExpression::MultilineOption);
        QVERIFY2(waitForMatch(console, seen, answer, 30000), seen.right(2000).constData());
        // Ctrl-] detaches with exit code 0; the guest keeps running.
        console.write("\x1d");
        QVERIFY(console.waitForFinished(10000));
        QCOMPARE(console.exitStatus(), QProcess::NormalExit);
        QCOMPARE(console.exitCode(), 0);
        QVERIFY(QString::fromUtf8(console.readAllStandardError())
                    .contains(QStringLiteral("[detached from the console of 'ctl-demo']")));

        // `printf 'echo hi\n' | airlockctl console`: typed, answered, and over with 0 once the
        // guest is quiet (default --timeout). Only the answer: no scrollback (the boot log and
        // the 42 above), and none of the guest's terminal queries, which no one could answer.
        run = ctl({QStringLiteral("console"), name}, "echo hi\n");
        QCOMPARE(run.exitCode, 0);
        static const QRegularExpression hi(QStringLiteral("^hi\\r?$"),
                                           QRegularExpression::MultilineOption);
        QVERIFY2(hi.match(run.out).hasMatch(), qPrintable(run.out));
        QVERIFY2(!run.out.contains(QStringLiteral("airlock-guest ready")), qPrintable(run.out));
        QVERIFY2(!answer.match(run.out).hasMatch(), qPrintable(run.out));
        run =
            ctl({QStringLiteral("console"), name, QStringLiteral("--timeout"), QStringLiteral("5")},
                "printf 'q\\033[6nq\\033[1mb\\n'\n");
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains(QStringLiteral("qq\x1b[1mb")), qPrintable(run.out));
        QVERIFY2(!run.out.contains(QStringLiteral("\x1b[6n")), qPrintable(run.out));
        QCOMPARE(
            ctl({QStringLiteral("console"), name, QStringLiteral("--timeout"), QStringLiteral("x")})
                .exitCode,
            2);

        // A second console with --follow still follows the guest after its end of input, and
        // ends when it stops.
        QProcess follower;
        follower.start(m_ctl,
                       {QStringLiteral("--socket"), m_helper->socketPath(),
                        QStringLiteral("console"), name, QStringLiteral("--follow")});
        QVERIFY(follower.waitForStarted());
        // Its own answer shows it is attached (the helper runs one connection's calls in order).
        follower.write("echo lead-$((6*7))\n");
        follower.closeWriteChannel();
        QByteArray replay;
        static const QRegularExpression lead(QStringLiteral("^lead-42\\r?$"),
                                             QRegularExpression::MultilineOption);
        QVERIFY2(waitForMatch(follower, replay, lead, 30000), replay.right(2000).constData());
        // Output typed by another console reaches it after its end of input (which it had
        // from the start, long before): it did not leave at that end.
        QCOMPARE(ctl({QStringLiteral("console"), name}, "echo follow-$((6*7))\n\x1d").exitCode, 0);
        static const QRegularExpression followed(QStringLiteral("^follow-42\\r?$"),
                                                 QRegularExpression::MultilineOption);
        QVERIFY2(waitForMatch(follower, replay, followed, 30000), replay.right(2000).constData());
        QCOMPARE(follower.state(), QProcess::Running);

        run = ctl({QStringLiteral("rm"), name});
        QCOMPARE(run.exitCode, 1); // busy: still running
        run = ctl({QStringLiteral("stop"), name, QStringLiteral("--timeout"), QStringLiteral("20")},
                  {}, true, 90000);
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out.trimmed(), QStringLiteral("stopped sandbox 'ctl-demo'"));
        QVERIFY(follower.waitForFinished(15000));
        QCOMPARE(follower.exitCode(), 0);
        QVERIFY(QString::fromUtf8(follower.readAllStandardError())
                    .contains(QStringLiteral("[sandbox 'ctl-demo' stopped")));

        run = ctl({QStringLiteral("info"), name});
        QVERIFY(QRegularExpression(QStringLiteral("^State:\\s+stopped$"),
                                   QRegularExpression::MultilineOption)
                    .match(run.out)
                    .hasMatch());
        run = ctl({QStringLiteral("stop"), name});
        QCOMPARE(run.exitCode, 1); // not running: invalid_state
        run = ctl({QStringLiteral("rm"), name});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out.trimmed(), QStringLiteral("removed sandbox 'ctl-demo'"));
        run = ctl({QStringLiteral("info"), name});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains(QStringLiteral("'ctl-demo'")), qPrintable(run.err));
    }

    void killStopsAtOnce()
    {
        const QString name = QStringLiteral("ctl-kill");
        QCOMPARE(ctl({QStringLiteral("create"), name}).exitCode, 0);
        QCOMPARE(ctl({QStringLiteral("start"), name}, {}, true, kBootTimeoutMs).exitCode, 0);
        Run run = ctl({QStringLiteral("--json"), QStringLiteral("kill"), name});
        QCOMPARE(run.exitCode, 0);
        const QJsonObject sandbox = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(sandbox.value(QStringLiteral("state")).toString(), QStringLiteral("stopped"));
        QCOMPARE(sandbox.value(QStringLiteral("vmmPid")).toInt(), 0);
        QCOMPARE(ctl({QStringLiteral("kill"), name}).exitCode, 1);
        QCOMPARE(ctl({QStringLiteral("rm"), name}).exitCode, 0);
    }

    void bridgePipesJsonRpc()
    {
        const QByteArray request =
            R"({"jsonrpc":"2.0","id":7,"method":"hello","params":{"protocol":1,"client":"bridge-test"}})"
            "\n"
            R"({"jsonrpc":"2.0","id":8,"method":"sandbox.get","params":{"name":"nosuch"}})"
            "\n";
        const Run run = ctl({QStringLiteral("bridge")}, request);
        QCOMPARE(run.exitCode, 0);
        const QStringList lines = run.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        const QJsonObject hello = QJsonDocument::fromJson(lines[0].toUtf8()).object();
        QCOMPARE(hello.value(QStringLiteral("id")).toInt(), 7);
        QCOMPARE(hello.value(QStringLiteral("result"))
                     .toObject()
                     .value(QStringLiteral("protocol"))
                     .toInt(),
                 1);
        const QJsonObject missing = QJsonDocument::fromJson(lines[1].toUtf8()).object();
        QCOMPARE(missing.value(QStringLiteral("error"))
                     .toObject()
                     .value(QStringLiteral("data"))
                     .toObject()
                     .value(QStringLiteral("kind")),
                 QJsonValue(QStringLiteral("not_found")));

        const Run nowhere =
            ctl({QStringLiteral("--socket"), m_helper->tempPath() + QStringLiteral("/x.sock"),
                 QStringLiteral("bridge")},
                request, false);
        QCOMPARE(nowhere.exitCode, 1);
        QVERIFY(nowhere.err.contains(QStringLiteral("airlockd is not running")));
    }

    void policyCommands()
    {
        // A helper of its own with a fake image store: policies need a sandbox, not a guest.
        HelperProcess helper;
        QVERIFY2(!helper.useUnbootableImageStore().isEmpty(), qPrintable(helper.lastError()));
        QVERIFY2(helper.start(), qPrintable(helper.lastError()));
        auto run = [&](QStringList arguments, const QByteArray &input = {}) {
            arguments.prepend(helper.socketPath());
            arguments.prepend(QStringLiteral("--socket"));
            return ctl(arguments, input, false);
        };
        const QString policies = QStringLiteral(AIRLOCK_SOURCE_DIR "/resources/policies/");
        const QString pypi = policies + QStringLiteral("pypi.json");

        QCOMPARE(run({QStringLiteral("create"), QStringLiteral("ctl-policy")}).exitCode, 0);
        Run result =
            run({QStringLiteral("policy"), QStringLiteral("get"), QStringLiteral("ctl-policy")});
        QCOMPARE(result.exitCode, 0);
        QCOMPARE(
            QJsonDocument::fromJson(result.out.toUtf8()).object(),
            QJsonObject({{QStringLiteral("version"), 1}, {QStringLiteral("rules"), QJsonArray()}}));
        QVERIFY2(result.out.contains(QStringLiteral("\n    \"")), "pretty-printed");

        result = run(
            {QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("ctl-policy"), pypi});
        QCOMPARE(result.exitCode, 0);
        QCOMPARE(result.out.trimmed(),
                 QStringLiteral("set the egress policy of sandbox 'ctl-policy' (2 rules)"));
        result =
            run({QStringLiteral("policy"), QStringLiteral("get"), QStringLiteral("ctl-policy")});
        QCOMPARE(result.exitCode, 0);
        const QJsonArray rules = QJsonDocument::fromJson(result.out.toUtf8())
                                     .object()
                                     .value(QStringLiteral("rules"))
                                     .toArray();
        QCOMPARE(rules.size(), 2);
        QCOMPARE(rules.at(0).toObject().value(QStringLiteral("host")).toString(),
                 QStringLiteral("pypi.org"));

        // From stdin.
        QFile npm(policies + QStringLiteral("npm.json"));
        QVERIFY(npm.open(QIODevice::ReadOnly));
        result = run({QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("ctl-policy"),
                      QStringLiteral("-")},
                     npm.readAll());
        QCOMPARE(result.exitCode, 0);
        QCOMPARE(result.out.trimmed(),
                 QStringLiteral("set the egress policy of sandbox 'ctl-policy' (1 rule)"));

        // validate: every template is valid; a bad file lists each error on its own line.
        for (const char *file :
             {"debian-mirrors.json", "pypi.json", "npm.json", "github.json", "deny-all.json"}) {
            result = run({QStringLiteral("policy"), QStringLiteral("validate"),
                          policies + QLatin1String(file)});
            QVERIFY2(result.exitCode == 0, qPrintable(result.err));
        }
        const QString bad = helper.tempPath() + QStringLiteral("/bad.json");
        QFile badFile(bad);
        QVERIFY(badFile.open(QIODevice::WriteOnly));
        badFile.write(R"({"version": 1, "rules": [{"host": "ok.test", "ports": [443, 443]},)"
                      R"( {"host": "ok.test", "methods": ["get"]}]})");
        badFile.close();
        result = run({QStringLiteral("policy"), QStringLiteral("validate"), bad});
        QCOMPARE(result.exitCode, 1);
        const QStringList lines = result.err.trimmed().split(u'\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].contains(QStringLiteral("rule 0, field 'ports'")), qPrintable(lines[0]));
        QVERIFY2(lines[1].contains(QStringLiteral("rule 1, field 'methods'")),
                 qPrintable(lines[1]));

        // set refuses the bad file and keeps the policy; unknown sandbox and bad JSON fail too.
        result = run(
            {QStringLiteral("policy"), QStringLiteral("set"), QStringLiteral("ctl-policy"), bad});
        QCOMPARE(result.exitCode, 1);
        QVERIFY2(result.err.contains(QStringLiteral("rule 0, field 'ports'")),
                 qPrintable(result.err));
        result =
            run({QStringLiteral("policy"), QStringLiteral("get"), QStringLiteral("ctl-policy")});
        QCOMPARE(QJsonDocument::fromJson(result.out.toUtf8())
                     .object()
                     .value(QStringLiteral("rules"))
                     .toArray()
                     .size(),
                 1);
        QCOMPARE(run({QStringLiteral("policy"), QStringLiteral("get"), QStringLiteral("ghost")})
                     .exitCode,
                 1);
        result = run({QStringLiteral("policy"), QStringLiteral("validate"), QStringLiteral("-")},
                     "{not json");
        QCOMPARE(result.exitCode, 1);
        QVERIFY2(result.err.contains(QStringLiteral("not valid JSON")), qPrintable(result.err));
        QCOMPARE(run({QStringLiteral("policy"), QStringLiteral("validate"),
                      helper.tempPath() + QStringLiteral("/missing.json")})
                     .exitCode,
                 1);

        // history: the two changes set made (the refused one is not a change), newest first,
        // with who, through what and the rules added and removed.
        result = run(
            {QStringLiteral("policy"), QStringLiteral("history"), QStringLiteral("ctl-policy")});
        QCOMPARE(result.exitCode, 0);
        const QStringList history = result.out.trimmed().split(u'\n');
        QVERIFY2(history.value(0).startsWith(QStringLiteral("#2  ")), qPrintable(result.out));
        QVERIFY2(
            history.value(0).contains(QStringLiteral("(uid %1) via airlockctl").arg(::getuid())),
            qPrintable(result.out));
        QVERIFY2(history.value(0).endsWith(QStringLiteral("(1 rule)")), qPrintable(result.out));
        QVERIFY2(result.out.contains(QStringLiteral("    + registry.npmjs.org:443")),
                 qPrintable(result.out));
        QVERIFY2(result.out.contains(QStringLiteral("    - pypi.org:443")), qPrintable(result.out));
        const qsizetype first = history.indexOf(QRegularExpression(QStringLiteral("^#1  .*")));
        QVERIFY2(first > 0, qPrintable(result.out));
        QVERIFY2(history.at(first).endsWith(QStringLiteral("(2 rules)")), qPrintable(result.out));
        QCOMPARE(
            history.mid(first + 1).filter(QRegularExpression(QStringLiteral("^    \\+ "))).size(),
            2);
        result =
            run({QStringLiteral("policy"), QStringLiteral("history"), QStringLiteral("ctl-policy"),
                 QStringLiteral("--limit"), QStringLiteral("1"), QStringLiteral("--json")});
        QCOMPARE(result.exitCode, 0);
        const QJsonArray changes = QJsonDocument::fromJson(result.out.toUtf8())
                                       .object()
                                       .value(QStringLiteral("changes"))
                                       .toArray();
        QCOMPARE(changes.size(), 1);
        QCOMPARE(changes.at(0).toObject().value(QStringLiteral("seq")).toInteger(), 2);
        QCOMPARE(run({QStringLiteral("policy"), QStringLiteral("history"),
                      QStringLiteral("ctl-policy"), QStringLiteral("--limit"), QStringLiteral("0")})
                     .exitCode,
                 2);
        QCOMPARE(run({QStringLiteral("policy"), QStringLiteral("history"), QStringLiteral("ghost")})
                     .exitCode,
                 1);

        // Usage errors exit 2.
        for (const QStringList &arguments :
             {QStringList {QStringLiteral("policy")},
              QStringList {QStringLiteral("policy"), QStringLiteral("get")},
              QStringList {QStringLiteral("policy"), QStringLiteral("set"),
                           QStringLiteral("ctl-policy")},
              QStringList {QStringLiteral("policy"), QStringLiteral("frob"), pypi}})
            QCOMPARE(run(arguments).exitCode, 2);
    }

private:
    /// Runs airlockctl to completion; `withSocket` prepends --socket of the test helper.
    Run ctl(const QStringList &arguments, const QByteArray &input = {}, bool withSocket = true,
            int timeoutMs = 60000)
    {
        QProcess process;
        QStringList all;
        if (withSocket)
            all << QStringLiteral("--socket") << m_helper->socketPath();
        all << arguments;
        process.start(m_ctl, all);
        if (!process.waitForStarted())
            return {};
        process.write(input);
        process.closeWriteChannel();
        if (!process.waitForFinished(timeoutMs)) {
            process.kill();
            process.waitForFinished();
            qWarning() << "airlockctl" << all << "did not finish";
            return {};
        }
        Run run;
        run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
        run.out = QString::fromUtf8(process.readAllStandardOutput());
        run.err = QString::fromUtf8(process.readAllStandardError());
        return run;
    }

    static bool waitForOutput(QProcess &process, QByteArray &seen, const QByteArray &needle,
                              int timeoutMs)
    {
        QDeadlineTimer deadline(timeoutMs);
        while (!seen.contains(needle)) {
            if (deadline.hasExpired() || process.state() != QProcess::Running)
                return false;
            process.waitForReadyRead(200);
            seen += process.readAllStandardOutput();
        }
        return true;
    }

    static bool waitForMatch(QProcess &process, QByteArray &seen, const QRegularExpression &re,
                             int timeoutMs)
    {
        QDeadlineTimer deadline(timeoutMs);
        while (!re.match(QString::fromUtf8(seen)).hasMatch()) {
            if (deadline.hasExpired() || process.state() != QProcess::Running)
                return false;
            process.waitForReadyRead(200);
            seen += process.readAllStandardOutput();
        }
        return true;
    }

    QString m_ctl;
    std::unique_ptr<HelperProcess> m_helper;
};

QTEST_GUILESS_MAIN(TestAirlockctl)
#include "tst_airlockctl.moc"

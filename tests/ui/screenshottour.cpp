// airlock_screenshot_tour: takes docs/screenshots/{policy-editor,dry-run,egress,credentials}.png.
// Not a test. Run under Xvfb from the build directory (docs/gui.md, "Screenshots"):
//   AIRLOCK_AIRLOCKD=$PWD/app/airlockd/airlockd xvfb-run -s "-screen 0 1400x900x24"
//       tests/ui/airlock_screenshot_tour OUTPUT_DIR
// A real airlockd serves the window; the egress history the views show is recorded into that
// helper's own store (as its gateways would have) before the window connects. Each picture is
// taken with ImageMagick's `import -window root`.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/daemon/registry.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "ui/credentialsview.h"
#include "ui/dryrunmodel.h"
#include "ui/egresseventmodel.h"
#include "ui/egressview.h"
#include "ui/mainwindow.h"
#include "ui/policyeditor.h"
#include "ui/policyrulemodel.h"
#include "ui/resources.h"
#include "ui/sandboxtablemodel.h"

#include <QApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

using namespace airlock;

namespace {

bool waitFor(const std::function<bool()> &condition, int timeoutMs = 15000)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!condition()) {
        if (deadline.hasExpired())
            return false;
        QTest::qWait(50);
    }
    return true;
}

void settle(int ms = 600)
{
    QTest::qWait(ms);
}

bool shoot(const QString &path)
{
    settle();
    const int code = QProcess::execute(QStringLiteral("import"),
                                       {QStringLiteral("-window"), QStringLiteral("root"), path});
    qInfo("%s: %s", qPrintable(path), code == 0 ? "ok" : "import failed");
    return code == 0;
}

QJsonObject event(const QDateTime &time, const QString &sandbox, const QString &layer,
                  const QString &name, bool allowed, const QString &reason,
                  const QString &method = {}, const QString &path = {}, int port = 443)
{
    QJsonObject e {
        {QStringLiteral("time"), time.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("sandbox"), sandbox},
        {QStringLiteral("layer"), layer},
        {QStringLiteral("verdict"), allowed ? QStringLiteral("allowed") : QStringLiteral("denied")},
        {QStringLiteral("reason"), reason},
        {QStringLiteral("name"), name}};
    if (layer != QLatin1String("dns")) {
        e.insert(QStringLiteral("sni"), name);
        e.insert(QStringLiteral("port"), port);
    }
    if (layer == QLatin1String("http")) {
        e.insert(QStringLiteral("host"), name);
        e.insert(QStringLiteral("method"), method);
        e.insert(QStringLiteral("path"), path);
    } else if (layer == QLatin1String("dns")) {
        e.insert(QStringLiteral("dnsType"), QStringLiteral("A"));
    }
    return e;
}

QList<QJsonObject> history(const QString &sandbox)
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QList<QJsonObject> events;
    int s = 3000;
    auto at = [&] {
        s -= 37;
        return now.addSecs(-s);
    };
    const auto http = QStringLiteral("http");
    if (sandbox == QLatin1String("agent")) {
        for (int i = 0; i < 6; ++i)
            events.append(event(at(), sandbox, http, QStringLiteral("github.com"), true,
                                QStringLiteral("allowed"), QStringLiteral("POST"),
                                QStringLiteral("/acme/app.git/git-upload-pack")));
        for (int i = 0; i < 4; ++i)
            events.append(event(at(), sandbox, http, QStringLiteral("api.github.com"), true,
                                QStringLiteral("allowed"), QStringLiteral("GET"),
                                QStringLiteral("/repos/acme/app/pulls")));
        events.append(event(at(), sandbox, http, QStringLiteral("api.github.com"), false,
                            QStringLiteral("method_not_allowed"), QStringLiteral("DELETE"),
                            QStringLiteral("/repos/acme/app/branches/main")));
        for (int i = 0; i < 5; ++i)
            events.append(event(at(), sandbox, http, QStringLiteral("pypi.org"), false,
                                QStringLiteral("host_not_allowed"), QStringLiteral("GET"),
                                QStringLiteral("/simple/requests/")));
        for (int i = 0; i < 3; ++i)
            events.append(event(at(), sandbox, http, QStringLiteral("files.pythonhosted.org"),
                                false, QStringLiteral("host_not_allowed"), QStringLiteral("GET"),
                                QStringLiteral("/packages/requests-2.32.3-py3-none-any.whl")));
        events.append(event(at(), sandbox, QStringLiteral("dns"), QStringLiteral("pastebin.com"),
                            false, QStringLiteral("host_not_allowed")));
        events.append(event(at(), sandbox, QStringLiteral("tls"),
                            QStringLiteral("raw.githubusercontent.com"), true,
                            QStringLiteral("allowed")));
        events.append(event(at(), sandbox, QStringLiteral("tls"),
                            QStringLiteral("evil.example.net"), false,
                            QStringLiteral("host_not_allowed"), {}, {}, 8443));
    } else {
        for (int i = 0; i < 3; ++i)
            events.append(event(at(), sandbox, http, QStringLiteral("deb.debian.org"), true,
                                QStringLiteral("allowed"), QStringLiteral("GET"),
                                QStringLiteral("/debian/dists/bookworm/InRelease")));
        events.append(event(at(), sandbox, http, QStringLiteral("registry.npmjs.org"), false,
                            QStringLiteral("host_not_allowed"), QStringLiteral("GET"),
                            QStringLiteral("/left-pad")));
    }
    return events;
}

} // namespace

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    initUiResources();
    const QString out =
        QDir(argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral(".")).absolutePath();
    QDir().mkpath(out);

    test::HelperProcess helper;
    helper.useHostNetwork(); // no guest boots in the tour
    if (helper.useUnbootableImageStore().isEmpty() || !helper.start()) {
        qCritical("airlockd: %s", qPrintable(helper.lastError()));
        return 1;
    }
    {
        test::RpcTestClient rpc(helper.socketPath());
        rpc.hello();
        for (const QString &name : {QStringLiteral("agent"), QStringLiteral("ci")})
            rpc.call(QStringLiteral("sandbox.create"), {{QStringLiteral("name"), name}});
        QFile github(QStringLiteral(":/policies/github.json"));
        github.open(QIODevice::ReadOnly);
        rpc.call(QStringLiteral("policy.set"),
                 {{QStringLiteral("name"), QStringLiteral("agent")},
                  {QStringLiteral("policy"), QJsonDocument::fromJson(github.readAll()).object()}});
        QFile debian(QStringLiteral(":/policies/debian-mirrors.json"));
        debian.open(QIODevice::ReadOnly);
        rpc.call(QStringLiteral("policy.set"),
                 {{QStringLiteral("name"), QStringLiteral("ci")},
                  {QStringLiteral("policy"), QJsonDocument::fromJson(debian.readAll()).object()}});
        rpc.call(QStringLiteral("secret.set"),
                 {{QStringLiteral("name"), QStringLiteral("github-token")},
                  {QStringLiteral("value"), QStringLiteral("ghp_tour_example_value_0001")}});
        rpc.call(QStringLiteral("secret.set"),
                 {{QStringLiteral("name"), QStringLiteral("npm-token")},
                  {QStringLiteral("value"), QStringLiteral("npm_tour_example_value_0002")}});
        rpc.call(QStringLiteral("binding.add"),
                 {{QStringLiteral("sandbox"), QStringLiteral("agent")},
                  {QStringLiteral("secret"), QStringLiteral("github-token")},
                  {QStringLiteral("host"), QStringLiteral("api.github.com")},
                  {QStringLiteral("pathPrefix"), QStringLiteral("/repos/acme/")}});
        rpc.call(QStringLiteral("binding.add"),
                 {{QStringLiteral("sandbox"), QStringLiteral("ci")},
                  {QStringLiteral("secret"), QStringLiteral("npm-token")},
                  {QStringLiteral("host"), QStringLiteral("registry.npmjs.org")}});
    }
    helper.stop();
    {
        auto registry =
            Registry::open(QDir(helper.stateDir()).filePath(QStringLiteral("registry.sqlite")));
        if (!registry) {
            qCritical("registry: %s", qPrintable(registry.error().message));
            return 1;
        }
        for (const QString &sandbox : {QStringLiteral("agent"), QStringLiteral("ci")})
            for (const QJsonObject &e : history(sandbox))
                (*registry)->appendEgress(sandbox, e);
    }
    if (!helper.start()) {
        qCritical("airlockd: %s", qPrintable(helper.lastError()));
        return 1;
    }

    HelperClient client(std::make_unique<LocalSocketTransport>(helper.socketPath()),
                        QStringLiteral("airlock"));
    MainWindow window(&client);
    window.setGeometry(20, 20, 1360, 860);
    window.show();
    client.connectToHelper();
    if (!waitFor([&] { return window.egressView()->events()->rowCount() >= 24; }))
        qWarning("the recorded history did not arrive");

    // Egress view with the map of "agent".
    window.sections()->setCurrentIndex(1);
    window.egressView()->setSandbox(QStringLiteral("agent"));
    window.egressView()->eventTable()->selectRow(13);
    shoot(out + QStringLiteral("/egress.png"));

    // Credentials.
    window.sections()->setCurrentIndex(2);
    window.credentialsView()->refresh();
    settle(800);
    window.credentialsView()->secretTable()->selectRow(0);
    shoot(out + QStringLiteral("/credentials.png"));

    // Policy editor with pending changes and a rule with a problem.
    window.sections()->setCurrentIndex(0);
    PolicyEditor *editor = window.openPolicyEditor(QStringLiteral("agent"));
    editor->setGeometry(120, 70, 1100, 720);
    waitFor([&] { return editor->isLoaded(); });
    PolicyRuleModel *model = editor->model();
    QFile pypi(QStringLiteral(":/policies/pypi.json"));
    pypi.open(QIODevice::ReadOnly);
    editor->addRules(EgressPolicy::fromJsonBytes(pypi.readAll())->rules);
    model->setData(model->index(1, PolicyRuleModel::MethodsColumn), QStringLiteral("GET, HEAD"));
    const int bad = model->addEmptyRule();
    model->setData(model->index(bad, PolicyRuleModel::HostColumn), QStringLiteral("10.0.0.7"));
    model->setData(model->index(bad, PolicyRuleModel::CommentColumn),
                   QStringLiteral("internal mirror"));
    editor->table()->setCurrentIndex(model->index(bad, PolicyRuleModel::HostColumn));
    editor->table()->selectRow(bad);
    shoot(out + QStringLiteral("/policy-editor.png"));

    // Dry run of the fixed draft over the last 24 hours.
    model->removeRules({bad});
    QSignalSpy finished(editor, &PolicyEditor::dryRunFinished);
    editor->runDryRun(1);
    finished.wait(10000);
    shoot(out + QStringLiteral("/dry-run.png"));
    return 0;
}

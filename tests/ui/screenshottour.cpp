// airlock_screenshot_tour: takes the pictures of docs/gui.md (main-window, new-sandbox, console,
// timeline, egress, credentials, policy-editor, dry-run, policy-history, files, run-command,
// review-changes, denials, allow-prompt, minimum-size .png). Not a test. Run as root under Xvfb
// from the build directory after the guest image is built (docs/gui.md, "Screenshots"):
//   AIRLOCK_AIRLOCKD=$PWD/app/airlockd/airlockd
//   AIRLOCK_GATEWAY=$PWD/app/airlock-gateway/airlock-gateway
//       xvfb-run -s "-screen 0 1400x900x24" tests/ui/airlock_screenshot_tour OUTPUT_DIR
// A real airlockd (in a network namespace of its own, HelperProcess) serves the window and boots
// real guests; the snapshots in the timeline are real snapshots of a running guest. The egress
// history the views show is recorded into that helper's own store (as its gateways would have)
// before the window connects: the guests have no upstream to talk to. Each picture is one
// top-level window, taken with ImageMagick's `import -window ID`: without a window manager
// Xvfb has no decorations and places every window at 0,0, so the root window would show
// dialogs over a half-covered main window.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/daemon/bindingstore.h"
#include "core/daemon/registry.h"
#include "core/workspace/workspaceupload.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "ui/commandpanel.h"
#include "ui/consoletab.h"
#include "ui/credentialsview.h"
#include "ui/denialnotifier.h"
#include "ui/denialprompt.h"
#include "ui/dryrunmodel.h"
#include "ui/egresseventmodel.h"
#include "ui/egressview.h"
#include "ui/filestab.h"
#include "ui/guestfilemodel.h"
#include "ui/mainwindow.h"
#include "ui/newsandboxdialog.h"
#include "ui/policyeditor.h"
#include "ui/policyhistorymodel.h"
#include "ui/policyrulemodel.h"
#include "ui/resources.h"
#include "ui/reviewdialog.h"
#include "ui/sandboxtablemodel.h"
#include "ui/snapshotsview.h"
#include "ui/snapshottimelinemodel.h"
#include "ui/snapshottimelineview.h"
#include "ui/workspacechangemodel.h"

#include <QApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLibraryInfo>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <QTreeView>

using namespace airlock;

namespace {

bool waitFor(const std::function<bool()> &condition, int timeoutMs = 15000)
{
    return QTest::qWaitFor(condition, timeoutMs);
}

void settle(int ms = 600)
{
    QTest::qWait(ms);
}

/// Takes one top-level window (its X11 id) as the person sees it.
bool shoot(QWidget *window, const QString &path)
{
    window->raise();
    settle();
    const QString id = QStringLiteral("0x%1").arg(quint64(window->winId()), 0, 16);
    const int code =
        QProcess::execute(QStringLiteral("import"), {QStringLiteral("-window"), id, path});
    qInfo("%s: %s", qPrintable(path), code == 0 ? "ok" : "import failed");
    return code == 0;
}

/// The console of one sandbox over a raw client: types lines, waits for their output.
class GuestConsole
{
public:
    GuestConsole(const QString &socket, const QString &sandbox)
        : m_client(socket), m_sandbox(sandbox)
    {
        m_client.hello();
        const QJsonObject attached = test::RpcTestClient::result(
            m_client.call(QStringLiteral("console.attach"), {{QStringLiteral("name"), sandbox}}));
        m_text =
            QByteArray::fromBase64(attached.value(QStringLiteral("data")).toString().toLatin1());
    }
    bool waitFor(const QByteArray &needle, qsizetype from = 0, int timeoutMs = 120000)
    {
        QDeadlineTimer deadline(timeoutMs);
        while (m_text.indexOf(needle, from) < 0) {
            if (deadline.hasExpired())
                return false;
            auto message = m_client.waitForNotification(
                QStringLiteral("console.output"),
                [this](const QJsonObject &p) {
                    return p.value(QStringLiteral("sandbox")).toString() == m_sandbox;
                },
                500);
            if (message)
                m_text += QByteArray::fromBase64(message->value(QStringLiteral("params"))
                                                     .toObject()
                                                     .value(QStringLiteral("data"))
                                                     .toString()
                                                     .toLatin1());
        }
        return true;
    }
    /// Types `line` and waits for `needle` after it.
    bool run(const QByteArray &line, const QByteArray &needle, int timeoutMs = 60000)
    {
        const qsizetype from = m_text.size();
        m_client.call(QStringLiteral("console.write"),
                      {{QStringLiteral("name"), m_sandbox},
                       {QStringLiteral("data"), QString::fromLatin1((line + '\n').toBase64())}});
        if (!waitFor(needle, from, timeoutMs))
            return false;
        // And the next prompt, so the next line is not typed into this one's output.
        return waitFor("# ", m_text.indexOf(needle, from) + needle.size(), timeoutMs);
    }

private:
    test::RpcTestClient m_client;
    QString m_sandbox;
    QByteArray m_text;
};

QJsonObject rpcCall(const QString &socket, const QString &method, const QJsonObject &params,
                    int timeoutMs = 120000)
{
    test::RpcTestClient rpc(socket);
    rpc.hello();
    const QJsonObject answer = rpc.call(method, params, timeoutMs);
    if (!answer.contains(QStringLiteral("result")))
        qWarning("%s: %s", qPrintable(method), QJsonDocument(answer).toJson().constData());
    return test::RpcTestClient::result(answer);
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

QList<QJsonObject> history(const QString &sandbox, qint64 agentBinding)
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
        // The gateway's credential events for agent's binding (`binding` in the event).
        QJsonObject injected = event(at(), sandbox, http, QStringLiteral("api.github.com"), true,
                                     QStringLiteral("allowed"), QStringLiteral("GET"),
                                     QStringLiteral("/repos/acme/app/issues"));
        injected.insert(QStringLiteral("binding"), agentBinding);
        injected.insert(QStringLiteral("status"), 200);
        events.append(injected);
        QJsonObject exfil = event(at(), sandbox, http, QStringLiteral("api.github.com"), false,
                                  QStringLiteral("credential_exfil"), QStringLiteral("GET"),
                                  QStringLiteral("/users/someone-else/repos"));
        exfil.insert(QStringLiteral("binding"), agentBinding);
        exfil.insert(QStringLiteral("alert"), true);
        exfil.insert(QStringLiteral("detail"),
                     QStringLiteral("a credential placeholder outside its binding's path"));
        events.append(exfil);
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
        // A retry loop beyond the gateway's event rate: one summary stands for 48 denials.
        QJsonObject flood =
            event(at(), sandbox, QStringLiteral("dns"), QStringLiteral("pastebin.com"), false,
                  QStringLiteral("host_not_allowed"));
        flood.insert(QStringLiteral("count"), 48);
        events.append(flood);
        // Decisions of the gateway's own rules: a name resolving into the host's network, an
        // IP address typed as the Host (their reasons in words, not codes).
        QJsonObject intranet = event(at(), sandbox, http, QStringLiteral("wiki.corp.example"),
                                     false, QStringLiteral("private_destination"),
                                     QStringLiteral("GET"), QStringLiteral("/"));
        intranet.insert(QStringLiteral("detail"),
                        QStringLiteral("wiki.corp.example resolves to 10.20.0.5"));
        events.append(intranet);
        events.append(event(at(), sandbox, http, QStringLiteral("203.0.113.9"), false,
                            QStringLiteral("ip_literal"), QStringLiteral("GET"),
                            QStringLiteral("/install.sh")));
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
    // The window's language, as main.cpp picks it (LANGUAGE=de for the German pictures), Qt's
    // own words (Cancel, OK) included.
    QTranslator qtTranslator;
    if (qtTranslator.load(QLocale(), QStringLiteral("qtbase"), QStringLiteral("_"),
                          QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QApplication::installTranslator(&qtTranslator);
    QTranslator translator;
    if (translator.load(QLocale(), QStringLiteral("airlock"), QStringLiteral("_"),
                        QStringLiteral(":/i18n")))
        QApplication::installTranslator(&translator);
    const QString out =
        QDir(argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral(".")).absolutePath();
    QDir().mkpath(out);

    test::HelperProcess helper;
    if (!helper.start()) {
        qCritical("airlockd: %s", qPrintable(helper.lastError()));
        return 1;
    }
    const QString socket = helper.socketPath();
    {
        test::RpcTestClient rpc(socket);
        rpc.hello();
        for (const QString &name : {QStringLiteral("agent"), QStringLiteral("ci")})
            rpc.call(QStringLiteral("sandbox.create"), {{QStringLiteral("name"), name}});
        QFile github(QStringLiteral(":/policies/github.json"));
        github.open(QIODevice::ReadOnly);
        const QJsonObject githubPolicy = QJsonDocument::fromJson(github.readAll()).object();
        // A policy history worth a picture (policy-history.png): set from the command line, a
        // rule allowed at the prompt, then reverted in the editor; it ends where it began, so
        // the denials later in the tour are what they would be without it.
        QJsonObject withNpm = githubPolicy;
        QJsonArray rules = withNpm.value(QStringLiteral("rules")).toArray();
        rules.append(QJsonObject {
            {QStringLiteral("host"), QStringLiteral("registry.npmjs.org")},
            {QStringLiteral("methods"), QJsonArray {QStringLiteral("GET")}},
            {QStringLiteral("comment"),
             QStringLiteral("allowed by the tour at the Allow? prompt after 2 denied requests")}});
        withNpm.insert(QStringLiteral("rules"), rules);
        for (const auto &[policy, source] : {std::pair {githubPolicy, QStringLiteral("airlockctl")},
                                             std::pair {withNpm, QStringLiteral("allow-prompt")},
                                             std::pair {githubPolicy, QStringLiteral("revert")}})
            rpc.call(QStringLiteral("policy.set"),
                     {{QStringLiteral("name"), QStringLiteral("agent")},
                      {QStringLiteral("policy"), policy},
                      {QStringLiteral("source"), source}});
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
        // The counters airlockd keeps from those events (docs/credentials.md, "Counters").
        BindingStore bindings(**registry);
        qint64 agentBinding = 0;
        if (auto listed = bindings.list(QStringLiteral("agent")); listed && !listed->isEmpty())
            agentBinding = listed->constFirst().id;
        for (int i = 0; i < 5; ++i)
            bindings.recordInjection(agentBinding,
                                     QDateTime::currentDateTimeUtc().addSecs(-600 * (5 - i)));
        bindings.recordDenied(agentBinding);
        for (const QString &sandbox : {QStringLiteral("agent"), QStringLiteral("ci")})
            for (const QJsonObject &e : history(sandbox, agentBinding))
                (*registry)->appendEgress(sandbox, e);
    }
    if (!helper.start()) {
        qCritical("airlockd: %s", qPrintable(helper.lastError()));
        return 1;
    }

    // A running guest with a history: snapshots, an automatic one, a restore and a fork.
    const QString agent = QStringLiteral("agent");
    const QJsonObject named {{QStringLiteral("name"), agent}};
    rpcCall(socket, QStringLiteral("sandbox.start"), named);
    GuestConsole console(socket, agent);
    if (!console.waitFor("airlock-guest ready")) {
        qCritical("the guest did not boot");
        return 1;
    }
    console.run("echo ready-$((40+2))", "ready-42");
    auto snapshot = [&](const QString &sandbox, const QString &label) {
        return rpcCall(socket, QStringLiteral("snapshot.create"),
                       {{QStringLiteral("name"), sandbox}, {QStringLiteral("label"), label}})
            .value(QStringLiteral("id"))
            .toString();
    };
    const QString clean = snapshot(agent, QStringLiteral("clean boot"));
    rpcCall(socket, QStringLiteral("snapshot.pin"), {{QStringLiteral("snapshot"), clean}});
    // Automatic snapshots every minute for a while (the helper checks every 30 s).
    rpcCall(socket, QStringLiteral("snapshot.schedule"),
            {{QStringLiteral("name"), agent},
             {QStringLiteral("schedule"), QJsonObject {{QStringLiteral("intervalMinutes"), 1}}}});
    console.run("dd if=/dev/urandom of=/dev/shm/deps bs=1M count=24 2>/dev/null; echo d-$((1+1))",
                "d-2");
    const QString deps = snapshot(agent, QStringLiteral("deps installed"));
    console.run("dd if=/dev/urandom of=/dev/shm/build bs=1M count=6 2>/dev/null; echo b-$((1+2))",
                "b-3");
    waitFor(
        [&] {
            const QJsonArray all = rpcCall(socket, QStringLiteral("snapshot.list"), named)
                                       .value(QStringLiteral("snapshots"))
                                       .toArray();
            return std::any_of(all.begin(), all.end(), [](const QJsonValue &v) {
                return v.toObject().value(QStringLiteral("kind")).toString() == u"automatic";
            });
        },
        90000);
    rpcCall(socket, QStringLiteral("snapshot.schedule"),
            {{QStringLiteral("name"), agent},
             {QStringLiteral("schedule"), QJsonObject {{QStringLiteral("intervalMinutes"), 60}}}});
    snapshot(agent, QStringLiteral("tests failing"));
    rpcCall(socket, QStringLiteral("snapshot.fork"),
            {{QStringLiteral("snapshot"), deps},
             {QStringLiteral("name"), QStringLiteral("agent-try")}});
    rpcCall(socket, QStringLiteral("snapshot.restore"),
            {{QStringLiteral("name"), agent}, {QStringLiteral("snapshot"), deps}});
    QString otherApproach;
    {
        GuestConsole forkConsole(socket, QStringLiteral("agent-try"));
        forkConsole.run(
            "dd if=/dev/urandom of=/dev/shm/try bs=1M count=3 2>/dev/null; echo t-$((2+2))", "t-4");
        // A snapshot whose guest agent cannot apply a new name (tst_guestidentity's way:
        // /etc/hostname is a directory): its fork gets an identityWarning.
        forkConsole.run("rm -f /etc/hostname; mkdir /etc/hostname; echo h-$((3+3))", "h-6");
        otherApproach = snapshot(QStringLiteral("agent-try"), QStringLiteral("other approach"));
        forkConsole.run("rmdir /etc/hostname; hostname > /etc/hostname; echo h-$((3+4))", "h-7");
    }
    rpcCall(socket, QStringLiteral("snapshot.fork"),
            {{QStringLiteral("snapshot"), otherApproach},
             {QStringLiteral("name"), QStringLiteral("agent-copy")}});
    GuestConsole restored(socket, agent);
    restored.run("dd if=/dev/urandom of=/dev/shm/fix bs=1M count=4 2>/dev/null; echo f-$((2+3))",
                 "f-5");
    snapshot(agent, QStringLiteral("fixed on a branch"));
    restored.run("clear", "\x1b["); // the screen is cleared, then the prompt
    restored.run("uname -a", "GNU/Linux");
    restored.run("echo $((6*7))", "42\r\n");
    restored.run("ls --color=always /", "var");
    restored.run("free -m", "Swap:");

    HelperClient client(std::make_unique<LocalSocketTransport>(socket), QStringLiteral("airlock"));
    MainWindow window(&client);
    // The default size, at the screen's corner: no window manager to place it.
    window.setGeometry(QRect(QPoint(0, 0), MainWindow::defaultSize()));
    window.show();
    client.connectToHelper();
    if (!waitFor([&] { return window.egressView()->events()->rowCount() >= 30; }))
        qWarning("the recorded history did not arrive");
    waitFor([&] { return window.model()->rowOf(agent) >= 0; });

    // Main window: the sandboxes, agent's console.
    window.table()->selectRow(window.model()->rowOf(agent));
    window.openConsole(agent);
    // The details show the fork whose guest did not confirm its new identity.
    window.table()->selectRow(window.model()->rowOf(QStringLiteral("agent-copy")));
    settle(1500);
    shoot(&window, out + QStringLiteral("/main-window.png"));
    window.table()->selectRow(window.model()->rowOf(agent));

    // New Sandbox with a name the helper would refuse: the reason in words under the field,
    // the template note under the choice.
    {
        QStringList names;
        for (int row = 0; row < window.model()->rowCount(); ++row)
            names.append(window.model()->sandboxAt(row)->spec.name);
        NewSandboxDialog dialog(&client, names, &window);
        dialog.move(0, 0);
        dialog.show();
        waitFor([&] { return !dialog.templateNote().isEmpty(); });
        dialog.findChild<QLineEdit *>()->setText(QStringLiteral("Agent-2"));
        shoot(&dialog, out + QStringLiteral("/new-sandbox.png"));
    }
    // The console alone (colours, the shell).
    restored.run("printf '\\033[1;32mok\\033[0m \\033[31merror\\033[0m \\033[38;5;214m256-colour"
                 "\\033[0m \\033[7mreverse\\033[0m\\n'",
                 "reverse");
    settle(800);
    shoot(&window, out + QStringLiteral("/console.png"));

    // Snapshot timeline of agent, with "deps installed" selected.
    window.showTimeline(agent);
    SnapshotsView *snapshots = window.snapshotsView();
    waitFor([&] { return snapshots->model()->snapshotCount() >= 7; });
    snapshots->selectSnapshot(deps);
    snapshots->timeline()->setFocus();
    settle(800);
    shoot(&window, out + QStringLiteral("/timeline.png"));

    // Egress view with the map of "agent".
    window.sections()->setCurrentIndex(1);
    window.egressView()->setSandbox(agent);
    // The credential_exfil decision selected: its reason in words, the binding it misused.
    QAbstractItemModel *shown = window.egressView()->eventTable()->model();
    for (int row = 0; row < shown->rowCount(); ++row) {
        if (shown->index(row, 0).data(EgressEventModel::ReasonRole).toString()
            == u"credential_exfil") {
            window.egressView()->eventTable()->selectRow(row);
        }
    }

    shoot(&window, out + QStringLiteral("/egress.png"));

    // Credentials.
    window.sections()->setCurrentIndex(2);
    window.credentialsView()->refresh();
    settle(800);
    window.credentialsView()->secretTable()->selectRow(0);
    shoot(&window, out + QStringLiteral("/credentials.png"));

    // Policy editor with pending changes and a rule with a problem: its own window.
    window.sections()->setCurrentIndex(0);
    PolicyEditor *editor = window.openPolicyEditor(agent);
    editor->setGeometry(0, 0, 1100, 720);
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
    shoot(editor, out + QStringLiteral("/policy-editor.png"));

    // Dry run of the fixed draft over the last 24 hours.
    model->removeRules({bad});
    QSignalSpy finished(editor, &PolicyEditor::dryRunFinished);
    editor->runDryRun(1);
    finished.wait(10000);
    shoot(editor, out + QStringLiteral("/dry-run.png"));

    // The recorded changes of the policy, the first one selected to go back to.
    QSignalSpy historyLoaded(editor, &PolicyEditor::historyLoaded);
    editor->reloadHistory();
    historyLoaded.wait(10000);
    for (QTabWidget *tabs : editor->findChildren<QTabWidget *>())
        if (tabs->accessibleName() == QStringLiteral("Changes, dry run and history"))
            tabs->setCurrentIndex(2);
    editor->historyTable()->selectRow(1);
    shoot(editor, out + QStringLiteral("/policy-history.png"));
    editor->close();

    // The agent views: a project brought into /workspace, the Files tab, a command, a review.
    QTemporaryDir projectDir;
    const QString project = projectDir.filePath(QStringLiteral("acme-app"));
    auto put = [&](const QString &name, const QByteArray &content) {
        QDir().mkpath(QFileInfo(project + u'/' + name).path());
        QFile file(project + u'/' + name);
        file.open(QIODevice::WriteOnly);
        file.write(content);
    };
    put(QStringLiteral("README.md"), "# acme-app\n\nA small tool that parses config files.\n");
    put(QStringLiteral("Makefile"), "all:\n\tcc -O2 -o app src/main.c src/parse.c\n");
    put(QStringLiteral("src/main.c"),
        "#include <stdio.h>\n#include \"parse.h\"\n\nint main(int argc, char **argv)\n{\n"
        "    if (argc < 2)\n        return 2;\n    return parse_file(argv[1]) ? 0 : 1;\n}\n");
    put(QStringLiteral("src/parse.c"),
        "#include \"parse.h\"\n#include <stdio.h>\n\nint parse_file(const char *path)\n{\n"
        "    FILE *f = fopen(path, \"r\");\n    if (!f)\n        return 0;\n"
        "    /* TODO: read the keys */\n    fclose(f);\n    return 1;\n}\n");
    put(QStringLiteral("src/parse.h"), "int parse_file(const char *path);\n");
    put(QStringLiteral("notes/old-plan.txt"), "1. parse\n2. test\n");
    {
        workspace::WorkspaceUpload upload(&client, agent, project, QStringLiteral("/workspace"),
                                          QStringLiteral("agent"));
        QSignalSpy pushed(&upload, &workspace::WorkspaceUpload::finished);
        upload.start();
        if (!pushed.wait(60000))
            qWarning("the project was not pushed");
    }
    window.sections()->setCurrentIndex(0);
    FilesTab *files = window.openFiles(agent);
    waitFor([&] {
        return files->path() == u"/workspace" && files->model()->rowOf(QStringLiteral("src")) >= 0;
    });
    // More room for the tab area than the table of sandboxes.
    if (auto *split =
            qobject_cast<QSplitter *>(window.consoleTabs()->parentWidget()->parentWidget()))
        split->setSizes({170, 600});
    files->table()->selectRow(files->model()->rowOf(QStringLiteral("README.md")));
    files->commandPanel()->commandEdit()->setText(QStringLiteral("make"));
    settle(800);
    shoot(&window, out + QStringLiteral("/files.png"));

    CommandPanel *command = files->commandPanel();
    QSignalSpy ran(command, &CommandPanel::commandFinished);
    command->commandEdit()->setText(
        QStringLiteral("wc -l src/*.c; grep -rn TODO src; ls missing.txt"));
    command->run(command->commandEdit()->text());
    ran.wait(60000);
    settle(800);
    shoot(&window, out + QStringLiteral("/run-command.png"));

    // The agent's work, as it would leave it: an edit, a new test, a removed file, and a link
    // out of the folder the host refuses to write.
    const QByteArray parse =
        "#include \"parse.h\"\n#include <stdio.h>\n\nint parse_file(const char *path)\n{\n"
        "    FILE *f = fopen(path, \"r\");\n    if (!f)\n        return 0;\n"
        "    char line[256];\n    while (fgets(line, sizeof line, f))\n"
        "        if (line[0] != '#')\n            fputs(line, stdout);\n"
        "    fclose(f);\n    return 1;\n}\n";
    const QByteArray test =
        "#include \"parse.h\"\n\nint main(void)\n{\n    return !parse_file(\"README.md\");\n}\n";
    restored.run("cd /workspace && echo " + parse.toBase64() + " | base64 -d > src/parse.c && echo "
                     + test.toBase64()
                     + " | base64 -d > src/test_parse.c && rm notes/old-plan.txt && "
                       "ln -s /etc/shadow secrets; cd /; echo w-$((4+4))",
                 "w-8");
    ReviewDialog review(&client, agent, project, QStringLiteral("/workspace"), &window);
    review.setGeometry(0, 0, 1200, 720);
    review.show();
    QSignalSpy reviewed(&review, &ReviewDialog::ready);
    review.compare();
    reviewed.wait(60000);
    review.model()->setAccepted(review.model()->rowOf(QStringLiteral("notes/old-plan.txt")), false);
    review.selectChange(QStringLiteral("src/parse.c"));
    settle(800);
    shoot(&review, out + QStringLiteral("/review-changes.png"));
    review.close();

    // Denials as they happen: the agent asks for pypi.org over plain HTTP and looks up another
    // name; its gateway denies both. Xvfb has no tray, so the bar above the sections asks.
    restored.run("printf 'GET /simple/requests/ HTTP/1.1\\r\\nHost: pypi.org\\r\\nConnection: "
                 "close\\r\\n\\r\\n' | nc -w 5 203.0.113.10 80 >/dev/null; nslookup "
                 "files.pythonhosted.org >/dev/null 2>&1; echo d-$((5+5))",
                 "d-10");
    if (!waitFor([&] { return window.denials()->isOpen(agent, QStringLiteral("pypi.org")); }))
        qWarning("no live denial of pypi.org arrived");
    window.sections()->setCurrentIndex(1);
    window.egressView()->setSandbox(agent);
    settle(800);
    shoot(&window, out + QStringLiteral("/denials.png"));
    if (DenialPrompt *prompt = window.openDenialPrompt(agent, QStringLiteral("pypi.org"))) {
        prompt->move(0, 0);
        prompt->resize(prompt->sizeHint().expandedTo(QSize(640, 0)));
        shoot(prompt, out + QStringLiteral("/allow-prompt.png"));
        prompt->close();
    }

    // The smallest the window can be: names stay readable.
    window.sections()->setCurrentIndex(0);
    window.resize(MainWindow::minimumWindowSize());
    settle(800);
    shoot(&window, out + QStringLiteral("/minimum-size.png"));
    return 0;
}

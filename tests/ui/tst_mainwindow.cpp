#include "core/client/helperclient.h"
#include "core/client/helperstartadvice.h"
#include "core/client/localsockettransport.h"
#include "core/terminal/terminalsession.h"
#include "helperprocess.h"
#include "rpctestclient.h"
#include "ui/consolecontroller.h"
#include "ui/consoletab.h"
#include "ui/mainwindow.h"
#include "ui/newsandboxdialog.h"
#include "ui/resources.h"
#include "ui/sandboxdetailsview.h"
#include "ui/sandboxtablemodel.h"
#include "ui/terminalview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

using namespace airlock;

namespace {

// TCG boots take a few seconds here; leave room for a loaded CI machine.
constexpr int kBootTimeoutMs = 120000;

/// Appends each action the window reports failed ("text message") to `failures`, so a test can
/// stop waiting at once with the reason instead of for a state that will never come.
void collectFailures(MainWindow &window, QStringList &failures)
{
    QObject::connect(&window, &MainWindow::actionFailed, &window,
                     [&failures](const QString &text, const Error &error) {
                         failures.append(text + QLatin1Char(' ') + error.message);
                     });
}

std::unique_ptr<HelperClient> makeClient(const QString &socket)
{
    auto client = std::make_unique<HelperClient>(std::make_unique<LocalSocketTransport>(socket),
                                                 QStringLiteral("tst_mainwindow"));
    client->setAutoReconnect(true);
    return client;
}

QString consoleText(MainWindow &window, const QString &sandbox)
{
    ConsoleTab *tab = window.consoleTab(sandbox);
    return tab ? tab->view()->session()->allText() : QString();
}

bool hasLine(const QString &text, const QString &line)
{
    return text.split(QLatin1Char('\n')).contains(line);
}

QString stateOf(MainWindow &window, const QString &sandbox)
{
    const int row = window.model()->rowOf(sandbox);
    if (row < 0)
        return {};
    return window.model()->index(row, SandboxTableModel::StateColumn).data().toString();
}

} // namespace

/// The window against a real airlockd and a real TCG guest (offscreen platform).
class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void noHelperShowsExplanation();
    void notInTheGroupShowsMayNotUse();
    void newSandboxDialogValidatesName();
    void newSandboxDialogOffersTemplates();
    void newSandboxDialogOffersTheVmms();
    void sandboxRunsAndConsoleWorks();
};

void TestMainWindow::initTestCase()
{
    initUiResources();
}

void TestMainWindow::noHelperShowsExplanation()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString socket = dir.filePath(QStringLiteral("missing.sock"));
    auto client = makeClient(socket);
    MainWindow window(client.get());
    window.show();
    client->connectToHelper();

    QTRY_VERIFY_WITH_TIMEOUT(
        window.isShowingConnectionProblem()
            && window.connectionProblemText().contains(QStringLiteral("not reachable")),
        10000);
    const QString text = window.connectionProblemText();
    QVERIFY2(text.contains(socket), qPrintable(text));
    // systemctl only where the package's unit is installed; otherwise how to start it by hand.
    if (HelperStartAdvice::hasSystemdUnit()) {
        QVERIFY2(text.contains(QStringLiteral("systemctl start airlockd")), qPrintable(text));
    } else {
        QVERIFY2(!text.contains(QStringLiteral("systemctl")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("There is no airlockd.service")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("sudo installers/dev/run-demo.sh")),
                 qPrintable(text));
    }
    QVERIFY(window.statusText().startsWith(QStringLiteral("Not connected")));
    QVERIFY(!window.table()->isVisible()); // the placeholder page, not an empty table
}

void TestMainWindow::notInTheGroupShowsMayNotUse()
{
    // Issue 17: a user outside the `airlock` group saw "not reachable" and systemctl advice.
    // A real airlockd's socket (root:airlock 0660) refuses a uid outside the group in
    // connect(2); root passes every permission check, so a root test connects as nobody.
    test::HelperProcess helper;
    QVERIFY2(helper.start(), qPrintable(helper.lastError()));
    auto client = makeClient(helper.socketPath());
    client->setAutoReconnect(false);
    MainWindow window(client.get());
    window.show();
    const uid_t stranger = ::geteuid() == 0 ? uid_t(65534) : ::geteuid();
    if (::geteuid() != 0 && ::access(QFile::encodeName(helper.socketPath()).constData(), W_OK) == 0)
        QSKIP("this user may use the helper's socket");
    QVERIFY(::seteuid(stranger) == 0);
    client->connectToHelper(); // connect(2) runs here, as the stranger
    QVERIFY(::seteuid(0) == 0 || ::geteuid() == stranger);

    // The page says "Connecting…" until the refusal arrives.
    QTRY_VERIFY2_WITH_TIMEOUT(window.connectionProblemText().startsWith(
                                  QStringLiteral("You may not use the Airlock helper")),
                              qPrintable(window.connectionProblemText()), 10000);
    const QString text = window.connectionProblemText();
    QVERIFY2(text.contains(QStringLiteral("sudo usermod -aG airlock ")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("systemctl")), qPrintable(text));
    QVERIFY2(!text.contains(QStringLiteral("not reachable")), qPrintable(text));
}

void TestMainWindow::newSandboxDialogValidatesName()
{
    NewSandboxDialog dialog(nullptr, {QStringLiteral("taken")});
    dialog.show();
    auto *name = dialog.findChild<QLineEdit *>();
    QVERIFY(name);
    QLabel *problem = nullptr;
    for (QLabel *label : dialog.findChildren<QLabel *>()) {
        if (label->accessibleName() == QStringLiteral("Name problem"))
            problem = label;
    }
    QVERIFY(problem);
    QPushButton *ok = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
    QVERIFY(!ok->isEnabled());
    QVERIFY(problem->text().isEmpty()); // no scolding before anything was typed

    QTest::keyClicks(name, QStringLiteral("Demo"));
    QVERIFY(!ok->isEnabled());
    QVERIFY2(problem->text().startsWith(QStringLiteral("“D” at position 1: upper case")),
             qPrintable(problem->text()));

    name->clear();
    QTest::keyClicks(name, QStringLiteral("taken"));
    QVERIFY(!ok->isEnabled());
    QVERIFY2(problem->text().contains(QStringLiteral("already exists")),
             qPrintable(problem->text()));

    name->clear();
    QTest::keyClicks(name, QStringLiteral("agent-1"));
    QVERIFY(ok->isEnabled());
    QVERIFY(problem->text().isEmpty());
    QCOMPARE(dialog.spec().name, QStringLiteral("agent-1"));
    QCOMPARE(dialog.spec().image, QStringLiteral("default"));
}

void TestMainWindow::newSandboxDialogOffersTemplates()
{
    test::HelperProcess helper;
    QVERIFY(!helper.useUnbootableImageStore().isEmpty());
    QVERIFY2(helper.start(), qPrintable(helper.lastError()));
    auto client = makeClient(helper.socketPath());
    MainWindow window(client.get());
    QStringList failures;
    collectFailures(window, failures);
    client->connectToHelper();
    NewSandboxDialog dialog(client.get(), {});
    dialog.show();
    QTRY_VERIFY_WITH_TIMEOUT(!dialog.templateNote().isEmpty(), 10000);
    const bool helperHasTemplates =
        !dialog.templateNote().contains(QStringLiteral("cannot start sandboxes from a template"));
    qInfo("template note: %s", qPrintable(dialog.templateNote()));
    if (helperHasTemplates) {
        // template.list answered: the choice is on by default and says what it will do.
        QVERIFY(dialog.templateBox()->isEnabled());
        QVERIFY(dialog.templateBox()->isChecked());
        QCOMPARE(dialog.bootMode(), QStringLiteral("template"));
        QVERIFY2(dialog.templateNote().contains(QStringLiteral("template of this image")),
                 qPrintable(dialog.templateNote()));
        dialog.templateBox()->setChecked(false);
        QVERIFY(dialog.templateNote().contains(QStringLiteral("boots its kernel")));
    } else {
        // A helper without templates (method_not_found): the choice is off and disabled.
        QVERIFY(!dialog.templateBox()->isEnabled());
        QVERIFY(!dialog.templateBox()->isChecked());
    }
    QCOMPARE(dialog.bootMode(), QStringLiteral("cold"));

    // The window sends the choice with sandbox.create; either helper creates the sandbox.
    QTRY_VERIFY(window.model()->isLoaded());
    SandboxSpec spec;
    spec.name = QStringLiteral("cold-one");
    window.createSandbox(spec, false, dialog.bootMode());
    QTRY_VERIFY_WITH_TIMEOUT(window.model()->rowOf(spec.name) >= 0 || !failures.isEmpty(), 10000);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
    test::RpcTestClient rpc(helper.socketPath());
    const QJsonObject sandbox = test::RpcTestClient::result(
        rpc.call(QStringLiteral("sandbox.get"), {{QStringLiteral("name"), spec.name}}));
    QCOMPARE(sandbox.value(QStringLiteral("name")).toString(), spec.name);
    if (helperHasTemplates && sandbox.contains(QStringLiteral("boot")))
        QCOMPARE(sandbox.value(QStringLiteral("boot")).toString(), QStringLiteral("cold"));
}

void TestMainWindow::newSandboxDialogOffersTheVmms()
{
    // Issue 19: the window offers the backends `hello` reports; this helper has no Firecracker
    // binary (and TCG only), so Firecracker is offered greyed out with the helper's reason.
    test::HelperProcess helper;
    QVERIFY(!helper.useUnbootableImageStore().isEmpty());
    QVERIFY2(helper.start(), qPrintable(helper.lastError()));
    auto client = makeClient(helper.socketPath());
    MainWindow window(client.get());
    QStringList failures;
    collectFailures(window, failures);
    client->connectToHelper();
    QTRY_VERIFY(window.model()->isLoaded());
    NewSandboxDialog dialog(client.get(), {});
    QComboBox *vmm = dialog.vmmBox();
    QCOMPARE(vmm->count(), 3);
    QCOMPARE(vmm->itemText(0), QStringLiteral("Host default (QEMU microvm)"));
    const int firecracker = vmm->findData(QStringLiteral("firecracker"));
    QVERIFY(firecracker > 0);
    auto *items = qobject_cast<QStandardItemModel *>(vmm->model());
    QVERIFY(items && !items->item(firecracker)->isEnabled());
    const QString reason = client->helloResult()
                               .value(QStringLiteral("vmms"))
                               .toObject()
                               .value(QStringLiteral("firecracker"))
                               .toObject()
                               .value(QStringLiteral("reason"))
                               .toString();
    QVERIFY(!reason.isEmpty());
    QCOMPARE(vmm->itemData(firecracker, Qt::ToolTipRole).toString(), reason);
    QCOMPARE(dialog.vmmNote(), QStringLiteral("Firecracker cannot run on this host: ") + reason);
    QVERIFY(!dialog.spec().vmm); // the host's default: the helper decides
    vmm->setCurrentIndex(vmm->findData(QStringLiteral("qemu")));
    QCOMPARE(dialog.spec().vmm, VmmKind::Qemu);

    // The choice reaches sandbox.create, and the window shows what the helper stored.
    SandboxSpec spec = dialog.spec();
    spec.name = QStringLiteral("on-qemu");
    window.createSandbox(spec, false, QStringLiteral("cold"));
    QTRY_VERIFY_WITH_TIMEOUT(window.model()->rowOf(spec.name) >= 0 || !failures.isEmpty(), 10000);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
    test::RpcTestClient rpc(helper.socketPath());
    QCOMPARE(test::RpcTestClient::result(
                 rpc.call(QStringLiteral("sandbox.get"), {{QStringLiteral("name"), spec.name}}))
                 .value(QStringLiteral("vmm"))
                 .toString(),
             QStringLiteral("qemu"));
    window.table()->selectRow(window.model()->rowOf(spec.name));
    const QString details = window.details()->text();
    QVERIFY2(details.contains(QStringLiteral("VMM: QEMU microvm")), qPrintable(details));
}

void TestMainWindow::sandboxRunsAndConsoleWorks()
{
    test::HelperProcess helper;
    QVERIFY2(helper.start(), qPrintable(helper.lastError()));
    auto client = makeClient(helper.socketPath());
    MainWindow window(client.get());
    // An action that fails opens a message box; collect the text so the test fails with it
    // at once instead of waiting for a state that will never come.
    QStringList failures;
    collectFailures(window, failures);
    window.show();
    client->connectToHelper();

    QTRY_VERIFY_WITH_TIMEOUT(client->state() == HelperClient::State::Ready, 10000);
    QVERIFY(!window.isShowingConnectionProblem());
    QVERIFY(window.table()->isVisible());
    QVERIFY2(window.statusText().contains(
                 QStringLiteral("Connected to local helper at %1").arg(helper.socketPath())),
             qPrintable(window.statusText()));
    QVERIFY2(window.statusText().contains(QStringLiteral("TCG"))
                 || window.statusText().contains(QStringLiteral("KVM")),
             qPrintable(window.statusText()));
    // Without KVM, the reason is in the status bar itself, not only in a tooltip.
    const QString kvmWarning =
        client->helloResult().value(QStringLiteral("accelerationWarning")).toString();
    if (!kvmWarning.isEmpty())
        QVERIFY2(window.statusText().contains(QStringLiteral("KVM is not usable: ") + kvmWarning),
                 qPrintable(window.statusText()));
    QTRY_VERIFY(window.model()->isLoaded());

    // Create and start through the window; the table follows the helper's notifications.
    SandboxSpec spec;
    spec.name = QStringLiteral("gui");
    window.createSandbox(spec, true);
    QTRY_VERIFY_WITH_TIMEOUT(stateOf(window, QStringLiteral("gui")) == QStringLiteral("Running")
                                 || !failures.isEmpty(),
                             30000);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    const int row = window.model()->rowOf(QStringLiteral("gui"));
    QVERIFY(!window.model()
                 ->index(row, SandboxTableModel::AccelerationColumn)
                 .data()
                 .toString()
                 .isEmpty());

    // Starting opens the console tab; the guest's boot shows up in it.
    QTRY_VERIFY(window.consoleTab(QStringLiteral("gui")) != nullptr);
    ConsoleTab *tab = window.openConsole(QStringLiteral("gui"));
    QCOMPARE(window.consoleTabs()->currentWidget(), tab);
    QTRY_VERIFY_WITH_TIMEOUT(
        consoleText(window, QStringLiteral("gui")).contains(QStringLiteral("airlock-guest ready")),
        kBootTimeoutMs);

    // Keys typed into the view reach the guest shell, and its answer comes back.
    TerminalView *view = tab->view();
    QTest::keyClicks(view, QStringLiteral("echo $((6*7))"));
    QTest::keyClick(view, Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(
        hasLine(consoleText(window, QStringLiteral("gui")), QStringLiteral("42")), 30000);

    // The helper restarts: the window says so, reconnects, and the console reattaches with
    // a fresh replay and keeps working.
    int attaches = 0;
    connect(tab->controller(), &ConsoleController::attached, this, [&attaches] { ++attaches; });
    QVERIFY2(helper.restart(), qPrintable(helper.lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(attaches > 0, 30000);
    QVERIFY(!window.isShowingConnectionProblem());
    QVERIFY2(
        consoleText(window, QStringLiteral("gui")).contains(QStringLiteral("airlock-guest ready")),
        qPrintable(consoleText(window, QStringLiteral("gui"))));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(window, QStringLiteral("gui")), QStringLiteral("Running"),
                              30000);
    QTest::keyClicks(view, QStringLiteral("echo $((6*9))"));
    QTest::keyClick(view, Qt::Key_Return);
    QTRY_VERIFY2_WITH_TIMEOUT(
        hasLine(consoleText(window, QStringLiteral("gui")), QStringLiteral("54")),
        qPrintable(consoleText(window, QStringLiteral("gui")) + tab->notice()), 30000);
    QVERIFY2(tab->notice().isEmpty(), qPrintable(tab->notice()));

    // The guest's console tty has the terminal's size (console.resize), also after a resize.
    ConsoleController *controller = tab->controller();
    TerminalSession *session = view->session();
    const auto guestSaysSize = [&] {
        const QSize size(session->cols(), session->rows());
        QTRY_COMPARE_WITH_TIMEOUT(controller->guestSize(), size, 60000);
        QTest::keyClicks(view, QStringLiteral("stty size"));
        QTest::keyClick(view, Qt::Key_Return);
        QTRY_VERIFY2_WITH_TIMEOUT(
            hasLine(consoleText(window, QStringLiteral("gui")),
                    QStringLiteral("%1 %2").arg(size.height()).arg(size.width())),
            qPrintable(consoleText(window, QStringLiteral("gui")).right(500)), 30000);
    };
    guestSaysSize();
    const int colsBefore = session->cols();
    window.resize(window.width() + 10 * view->cellSize().width(), window.height());
    QTRY_VERIFY(session->cols() > colsBefore);
    guestSaysSize();

    // The note above the terminal follows every state: paused, running, stopped, running.
    const auto noticeIs = [&](const QString &part) {
        QTRY_VERIFY2_WITH_TIMEOUT(part.isEmpty() ? tab->notice().isEmpty()
                                                 : tab->notice().contains(part),
                                  qPrintable(tab->notice()), 60000);
    };
    window.pauseSandbox(QStringLiteral("gui"));
    noticeIs(QStringLiteral("paused"));
    window.resumeSandbox(QStringLiteral("gui"));
    noticeIs({});
    window.killSandbox(QStringLiteral("gui"));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(window, QStringLiteral("gui")), QStringLiteral("Stopped"),
                              30000);
    noticeIs(QStringLiteral("is not running; start it to type here"));
    window.startSandbox(QStringLiteral("gui"));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(window, QStringLiteral("gui")), QStringLiteral("Running"),
                              kBootTimeoutMs);
    noticeIs({});
    QTRY_VERIFY_WITH_TIMEOUT(consoleText(window, QStringLiteral("gui"))
                                 .contains(QStringLiteral(": the sandbox started")),
                             10000);

    // A restore leaves a marker line: what follows is the snapshot's guest, not the last one.
    const Result<QJsonValue> snapshot =
        client->callSync(QStringLiteral("snapshot.create"),
                         {{QStringLiteral("name"), QStringLiteral("gui")}}, kBootTimeoutMs);
    QVERIFY2(snapshot, snapshot ? "" : qPrintable(snapshot.error().message));
    const Result<QJsonValue> restored = client->callSync(
        QStringLiteral("snapshot.restore"),
        {{QStringLiteral("name"), QStringLiteral("gui")},
         {QStringLiteral("snapshot"), snapshot->toObject().value(QStringLiteral("id")).toString()}},
        kBootTimeoutMs);
    QVERIFY2(restored, restored ? "" : qPrintable(restored.error().message));
    QTRY_VERIFY2_WITH_TIMEOUT(consoleText(window, QStringLiteral("gui"))
                                  .contains(QStringLiteral("restored from a snapshot")),
                              qPrintable(consoleText(window, QStringLiteral("gui")).right(500)),
                              10000);
    noticeIs({});

    window.killSandbox(QStringLiteral("gui"));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(window, QStringLiteral("gui")), QStringLiteral("Stopped"),
                              30000);
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"

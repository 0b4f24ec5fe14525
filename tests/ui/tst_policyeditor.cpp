#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/daemon/registry.h"
#include "helperprocess.h"
#include "resultcheck.h"
#include "rpctestclient.h"
#include "ui/bindingtablemodel.h"
#include "ui/credentialsview.h"
#include "ui/dryrunmodel.h"
#include "ui/egresseventmodel.h"
#include "ui/egressview.h"
#include "ui/mainwindow.h"
#include "ui/policyeditor.h"
#include "ui/policyhistorymodel.h"
#include "ui/policyrulemodel.h"
#include "ui/resources.h"
#include "ui/sandboxtablemodel.h"
#include "ui/secretlistmodel.h"
#include "ui/setsecretdialog.h"

#include <QCryptographicHash>
#include <QDialogButtonBox>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

using namespace airlock;

namespace {

std::unique_ptr<HelperClient> makeClient(const QString &socket)
{
    auto client = std::make_unique<HelperClient>(std::make_unique<LocalSocketTransport>(socket),
                                                 QStringLiteral("tst_policyeditor"));
    client->setAutoReconnect(true);
    return client;
}

QJsonObject policyOf(test::RpcTestClient &rpc, const QString &name)
{
    const QJsonObject answer =
        rpc.call(QStringLiteral("policy.get"), {{QStringLiteral("name"), name}});
    return test::RpcTestClient::result(answer).value(QStringLiteral("policy")).toObject();
}

QJsonObject recordedEvent(const QDateTime &time, const QString &name, bool allowed,
                          const QString &reason, const QString &method = QStringLiteral("GET"),
                          const QString &path = QStringLiteral("/simple/"))
{
    return {
        {QStringLiteral("time"), time.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("sandbox"), QStringLiteral("agent")},
        {QStringLiteral("layer"), QStringLiteral("http")},
        {QStringLiteral("verdict"), allowed ? QStringLiteral("allowed") : QStringLiteral("denied")},
        {QStringLiteral("reason"), reason},
        {QStringLiteral("name"), name},
        {QStringLiteral("sni"), name},
        {QStringLiteral("host"), name},
        {QStringLiteral("port"), 443},
        {QStringLiteral("method"), method},
        {QStringLiteral("path"), path}};
}

QPushButton *buttonNamed(QWidget *parent, const QString &accessibleName)
{
    for (QPushButton *button : parent->findChildren<QPushButton *>()) {
        if (button->accessibleName() == accessibleName)
            return button;
    }
    return nullptr;
}

} // namespace

/// The policy editor, dry run and credentials view against a real airlockd (offscreen).
class TestPolicyEditor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void editAndApply();
    void dryRunOverRecordedHistory();
    void historyListsChangesAndReverts();
    void secretFieldNeverShowsValue();

private:
    std::unique_ptr<test::HelperProcess> m_helper;
    std::unique_ptr<test::RpcTestClient> m_rpc;
    std::unique_ptr<HelperClient> m_client;
    std::unique_ptr<MainWindow> m_window;
    void openWindow();
};

void TestPolicyEditor::initTestCase()
{
    initUiResources();
}

void TestPolicyEditor::init()
{
    m_helper = std::make_unique<test::HelperProcess>();
    QVERIFY(!m_helper->useUnbootableImageStore().isEmpty());
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    m_rpc = std::make_unique<test::RpcTestClient>(m_helper->socketPath());
    QVERIFY(m_rpc->hello());
    const QJsonObject created = m_rpc->call(QStringLiteral("sandbox.create"),
                                            {{QStringLiteral("name"), QStringLiteral("agent")}});
    QVERIFY2(created.contains(QStringLiteral("result")),
             QJsonDocument(created).toJson().constData());
}

void TestPolicyEditor::cleanup()
{
    m_window.reset();
    m_client.reset();
    m_rpc.reset();
    m_helper.reset();
}

void TestPolicyEditor::openWindow()
{
    m_client = makeClient(m_helper->socketPath());
    m_window = std::make_unique<MainWindow>(m_client.get());
    m_window->show();
    m_client->connectToHelper();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->model()->rowOf(QStringLiteral("agent")) >= 0, 10000);
}

void TestPolicyEditor::editAndApply()
{
    openWindow();
    m_window->table()->selectRow(0);
    PolicyEditor *editor = m_window->openPolicyEditor(QStringLiteral("agent"));
    QVERIFY(editor);
    QTRY_VERIFY(editor->isLoaded());
    QPushButton *apply = buttonNamed(editor, QStringLiteral("Apply policy"));
    QVERIFY(apply);
    QVERIFY(!apply->isEnabled()); // nothing pending

    // A rule from a template, through the template menu as a person would pick it.
    auto *templates = editor->findChild<QToolButton *>();
    QMenu *menu = nullptr;
    for (QToolButton *button : editor->findChildren<QToolButton *>()) {
        if (button->accessibleName() == QStringLiteral("Add rules from a template"))
            menu = button->menu();
    }
    QVERIFY(templates && menu);
    QAction *pypi = nullptr;
    for (QAction *action : menu->actions()) {
        if (action->text().contains(QStringLiteral("PyPI")))
            pypi = action;
    }
    QVERIFY(pypi);
    pypi->trigger();
    PolicyRuleModel *model = editor->model();
    const int templateRules = model->rowCount();
    QVERIFY(templateRules >= 1);
    QVERIFY(apply->isEnabled());
    QVERIFY(editor->pendingChangesText().startsWith(QStringLiteral("+ rule 1")));

    // An IP literal is refused in words next to the cell, and blocks Apply.
    const int row = model->addEmptyRule();
    QVERIFY(
        model->setData(model->index(row, PolicyRuleModel::HostColumn), QStringLiteral("10.0.0.1")));
    QVERIFY(!apply->isEnabled());
    editor->table()->setCurrentIndex(model->index(row, PolicyRuleModel::HostColumn));
    QLabel *problem = nullptr;
    for (QLabel *label : editor->findChildren<QLabel *>()) {
        if (label->accessibleName() == QStringLiteral("Problem of the selected rule"))
            problem = label;
    }
    QVERIFY(problem);
    QVERIFY2(problem->text().contains(QStringLiteral("IP address")), qPrintable(problem->text()));

    // Fixed with a non-canonical spelling; the helper stores the canonical one.
    QVERIFY(model->setData(model->index(row, PolicyRuleModel::HostColumn),
                           QStringLiteral("API.Example.COM.")));
    QVERIFY(model->setData(model->index(row, PolicyRuleModel::MethodsColumn),
                           QStringLiteral("GET, HEAD")));
    QVERIFY(
        model->setData(model->index(row, PolicyRuleModel::PathsColumn), QStringLiteral("/v1/")));
    QVERIFY(apply->isEnabled());
    // Undo and redo the last edit.
    model->undoStack()->undo();
    QCOMPARE(model->draftAt(row).paths, QString());
    model->undoStack()->redo();
    QCOMPARE(model->draftAt(row).paths, QStringLiteral("/v1/"));

    // Export, then apply, then see policy.get change.
    const QString exported = QDir(m_helper->tempPath()).filePath(QStringLiteral("policy.json"));
    QVERIFY(editor->exportFile(exported));
    QVERIFY(policyOf(*m_rpc, QStringLiteral("agent"))
                .value(QStringLiteral("rules"))
                .toArray()
                .isEmpty());
    QSignalSpy applied(editor, &PolicyEditor::applied);
    QTest::mouseClick(apply, Qt::LeftButton);
    QVERIFY(applied.wait(10000));
    const QJsonArray rules =
        policyOf(*m_rpc, QStringLiteral("agent")).value(QStringLiteral("rules")).toArray();
    QCOMPARE(rules.size(), templateRules + 1);
    const QJsonObject last = rules.last().toObject();
    QCOMPARE(last.value(QStringLiteral("host")).toString(), QStringLiteral("api.example.com"));
    QCOMPARE(last.value(QStringLiteral("methods")).toArray(),
             (QJsonArray {QStringLiteral("GET"), QStringLiteral("HEAD")}));
    QCOMPARE(last.value(QStringLiteral("pathPrefixes")).toArray(),
             QJsonArray {QStringLiteral("/v1/")});
    QVERIFY(!apply->isEnabled());
    QCOMPARE(editor->pendingChangesText(), QStringLiteral("No pending changes."));

    // Remove everything, import the exported file back: one undo step, no change pending.
    QList<int> all;
    for (int i = 0; i < model->rowCount(); ++i)
        all.append(i);
    model->removeRules(all);
    QVERIFY(editor->pendingChangesText().contains(QStringLiteral("− rule")));
    QVERIFY(editor->importFile(exported));
    QCOMPARE(editor->pendingChangesText(), QStringLiteral("No pending changes."));
    QVERIFY(
        !editor->importFile(QDir(m_helper->tempPath()).filePath(QStringLiteral("missing.json"))));

    // A change made elsewhere reloads an unedited editor.
    EgressRule other {QStringLiteral("other.test")};
    const QJsonObject set =
        m_rpc->call(QStringLiteral("policy.set"),
                    {{QStringLiteral("name"), QStringLiteral("agent")},
                     {QStringLiteral("policy"), EgressPolicy {{other}}.toJson()}});
    QVERIFY(set.contains(QStringLiteral("result")));
    QTRY_COMPARE(editor->appliedPolicy().rules.size(), 1);
    QCOMPARE(model->rowCount(), 1);
    QCOMPARE(model->draftAt(0).host, QStringLiteral("other.test"));
}

void TestPolicyEditor::historyListsChangesAndReverts()
{
    // A change from the command line first.
    EgressRule first {QStringLiteral("a.test")};
    QVERIFY(m_rpc
                ->call(QStringLiteral("policy.set"),
                       {{QStringLiteral("name"), QStringLiteral("agent")},
                        {QStringLiteral("policy"), EgressPolicy {{first}}.toJson()},
                        {QStringLiteral("source"), QStringLiteral("airlockctl")}})
                .contains(QStringLiteral("result")));
    openWindow();
    PolicyEditor *editor = m_window->openPolicyEditor(QStringLiteral("agent"));
    QVERIFY(editor);
    PolicyHistoryModel *history = editor->historyModel();
    QTRY_VERIFY(editor->isLoaded());
    QTRY_COMPARE(history->rowCount(), 1);
    const auto cell = [&](int row, int column) {
        return history->index(row, column).data().toString();
    };
    QCOMPARE(cell(0, PolicyHistoryModel::SourceColumn), QStringLiteral("airlockctl"));
    QCOMPARE(cell(0, PolicyHistoryModel::ChangeColumn), QStringLiteral("+ a.test:443"));
    QVERIFY2(!cell(0, PolicyHistoryModel::WhoColumn).isEmpty(),
             qPrintable(cell(0, PolicyHistoryModel::WhoColumn)));
    QCOMPARE(cell(0, PolicyHistoryModel::RulesColumn), QStringLiteral("1"));
    QVERIFY2(editor->historyNoteText().contains(QStringLiteral("1 recorded change")),
             qPrintable(editor->historyNoteText()));
    QPushButton *revertTo =
        buttonNamed(editor, QStringLiteral("Revert to the selected version of the policy"));
    QVERIFY(revertTo);
    // The newest version is the applied one: nothing to go back to.
    QVERIFY(!revertTo->isEnabled());

    // The editor's own Apply is recorded as the editor's.
    editor->addRules({EgressRule {QStringLiteral("b.test")}});
    QSignalSpy applied(editor, &PolicyEditor::applied);
    editor->apply();
    QVERIFY(applied.wait(10000));
    QTRY_COMPARE(history->rowCount(), 2);
    QCOMPARE(cell(0, PolicyHistoryModel::SourceColumn), QStringLiteral("Policy editor"));
    QCOMPARE(cell(0, PolicyHistoryModel::ChangeColumn), QStringLiteral("+ b.test:443"));
    QCOMPARE(cell(1, PolicyHistoryModel::SourceColumn), QStringLiteral("airlockctl"));
    QCOMPARE(cell(0, PolicyHistoryModel::WhoColumn), cell(1, PolicyHistoryModel::WhoColumn));

    // Revert to the first version: the rules come into the editor as pending changes, and
    // nothing reaches the helper before Apply.
    editor->historyTable()->setCurrentIndex(history->index(1, 0));
    QVERIFY(revertTo->isEnabled());
    QTest::mouseClick(revertTo, Qt::LeftButton);
    QCOMPARE(editor->model()->rowCount(), 1);
    QCOMPARE(editor->model()->draftAt(0).host, QStringLiteral("a.test"));
    QVERIFY2(editor->pendingChangesText().contains(QStringLiteral("− rule")),
             qPrintable(editor->pendingChangesText()));
    QCOMPARE(
        policyOf(*m_rpc, QStringLiteral("agent")).value(QStringLiteral("rules")).toArray().size(),
        2);
    editor->model()->undoStack()->undo(); // one step: both rules back
    QCOMPARE(editor->model()->rowCount(), 2);
    editor->model()->undoStack()->redo();
    applied.clear();
    editor->apply();
    QVERIFY(applied.wait(10000));
    QTRY_COMPARE(history->rowCount(), 3);
    QCOMPARE(cell(0, PolicyHistoryModel::SourceColumn), QStringLiteral("Revert"));
    QCOMPARE(cell(0, PolicyHistoryModel::ChangeColumn), QStringLiteral("− b.test:443"));
    QCOMPARE(history->changeAt(0).newRevision, history->changeAt(2).newRevision);
    QCOMPARE(
        policyOf(*m_rpc, QStringLiteral("agent")).value(QStringLiteral("rules")).toArray().size(),
        1);

    // A change another client makes appears without a reload.
    EgressRule other {QStringLiteral("other.test")};
    QVERIFY(m_rpc
                ->call(QStringLiteral("policy.set"),
                       {{QStringLiteral("name"), QStringLiteral("agent")},
                        {QStringLiteral("policy"), EgressPolicy {{other}}.toJson()}})
                .contains(QStringLiteral("result")));
    QTRY_COMPARE(history->rowCount(), 4);
    QCOMPARE(cell(0, PolicyHistoryModel::SourceColumn), QStringLiteral("Another client"));
    QCOMPARE(cell(0, PolicyHistoryModel::ChangeColumn),
             QStringLiteral("+ other.test:443; − a.test:443"));
}

void TestPolicyEditor::dryRunOverRecordedHistory()
{
    // The applied policy allows github.com.
    EgressRule github {QStringLiteral("github.com")};
    QVERIFY(m_rpc
                ->call(QStringLiteral("policy.set"),
                       {{QStringLiteral("name"), QStringLiteral("agent")},
                        {QStringLiteral("policy"), EgressPolicy {{github}}.toJson()}})
                .contains(QStringLiteral("result")));
    // Record history in the helper's own store while it is stopped, as its gateway would have.
    m_rpc.reset();
    QVERIFY(m_helper->stop());
    {
        auto registry =
            Registry::open(QDir(m_helper->stateDir()).filePath(QStringLiteral("registry.sqlite")));
        QVERIFY_RESULT(registry);
        const QDateTime now = QDateTime::currentDateTimeUtc();
        const QList<QJsonObject> events {
            recordedEvent(now.addDays(-3), QStringLiteral("pypi.org"), false,
                          QStringLiteral("host_not_allowed")),
            recordedEvent(now.addSecs(-600), QStringLiteral("pypi.org"), false,
                          QStringLiteral("host_not_allowed")),
            recordedEvent(now.addSecs(-500), QStringLiteral("github.com"), true,
                          QStringLiteral("allowed"), QStringLiteral("POST"),
                          QStringLiteral("/o/r.git/git-upload-pack")),
            recordedEvent(now.addSecs(-400), QStringLiteral("evil.test"), false,
                          QStringLiteral("host_not_allowed")),
            recordedEvent(now.addSecs(-300), QStringLiteral("pypi.org"), false,
                          QStringLiteral("sni_host_mismatch")),
        };
        for (const QJsonObject &event : events)
            QVERIFY((*registry)->appendEgress(QStringLiteral("agent"), event));
    }
    QVERIFY2(m_helper->start(), qPrintable(m_helper->lastError()));
    m_rpc = std::make_unique<test::RpcTestClient>(m_helper->socketPath());
    QVERIFY(m_rpc->hello());

    openWindow();
    // The egress view read the recorded history.
    QTRY_COMPARE(m_window->egressView()->events()->rowCount(), 5);

    PolicyEditor *editor = m_window->openPolicyEditor(QStringLiteral("agent"));
    QTRY_VERIFY(editor->isLoaded());
    PolicyRuleModel *model = editor->model();
    // Edited: github.com only for GET/HEAD, plus pypi.org.
    QVERIFY(model->setData(model->index(0, PolicyRuleModel::MethodsColumn),
                           QStringLiteral("GET HEAD")));
    model->addRules({EgressRule {QStringLiteral("pypi.org")}}, QStringLiteral("add"));

    QSignalSpy finished(editor, &PolicyEditor::dryRunFinished);
    editor->runDryRun(1); // last 24 hours
    QVERIFY(finished.wait(10000));
    DryRunModel *dryRun = editor->dryRunModel();
    QCOMPARE(dryRun->evaluated(), 3); // the mismatch is skipped, the 3-day-old one outside
    QCOMPARE(dryRun->rowCount(), 2);
    QCOMPARE(dryRun->newlyAllowed(), 1);
    QCOMPARE(dryRun->newlyDenied(), 1);
    QCOMPARE(dryRun->changeAt(0).event.destination(), QStringLiteral("pypi.org"));
    QVERIFY(dryRun->changeAt(0).afterAllowed);
    QCOMPARE(dryRun->changeAt(0).afterRule, 1);
    QCOMPARE(dryRun->changeAt(1).event.destination(), QStringLiteral("github.com"));
    QCOMPARE(dryRun->changeAt(1).afterReason, QStringLiteral("method_not_allowed"));

    finished.clear();
    editor->runDryRun(3); // everything recorded
    QVERIFY(finished.wait(10000));
    QCOMPARE(dryRun->rowCount(), 3);
    QCOMPARE(dryRun->newlyAllowed(), 2);
    // Nothing was applied by the dry run.
    QCOMPARE(
        policyOf(*m_rpc, QStringLiteral("agent")).value(QStringLiteral("rules")).toArray().size(),
        1);

    // "Allow this host…" from the denied evil.test decision proposes a rule in the editor.
    EgressView *view = m_window->egressView();
    view->setSandbox(QStringLiteral("agent"));
    view->eventTable()->setFocus();
    int evil = -1;
    for (int row = 0; row < view->eventTable()->model()->rowCount(); ++row) {
        if (view->eventTable()->model()->index(row, EgressEventModel::NameColumn).data().toString()
            == QStringLiteral("evil.test"))
            evil = row;
    }
    QVERIFY(evil >= 0);
    view->eventTable()->selectRow(evil);
    const int before = model->rowCount();
    view->allowSelected();
    QCOMPARE(model->rowCount(), before + 1);
    QCOMPARE(model->draftAt(before).host, QStringLiteral("evil.test"));
    QCOMPARE(
        policyOf(*m_rpc, QStringLiteral("agent")).value(QStringLiteral("rules")).toArray().size(),
        1);
}

void TestPolicyEditor::secretFieldNeverShowsValue()
{
    openWindow();
    CredentialsView *view = m_window->credentialsView();
    const QString value = QStringLiteral("ghp_VerySecretTokenValue42");

    SetSecretDialog *dialog = view->showSetSecretDialog();
    QLineEdit *valueField = dialog->valueField();
    QCOMPARE(valueField->echoMode(), QLineEdit::Password);
    QTest::keyClicks(dialog->nameField(), QStringLiteral("github-token"));
    QTest::keyClicks(valueField, value);
    QVERIFY(valueField->displayText() != value);
    QVERIFY(!valueField->displayText().contains(QStringLiteral("Secret")));
    QString fieldAfterAccept = QStringLiteral("unset");
    connect(dialog, &QDialog::accepted, this, [&] { fieldAfterAccept = valueField->text(); });
    QSignalSpy stored(view, &CredentialsView::secretStored);
    QPushButton *ok = dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
    QVERIFY(ok->isEnabled());
    QTest::mouseClick(ok, Qt::LeftButton);
    QCOMPARE(fieldAfterAccept, QString()); // cleared as soon as it was taken
    QVERIFY(stored.wait(10000));

    // The helper has it (fingerprint of the value), the window does not.
    const QJsonArray secrets =
        test::RpcTestClient::result(m_rpc->call(QStringLiteral("secret.list")))
            .value(QStringLiteral("secrets"))
            .toArray();
    QCOMPARE(secrets.size(), 1);
    // Keyed (an HMAC with a key derived from the vault key, docs/credentials.md): 16 hex
    // digits, and not the plain SHA-256 of the value.
    const QString fingerprint =
        secrets.first().toObject().value(QStringLiteral("fingerprint")).toString();
    QCOMPARE(fingerprint.size(), 16);
    QVERIFY(
        fingerprint
        != QString::fromLatin1(
            QCryptographicHash::hash(value.toUtf8(), QCryptographicHash::Sha256).toHex().left(16)));
    SecretListModel *model = view->secrets();
    QTRY_COMPARE(model->rowCount(), 1);
    QCOMPARE(model->index(0, SecretListModel::FingerprintColumn).data().toString(), fingerprint);
    for (QAbstractItemModel *any : {static_cast<QAbstractItemModel *>(model),
                                    static_cast<QAbstractItemModel *>(view->bindings())}) {
        for (int row = 0; row < any->rowCount(); ++row)
            for (int column = 0; column < any->columnCount(); ++column)
                for (int role = 0; role < Qt::UserRole + 8; ++role)
                    QVERIFY(!any->index(row, column).data(role).toString().contains(value));
    }

    // Replacing starts with an empty field: a stored value is never shown.
    SetSecretDialog *replace = view->showSetSecretDialog(QStringLiteral("github-token"));
    QVERIFY(replace->valueField()->text().isEmpty());
    QVERIFY(replace->nameField()->isReadOnly());
    replace->reject();

    // A binding whose host the deny-all policy does not allow carries a warning, which goes
    // away when the policy allows it.
    const QJsonObject added =
        m_rpc->call(QStringLiteral("binding.add"),
                    {{QStringLiteral("sandbox"), QStringLiteral("agent")},
                     {QStringLiteral("secret"), QStringLiteral("github-token")},
                     {QStringLiteral("host"), QStringLiteral("api.github.com")}});
    QVERIFY2(added.contains(QStringLiteral("result")), QJsonDocument(added).toJson().constData());
    view->refresh();
    BindingTableModel *bindings = view->bindings();
    QTRY_COMPARE(bindings->rowCount(), 1);
    QTRY_VERIFY(!bindings->index(0, 0).data(BindingTableModel::WarningRole).toString().isEmpty());
    QVERIFY(m_rpc
                ->call(QStringLiteral("policy.set"),
                       {{QStringLiteral("name"), QStringLiteral("agent")},
                        {QStringLiteral("policy"),
                         EgressPolicy {{EgressRule {QStringLiteral("api.github.com")}}}.toJson()}})
                .contains(QStringLiteral("result")));
    QTRY_VERIFY(bindings->index(0, 0).data(BindingTableModel::WarningRole).toString().isEmpty());
}

QTEST_MAIN(TestPolicyEditor)
#include "tst_policyeditor.moc"

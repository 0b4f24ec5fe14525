// Issue 4 in the window: the secret never appears in the GUI's models. A real airlockd (its own
// network namespace) with a real gateway, a real TCG guest (the busybox image) and local
// upstream servers, as tst_redteam_credentialleaks sets them up; the window on the helper's
// socket. The secret is typed into the real set-secret dialog, the binding added through the
// real binding dialog, the sandbox started from the window. Then credential events happen: an
// injection (whose reflected token comes back scrubbed) and a credential_exfil denial. The
// window shows them (counters, reasons in words, the alert badge and notification naming the
// binding), and every model of the window, every index, every role and every header is searched
// for the secret raw, base64 and percent-encoded; so are the texts of every widget.
//
//   guest ──tap── [helper ns: airlockd, gateway, table; the test's TLS client] ──veth
//   198.51.100.0/24── [upstream ns: api.test 198.51.100.20:443, DNS 198.51.100.53]
//
// The HTTPS requests come from the helper's namespace (the busybox guest has no TLS client the
// gateway accepts): an nftables rule of the test sends its connection to GW:443 to the
// gateway's listener, as the sandbox's table does for the guest's.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/gateway/credentials/credentialpatterns.h"
#include "core/net/helperinstance.h"
#include "core/net/tapdevice.h"
#include "gatewaytopology.h"
#include "guestconsole.h"
#include "programrun.h"
#include "rpctestclient.h"
#include "ui/bindingdialog.h"
#include "ui/bindingtablemodel.h"
#include "ui/credentialsview.h"
#include "ui/egresseventmodel.h"
#include "ui/egressview.h"
#include "ui/mainwindow.h"
#include "ui/policyeditor.h"
#include "ui/resources.h"
#include "ui/sandboxtablemodel.h"
#include "ui/secretlistmodel.h"
#include "ui/setsecretdialog.h"
#include "ui/snapshotsview.h"
#include "ui/snapshottimelinemodel.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace airlock;
using airlock::test::GatewayTopology;
using airlock::test::GuestConnection;
using airlock::test::GuestConsole;
using airlock::test::HttpResponse;
using airlock::test::RpcTestClient;
using airlock::test::runProgram;
using airlock::test::ServerEndpoint;
using namespace Qt::StringLiterals;

namespace {

const QString kName = u"credwin"_s;
const QString kSecretName = u"api-token"_s;
// Characters that percent-encoding and base64 change, so each form is a different string.
const QByteArray kSecret = "ghp_Window/Canary+8x=Zq~31!kWm"_ba;
const QHostAddress kApiAddress = airlock::test::topo::ApiServer;
constexpr int kBootTimeoutMs = 120000;

/// Every form of the secret that must not appear: the gateway's own list (raw, percent-encoded,
/// base64 and base64url at the three alignments) and, independently of it, Qt's percent and
/// base64 encodings of the whole value.
QList<QByteArray> secretForms()
{
    QList<QByteArray> forms = gateway::credentialForms(kSecret);
    forms << kSecret << QUrl::toPercentEncoding(QString::fromLatin1(kSecret)) << kSecret.toBase64()
          << kSecret.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
    QList<QByteArray> unique;
    for (const QByteArray &form : std::as_const(forms)) {
        if (!unique.contains(form))
            unique.append(form);
    }
    return unique;
}

/// The text forms a model value can take; empty for types that carry no text.
QStringList texts(const QVariant &value)
{
    if (!value.isValid())
        return {};
    switch (value.typeId()) {
    case QMetaType::QStringList:
        return value.toStringList();
    case QMetaType::QJsonObject:
        return {QString::fromUtf8(QJsonDocument(value.toJsonObject()).toJson())};
    case QMetaType::QJsonArray:
        return {QString::fromUtf8(QJsonDocument(value.toJsonArray()).toJson())};
    case QMetaType::QByteArray:
        return {QString::fromLatin1(value.toByteArray())};
    case QMetaType::QVariantList: {
        QStringList all;
        for (const QVariant &item : value.toList())
            all += texts(item);
        return all;
    }
    case QMetaType::QVariantMap: {
        QStringList all;
        const QVariantMap map = value.toMap();
        for (auto it = map.cbegin(); it != map.cend(); ++it)
            all += QStringList {it.key()} + texts(it.value());
        return all;
    }
    default:
        break;
    }
    if (value.canConvert<QString>())
        return {value.toString()};
    return {};
}

/// Searches every index (recursively, every column), every role up to UserRole + 256 and the
/// model's named roles, and the headers of `model`. Returns where a form was found; counts the
/// values searched in `searched` and collects every text in `seen` (to show the search found
/// what the window shows).
QStringList searchModel(const QAbstractItemModel *model, const QString &name, int *searched,
                        QString *seen)
{
    QList<int> roles;
    for (int role = 0; role <= Qt::UserRole + 256; ++role)
        roles.append(role);
    const auto named = model->roleNames();
    for (auto it = named.cbegin(); it != named.cend(); ++it) {
        if (!roles.contains(it.key()))
            roles.append(it.key());
    }
    const QList<QByteArray> forms = secretForms();
    QStringList found;
    auto check = [&](const QVariant &value, const QString &where) {
        for (const QString &text : texts(value)) {
            ++*searched;
            seen->append(text);
            seen->append(u'\n');
            const QByteArray bytes = text.toUtf8();
            for (const QByteArray &form : forms) {
                if (bytes.contains(form))
                    found << u"%1 %2 (%3)"_s.arg(name, where, QString::fromLatin1(form));
            }
        }
    };
    std::function<void(const QModelIndex &)> walk = [&](const QModelIndex &parent) {
        const int rows = model->rowCount(parent);
        const int columns = model->columnCount(parent);
        for (int row = 0; row < rows; ++row) {
            for (int column = 0; column < columns; ++column) {
                const QModelIndex index = model->index(row, column, parent);
                for (int role : std::as_const(roles))
                    check(index.data(role),
                          u"row %1 column %2 role %3"_s.arg(row).arg(column).arg(role));
                if (column == 0 && model->hasChildren(index))
                    walk(index);
            }
        }
    };
    walk({});
    for (int section = 0; section < model->columnCount(); ++section) {
        for (int role : std::as_const(roles))
            check(model->headerData(section, Qt::Horizontal, role),
                  u"header %1 role %2"_s.arg(section).arg(role));
    }
    for (int section = 0; section < model->rowCount(); ++section) {
        for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole)})
            check(model->headerData(section, Qt::Vertical, role),
                  u"row header %1 role %2"_s.arg(section).arg(role));
    }
    return found;
}

QString modelName(const QAbstractItemModel *model)
{
    const QString objectName = model->objectName();
    return QString::fromLatin1(model->metaObject()->className())
        + (objectName.isEmpty() ? QString() : u" "_s + objectName);
}

} // namespace

class TestCredentialWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void secretTypedIntoTheDialogIsSentOnceAndCleared();
    void bindingAddedThroughTheDialog();
    void injectionAndExfilShowInTheWindow();
    void dismissingTheAlertKeepsTheCounters();
    void secretIsInNoModelOfTheWindow();

private:
    QJsonObject rpc(const QString &method, const QJsonObject &params = {}, int timeoutMs = 30000)
    {
        return m_rpc->call(method, params, timeoutMs);
    }
    /// One HTTPS request for api.test from the helper's namespace through the gateway.
    HttpResponse apiRequest(const QByteArray &request)
    {
        const int ns = ::open(
            QFile::encodeName(u"/run/netns/"_s + m_net->helper().networkNamespace()).constData(),
            O_RDONLY | O_CLOEXEC);
        if (ns < 0)
            return {};
        auto connection = GuestConnection::connect(ns, m_gateway, 443);
        ::close(ns);
        if (!connection || !connection->startTls("api.test"_ba, m_sandboxCaPem, u"api.test"_s)
            || !connection->send(request))
            return {};
        return connection->readResponse();
    }
    /// The first live egress entry of the window matching `reason`, or nullptr.
    const EgressEntry *entryWithReason(const QString &reason) const
    {
        for (const EgressEntry &entry : m_window->egressView()->events()->entries()) {
            if (entry.reason == reason && entry.binding > 0)
                return &entry;
        }
        return nullptr;
    }

    QTemporaryDir m_dir {QDir::tempPath() + u"/airlock-credwin-XXXXXX"_s};
    std::unique_ptr<GatewayTopology> m_net;
    QString m_fingerprint; ///< the secret's fingerprint as the helper reports it
    std::unique_ptr<RpcTestClient> m_rpc;
    std::unique_ptr<HelperClient> m_client;
    std::unique_ptr<MainWindow> m_window;
    QList<std::shared_ptr<QAbstractItemModelTester>> m_testers;
    QHostAddress m_gateway;
    QByteArray m_sandboxCaPem;
    QByteArray m_placeholder;
    qint64 m_bindingId = 0;
};

void TestCredentialWindow::initTestCase()
{
    initUiResources();
    // The search finds a form where it hides: base64 in a user role of a child item.
    {
        QStandardItemModel planted;
        auto *parent = new QStandardItem(u"parent"_s);
        auto *child = new QStandardItem(u"child"_s);
        child->setData(QString::fromLatin1(kSecret.toBase64()), Qt::UserRole + 40);
        parent->appendRow(child);
        planted.appendRow(parent);
        int searched = 0;
        QString seen;
        QCOMPARE(searchModel(&planted, u"planted"_s, &searched, &seen).size(), 1);
        child->setData(QUrl::toPercentEncoding(QString::fromLatin1(kSecret)), Qt::UserRole + 40);
        QCOMPARE(searchModel(&planted, u"planted"_s, &searched, &seen).size(), 1);
    }
    if (::geteuid() != 0)
        QSKIP("needs root (network namespaces, taps, nftables)");
    if (qEnvironmentVariable("AIRLOCK_GATEWAY").isEmpty())
        QSKIP("AIRLOCK_GATEWAY is not set (run through ctest)");
    QVERIFY(m_dir.isValid());
    ::chmod(QFile::encodeName(m_dir.path()).constData(), 0711);
    m_net = std::make_unique<GatewayTopology>(GatewayTopology::Options {
        .tag = u"cw"_s,
        .side = GatewayTopology::Side::Helper,
        .hosts = {{u"api.test"_s, kApiAddress}},
        .servers = {{u"api"_s, kApiAddress, 443, ServerEndpoint::Kind::Https, u"api.test"_s}}});
    QVERIFY2(QFileInfo::exists(m_net->helper().imageStore() + u"/default/image.json"_s),
             "no guest image (the guest_image fixture builds it)");
    QVERIFY2(m_net->start(), qPrintable(m_net->lastError()));

    m_rpc = std::make_unique<RpcTestClient>(m_net->helper().socketPath());
    QVERIFY(m_rpc->hello());
    QVERIFY(rpc(u"sandbox.create"_s, {{u"name"_s, kName}, {u"boot"_s, u"cold"_s}})
                .contains(u"result"_s));
    const QJsonObject policy {
        {u"version"_s, 1},
        {u"rules"_s,
         QJsonArray {QJsonObject {{u"host"_s, u"api.test"_s}, {u"ports"_s, QJsonArray {443}}}}}};
    QVERIFY(
        rpc(u"policy.set"_s, {{u"name"_s, kName}, {u"policy"_s, policy}}).contains(u"result"_s));

    m_client = std::make_unique<HelperClient>(
        std::make_unique<LocalSocketTransport>(m_net->helper().socketPath()),
        u"tst_credentialwindow"_s);
    m_window = std::make_unique<MainWindow>(m_client.get());
    m_window->show();
    m_client->connectToHelper();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->model()->rowOf(kName) >= 0, 10000);
    m_window->table()->selectRow(m_window->model()->rowOf(kName));
}

void TestCredentialWindow::cleanupTestCase()
{
    m_testers.clear();
    m_window.reset();
    m_client.reset();
    m_rpc.reset();
    m_net.reset(); // airlockd and its guest, the servers, the upstream namespace
}

void TestCredentialWindow::secretTypedIntoTheDialogIsSentOnceAndCleared()
{
    CredentialsView *view = m_window->credentialsView();
    m_window->sections()->setCurrentWidget(view);
    SetSecretDialog *dialog = view->showSetSecretDialog();
    QPointer<SetSecretDialog> guard(dialog);
    QLineEdit *valueField = dialog->valueField();
    QCOMPARE(valueField->echoMode(), QLineEdit::Password);
    QTest::keyClicks(dialog->nameField(), kSecretName);
    QTest::keyClicks(valueField, QString::fromLatin1(kSecret));
    QCOMPARE(valueField->text(), QString::fromLatin1(kSecret)); // what was typed is what is sent
    QString fieldWhenAccepted = u"unset"_s;
    connect(dialog, &QDialog::accepted, this,
            [&] { fieldWhenAccepted = guard ? guard->valueField()->text() : u"gone"_s; });
    QSignalSpy stored(view, &CredentialsView::secretStored);
    QPushButton *ok = dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
    QVERIFY(ok->isEnabled());
    QTest::mouseClick(ok, Qt::LeftButton);
    // The field is empty once the value is sent, and the dialog is gone.
    QCOMPARE(fieldWhenAccepted, QString());
    QVERIFY(stored.wait(10000));
    QCOMPARE(stored.constFirst().constFirst().toString(), kSecretName);
    QTRY_VERIFY(guard.isNull());

    // The helper stored exactly what was typed: the same value set under another name over
    // RPC has the same (keyed, docs/credentials.md) fingerprint.
    QVERIFY(
        rpc(u"secret.set"_s, {{u"name"_s, u"probe"_s}, {u"value"_s, QString::fromUtf8(kSecret)}})
            .contains(u"result"_s));
    const auto fingerprintOf = [this](const QString &name) {
        const QJsonArray all =
            RpcTestClient::result(rpc(u"secret.list"_s)).value(u"secrets"_s).toArray();
        for (const QJsonValue &secret : all) {
            if (secret.toObject().value(u"name"_s).toString() == name)
                return secret.toObject().value(u"fingerprint"_s).toString();
        }
        return QString();
    };
    const QString fingerprint = fingerprintOf(kSecretName);
    QCOMPARE(fingerprint.size(), 16);
    QCOMPARE(fingerprintOf(u"probe"_s), fingerprint);
    QVERIFY(rpc(u"secret.delete"_s, {{u"name"_s, u"probe"_s}}).contains(u"result"_s));
    m_fingerprint = fingerprint;
    const QJsonArray secrets =
        RpcTestClient::result(rpc(u"secret.list"_s)).value(u"secrets"_s).toArray();
    QCOMPARE(secrets.size(), 1);
    QTRY_COMPARE(view->secrets()->rowCount(), 1);
    QCOMPARE(view->secrets()->index(0, SecretListModel::FingerprintColumn).data().toString(),
             fingerprint);
}

void TestCredentialWindow::bindingAddedThroughTheDialog()
{
    CredentialsView *view = m_window->credentialsView();
    view->showAddBindingDialog();
    auto *dialog = view->findChild<BindingDialog *>();
    QVERIFY(dialog);
    dialog->sandboxField()->setCurrentIndex(dialog->sandboxField()->findText(kName));
    dialog->secretField()->setCurrentIndex(dialog->secretField()->findText(kSecretName));
    QCOMPARE(dialog->sandboxField()->currentText(), kName);
    QCOMPARE(dialog->secretField()->currentText(), kSecretName);
    QTest::keyClicks(dialog->hostField(), u"api.test"_s);
    QTest::keyClicks(dialog->pathField(), u"/v1"_s);
    QVERIFY2(dialog->problem().isEmpty(), qPrintable(dialog->problem()));
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
    QTRY_COMPARE_WITH_TIMEOUT(view->bindings()->rowCount(), 1, 10000);
    m_bindingId = view->bindings()->bindingAt(0).id;
    QVERIFY(m_bindingId > 0);
    const QModelIndex row = view->bindings()->index(0, BindingTableModel::InjectionsColumn);
    QCOMPARE(row.data().toLongLong(), 0);
    QCOMPARE(row.siblingAtColumn(BindingTableModel::LastUsedColumn).data().toString(), u"never"_s);
    QCOMPARE(row.siblingAtColumn(BindingTableModel::DeniedColumn).data().toLongLong(), 0);
    QTRY_VERIFY(row.siblingAtColumn(BindingTableModel::WarningColumn).data().toString().isEmpty());

    // Started from the window; the guest holds the placeholder, never the value.
    m_window->startSandbox(kName);
    QTRY_COMPARE_WITH_TIMEOUT(m_window->model()->sandboxAt(m_window->model()->rowOf(kName))->state,
                              SandboxState::Running, 60000);
    GuestConsole console(m_net->helper().socketPath(), kName);
    QVERIFY(console.waitFor("airlock-guest ready", 0, kBootTimeoutMs) >= 0);
    const QByteArray env = console.run("cat /run/airlock/env");
    const auto found =
        QRegularExpression(u"AIRLOCK_SECRET_API_TOKEN=(airlock-placeholder-[0-9a-f]{32})"_s)
            .match(QString::fromLatin1(env));
    QVERIFY2(found.hasMatch(), env.constData());
    m_placeholder = found.captured(1).toLatin1();

    // The gateway's address (the tap's), and the test's own redirect to its listener.
    const QString helperNs = m_net->helper().networkNamespace();
    QByteArray addresses;
    QVERIFY(runProgram(
        u"ip"_s,
        {u"-n"_s, helperNs, u"-4"_s, u"-o"_s, u"addr"_s, u"show"_s, u"dev"_s,
         TapDevice::interfaceName(kName, HelperInstance::tagFor(m_net->helper().stateDir()))},
        {}, &addresses));
    const auto match = QRegularExpression(u"inet (\\d+\\.\\d+\\.\\d+\\.\\d+)/"_s)
                           .match(QString::fromLatin1(addresses));
    QVERIFY2(match.hasMatch(), addresses.constData());
    m_gateway = QHostAddress(match.captured(1));
    const QByteArray rules = "table ip credwin-test {\n chain out {\n  type nat hook output "
                             "priority -100; policy accept;\n  ip daddr "
        + m_gateway.toString().toLatin1() + " tcp dport 443 dnat to "
        + m_gateway.toString().toLatin1() + ":15001\n }\n}\n";
    QVERIFY(
        runProgram(u"ip"_s, {u"netns"_s, u"exec"_s, helperNs, u"nft"_s, u"-f"_s, u"-"_s}, rules));
    QFile sandboxCa(QDir(m_net->helper().stateDir()).filePath(u"ca/%1/ca.pem"_s.arg(kName)));
    QVERIFY(sandboxCa.open(QIODevice::ReadOnly));
    m_sandboxCaPem = sandboxCa.readAll();
}

void TestCredentialWindow::injectionAndExfilShowInTheWindow()
{
    QVERIFY(!m_placeholder.isEmpty());
    // An exact match: injected; the upstream reflects the token, the gateway scrubs it.
    const HttpResponse injected = apiRequest("GET /v1/unauthorized HTTP/1.1\r\nHost: api.test\r\n"
                                             "Authorization: Bearer "
                                             + m_placeholder + "\r\n\r\n");
    QCOMPARE(injected.status, 401);
    QVERIFY2(injected.body.contains("invalid token " + m_placeholder), injected.body.constData());
    const auto api = m_net->upstream().connections(u"api"_s);
    QCOMPARE(api.size(), 1);
    QCOMPARE(api.first().requests.first().values("Authorization"),
             QList<QByteArray> {"Bearer " + kSecret});
    // The placeholder outside the binding's path prefix: refused, counted, alerted.
    const HttpResponse refused = apiRequest("GET /v2/steal HTTP/1.1\r\nHost: api.test\r\n"
                                            "Authorization: Bearer "
                                            + m_placeholder + "\r\n\r\n");
    QCOMPARE(refused.status, 403);
    QCOMPARE(m_net->upstream().connections(u"api"_s).size(), 1);

    // The egress view has both, the reason in words.
    QTRY_VERIFY_WITH_TIMEOUT(entryWithReason(u"credential_exfil"_s), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(entryWithReason(u"allowed"_s), 10000);
    const EgressEntry *exfil = entryWithReason(u"credential_exfil"_s);
    QCOMPARE(exfil->binding, m_bindingId);
    QVERIFY(exfil->alert);
    QVERIFY(entryWithReason(u"allowed"_s)->scrubbed >= 1);
    EgressEventModel *events = m_window->egressView()->events();
    bool inWords = false;
    for (int row = 0; row < events->rowCount(); ++row) {
        const QModelIndex reason = events->index(row, EgressEventModel::ReasonColumn);
        if (reason.data(EgressEventModel::ReasonRole).toString() == u"credential_exfil"_s) {
            QCOMPARE(reason.data().toString(),
                     u"Credential sent where its binding does not allow it"_s);
            inWords = true;
        }
    }
    QVERIFY(inWords);

    // The binding's counters, read again after the events.
    BindingTableModel *bindings = m_window->credentialsView()->bindings();
    const QModelIndex injections = bindings->index(0, BindingTableModel::InjectionsColumn);
    QTRY_COMPARE_WITH_TIMEOUT(injections.data().toLongLong(), 1, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(
        injections.siblingAtColumn(BindingTableModel::DeniedColumn).data().toLongLong(), 1, 10000);
    QVERIFY(injections.siblingAtColumn(BindingTableModel::LastUsedColumn).data().toString()
            != u"never"_s);
    QVERIFY(injections.siblingAtColumn(BindingTableModel::DeniedColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(u"1 request"_s));
    QTRY_COMPARE(m_window->credentialsView()
                     ->secrets()
                     ->index(0, SecretListModel::UseCountColumn)
                     .data()
                     .toLongLong(),
                 1);

    // The alert: a badge on the sandbox and a notification, naming the binding.
    SandboxTableModel *sandboxes = m_window->model();
    const QString binding = u"binding %1 (secret “api-token” for api.test/v1)"_s.arg(m_bindingId);
    const QString alert = sandboxes->alert(kName, SandboxTableModel::AlertKind::Credential);
    QVERIFY2(alert.contains(binding), qPrintable(alert));
    const QModelIndex name =
        sandboxes->index(sandboxes->rowOf(kName), SandboxTableModel::NameColumn);
    QVERIFY(!name.data(Qt::DecorationRole).isNull());
    QVERIFY(name.data(Qt::ToolTipRole).toString().contains(binding));
    QVERIFY(name.data(Qt::AccessibleTextRole).toString().contains(u"alert"_s));
    QVERIFY2(m_window->lastNotification().contains(binding),
             qPrintable(m_window->lastNotification()));
    // Both alert events were seen; the last one decides the text.
    QVERIFY2(alert.contains(u"refused"_s) || alert.contains(u"replaced it"_s), qPrintable(alert));
    QVERIFY(!m_window->lastNotification().contains(QString::fromLatin1(m_placeholder)));
}

void TestCredentialWindow::dismissingTheAlertKeepsTheCounters()
{
    SandboxTableModel *sandboxes = m_window->model();
    QVERIFY(!sandboxes->alert(kName, SandboxTableModel::AlertKind::Credential).isEmpty());
    m_window->table()->selectRow(sandboxes->rowOf(kName));
    QAction *dismiss = nullptr;
    for (QAction *action : m_window->table()->actions()) {
        if (action->text() == u"Dismiss Credential &Alert"_s)
            dismiss = action;
    }
    QVERIFY(dismiss);
    QVERIFY(dismiss->isEnabled());
    dismiss->trigger();
    QVERIFY(sandboxes->alert(kName, SandboxTableModel::AlertKind::Credential).isEmpty());
    QVERIFY(!dismiss->isEnabled());
    const QModelIndex name =
        sandboxes->index(sandboxes->rowOf(kName), SandboxTableModel::NameColumn);
    QVERIFY(name.data(Qt::DecorationRole).isNull());
    QCOMPARE(m_window->credentialsView()
                 ->bindings()
                 ->index(0, BindingTableModel::DeniedColumn)
                 .data()
                 .toLongLong(),
             1);
}

void TestCredentialWindow::secretIsInNoModelOfTheWindow()
{
    QVERIFY(!m_placeholder.isEmpty());
    // The rest of the window has something to show too: a snapshot in the timeline and the
    // sandbox's policy editor (rules, pending changes, dry run).
    SnapshotsView *snapshots = m_window->snapshotsView();
    m_window->showTimeline(kName);
    QTRY_VERIFY(snapshots->model()->isLoaded());
    QTRY_VERIFY(snapshots->takeSnapshotAction()->isEnabled());
    QSignalSpy finished(snapshots, &SnapshotsView::actionFinished);
    snapshots->takeSnapshot(u"with credentials"_s);
    QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 120000);
    QTRY_COMPARE(snapshots->model()->snapshotCount(), 1);
    PolicyEditor *editor = m_window->openPolicyEditor(kName);
    QVERIFY(editor);
    QTRY_VERIFY(editor->isLoaded());
    QSignalSpy dryRun(editor, &PolicyEditor::dryRunFinished);
    editor->runDryRun(3);
    QVERIFY(dryRun.wait(10000));
    m_window->egressView()->setSandbox(kName);
    QApplication::processEvents();

    // Every model of the window (its children: the views' models, the proxies, the combo
    // boxes', the sidebar's, the policy editor's) and of every other top-level window.
    QList<QAbstractItemModel *> models = m_window->findChildren<QAbstractItemModel *>();
    for (QWidget *top : QApplication::topLevelWidgets()) {
        if (top != m_window.get())
            models += top->findChildren<QAbstractItemModel *>();
    }
    std::sort(models.begin(), models.end());
    models.erase(std::unique(models.begin(), models.end()), models.end());
    int searched = 0;
    QString seen;
    QStringList found;
    QStringList names;
    for (const QAbstractItemModel *model : std::as_const(models)) {
        found += searchModel(model, modelName(model), &searched, &seen);
        names << modelName(model);
    }
    qInfo("searched %d values in %lld models: %s", searched, qlonglong(models.size()),
          qPrintable(names.join(u", ")));
    QVERIFY2(found.isEmpty(), qPrintable(found.join(u'\n')));
    // Not vacuous: the models walked hold what the window shows about the credential.
    for (const QString &kind :
         {u"SandboxTableModel"_s, u"EgressEventModel"_s, u"DestinationCountModel"_s,
          u"SecretListModel"_s, u"BindingTableModel"_s, u"SnapshotTimelineModel"_s,
          u"PolicyRuleModel"_s})
        QVERIFY2(names.join(u' ').contains(kind), qPrintable(kind));
    for (const QString &expected :
         {m_fingerprint, u"Credential sent where its binding does not allow it"_s, u"/v2/steal"_s,
          u"with credentials"_s, u"api.test"_s, kSecretName})
        QVERIFY2(seen.contains(expected), qPrintable(expected));

    // Nor in any text on screen: labels, fields, buttons, tooltips, accessible texts, titles,
    // the status bar.
    const QList<QByteArray> forms = secretForms();
    QStringList shown {m_window->statusBar()->currentMessage(), m_window->lastNotification()};
    QList<QWidget *> widgets = m_window->findChildren<QWidget *>();
    for (QWidget *top : QApplication::topLevelWidgets())
        widgets += top->findChildren<QWidget *>() << top;
    for (QWidget *widget : std::as_const(widgets)) {
        shown << widget->windowTitle() << widget->toolTip() << widget->statusTip()
              << widget->whatsThis() << widget->accessibleName() << widget->accessibleDescription();
        if (auto *label = qobject_cast<QLabel *>(widget))
            shown << label->text();
        if (auto *edit = qobject_cast<QLineEdit *>(widget))
            shown << edit->text() << edit->displayText();
        if (auto *text = qobject_cast<QPlainTextEdit *>(widget))
            shown << text->toPlainText();
        if (auto *button = qobject_cast<QAbstractButton *>(widget))
            shown << button->text();
    }
    const QByteArray all = shown.join(u'\n').toUtf8();
    for (const QByteArray &form : forms)
        QVERIFY2(!all.contains(form), form.constData());
    QVERIFY(all.contains("Set Secret"));
}

QTEST_MAIN(TestCredentialWindow)
#include "tst_credentialwindow.moc"

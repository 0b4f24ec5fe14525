// The window on a scripted helper: a Transport that answers each JSON-RPC request with a fixed
// result of the protocol's shape (docs/protocol.md; sandboxes written by Sandbox::toJson) and
// pushes notifications, so the states a real helper reaches only by accident can be shown on
// demand. What it checks: the sandbox table's badge, tooltip and accessible text for an
// `identityWarning` together with the window's own alerts, the details pane (`startedFrom` in
// words, the warning with what to do), both going away when the helper's next message says the
// warning is gone; a live `egress.event` with `alert: true` raising the credential alert naming
// the binding (and recorded history raising none); the New Sandbox dialog's image choice for
// images with a root disk (Image `disk`: no template, unticked, no advice to make one), its
// notes shown whole as they change (no line cut off by the buttons) and the name's problem in
// words; the egress table's reasons in words and its footer counting what the filters show.
// tst_snapshottimeline provokes a real identity warning with a real helper and guest;
// tst_credentialwindow a real credential_exfil.

#include "core/client/helperclient.h"
#include "core/client/transport.h"
#include "core/model/sandbox.h"
#include "core/protocol/message.h"
#include "eventloop.h"
#include "ui/bindingtablemodel.h"
#include "ui/credentialsview.h"
#include "ui/destinationcountmodel.h"
#include "ui/egresseventmodel.h"
#include "ui/egressview.h"
#include "ui/hostsidebar.h"
#include "ui/mainwindow.h"
#include "ui/newsandboxdialog.h"
#include "ui/policytext.h"
#include "ui/resources.h"
#include "ui/sandboxdetailsview.h"
#include "ui/sandboxtablemodel.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>

using namespace airlock;
using namespace Qt::StringLiterals;

namespace {

/// A helper made of fixed answers: `answer(method, result)` sets what a request gets (methods
/// without an answer get method_not_found, as an older helper would answer); push() sends a
/// notification. Everything arrives through the event loop, as from a socket.
class ScriptedTransport final : public Transport
{
public:
    void answer(const QString &method, const QJsonValue &result) { m_answers[method] = result; }
    void push(const QString &method, const QJsonObject &params)
    {
        deliver(protocol::encodeNotification(method, params));
    }
    QStringList requests() const { return m_requests; }

    void open() override
    {
        m_open = true;
        QTimer::singleShot(0, this, [this] { Q_EMIT connected(); });
    }
    void close() override
    {
        if (std::exchange(m_open, false))
            Q_EMIT disconnected(u"closed"_s);
    }
    void write(const QByteArray &bytes) override
    {
        m_pending += bytes;
        qsizetype end;
        while ((end = m_pending.indexOf('\n')) >= 0) {
            const QByteArray line = m_pending.left(end);
            m_pending.remove(0, end + 1);
            auto message = protocol::parseMessage(line);
            if (!message || message->type != protocol::Message::Type::Request)
                continue;
            m_requests << message->method;
            const auto it = m_answers.constFind(message->method);
            if (it == m_answers.constEnd())
                deliver(protocol::encodeError(
                    message->id, Error {ErrorKind::MethodNotFound, u"no such method"_s}));
            else
                deliver(protocol::encodeResult(message->id, *it));
        }
    }
    bool isOpen() const override { return m_open; }
    QString description() const override { return u"scripted helper"_s; }

private:
    void deliver(const QByteArray &bytes)
    {
        QTimer::singleShot(0, this, [this, bytes] {
            if (m_open)
                Q_EMIT bytesReceived(bytes);
        });
    }

    QHash<QString, QJsonValue> m_answers;
    QStringList m_requests;
    QByteArray m_pending;
    bool m_open = false;
};

const QString kHelperWords = u"the guest agent did not confirm its new identity within 5 s "
                             u"(step name: /etc/hostname: Is a directory)"_s;

Sandbox sandbox(const QString &name, StartSource from, const QString &identityWarning = {})
{
    Sandbox s;
    s.spec.name = name;
    s.state = SandboxState::Running;
    s.spec.vmm = VmmKind::Qemu;
    s.acceleration = Acceleration::Tcg;
    s.accelerationWarning = u"/dev/kvm is missing"_s;
    s.createdAt = QDateTime::currentDateTimeUtc().addSecs(-600);
    s.startedAt = QDateTime::currentDateTimeUtc().addSecs(-60);
    s.vmmPid = 4242;
    s.startedFrom = from;
    s.identityWarning = identityWarning;
    return s;
}

QJsonObject helloResult()
{
    return {{u"protocol"_s, 1},
            {u"helper"_s, u"airlockd"_s},
            {u"version"_s, u"0.1.0"_s},
            {u"capabilities"_s,
             QJsonArray {u"sandbox"_s, u"console"_s, u"events"_s, u"images"_s, u"policy"_s,
                         u"egress"_s, u"credentials"_s, u"snapshot"_s, u"templates"_s}},
            {u"acceleration"_s, u"tcg"_s},
            {u"accelerationWarning"_s, u"/dev/kvm is missing"_s},
            {u"vmm"_s, u"qemu"_s},
            {u"vmms"_s,
             QJsonObject {{u"qemu"_s, QJsonObject {{u"available"_s, true}}},
                          {u"firecracker"_s,
                           QJsonObject {{u"available"_s, true},
                                        {u"reason"_s, QString()},
                                        {u"binary"_s, u"/usr/bin/firecracker"_s}}}}},
            {u"uid"_s, 0},
            {u"hostMemoryMib"_s, 3000},
            {u"hostMemoryAvailableMib"_s, 1000}};
}

QJsonObject egressEvent(const QString &sandbox, qint64 seq, const QJsonObject &event)
{
    return {{u"sandbox"_s, sandbox}, {u"seq"_s, seq}, {u"event"_s, event}};
}

QJsonObject exfilEvent(const QString &sandbox)
{
    return {{u"time"_s, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
            {u"sandbox"_s, sandbox},
            {u"layer"_s, u"http"_s},
            {u"verdict"_s, u"denied"_s},
            {u"reason"_s, u"credential_exfil"_s},
            {u"detail"_s, u"a credential placeholder outside its binding"_s},
            {u"host"_s, u"collect.test"_s},
            {u"port"_s, 80},
            {u"method"_s, u"POST"_s},
            {u"path"_s, u"/upload"_s},
            {u"binding"_s, 7},
            {u"alert"_s, true}};
}

QJsonObject bindingJson(qint64 id, const QString &sandbox)
{
    return {
        {u"id"_s, id},
        {u"sandbox"_s, sandbox},
        {u"secret"_s, u"gh-token"_s},
        {u"host"_s, u"api.github.com"_s},
        {u"pathPrefix"_s, u"/repos"_s},
        {u"placement"_s,
         QJsonObject {{u"type"_s, u"header"_s},
                      {u"header"_s, u"Authorization"_s},
                      {u"template"_s, u"Bearer {secret}"_s}}},
        {u"placeholderVariable"_s, u"AIRLOCK_SECRET_GH_TOKEN"_s},
        {u"createdAt"_s, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
        {u"stats"_s,
         QJsonObject {{u"injections"_s, 3},
                      {u"lastUsed"_s, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
                      {u"denied"_s, 1}}}};
}

QJsonObject imageList()
{
    const QString created = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
    return {{u"images"_s,
             QJsonArray {QJsonObject {{u"id"_s, u"debian"_s},
                                      {u"description"_s, u"Debian 12 on a 4G disk"_s},
                                      {u"kernel"_s, u"vmlinuz"_s},
                                      {u"disk"_s, u"rootfs.qcow2"_s},
                                      {u"vmms"_s, QJsonArray {u"qemu"_s}},
                                      {u"createdAt"_s, created}},
                         QJsonObject {{u"id"_s, u"default"_s},
                                      {u"description"_s, u"busybox initramfs"_s},
                                      {u"kernel"_s, u"vmlinuz"_s},
                                      {u"disk"_s, QJsonValue()},
                                      {u"vmms"_s, QJsonArray {u"qemu"_s, u"firecracker"_s}},
                                      {u"createdAt"_s, created}}}}};
}

QLabel *labelNamed(QWidget *parent, const QString &accessibleName)
{
    for (QLabel *label : parent->findChildren<QLabel *>()) {
        if (label->accessibleName() == accessibleName)
            return label;
    }
    return nullptr;
}

/// Whether every line of a shown word-wrapped label has room: as tall as its text needs at its
/// width, and above the dialog's buttons.
QString clipping(QLabel *label, QWidget *buttons)
{
    if (!label->isVisible() || label->text().isEmpty())
        return {};
    const int needed = label->heightForWidth(label->width());
    const QRect inDialog(label->mapTo(label->window(), QPoint()), label->size());
    const QRect buttonsAt(buttons->mapTo(label->window(), QPoint()), buttons->size());
    if (label->height() < needed || inDialog.bottom() >= buttonsAt.top())
        return u"“%1”: %2 px high of %3 needed, bottom %4, buttons at %5"_s.arg(label->text())
            .arg(label->height())
            .arg(needed)
            .arg(inDialog.bottom())
            .arg(buttonsAt.top());
    return {};
}

/// How much of `column` a person sees: its width, cut at the viewport's right edge.
int visibleWidth(QTableView *table, int column)
{
    if (table->isColumnHidden(column))
        return 0;
    const int x = table->columnViewportPosition(column);
    return std::max(0, std::min(table->columnWidth(column), table->viewport()->width() - x));
}

/// The cells of `column` (and its header) whose text does not fit the part of the column in
/// view: the text's advance in the table's font plus the delegate's margins (and an icon's
/// room where the cell has one) against the visible width. Empty when everything fits.
QStringList cutCells(QTableView *table, int column)
{
    QStringList cut;
    const int visible = visibleWidth(table, column);
    const int margin =
        table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1;
    const QAbstractItemModel *model = table->model();
    if (const int header = table->horizontalHeader()->sectionSizeHint(column); header > visible)
        cut << u"header “%1”: %2 px of %3"_s
                   .arg(model->headerData(column, Qt::Horizontal).toString())
                   .arg(visible)
                   .arg(header);
    for (int row = 0; row < model->rowCount(); ++row) {
        const QModelIndex index = model->index(row, column);
        const QString text = index.data().toString();
        int needed = table->fontMetrics().horizontalAdvance(text) + 2 * margin;
        if (!index.data(Qt::DecorationRole).isNull())
            needed += table->iconSize().width() > 0
                ? table->iconSize().width() + margin
                : table->style()->pixelMetric(QStyle::PM_SmallIconSize) + margin;
        if (needed > visible)
            cut << u"“%1”: %2 px of %3"_s.arg(text).arg(visible).arg(needed);
    }
    return cut;
}

QJsonObject liveEvent(const QString &sandbox, qint64 seq, bool allowed, const QString &reason,
                      const QString &host)
{
    return egressEvent(sandbox, seq,
                       {{u"time"_s, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)},
                        {u"sandbox"_s, sandbox},
                        {u"layer"_s, u"http"_s},
                        {u"verdict"_s, allowed ? u"allowed"_s : u"denied"_s},
                        {u"reason"_s, reason},
                        {u"name"_s, host},
                        {u"host"_s, host},
                        {u"port"_s, 443},
                        {u"method"_s, u"GET"_s},
                        {u"path"_s, u"/"_s}});
}

} // namespace

class TestSandboxDetails : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { initUiResources(); }
    void init();
    void cleanup();

    void tableAndDetailsShowTheIdentityWarning();
    void windowAlertsAndTheIdentityWarningShareTheBadge();
    void liveCredentialAlertNamesTheBinding();
    void startSourcesInWords();
    void detailsShowTheLabels();
    void credentialReasonsInWords();
    void newSandboxDialogSaysRootDiskImagesBootCold();
    void newSandboxDialogShowsItsNotesWhole();
    void newSandboxDialogTemplatesFollowTheVmm();
    void newSandboxDialogChecksMemoryAgainstTheHost();
    void egressReasonsInWordsAndCountsWhatIsShown();
    void columnsThatMatterFitAtTheDefaultSize();
    void namesStayReadableAtTheMinimumSize();

private:
    ScriptedTransport *m_transport = nullptr; // owned by m_client
    std::unique_ptr<HelperClient> m_client;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_tester;
};

void TestSandboxDetails::init()
{
    auto transport = std::make_unique<ScriptedTransport>();
    m_transport = transport.get();
    m_transport->answer(u"hello"_s, helloResult());
    m_transport->answer(u"events.subscribe"_s, QJsonObject());
    m_transport->answer(
        u"sandbox.list"_s,
        QJsonObject {
            {u"sandboxes"_s,
             QJsonArray {sandbox(u"fresh"_s, StartSource::Boot).toJson(),
                         sandbox(u"stale"_s, StartSource::Snapshot, kHelperWords).toJson()}}});
    m_transport->answer(u"secret.list"_s, QJsonObject {{u"secrets"_s, QJsonArray()}});
    m_transport->answer(u"binding.list"_s,
                        QJsonObject {{u"bindings"_s, QJsonArray {bindingJson(7, u"fresh"_s)}}});
    m_transport->answer(u"egress.history"_s,
                        QJsonObject {{u"name"_s, u"fresh"_s}, {u"events"_s, QJsonArray()}});
    m_client = std::make_unique<HelperClient>(std::move(transport), u"tst_sandboxdetails"_s);
    m_window = std::make_unique<MainWindow>(m_client.get());
    m_tester = std::make_unique<QAbstractItemModelTester>(
        m_window->model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    m_window->show();
    m_client->connectToHelper();
    QTRY_COMPARE(m_window->model()->rowCount(), 2);
}

void TestSandboxDetails::cleanup()
{
    m_tester.reset();
    m_window.reset();
    m_client.reset();
}

void TestSandboxDetails::tableAndDetailsShowTheIdentityWarning()
{
    SandboxTableModel *model = m_window->model();
    const QModelIndex stale = model->index(model->rowOf(u"stale"_s), SandboxTableModel::NameColumn);
    const QModelIndex fresh = model->index(model->rowOf(u"fresh"_s), SandboxTableModel::NameColumn);
    // The badge: an icon, the warning in words with what to do, and the helper's own words.
    QVERIFY(!stale.data(Qt::DecorationRole).isNull());
    const QString tooltip = stale.data(Qt::ToolTipRole).toString();
    QVERIFY2(tooltip.contains(u"did not confirm its new identity"_s), qPrintable(tooltip));
    QVERIFY2(tooltip.contains(u"Restart the sandbox"_s), qPrintable(tooltip));
    QVERIFY2(tooltip.contains(kHelperWords), qPrintable(tooltip));
    QCOMPARE(stale.data(SandboxTableModel::IdentityWarningRole).toString(), kHelperWords);
    QCOMPARE(stale.data(SandboxTableModel::AlertRole).toString(), tooltip);
    QVERIFY(stale.data(Qt::AccessibleTextRole).toString().startsWith(u"stale (alert: "_s));
    QCOMPARE(stale.data(Qt::DisplayRole).toString(), u"stale"_s);
    QVERIFY(fresh.data(Qt::DecorationRole).isNull());
    QVERIFY(fresh.data(Qt::ToolTipRole).toString().isEmpty());
    QCOMPARE(fresh.data(Qt::AccessibleTextRole).toString(), u"fresh"_s);
    // The sidebar says it in words too, after the state.
    const QList<QTreeWidgetItem *> items =
        m_window->sidebar()->findItems(u"stale"_s, Qt::MatchExactly | Qt::MatchRecursive);
    QCOMPARE(items.size(), 1);
    QCOMPARE(items.constFirst()->toolTip(0), u"Running\n"_s + tooltip);
    // The state's tooltip says where the running state came from.
    QCOMPARE(stale.siblingAtColumn(SandboxTableModel::StateColumn).data(Qt::ToolTipRole).toString(),
             u"Running, from snapshot"_s);

    // The details of the selected sandbox.
    m_window->table()->selectRow(stale.row());
    QString details = m_window->details()->text();
    QVERIFY2(details.contains(u"Name: stale"_s), qPrintable(details));
    QVERIFY2(details.contains(u"Started: from snapshot"_s), qPrintable(details));
    QVERIFY2(details.contains(u"VMM: QEMU microvm\nAcceleration: TCG (software)"_s),
             qPrintable(details));
    QVERIFY2(details.startsWith(u"The guest did not confirm"_s), qPrintable(details));
    QVERIFY2(details.contains(u"vCPUs: 1\nMemory: 256 MiB"_s), qPrintable(details));
    QVERIFY2(details.contains(u"Restart the sandbox (Stop, then Start)"_s), qPrintable(details));
    QVERIFY(m_window->details()->identityWarningText().contains(kHelperWords));
    m_window->table()->selectRow(fresh.row());
    details = m_window->details()->text();
    QVERIFY2(details.contains(u"Started: booted"_s), qPrintable(details));
    QVERIFY2(!details.contains(u"identity"_s), qPrintable(details));
    QVERIFY(m_window->details()->identityWarningText().isEmpty());

    // Restart Sandbox under the warning: sandbox.stop, then sandbox.start once the helper
    // says it stopped (not before).
    m_window->table()->selectRow(stale.row());
    QPushButton *restart = m_window->details()->restartButton();
    QVERIFY(!restart->isHidden());
    Sandbox stopping = sandbox(u"stale"_s, StartSource::Snapshot, kHelperWords);
    stopping.state = SandboxState::Stopping;
    m_transport->answer(u"sandbox.stop"_s, stopping.toJson());
    m_transport->answer(u"sandbox.start"_s, sandbox(u"stale"_s, StartSource::Boot).toJson());
    restart->click();
    QTRY_VERIFY(m_transport->requests().contains(u"sandbox.stop"_s));
    m_transport->push(u"sandbox.changed"_s, {{u"sandbox"_s, stopping.toJson()}});
    QVERIFY(airlock::test::runUntilIdle()); // "stopping" delivered and handled
    QVERIFY(!m_transport->requests().contains(u"sandbox.start"_s));
    // The helper's next word on it: stopped, the warning is gone with the state it described.
    Sandbox stopped = sandbox(u"stale"_s, StartSource::None);
    stopped.state = SandboxState::Stopped;
    stopped.startedAt = {};
    stopped.vmmPid = 0;
    m_transport->push(u"sandbox.changed"_s, {{u"sandbox"_s, stopped.toJson()}});
    QTRY_VERIFY(m_transport->requests().contains(u"sandbox.start"_s));
    QTRY_VERIFY(stale.data(Qt::DecorationRole).isNull());
    QVERIFY(stale.data(Qt::ToolTipRole).toString().isEmpty());
    details = m_window->details()->text();
    QVERIFY2(details.contains(u"State: Stopped"_s), qPrintable(details));
    QVERIFY2(!details.contains(u"Started"_s), qPrintable(details));
    QVERIFY(m_window->details()->identityWarningText().isEmpty());
    // Started again from a snapshot whose guest did confirm: no warning.
    m_transport->push(u"sandbox.changed"_s,
                      {{u"sandbox"_s, sandbox(u"stale"_s, StartSource::Template).toJson()}});
    QTRY_VERIFY(m_window->details()->text().contains(u"Started: from template"_s));
    QVERIFY(stale.data(Qt::DecorationRole).isNull());
    // Nothing selected: the hint.
    m_window->table()->clearSelection();
    QCOMPARE(m_window->details()->text(), u"Select a sandbox to see its details."_s);
}

void TestSandboxDetails::windowAlertsAndTheIdentityWarningShareTheBadge()
{
    SandboxTableModel *model = m_window->model();
    const QModelIndex stale = model->index(model->rowOf(u"stale"_s), SandboxTableModel::NameColumn);
    model->setAlert(u"stale"_s, u"probing!"_s);
    model->setAlert(u"stale"_s, u"credential!"_s, SandboxTableModel::AlertKind::Credential);
    QStringList lines = stale.data(SandboxTableModel::AlertRole).toString().split(u'\n');
    QCOMPARE(lines.size(), 3);
    QCOMPARE(lines.at(0), u"probing!"_s);
    QCOMPARE(lines.at(1), u"credential!"_s);
    QVERIFY(lines.at(2).contains(kHelperWords));
    // The probing alert ends; the others stay.
    model->setAlert(u"stale"_s, {});
    lines = stale.data(SandboxTableModel::AlertRole).toString().split(u'\n');
    QCOMPARE(lines.size(), 2);
    QCOMPARE(model->alert(u"stale"_s), QString());
    QCOMPARE(model->alert(u"stale"_s, SandboxTableModel::AlertKind::Credential), u"credential!"_s);
    model->setAlert(u"stale"_s, {}, SandboxTableModel::AlertKind::Credential);
    QVERIFY(!stale.data(Qt::DecorationRole).isNull()); // the identity warning still
    // Alerts survive a list reload (a reconnect); only the helper's warning follows the list.
    model->setAlert(u"fresh"_s, u"probing!"_s);
    QVERIFY(model->resetFromList(
        QJsonObject {{u"sandboxes"_s,
                      QJsonArray {sandbox(u"fresh"_s, StartSource::Boot).toJson(),
                                  sandbox(u"stale"_s, StartSource::Snapshot).toJson()}}}));
    QCOMPARE(model->badgeText(u"fresh"_s), u"probing!"_s);
    QCOMPARE(model->badgeText(u"stale"_s), QString());
}

void TestSandboxDetails::liveCredentialAlertNamesTheBinding()
{
    SandboxTableModel *model = m_window->model();
    // The credentials view has read binding 7 (of sandbox "fresh").
    QTRY_COMPARE(m_window->credentialsView()->bindings()->rowCount(), 1);
    const qsizetype listed = m_transport->requests().count(u"binding.list"_s);
    m_transport->push(u"egress.event"_s, egressEvent(u"fresh"_s, 11, exfilEvent(u"fresh"_s)));
    QTRY_VERIFY(!model->alert(u"fresh"_s, SandboxTableModel::AlertKind::Credential).isEmpty());
    const QString alert = model->alert(u"fresh"_s, SandboxTableModel::AlertKind::Credential);
    const QString binding = u"binding 7 (secret “gh-token” for api.github.com/repos)"_s;
    QVERIFY2(alert.contains(binding), qPrintable(alert));
    QVERIFY2(alert.contains(u"collect.test:80 (POST /upload)"_s), qPrintable(alert));
    QVERIFY2(m_window->lastNotification().contains(binding),
             qPrintable(m_window->lastNotification()));
    const QModelIndex fresh = model->index(model->rowOf(u"fresh"_s), SandboxTableModel::NameColumn);
    QVERIFY(!fresh.data(Qt::DecorationRole).isNull());
    // The counters are read again after an event that names a binding.
    QTRY_COMPARE_WITH_TIMEOUT(m_transport->requests().count(u"binding.list"_s), listed + 1, 3000);

    // A binding the window does not know is named by its id; a scrubbed response has its own
    // words.
    QJsonObject scrubbed = exfilEvent(u"stale"_s);
    scrubbed[u"verdict"_s] = u"allowed"_s;
    scrubbed[u"reason"_s] = u"allowed"_s;
    scrubbed[u"binding"_s] = 99;
    scrubbed[u"scrubbed"_s] = 2;
    scrubbed[u"host"_s] = u"api.test"_s;
    scrubbed[u"port"_s] = 443;
    m_transport->push(u"egress.event"_s, egressEvent(u"stale"_s, 12, scrubbed));
    QTRY_VERIFY(!model->alert(u"stale"_s, SandboxTableModel::AlertKind::Credential).isEmpty());
    const QString second = model->alert(u"stale"_s, SandboxTableModel::AlertKind::Credential);
    QVERIFY2(second.contains(u"binding 99"_s) && second.contains(u"2 time"_s), qPrintable(second));

    // Recorded history is old news: no alert from egress.history.
    SandboxTableModel &m = *model;
    m.setAlert(u"fresh"_s, {}, SandboxTableModel::AlertKind::Credential);
    m_transport->answer(u"egress.history"_s,
                        QJsonObject {{u"name"_s, u"fresh"_s},
                                     {u"events"_s,
                                      QJsonArray {QJsonObject {
                                          {u"seq"_s, 3}, {u"event"_s, exfilEvent(u"fresh"_s)}}}}});
    m_window->egressView()->loadHistory();
    QTRY_VERIFY(m_transport->requests().count(u"egress.history"_s) >= 4);
    QVERIFY(airlock::test::runUntilIdle()); // the answer delivered and handled
    QCOMPARE(m.alert(u"fresh"_s, SandboxTableModel::AlertKind::Credential), QString());
}

void TestSandboxDetails::startSourcesInWords()
{
    QCOMPARE(SandboxTableModel::startSourceText(StartSource::Boot), u"booted"_s);
    QCOMPARE(SandboxTableModel::startSourceText(StartSource::Template), u"from template"_s);
    QCOMPARE(SandboxTableModel::startSourceText(StartSource::Snapshot), u"from snapshot"_s);
    QCOMPARE(SandboxTableModel::startSourceText(StartSource::None), QString());
    QCOMPARE(SandboxTableModel::identityWarningText({}), QString());
}

void TestSandboxDetails::detailsShowTheLabels()
{
    // An E2B sandbox as airlock-e2b creates it: its metadata are the sandbox's labels, which
    // arrive with the helper's sandbox.changed and show in the details, escaped.
    Sandbox e2b = sandbox(u"e2b-abc"_s, StartSource::Boot);
    e2b.spec.labels = {{u"suite"_s, u"airlock-42"_s}, {u"owner"_s, u"<ana>"_s}};
    m_transport->push(u"sandbox.changed"_s, {{u"sandbox"_s, e2b.toJson()}});
    SandboxTableModel *model = m_window->model();
    QTRY_VERIFY(model->rowOf(u"e2b-abc"_s) >= 0);
    m_window->table()->selectRow(model->rowOf(u"e2b-abc"_s));
    const QString details = m_window->details()->text();
    QVERIFY2(details.contains(u"Labels: owner = <ana>; suite = airlock-42"_s), qPrintable(details));
    const QLabel *fields = m_window->details()->findChild<QLabel *>(u"sandboxDetailsFields"_s);
    QVERIFY(fields);
    QVERIFY2(fields->text().contains(u"owner = &lt;ana&gt;<br>suite = airlock-42"_s),
             qPrintable(fields->text()));
    // One without labels shows no such line.
    m_window->table()->selectRow(model->rowOf(u"fresh"_s));
    QVERIFY(!m_window->details()->text().contains(u"Labels"_s));
}

void TestSandboxDetails::credentialReasonsInWords()
{
    QCOMPARE(PolicyText::reasonText(u"credential_exfil"_s),
             u"Credential sent where its binding does not allow it"_s);
    QCOMPARE(PolicyText::reasonText(u"credential_unavailable"_s),
             u"Credential value not available to the gateway"_s);
    QCOMPARE(PolicyText::reasonText(u"plain_http_port"_s), u"Plain HTTP only to port 80"_s);
}

void TestSandboxDetails::newSandboxDialogSaysRootDiskImagesBootCold()
{
    const QString created = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
    m_transport->answer(
        u"image.list"_s,
        QJsonObject {{u"images"_s,
                      QJsonArray {QJsonObject {{u"id"_s, u"debian"_s},
                                               {u"description"_s, u"Debian 12 on a 4G disk"_s},
                                               {u"kernel"_s, u"vmlinuz"_s},
                                               {u"disk"_s, u"rootfs.qcow2"_s},
                                               {u"createdAt"_s, created}},
                                  QJsonObject {{u"id"_s, u"default"_s},
                                               {u"description"_s, u"busybox initramfs"_s},
                                               {u"kernel"_s, u"vmlinuz"_s},
                                               {u"disk"_s, QJsonValue()},
                                               {u"createdAt"_s, created}}}}});
    m_transport->answer(u"template.list"_s,
                        QJsonObject {{u"templates"_s,
                                      QJsonArray {QJsonObject {{u"id"_s, u"00000000000000aa"_s},
                                                               {u"sandbox"_s, QJsonValue()},
                                                               {u"parent"_s, QJsonValue()},
                                                               {u"label"_s, QString()},
                                                               {u"createdAt"_s, created},
                                                               {u"kind"_s, u"template"_s},
                                                               {u"logicalBytes"_s, 1 << 28},
                                                               {u"newBytes"_s, 1 << 24},
                                                               {u"newStoredBytes"_s, 1 << 22},
                                                               {u"pauseMs"_s, 80},
                                                               {u"pinned"_s, false},
                                                               {u"image"_s, u"default"_s},
                                                               {u"vcpus"_s, 1},
                                                               {u"memoryMib"_s, 256},
                                                               {u"current"_s, true}}}}});
    NewSandboxDialog dialog(m_client.get(), {});
    QComboBox *images = dialog.imageBox();
    QTRY_COMPARE(images->count(), 2);
    QCOMPARE(images->itemText(0), u"debian — root disk"_s);
    QCOMPARE(images->itemData(0).toString(), u"debian"_s);
    QCOMPARE(images->itemData(0, Qt::ToolTipRole).toString(), u"Debian 12 on a 4G disk"_s);
    QCOMPARE(images->itemText(1), u"default"_s);
    QCOMPARE(images->currentIndex(), 1); // "default" is preferred
    QTRY_VERIFY(dialog.templateNote().contains(u"template of this image and size is ready"_s));
    QVERIFY(dialog.templateBox()->isEnabled());
    QCOMPARE(dialog.bootMode(), u"template"_s);

    images->setCurrentIndex(0);
    QVERIFY(!dialog.templateBox()->isEnabled());
    QVERIFY(!dialog.templateBox()->isChecked()); // not ticked while it cannot apply
    QVERIFY2(dialog.templateNote().contains(u"always boot cold (no template)"_s),
             qPrintable(dialog.templateNote()));
    QCOMPARE(dialog.bootMode(), u"cold"_s);
    QCOMPARE(dialog.spec().image, u"debian"_s);
    images->setCurrentIndex(1);
    QVERIFY(dialog.templateBox()->isEnabled());
    QVERIFY(dialog.templateBox()->isChecked()); // the person's choice again
    QCOMPARE(dialog.bootMode(), u"template"_s);
    // A choice taken back stays taken back across a root-disk image.
    dialog.templateBox()->setChecked(false);
    images->setCurrentIndex(0);
    images->setCurrentIndex(1);
    QVERIFY(!dialog.templateBox()->isChecked());
    QCOMPARE(dialog.bootMode(), u"cold"_s);
}

void TestSandboxDetails::newSandboxDialogTemplatesFollowTheVmm()
{
    // Issue 19: a host whose helper can run Firecracker offers it; a template is its VMM's
    // device state, so the note looks for one of the chosen VMM (a QEMU template does not
    // serve a Firecracker sandbox), and says how to make one for it.
    m_transport->answer(u"image.list"_s, imageList());
    const QJsonObject qemuTemplate {{u"id"_s, u"00000000000000aa"_s},
                                    {u"kind"_s, u"template"_s},
                                    {u"image"_s, u"default"_s},
                                    {u"vcpus"_s, SandboxSpec::kDefaultVcpus},
                                    {u"memoryMib"_s, SandboxSpec::kDefaultMemoryMib},
                                    {u"vmm"_s, u"qemu"_s},
                                    {u"current"_s, true}};
    m_transport->answer(u"template.list"_s,
                        QJsonObject {{u"templates"_s, QJsonArray {qemuTemplate}}});
    NewSandboxDialog dialog(m_client.get(), {});
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QComboBox *vmm = dialog.vmmBox();
    QCOMPARE(vmm->itemText(0), u"Host default (QEMU microvm)"_s);
    const int firecracker = vmm->findData(u"firecracker"_s);
    QVERIFY(firecracker > 0);
    QVERIFY(dialog.vmmNote().isEmpty());
    QTRY_VERIFY2(dialog.templateNote().contains(u"A template of this image and size is ready"_s),
                 qPrintable(dialog.templateNote()));
    QVERIFY(dialog.templateBox()->isChecked());
    vmm->setCurrentIndex(firecracker);
    QCOMPARE(dialog.spec().vmm, VmmKind::Firecracker);
    QVERIFY2(dialog.vmmNote().startsWith(u"Firecracker: KVM only"_s), qPrintable(dialog.vmmNote()));
    QVERIFY(dialog.templateBox()->isEnabled());
    QVERIFY(dialog.templateBox()->isChecked());
    QCOMPARE(dialog.bootMode(), u"template"_s);
    QVERIFY2(dialog.templateNote().contains(u"No template of this image and size yet"_s)
                 && dialog.templateNote().contains(u"template prepare --vmm firecracker"_s),
             qPrintable(dialog.templateNote()));
    auto *buttons = dialog.findChild<QDialogButtonBox *>();
    QLabel *note = labelNamed(&dialog, u"Template availability"_s);
    QVERIFY(buttons && note);
    QTRY_VERIFY2(clipping(note, buttons).isEmpty(), qPrintable(clipping(note, buttons)));
    vmm->setCurrentIndex(0);
    QVERIFY(!dialog.spec().vmm);
    QVERIFY(dialog.templateNote().contains(u"A template of this image and size is ready"_s));

    // An image that does not boot in the chosen VMM (its `vmms`) is said so, and OK waits.
    QTest::keyClicks(dialog.findChild<QLineEdit *>(), u"fc-1"_s);
    QPushButton *ok = buttons->button(QDialogButtonBox::Ok);
    QVERIFY(ok->isEnabled());
    vmm->setCurrentIndex(firecracker);
    dialog.imageBox()->setCurrentIndex(dialog.imageBox()->findData(u"debian"_s));
    QCOMPARE(dialog.vmmProblem(),
             u"Image “debian” does not boot in Firecracker; it boots in: QEMU microvm."_s);
    QCOMPARE(dialog.vmmNote(), dialog.vmmProblem());
    QVERIFY(!ok->isEnabled());
    dialog.imageBox()->setCurrentIndex(dialog.imageBox()->findData(u"default"_s));
    QVERIFY(dialog.vmmProblem().isEmpty());
    QVERIFY(ok->isEnabled());
}

void TestSandboxDetails::newSandboxDialogShowsItsNotesWhole()
{
    // No template yet: the longest note, and one that names `airlockctl template prepare`.
    m_transport->answer(u"image.list"_s, imageList());
    m_transport->answer(u"template.list"_s, QJsonObject {{u"templates"_s, QJsonArray()}});
    NewSandboxDialog dialog(m_client.get(), {u"fresh"_s});
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QTRY_VERIFY(dialog.templateNote().contains(u"No template of this image and size yet"_s));
    QVERIFY(dialog.templateNote().contains(u"airlockctl template prepare"_s));
    auto *buttons = dialog.findChild<QDialogButtonBox *>();
    QLabel *note = labelNamed(&dialog, u"Template availability"_s);
    QLabel *problem = labelNamed(&dialog, u"Name problem"_s);
    QVERIFY(buttons && note && problem);
    QTRY_VERIFY2(clipping(note, buttons).isEmpty(), qPrintable(clipping(note, buttons)));

    // The name's problem in words: the character itself, and what to type instead.
    auto *name = dialog.findChild<QLineEdit *>();
    QTest::keyClicks(name, u"Bad"_s);
    QCOMPARE(problem->text(),
             u"“B” at position 1: upper case is not allowed (use “b”). A name may only contain "
             u"a–z, 0–9 and “-”."_s);
    QVERIFY(!dialog.nameProblem().contains(u"U+"_s));
    QTRY_VERIFY2(clipping(problem, buttons).isEmpty(), qPrintable(clipping(problem, buttons)));
    QTRY_VERIFY2(clipping(note, buttons).isEmpty(), qPrintable(clipping(note, buttons)));
    name->setText(u"a b"_s);
    QVERIFY2(problem->text().startsWith(u"A space at position 2 is not allowed."_s),
             qPrintable(problem->text()));
    name->setText(u"a\u202eb"_s);
    QVERIFY2(problem->text().startsWith(u"An invisible character (U+202E) at position 2"_s),
             qPrintable(problem->text()));
    name->setText(u"-a"_s);
    QVERIFY2(problem->text().contains(u"must start with a lower-case letter or a digit"_s),
             qPrintable(problem->text()));
    name->setText(u"fresh"_s);
    QCOMPARE(problem->text(), u"A sandbox named “fresh” already exists."_s);

    // A root-disk image: no template, and no advice to make one (the helper refuses to).
    dialog.imageBox()->setCurrentIndex(dialog.imageBox()->findData(u"debian"_s));
    QVERIFY(!dialog.templateBox()->isEnabled());
    QVERIFY(!dialog.templateBox()->isChecked());
    QCOMPARE(dialog.bootMode(), u"cold"_s);
    QVERIFY2(!dialog.templateNote().contains(u"airlockctl"_s), qPrintable(dialog.templateNote()));
    QTRY_VERIFY2(clipping(note, buttons).isEmpty(), qPrintable(clipping(note, buttons)));
    QTRY_VERIFY2(clipping(problem, buttons).isEmpty(), qPrintable(clipping(problem, buttons)));
}

void TestSandboxDetails::newSandboxDialogChecksMemoryAgainstTheHost()
{
    // Issue 17: the host's memory is shown, and typed values are never clipped silently.
    m_transport->answer(u"image.list"_s, imageList());
    m_transport->answer(u"template.list"_s, QJsonObject {{u"templates"_s, QJsonArray()}});
    NewSandboxDialog dialog(m_client.get(), {});
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QLabel *host = labelNamed(&dialog, u"Host memory"_s);
    QLabel *problem = labelNamed(&dialog, u"Memory problem"_s);
    auto *buttons = dialog.findChild<QDialogButtonBox *>();
    QVERIFY(host && problem && buttons);
    QPushButton *ok = buttons->button(QDialogButtonBox::Ok);
    QCOMPARE(host->text(), u"This host: at most 3000 MiB for a sandbox, 1000 MiB available now."_s);
    QVERIFY(host->isVisible());
    QTest::keyClicks(dialog.findChild<QLineEdit *>(), u"mem"_s);
    QVERIFY(ok->isEnabled());
    QVERIFY(problem->isHidden());

    const auto type = [&dialog](const QString &text) {
        QSpinBox *memory = dialog.memoryBox();
        memory->setFocus();
        memory->selectAll();
        QTest::keyClick(memory, Qt::Key_Backspace);
        QTest::keyClicks(memory, text);
    };
    // What is typed is what the dialog holds, however wrong, with the reason.
    type(u"100000"_s);
    QCOMPARE(dialog.memoryBox()->value(), 100000);
    QCOMPARE(dialog.spec().memoryMib, 100000);
    QVERIFY(!ok->isEnabled());
    QVERIFY(problem->isVisible());
    QCOMPARE(problem->text(), u"100000 MiB is too much: a sandbox may have at most 65536 MiB."_s);
    type(u"4000"_s);
    QCOMPARE(dialog.memoryBox()->value(), 4000);
    QCOMPARE(problem->text(), u"4000 MiB is more than this host can back (at most 3000 MiB)."_s);
    QVERIFY(!ok->isEnabled());
    type(u"32"_s);
    QCOMPARE(dialog.memoryBox()->value(), 32);
    QVERIFY2(problem->text().startsWith(u"32 MiB is too little"_s), qPrintable(problem->text()));
    QVERIFY(!ok->isEnabled());
    // Above what is available now but within what the host can back: allowed, with a note.
    type(u"2000"_s);
    QVERIFY(ok->isEnabled());
    QVERIFY2(problem->text().contains(u"1000 MiB available now"_s), qPrintable(problem->text()));
    type(u"512"_s);
    QVERIFY(ok->isEnabled());
    QVERIFY(problem->isHidden());
    QCOMPARE(dialog.spec().memoryMib, 512);
    QTRY_VERIFY2(clipping(host, buttons).isEmpty(), qPrintable(clipping(host, buttons)));
}

void TestSandboxDetails::egressReasonsInWordsAndCountsWhatIsShown()
{
    // fresh: 3 allowed, a private destination and an IP literal denied; stale: 4 denied.
    qint64 seq = 100;
    for (int i = 0; i < 3; ++i)
        m_transport->push(u"egress.event"_s,
                          liveEvent(u"fresh"_s, ++seq, true, u"allowed"_s, u"pkg.test"_s));
    m_transport->push(
        u"egress.event"_s,
        liveEvent(u"fresh"_s, ++seq, false, u"private_destination"_s, u"intra.test"_s));
    m_transport->push(u"egress.event"_s,
                      liveEvent(u"fresh"_s, ++seq, false, u"ip_literal"_s, u"10.0.0.7"_s));
    for (int i = 0; i < 4; ++i)
        m_transport->push(
            u"egress.event"_s,
            liveEvent(u"stale"_s, ++seq, false, u"host_not_allowed"_s, u"evil.test"_s));
    EgressView *egress = m_window->egressView();
    // Repeats share a row (pkg.test 3 times, evil.test 4 times), the footer counts each one.
    QTRY_COMPARE(egress->events()->rowCount(), 4);
    QTRY_COMPARE(egress->summary(), u"Decisions: 9, denied: 6"_s);

    // The reasons in words in the table, never the codes.
    QTableView *table = egress->eventTable();
    QStringList reasons;
    for (int row = 0; row < table->model()->rowCount(); ++row)
        reasons << table->model()->index(row, EgressEventModel::ReasonColumn).data().toString();
    QVERIFY2(reasons.contains(u"Resolves to a private address"_s), qPrintable(reasons.join(u", ")));
    QVERIFY2(reasons.contains(u"IP address instead of a name"_s), qPrintable(reasons.join(u", ")));
    for (const QString &reason : std::as_const(reasons))
        QVERIFY2(!reason.contains(u'_'), qPrintable(reason));

    // The footer counts what the filters show, and says of how many.
    egress->setSandbox(u"fresh"_s);
    QTRY_COMPARE(egress->summary(), u"Decisions shown: 5 of 9, denied: 2"_s);
    QComboBox *verdict = nullptr;
    for (QComboBox *box : egress->findChildren<QComboBox *>()) {
        if (box->accessibleName() == u"Verdict filter"_s)
            verdict = box;
    }
    QVERIFY(verdict);
    verdict->setCurrentIndex(verdict->findText(u"Denied"_s));
    QTRY_COMPARE(egress->summary(), u"Decisions shown: 2 of 9, denied: 2"_s);
    QLineEdit *text = nullptr;
    for (QLineEdit *edit : egress->findChildren<QLineEdit *>()) {
        if (edit->accessibleName() == u"Text filter"_s)
            text = edit;
    }
    QVERIFY(text);
    QTest::keyClicks(text, u"private address"_s); // the words are searched too
    QTRY_COMPARE(egress->summary(), u"Decisions shown: 1 of 9, denied: 1"_s);
    QCOMPARE(table->model()->rowCount(), 1);
    text->clear();
    verdict->setCurrentIndex(0);
    egress->setSandbox(QString());
    QTRY_COMPARE(egress->summary(), u"Decisions: 9, denied: 6"_s);
    // A live decision while filtered counts at once.
    egress->setSandbox(u"stale"_s);
    QTRY_COMPARE(egress->summary(), u"Decisions shown: 4 of 9, denied: 4"_s);
    m_transport->push(u"egress.event"_s,
                      liveEvent(u"stale"_s, ++seq, true, u"allowed"_s, u"pkg.test"_s));
    QTRY_COMPARE(egress->summary(), u"Decisions shown: 5 of 10, denied: 4"_s);
    // A summary of the gateway's event rate limit counts as the decisions it stands for.
    QJsonObject flood = liveEvent(u"stale"_s, ++seq, false, u"host_not_allowed"_s, u"evil.test"_s);
    QJsonObject summarized = flood.value(u"event"_s).toObject();
    summarized.insert(u"count"_s, 30);
    flood.insert(u"event"_s, summarized);
    m_transport->push(u"egress.event"_s, flood);
    QTRY_COMPARE(egress->summary(), u"Decisions shown: 35 of 40, denied: 34"_s);
}

void TestSandboxDetails::columnsThatMatterFitAtTheDefaultSize()
{
    QTRY_COMPARE(m_window->size(), MainWindow::defaultSize());
    // The longest values a row holds: 64 GiB, weeks of uptime.
    Sandbox big = sandbox(u"fresh"_s, StartSource::Boot);
    big.spec.memoryMib = 65536;
    big.startedAt = QDateTime::currentDateTimeUtc().addSecs(-(999 * 3600 + 59 * 60));
    m_transport->push(u"sandbox.changed"_s, {{u"sandbox"_s, big.toJson()}});
    QTRY_COMPARE(m_window->model()
                     ->index(m_window->model()->rowOf(u"fresh"_s), SandboxTableModel::MemoryColumn)
                     .data()
                     .toString(),
                 u"65536 MiB"_s);
    QTableView *sandboxes = m_window->table();
    for (int column : {int(SandboxTableModel::StateColumn), int(SandboxTableModel::MemoryColumn),
                       int(SandboxTableModel::UptimeColumn)})
        QTRY_VERIFY2(cutCells(sandboxes, column).isEmpty(),
                     qPrintable(cutCells(sandboxes, column).join(u"; ")));

    // Egress: the reasons the policy gives, a repeat count, the common refusals.
    qint64 seq = 200;
    for (int i = 0; i < 12; ++i)
        m_transport->push(
            u"egress.event"_s,
            liveEvent(u"stale"_s, ++seq, false, u"host_not_allowed"_s, u"evil.test"_s));
    for (const QString &reason : {u"port_not_allowed"_s, u"method_not_allowed"_s,
                                  u"path_not_allowed"_s, u"private_destination"_s, u"ip_literal"_s})
        m_transport->push(u"egress.event"_s,
                          liveEvent(u"fresh"_s, ++seq, false, reason, u"pkg.test"_s));
    m_transport->push(u"egress.event"_s,
                      liveEvent(u"fresh"_s, ++seq, true, u"allowed"_s, u"pkg.test"_s));
    EgressView *egress = m_window->egressView();
    QTRY_COMPARE(egress->events()->rowCount(), 7);
    m_window->sections()->setCurrentWidget(egress);
    QTableView *events = egress->eventTable();
    QTRY_VERIFY(events->isVisible());
    for (int column : {int(EgressEventModel::VerdictColumn), int(EgressEventModel::ReasonColumn)})
        QTRY_VERIFY2(cutCells(events, column).isEmpty(),
                     qPrintable(cutCells(events, column).join(u"; ")));
    // With one sandbox chosen (the Sandbox column hidden) too.
    egress->setSandbox(u"fresh"_s);
    QTRY_VERIFY2(cutCells(events, EgressEventModel::ReasonColumn).isEmpty(),
                 qPrintable(cutCells(events, EgressEventModel::ReasonColumn).join(u"; ")));
    egress->setSandbox(QString());

    // Denied: per destination, and per credential binding.
    auto *sideTabs = egress->countTable()->parentWidget();
    while (sideTabs && !qobject_cast<QTabWidget *>(sideTabs))
        sideTabs = sideTabs->parentWidget();
    QVERIFY(sideTabs);
    qobject_cast<QTabWidget *>(sideTabs)->setCurrentWidget(egress->countTable());
    QTRY_VERIFY(egress->countTable()->isVisible());
    QTRY_VERIFY2(
        cutCells(egress->countTable(), DestinationCountModel::DeniedColumn).isEmpty(),
        qPrintable(
            cutCells(egress->countTable(), DestinationCountModel::DeniedColumn).join(u"; ")));
    m_window->sections()->setCurrentWidget(m_window->credentialsView());
    QTableView *bindings = m_window->credentialsView()->bindingTable();
    QTRY_VERIFY(bindings->isVisible());
    QTRY_COMPARE(bindings->model()->rowCount(), 1);
    QTRY_VERIFY2(cutCells(bindings, BindingTableModel::DeniedColumn).isEmpty(),
                 qPrintable(cutCells(bindings, BindingTableModel::DeniedColumn).join(u"; ")));
}

void TestSandboxDetails::namesStayReadableAtTheMinimumSize()
{
    // A name of a usual length, badge and all.
    m_transport->push(
        u"sandbox.changed"_s,
        {{u"sandbox"_s, sandbox(u"agent-frontend-2026"_s, StartSource::Boot).toJson()}});
    QTRY_VERIFY(m_window->model()->rowOf(u"agent-frontend-2026"_s) >= 0);
    m_window->resize(100, 100); // smaller than allowed: the minimum size applies
    QTRY_COMPARE(m_window->size(), m_window->minimumSize());
    QVERIFY(m_window->minimumSize().width() >= MainWindow::minimumWindowSize().width());
    QVERIFY(m_window->minimumSize().height() >= MainWindow::minimumWindowSize().height());
    QTRY_VERIFY2(
        cutCells(m_window->table(), SandboxTableModel::NameColumn).isEmpty(),
        qPrintable(cutCells(m_window->table(), SandboxTableModel::NameColumn).join(u"; ")));
}

QTEST_MAIN(TestSandboxDetails)
#include "tst_sandboxdetails.moc"

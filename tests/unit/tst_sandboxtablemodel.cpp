#include "eventloop.h"
#include "ui/sandboxtablemodel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

using airlock::SandboxTableModel;

namespace {

QJsonObject sandboxJson(const QString &name, const QString &state, int vcpus = 1,
                        int memoryMib = 256, const QString &startedAt = {})
{
    return QJsonObject {
        {QStringLiteral("name"), name},
        {QStringLiteral("vcpus"), vcpus},
        {QStringLiteral("memoryMib"), memoryMib},
        {QStringLiteral("image"), QStringLiteral("default")},
        {QStringLiteral("state"), state},
        {QStringLiteral("stateReason"), QString()},
        {QStringLiteral("acceleration"), QStringLiteral("tcg")},
        {QStringLiteral("accelerationWarning"), QStringLiteral("nested KVM failed")},
        {QStringLiteral("createdAt"), QStringLiteral("2026-01-01T10:00:00.000Z")},
        {QStringLiteral("startedAt"),
         startedAt.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(startedAt)},
        {QStringLiteral("vmmPid"), state == QLatin1String("running") ? 4242 : 0},
    };
}

QJsonObject changed(const QJsonObject &sandbox)
{
    return QJsonObject {{QStringLiteral("sandbox"), sandbox}};
}

QString cell(const SandboxTableModel &model, int row, int column)
{
    return model.index(row, column).data().toString();
}

} // namespace

/// The sandbox table fed by `sandbox.list` and helper notifications, under
/// QAbstractItemModelTester the whole time.
class TestSandboxTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void listFillsSortedRows();
    void changedUpdatesRow();
    void changedInsertsInOrder();
    void removedDropsRow();
    void unrelatedNotificationIgnored();
    void malformedNotificationReported();
    void malformedListRejected();
    void uptimeOnlyWhileRunning();
    void formatUptime_data();
    void formatUptime();

private:
    std::unique_ptr<SandboxTableModel> m_model;
    std::unique_ptr<QAbstractItemModelTester> m_tester;
};

void TestSandboxTableModel::init()
{
    m_model = std::make_unique<SandboxTableModel>();
    m_tester = std::make_unique<QAbstractItemModelTester>(
        m_model.get(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QJsonObject list {
        {QStringLiteral("sandboxes"),
         QJsonArray {sandboxJson(QStringLiteral("web"), QStringLiteral("stopped")),
                     sandboxJson(QStringLiteral("agent"), QStringLiteral("running"), 2, 512,
                                 QStringLiteral("2026-01-01T10:00:00.000Z"))}}};
    QSignalSpy loaded(m_model.get(), &SandboxTableModel::loaded);
    QVERIFY(m_model->resetFromList(list).has_value());
    QCOMPARE(loaded.count(), 1);
}

void TestSandboxTableModel::cleanup()
{
    m_tester.reset();
    m_model.reset();
}

void TestSandboxTableModel::listFillsSortedRows()
{
    QVERIFY(m_model->isLoaded());
    QCOMPARE(m_model->rowCount(), 2);
    QCOMPARE(m_model->columnCount(), int(SandboxTableModel::ColumnCount));
    QCOMPARE(cell(*m_model, 0, SandboxTableModel::NameColumn), QStringLiteral("agent"));
    QCOMPARE(cell(*m_model, 0, SandboxTableModel::StateColumn), QStringLiteral("Running"));
    QCOMPARE(cell(*m_model, 0, SandboxTableModel::AccelerationColumn),
             QStringLiteral("TCG (software)"));
    QCOMPARE(cell(*m_model, 0, SandboxTableModel::VcpusColumn), QStringLiteral("2"));
    QCOMPARE(cell(*m_model, 0, SandboxTableModel::MemoryColumn), QStringLiteral("512 MiB"));
    QCOMPARE(cell(*m_model, 1, SandboxTableModel::NameColumn), QStringLiteral("web"));
    QCOMPARE(cell(*m_model, 1, SandboxTableModel::StateColumn), QStringLiteral("Stopped"));
    QCOMPARE(
        m_model->index(0, SandboxTableModel::AccelerationColumn).data(Qt::ToolTipRole).toString(),
        QStringLiteral("nested KVM failed"));
    QCOMPARE(m_model->index(1, 3).data(SandboxTableModel::NameRole).toString(),
             QStringLiteral("web"));
    QCOMPARE(m_model->headerData(SandboxTableModel::UptimeColumn, Qt::Horizontal).toString(),
             QStringLiteral("Uptime"));
    QCOMPARE(m_model->rowOf(QStringLiteral("web")), 1);
    QCOMPARE(m_model->rowOf(QStringLiteral("nope")), -1);
}

void TestSandboxTableModel::changedUpdatesRow()
{
    QSignalSpy dataChanged(m_model.get(), &QAbstractItemModel::dataChanged);
    m_model->handleNotification(
        QStringLiteral("sandbox.changed"),
        changed(sandboxJson(QStringLiteral("web"), QStringLiteral("running"), 1, 256,
                            QStringLiteral("2026-01-01T10:00:00.000Z"))));
    QCOMPARE(m_model->rowCount(), 2);
    QCOMPARE(cell(*m_model, 1, SandboxTableModel::StateColumn), QStringLiteral("Running"));
    QVERIFY(!dataChanged.isEmpty());
    QCOMPARE(dataChanged.constFirst().at(0).toModelIndex().row(), 1);

    // The same state again is not a change.
    dataChanged.clear();
    m_model->handleNotification(
        QStringLiteral("sandbox.changed"),
        changed(sandboxJson(QStringLiteral("web"), QStringLiteral("running"), 1, 256,
                            QStringLiteral("2026-01-01T10:00:00.000Z"))));
    QCOMPARE(dataChanged.count(), 0);
}

void TestSandboxTableModel::changedInsertsInOrder()
{
    QSignalSpy inserted(m_model.get(), &QAbstractItemModel::rowsInserted);
    m_model->handleNotification(
        QStringLiteral("sandbox.changed"),
        changed(sandboxJson(QStringLiteral("demo"), QStringLiteral("stopped"))));
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.constFirst().at(1).toInt(), 1);
    QCOMPARE(m_model->rowCount(), 3);
    QCOMPARE(cell(*m_model, 0, 0), QStringLiteral("agent"));
    QCOMPARE(cell(*m_model, 1, 0), QStringLiteral("demo"));
    QCOMPARE(cell(*m_model, 2, 0), QStringLiteral("web"));
    m_model->handleNotification(
        QStringLiteral("sandbox.changed"),
        changed(sandboxJson(QStringLiteral("zz"), QStringLiteral("stopped"))));
    QCOMPARE(cell(*m_model, 3, 0), QStringLiteral("zz"));
}

void TestSandboxTableModel::removedDropsRow()
{
    QSignalSpy removed(m_model.get(), &QAbstractItemModel::rowsRemoved);
    m_model->handleNotification(QStringLiteral("sandbox.removed"),
                                {{QStringLiteral("name"), QStringLiteral("agent")}});
    QCOMPARE(removed.count(), 1);
    QCOMPARE(m_model->rowCount(), 1);
    QCOMPARE(cell(*m_model, 0, 0), QStringLiteral("web"));
    // Removing an unknown name is harmless.
    m_model->handleNotification(QStringLiteral("sandbox.removed"),
                                {{QStringLiteral("name"), QStringLiteral("agent")}});
    QCOMPARE(removed.count(), 1);
}

void TestSandboxTableModel::unrelatedNotificationIgnored()
{
    QSignalSpy reset(m_model.get(), &QAbstractItemModel::modelReset);
    QSignalSpy dataChanged(m_model.get(), &QAbstractItemModel::dataChanged);
    m_model->handleNotification(QStringLiteral("console.output"),
                                {{QStringLiteral("sandbox"), QStringLiteral("web")},
                                 {QStringLiteral("seq"), 1},
                                 {QStringLiteral("data"), QStringLiteral("aGk=")}});
    QCOMPARE(reset.count(), 0);
    QCOMPARE(dataChanged.count(), 0);
    QCOMPARE(m_model->rowCount(), 2);
}

void TestSandboxTableModel::malformedNotificationReported()
{
    QSignalSpy failed(m_model.get(), &SandboxTableModel::loadFailed);
    QJsonObject bad = sandboxJson(QStringLiteral("web"), QStringLiteral("running"));
    bad.insert(QStringLiteral("vcpus"), QStringLiteral("two"));
    m_model->handleNotification(QStringLiteral("sandbox.changed"), changed(bad));
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.constFirst().at(0).toString().contains(QStringLiteral("vcpus")));
    QCOMPARE(cell(*m_model, 1, SandboxTableModel::StateColumn), QStringLiteral("Stopped"));
}

void TestSandboxTableModel::malformedListRejected()
{
    const QJsonObject list {
        {QStringLiteral("sandboxes"),
         QJsonArray {sandboxJson(QStringLiteral("ok"), QStringLiteral("stopped")),
                     QJsonObject {{QStringLiteral("name"), 5}}}}};
    QVERIFY(!m_model->resetFromList(list).has_value());
    QCOMPARE(m_model->rowCount(), 2); // the old rows stay
}

void TestSandboxTableModel::uptimeOnlyWhileRunning()
{
    QVERIFY(!cell(*m_model, 0, SandboxTableModel::UptimeColumn).isEmpty());
    QCOMPARE(cell(*m_model, 1, SandboxTableModel::UptimeColumn), QString());

    // The running row's uptime text is refreshed by the 1 s timer (shortened here), without new
    // notifications.
    auto *uptime = m_model->findChild<QTimer *>(QStringLiteral("uptime"));
    QVERIFY(uptime && uptime->isActive());
    uptime->setInterval(20);
    QSignalSpy dataChanged(m_model.get(), &QAbstractItemModel::dataChanged);
    QTRY_VERIFY_WITH_TIMEOUT(!dataChanged.isEmpty(), 3000);
    const QModelIndex first = dataChanged.constFirst().at(0).toModelIndex();
    QCOMPARE(first.row(), 0);
    QCOMPARE(first.column(), int(SandboxTableModel::UptimeColumn));

    // With nothing running the timer stops.
    m_model->handleNotification(
        QStringLiteral("sandbox.changed"),
        changed(sandboxJson(QStringLiteral("agent"), QStringLiteral("stopped"), 2, 512)));
    dataChanged.clear();
    QVERIFY(!uptime->isActive());
    QVERIFY(airlock::test::runUntilIdle());
    QCOMPARE(dataChanged.count(), 0);
}

void TestSandboxTableModel::formatUptime_data()
{
    QTest::addColumn<int>("seconds");
    QTest::addColumn<QString>("expected");
    QTest::newRow("zero") << 0 << QStringLiteral("0 s");
    QTest::newRow("seconds") << 42 << QStringLiteral("42 s");
    QTest::newRow("minutes") << 187 << QStringLiteral("3 min 07 s");
    QTest::newRow("hours") << 3723 << QStringLiteral("1 h 02 min");
    QTest::newRow("days as hours") << 90000 << QStringLiteral("25 h 00 min");
    QTest::newRow("clock skew") << -5 << QStringLiteral("0 s");
}

void TestSandboxTableModel::formatUptime()
{
    QFETCH(int, seconds);
    QFETCH(QString, expected);
    const QDateTime start =
        QDateTime::fromString(QStringLiteral("2026-01-01T10:00:00.000Z"), Qt::ISODateWithMs);
    QCOMPARE(SandboxTableModel::formatUptime(start, start.addSecs(seconds)), expected);
    QCOMPARE(SandboxTableModel::formatUptime(QDateTime(), start), QString());
}

QTEST_GUILESS_MAIN(TestSandboxTableModel)
#include "tst_sandboxtablemodel.moc"

#include "core/daemon/registry.h"
#include "core/snapshot/snapshotarchive.h"

#include <QDir>
#include <QProcess>
#include <QRandomGenerator>
#include <QSet>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

using namespace airlock;

namespace {

const QString kWriter =
    QStringLiteral(AIRLOCK_BINARY_DIR "/tests/integration/snapshot_crash_writer");

struct Outcome
{
    bool killed = false;
    int steps = 0;
    QString id;
};

Outcome runWriter(const QString &dir, const QString &mode, const QString &arg, int killAt)
{
    QProcess process;
    process.start(kWriter, {dir, mode, arg, QString::number(killAt)});
    process.waitForFinished(60000);
    Outcome outcome;
    outcome.killed = process.exitStatus() == QProcess::CrashExit; // SIGKILL from its own step hook
    const QList<QByteArray> words = process.readAllStandardOutput().trimmed().split(' ');
    if (!outcome.killed && (process.exitCode() != 0 || words.size() != 4))
        qWarning("writer failed: %s", process.readAllStandardError().constData());
    if (words.size() == 4) {
        outcome.steps = words[1].toInt();
        outcome.id = QString::fromLatin1(words[3]);
    }
    return outcome;
}

/// Copies a state dir (registry + store) so each kill point starts from the same state.
bool copyTree(const QString &from, const QString &to)
{
    return QProcess::execute(QStringLiteral("cp"), {QStringLiteral("-a"), from, to}) == 0;
}

QByteArray objectBytes(SnapshotStore &store, const QString &id, const QString &name)
{
    auto manifest = store.manifest(id);
    if (!manifest || !manifest->find(name))
        return {};
    QTemporaryFile file;
    if (!file.open() || !store.writeObjectTo(*manifest->find(name), file.handle()))
        return {};
    file.seek(0);
    return file.readAll();
}

QByteArray expectedMemory(int generation)
{
    QByteArray data(1024 * 1024, '\0');
    QRandomGenerator(7).fillRange(reinterpret_cast<quint32 *>(data.data()), data.size() / 4);
    QRandomGenerator(100 + quint32(generation))
        .fillRange(reinterpret_cast<quint32 *>(data.data()), 256 * 1024 / 4);
    return data;
}

} // namespace

class TestSnapshotCrash : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void killDuringCreate();
    void killDuringDeleteAndCollect();

private:
    /// What airlockd does on start (reconcile), then the checks of the issue: the store
    /// verifies, registry rows and manifests agree, committed snapshots hold their bytes.
    void checkAfterCrash(const QString &dir, const QMap<QString, int> &mustExist, int point);

    QTemporaryDir m_root;
    QString m_baseline; ///< one committed snapshot of generation 1
    QString m_baselineId;
};

void TestSnapshotCrash::initTestCase()
{
    QVERIFY(QFileInfo(kWriter).isExecutable());
    m_baseline = m_root.filePath(QStringLiteral("baseline"));
    QVERIFY(QDir().mkpath(m_baseline));
    const Outcome first = runWriter(m_baseline, QStringLiteral("create"), QStringLiteral("1"), 0);
    QVERIFY(!first.killed);
    QVERIFY(first.steps > 10);
    m_baselineId = first.id;
}

void TestSnapshotCrash::checkAfterCrash(const QString &dir, const QMap<QString, int> &mustExist,
                                        int point)
{
    const QString where = QStringLiteral("kill point %1").arg(point);
    // A crash can also hit the reconcile of the next start: kill that too, at a few points.
    runWriter(dir, QStringLiteral("reconcile"), QStringLiteral("-"), 1 + point % 3);
    auto registry = Registry::open(QDir(dir).filePath(QStringLiteral("registry.sqlite")));
    auto store = SnapshotStore::open(QDir(dir).filePath(QStringLiteral("store")));
    QVERIFY2(registry && store, qPrintable(where));
    SnapshotCatalog catalog((*registry)->connectionName());
    SnapshotArchive archive(**store, catalog);
    auto reconciled = archive.reconcile();
    QVERIFY2(reconciled, qPrintable(where));
    const auto report = (*store)->verify();
    QVERIFY2(report.ok(), qPrintable(where + u' ' + report.problems.join(u'\n')));
    QCOMPARE(report.unreferencedChunks, 0);
    QStringList rows;
    const auto listed = catalog.list();
    QVERIFY2(listed, qPrintable(where));
    for (const Snapshot &row : *listed)
        rows.append(row.id);
    rows.sort();
    QVERIFY2(rows == (*store)->manifestIds(), qPrintable(where));
    for (auto it = mustExist.begin(); it != mustExist.end(); ++it) {
        QVERIFY2(rows.contains(it.key()), qPrintable(where + QStringLiteral(" lost ") + it.key()));
        QVERIFY2(objectBytes(**store, it.key(), QStringLiteral("memory"))
                     == expectedMemory(it.value()),
                 qPrintable(where));
    }
    for (const QString &id : rows) {
        if (mustExist.contains(id))
            continue;
        // A snapshot that made it through holds exactly generation 2.
        QVERIFY2(objectBytes(**store, id, QStringLiteral("memory")) == expectedMemory(2),
                 qPrintable(where));
        QCOMPARE(catalog.head(QStringLiteral("crash")).isEmpty(), false);
    }
    QVERIFY(QDir(QDir(dir).filePath(QStringLiteral("store/tmp"))).isEmpty());
    QVERIFY(QDir(QDir(dir).filePath(QStringLiteral("store/pending"))).isEmpty());
}

void TestSnapshotCrash::killDuringCreate()
{
    int completedAt = 0;
    for (int killAt = 1; killAt < 500 && completedAt == 0; ++killAt) {
        const QString dir = m_root.filePath(QStringLiteral("create-%1").arg(killAt));
        QVERIFY(copyTree(m_baseline, dir));
        const Outcome outcome =
            runWriter(dir, QStringLiteral("create"), QStringLiteral("2"), killAt);
        if (!outcome.killed)
            completedAt = killAt;
        checkAfterCrash(dir, {{m_baselineId, 1}}, killAt);
        if (QTest::currentTestFailed())
            return;
        QDir(dir).removeRecursively();
    }
    qInfo("create: killed at each of %d steps", completedAt - 1);
    QVERIFY(completedAt > 20); // 16 new chunks staged and published, manifest, row, head
}

void TestSnapshotCrash::killDuringDeleteAndCollect()
{
    // Two snapshots; delete the older one and collect its chunks, killed at every step.
    const QString withTwo = m_root.filePath(QStringLiteral("two"));
    QVERIFY(copyTree(m_baseline, withTwo));
    const Outcome second = runWriter(withTwo, QStringLiteral("create"), QStringLiteral("2"), 0);
    QVERIFY(!second.killed && !second.id.isEmpty());
    int completedAt = 0;
    for (int killAt = 1; killAt < 500 && completedAt == 0; ++killAt) {
        const QString dir = m_root.filePath(QStringLiteral("delete-%1").arg(killAt));
        QVERIFY(copyTree(withTwo, dir));
        const Outcome outcome = runWriter(dir, QStringLiteral("delete"), m_baselineId, killAt);
        if (!outcome.killed)
            completedAt = killAt;
        // The baseline may or may not be gone; the second must be intact either way.
        checkAfterCrash(dir, {{second.id, 2}}, killAt);
        if (QTest::currentTestFailed())
            return;
        QDir(dir).removeRecursively();
    }
    qInfo("delete + collect: killed at each of %d steps", completedAt - 1);
    QVERIFY(completedAt > 10);
}

QTEST_GUILESS_MAIN(TestSnapshotCrash)
#include "tst_snapshotcrash.moc"

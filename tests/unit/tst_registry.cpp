#include "core/daemon/registry.h"
#include "resultcheck.h"

#include "core/daemon/secretowners.h"

#include "core/model/egresspolicy.h"

#include <QElapsedTimer>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using airlock::Registry;
using airlock::SandboxRecord;

namespace {

SandboxRecord makeRecord(const QString &name)
{
    SandboxRecord record;
    record.sandbox.spec.name = name;
    record.sandbox.spec.vcpus = 2;
    record.sandbox.spec.memoryMib = 512;
    record.sandbox.spec.image = QStringLiteral("default");
    // The helper always stores a backend (SandboxService::create fills in its default).
    record.sandbox.spec.vmm = airlock::VmmKind::Qemu;
    record.sandbox.createdAt =
        QDateTime::fromString(QStringLiteral("2024-05-01T10:20:30.456Z"), Qt::ISODateWithMs);
    return record;
}

/// Runs SQL on a file with a private connection, as a foreign tool (or an old helper) would.
void rawExec(const QString &path, const QStringList &statements)
{
    {
        QSqlDatabase db =
            QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery query(db);
        for (const QString &statement : statements)
            QVERIFY2(query.exec(statement), qPrintable(statement));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("raw"));
}

} // namespace

class TestRegistry : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void freshFileIsMigratedFromVersionZero();
    void roundTrip();
    void persistsAcrossReopen();
    void duplicateAndMissingRows();
    void failedMigrationRollsBack();
    void newerSchemaIsRefused();
    void twoRegistriesAtOnce();
    void versionOneIsMigratedToDenyAllPolicies();
    void policyRoundTrip();
    void unreadablePolicyFallsBackToDenyAll();
    void egressHistoryIsBoundedPerSandbox();
    void egressBatchIsOneTransaction();
    void linkIndexRoundTrip();
    void secretOwnersAfterUpgrade();
    void vmmKindRoundTripAndUpgrade();
    void labelsRoundTrip();

private:
    QString path() const { return m_dir->filePath(QStringLiteral("registry.sqlite")); }
    std::unique_ptr<QTemporaryDir> m_dir;
};

void TestRegistry::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void TestRegistry::freshFileIsMigratedFromVersionZero()
{
    // An empty SQLite file has user_version 0.
    rawExec(path(), {QStringLiteral("CREATE TABLE unrelated (x)")});
    auto registry = Registry::open(path());
    QVERIFY_RESULT(registry);
    QCOMPARE((*registry)->schemaVersion(), int(Registry::migrations().size()));
    auto records = (*registry)->load();
    QVERIFY(records);
    QVERIFY(records->isEmpty());
}

void TestRegistry::roundTrip()
{
    auto registry = Registry::open(path());
    QVERIFY(registry);
    SandboxRecord running = makeRecord(QStringLiteral("beta"));
    running.sandbox.state = airlock::SandboxState::Running;
    running.sandbox.acceleration = airlock::Acceleration::Tcg;
    running.sandbox.accelerationWarning = QStringLiteral("KVM probe failed");
    running.sandbox.startedAt =
        QDateTime::fromString(QStringLiteral("2024-05-01T11:00:00.001Z"), Qt::ISODateWithMs);
    running.sandbox.vmmPid = 4242;
    running.sandbox.startedFrom = airlock::StartSource::Template;
    running.sandbox.identityWarning = QStringLiteral("the guest did not confirm its new identity");
    running.runtime = {4242, 987654321, QStringLiteral("/var/lib/airlock/run/beta")};
    SandboxRecord stopped = makeRecord(QStringLiteral("alpha"));
    stopped.sandbox.stateReason = QStringLiteral("VMM exited while airlockd was not running");
    stopped.sandbox.spec.boot = airlock::BootMode::Cold;

    auto inserted = (*registry)->insert(running);
    QVERIFY_RESULT(inserted);
    QVERIFY((*registry)->insert(stopped));
    auto records = (*registry)->load();
    QVERIFY(records);
    QCOMPARE(records->size(), 2);
    // Ordered by name.
    QCOMPARE(records->at(0).sandbox, stopped.sandbox);
    QCOMPARE(records->at(1).sandbox, running.sandbox);
    QCOMPARE(records->at(1).runtime.pid, qint64(4242));
    QCOMPARE(records->at(1).runtime.startTimeTicks, qint64(987654321));
    QCOMPARE(records->at(1).runtime.runtimeDir, running.runtime.runtimeDir);

    running.sandbox.state = airlock::SandboxState::Stopped;
    running.sandbox.startedAt = QDateTime();
    running.sandbox.vmmPid = 0;
    running.sandbox.startedFrom = airlock::StartSource::None;
    running.sandbox.identityWarning.clear();
    running.runtime = {};
    QVERIFY((*registry)->update(running));
    records = (*registry)->load();
    QCOMPARE(records->at(1).sandbox, running.sandbox);
    QCOMPARE(records->at(1).runtime.pid, qint64(0));

    QVERIFY((*registry)->remove(QStringLiteral("alpha")));
    QCOMPARE((*registry)->load()->size(), 1);
}

void TestRegistry::persistsAcrossReopen()
{
    {
        auto registry = Registry::open(path());
        QVERIFY(registry);
        QVERIFY((*registry)->insert(makeRecord(QStringLiteral("keep"))));
    }
    auto reopened = Registry::open(path());
    QVERIFY(reopened);
    auto records = (*reopened)->load();
    QVERIFY(records);
    QCOMPARE(records->size(), 1);
    QCOMPARE(records->first().sandbox, makeRecord(QStringLiteral("keep")).sandbox);
}

void TestRegistry::duplicateAndMissingRows()
{
    auto registry = Registry::open(path());
    QVERIFY(registry);
    QVERIFY((*registry)->insert(makeRecord(QStringLiteral("one"))));
    auto duplicate = (*registry)->insert(makeRecord(QStringLiteral("one")));
    QVERIFY(!duplicate);
    QVERIFY2(duplicate.error().kind == airlock::ErrorKind::AlreadyExists,
             qPrintable(duplicate.error().message));
    auto update = (*registry)->update(makeRecord(QStringLiteral("two")));
    QVERIFY(!update);
    QCOMPARE(update.error().kind, airlock::ErrorKind::NotFound);
    auto removed = (*registry)->remove(QStringLiteral("two"));
    QVERIFY(!removed);
    QCOMPARE(removed.error().kind, airlock::ErrorKind::NotFound);
}

void TestRegistry::failedMigrationRollsBack()
{
    {
        auto registry = Registry::open(path());
        QVERIFY(registry);
        QVERIFY((*registry)->insert(makeRecord(QStringLiteral("survivor"))));
    }
    // A future migration whose second statement fails: the first must not stick either.
    QList<Registry::Migration> migrations = Registry::migrations();
    migrations.append({QStringLiteral("ALTER TABLE sandboxes ADD COLUMN notes TEXT"),
                       QStringLiteral("THIS IS NOT SQL")});
    auto broken = Registry::open(path(), migrations);
    QVERIFY(!broken);
    QCOMPARE(broken.error().kind, airlock::ErrorKind::OperationFailed);

    auto registry = Registry::open(path());
    QVERIFY(registry);
    QCOMPARE((*registry)->schemaVersion(), int(Registry::migrations().size()));
    QCOMPARE((*registry)->load()->size(), 1);
    // The column of the failed migration does not exist, so a correct migration still applies.
    registry->reset();
    migrations.last() = {QStringLiteral("ALTER TABLE sandboxes ADD COLUMN notes TEXT")};
    auto upgraded = Registry::open(path(), migrations);
    QVERIFY_RESULT(upgraded);
    QCOMPARE((*upgraded)->schemaVersion(), int(migrations.size()));
    QCOMPARE((*upgraded)->load()->first().sandbox.spec.name, QStringLiteral("survivor"));
}

void TestRegistry::newerSchemaIsRefused()
{
    rawExec(path(),
            {QStringLiteral("PRAGMA user_version=%1").arg(Registry::migrations().size() + 5)});
    auto registry = Registry::open(path());
    QVERIFY(!registry);
    QCOMPARE(registry.error().kind, airlock::ErrorKind::OperationFailed);
    QVERIFY(registry.error().message.contains(QStringLiteral("newer")));
}

void TestRegistry::twoRegistriesAtOnce()
{
    auto first = Registry::open(path());
    auto second = Registry::open(m_dir->filePath(QStringLiteral("other.sqlite")));
    QVERIFY(first && second);
    QVERIFY((*first)->insert(makeRecord(QStringLiteral("in-first"))));
    QCOMPARE((*second)->load()->size(), 0);
    QCOMPARE((*first)->load()->size(), 1);
}

void TestRegistry::versionOneIsMigratedToDenyAllPolicies()
{
    // A file as the first airlockd wrote it: schema 1, one sandbox, no policy column.
    QStringList v1 = Registry::migrations().first();
    v1 << QStringLiteral("INSERT INTO sandboxes (name, vcpus, memory_mib, image, created_at) "
                         "VALUES ('old', 2, 512, 'default', '2024-05-01T10:20:30.456Z')")
       << QStringLiteral("PRAGMA user_version=1");
    rawExec(path(), v1);

    auto registry = Registry::open(path());
    QVERIFY_RESULT(registry);
    QCOMPARE((*registry)->schemaVersion(), int(Registry::migrations().size()));
    QVERIFY(Registry::migrations().size() >= 2);
    const auto records = (*registry)->load();
    QVERIFY(records);
    QCOMPARE(records->size(), 1);
    QCOMPARE(records->first().sandbox.spec.name, QStringLiteral("old"));
    QCOMPARE(records->first().sandbox.spec.memoryMib, 512);
    QCOMPARE(records->first().policy, airlock::EgressPolicy::denyAll());
    // A sandbox inserted without a policy of its own gets deny-all too.
    QVERIFY((*registry)->insert(makeRecord(QStringLiteral("new"))));
    QCOMPARE((*registry)->load()->first().sandbox.spec.name, QStringLiteral("new"));
    QCOMPARE((*registry)->load()->first().policy, airlock::EgressPolicy::denyAll());
}

void TestRegistry::policyRoundTrip()
{
    auto policy = airlock::EgressPolicy::fromJsonBytes(
        R"({"version": 1, "rules": [{"host": "*.pkg.test", "ports": [443, 8443],)"
        R"( "methods": ["GET"], "pathPrefixes": ["/simple/"], "comment": "c"}]})");
    QVERIFY(policy);
    {
        auto registry = Registry::open(path());
        QVERIFY(registry);
        SandboxRecord record = makeRecord(QStringLiteral("guarded"));
        QVERIFY((*registry)->insert(record));
        record.policy = *policy;
        QVERIFY((*registry)->update(record));
    }
    auto registry = Registry::open(path());
    QVERIFY(registry);
    QCOMPARE((*registry)->load()->first().policy, *policy);
    // The policy goes with the row.
    QVERIFY((*registry)->remove(QStringLiteral("guarded")));
    QVERIFY((*registry)->insert(makeRecord(QStringLiteral("guarded"))));
    QCOMPARE((*registry)->load()->first().policy, airlock::EgressPolicy::denyAll());
}

void TestRegistry::unreadablePolicyFallsBackToDenyAll()
{
    {
        auto registry = Registry::open(path());
        QVERIFY(registry);
        QVERIFY((*registry)->insert(makeRecord(QStringLiteral("edited"))));
    }
    rawExec(path(), {QStringLiteral("UPDATE sandboxes SET policy = '{\"version\": 7}'")});
    auto registry = Registry::open(path());
    QVERIFY(registry);
    QCOMPARE((*registry)->load()->first().policy, airlock::EgressPolicy::denyAll());
}

// airlockd stores the events of one event-loop turn together
// (docs/reviews/2026-12-01-credentials-redteam.md#f6): seqs in order, the bound applied per
// sandbox, and far faster than one transaction each.
void TestRegistry::egressBatchIsOneTransaction()
{
    auto registry = Registry::open(path());
    QVERIFY(registry);
    QList<std::pair<QString, QJsonObject>> batch;
    for (int i = 0; i < 5000; ++i)
        batch.append({i % 2 ? QStringLiteral("a") : QStringLiteral("b"),
                      QJsonObject {{QStringLiteral("n"), i}}});
    QElapsedTimer timer;
    timer.start();
    auto seqs = (*registry)->appendEgressBatch(batch, 1000);
    const qint64 batchMs = timer.elapsed();
    QVERIFY_RESULT(seqs);
    QCOMPARE(seqs->size(), 5000);
    QVERIFY(std::is_sorted(seqs->begin(), seqs->end()));
    auto a = (*registry)->egressHistory(QStringLiteral("a"), std::nullopt, 5000);
    QCOMPARE(a->size(), 1000);
    QCOMPARE(a->last().event.value(QStringLiteral("n")).toInt(), 4999);
    QCOMPARE(a->last().seq, seqs->last());
    QCOMPARE((*registry)->egressHistory(QStringLiteral("b"), std::nullopt, 5000)->size(), 1000);
    timer.restart();
    for (int i = 0; i < 500; ++i)
        QVERIFY((*registry)->appendEgress(QStringLiteral("c"),
                                          QJsonObject {{QStringLiteral("n"), i}}, 1000));
    const qint64 singleMs = timer.elapsed();
    qInfo("5000 events in one batch: %lld ms; 500 one by one: %lld ms", qlonglong(batchMs),
          qlonglong(singleMs));
    QCOMPARE((*registry)->appendEgressBatch({}, 10)->size(), 0);
}

void TestRegistry::egressHistoryIsBoundedPerSandbox()
{
    auto registry = Registry::open(path());
    QVERIFY(registry);
    auto event = [](int i) { return QJsonObject {{QStringLiteral("n"), i}}; };
    QList<qint64> seqs;
    for (int i = 0; i < 8; ++i) {
        // Interleaved with another sandbox: seqs are shared, bounds are not.
        auto seq = (*registry)->appendEgress(QStringLiteral("a"), event(i), 5);
        QVERIFY(seq);
        seqs.append(*seq);
        QVERIFY((*registry)->appendEgress(QStringLiteral("b"), event(100 + i), 5));
    }
    QVERIFY(std::is_sorted(seqs.begin(), seqs.end()));
    auto newest = (*registry)->egressHistory(QStringLiteral("a"), std::nullopt, 3);
    QVERIFY(newest);
    QCOMPARE(newest->size(), 3);
    QCOMPARE(newest->at(0).event.value(QStringLiteral("n")).toInt(), 5); // oldest first
    QCOMPARE(newest->at(2).event.value(QStringLiteral("n")).toInt(), 7);
    auto all = (*registry)->egressHistory(QStringLiteral("a"), std::nullopt, 100);
    QVERIFY(all);
    QCOMPARE(all->size(), 5); // bounded at 5 per sandbox
    QCOMPARE(all->first().event.value(QStringLiteral("n")).toInt(), 3);
    auto after = (*registry)->egressHistory(QStringLiteral("a"), seqs.at(5), 100);
    QVERIFY(after);
    QCOMPARE(after->size(), 2);
    QCOMPARE(after->first().seq, seqs.at(6));
    auto other = (*registry)->egressHistory(QStringLiteral("b"), std::nullopt, 100);
    QVERIFY(other);
    QCOMPARE(other->size(), 5);
    QCOMPARE(other->last().event.value(QStringLiteral("n")).toInt(), 107);
    // Deleting a sandbox deletes its history.
    QVERIFY((*registry)->insert(makeRecord(QStringLiteral("a"))));
    QVERIFY((*registry)->remove(QStringLiteral("a")));
    QCOMPARE((*registry)->egressHistory(QStringLiteral("a"), std::nullopt, 100)->size(), 0);
    QCOMPARE((*registry)->egressHistory(QStringLiteral("b"), std::nullopt, 100)->size(), 5);
}

void TestRegistry::linkIndexRoundTrip()
{
    auto registry = Registry::open(path());
    QVERIFY(registry);
    airlock::SandboxRecord record = makeRecord(QStringLiteral("linked"));
    QCOMPARE(record.linkIndex, -1);
    QVERIFY((*registry)->insert(record));
    record.linkIndex = 42;
    QVERIFY((*registry)->update(record));
    QCOMPARE((*registry)->load()->first().linkIndex, 42);
}

void TestRegistry::labelsRoundTrip()
{
    auto registry = Registry::open(path());
    QVERIFY_RESULT(registry);
    airlock::SandboxRecord record = makeRecord(QStringLiteral("labelled"));
    QVERIFY((*registry)->insert(record));
    QVERIFY((*registry)->load()->first().sandbox.spec.labels.isEmpty());
    record.sandbox.spec.labels = {{QStringLiteral("e2b.suite"), QStringLiteral("ci")},
                                  {QStringLiteral("owner"), QStringLiteral("ana \u00e9")}};
    QVERIFY((*registry)->update(record));
    QCOMPARE((*registry)->load()->first().sandbox.spec.labels, record.sandbox.spec.labels);
}

void TestRegistry::secretOwnersAfterUpgrade()
{
    // A registry at schema 7 (before owners): its secrets have no row and belong to root.
    {
        auto old = Registry::open(path(), Registry::migrations().mid(0, 7));
        QVERIFY(old);
        QCOMPARE((*old)->schemaVersion(), 7);
    }
    auto registry = Registry::open(path());
    QVERIFY_RESULT(registry);
    QCOMPARE((*registry)->schemaVersion(), int(Registry::migrations().size()));
    airlock::SecretOwners owners(**registry);
    QCOMPARE(owners.ownerOf(QStringLiteral("old-token")).value_or(99), uid_t(0));
    QVERIFY(owners.check(0, QStringLiteral("old-token"), QStringLiteral("bind it")));
    auto refused = owners.check(1001, QStringLiteral("old-token"), QStringLiteral("bind it"));
    QVERIFY(!refused);
    QCOMPARE(refused.error().kind, airlock::ErrorKind::PermissionDenied);
    QVERIFY2(refused.error().message.contains(QStringLiteral("belongs to root (uid 0)")),
             qPrintable(refused.error().message));
    QVERIFY(refused.error().message.contains(QStringLiteral("bind it")));

    // The first one to store a secret owns it; root may still do everything with it.
    QVERIFY(owners.setOwner(QStringLiteral("mine"), 1001));
    QCOMPARE(owners.ownerOf(QStringLiteral("mine")).value_or(99), uid_t(1001));
    QVERIFY(owners.check(1001, QStringLiteral("mine"), QStringLiteral("delete it")));
    QVERIFY(owners.check(0, QStringLiteral("mine"), QStringLiteral("delete it")));
    auto other = owners.check(1002, QStringLiteral("mine"), QStringLiteral("delete it"));
    QVERIFY(!other);
    QVERIFY2(other.error().message.contains(QStringLiteral("uid 1001")),
             qPrintable(other.error().message));
    QCOMPARE(owners.all()->value(QStringLiteral("mine")), uid_t(1001));
    // Deleted: the name is free again (a stale row is replaced by the next owner).
    QVERIFY(owners.forget(QStringLiteral("mine")));
    QCOMPARE(owners.ownerOf(QStringLiteral("mine")).value_or(99), uid_t(0));
    QVERIFY(owners.setOwner(QStringLiteral("mine"), 1002));
    QVERIFY(owners.setOwner(QStringLiteral("mine"), 1003));
    QCOMPARE(owners.ownerOf(QStringLiteral("mine")).value_or(99), uid_t(1003));
}

void TestRegistry::vmmKindRoundTripAndUpgrade()
{
    // A sandbox of a registry before the vmm column (schema 9, with labels) ran on QEMU.
    {
        auto old = Registry::open(path(), Registry::migrations().mid(0, 9));
        QVERIFY(old);
        QCOMPARE((*old)->schemaVersion(), 9);
    }
    rawExec(path(),
            {QStringLiteral("INSERT INTO sandboxes (name, vcpus, memory_mib, image, "
                            "created_at) VALUES ('older', 1, 256, 'default', "
                            "'2024-05-01T10:20:30.456Z')")});
    auto registry = Registry::open(path());
    QVERIFY_RESULT(registry);
    SandboxRecord record = makeRecord(QStringLiteral("newer"));
    record.sandbox.spec.vmm = airlock::VmmKind::Firecracker;
    QVERIFY((*registry)->insert(record));
    const auto loaded = (*registry)->load();
    QVERIFY(loaded);
    QCOMPARE(loaded->size(), 2);
    QCOMPARE(loaded->at(0).sandbox.spec.name, QStringLiteral("newer"));
    QCOMPARE(loaded->at(0).sandbox.spec.vmm, std::optional(airlock::VmmKind::Firecracker));
    QCOMPARE(loaded->at(1).sandbox.spec.vmm, std::optional(airlock::VmmKind::Qemu));
    record.sandbox.spec.vmm = airlock::VmmKind::Qemu;
    QVERIFY((*registry)->update(record));
    QCOMPARE((*registry)->load()->at(0).sandbox.spec.vmm, std::optional(airlock::VmmKind::Qemu));
}

QTEST_GUILESS_MAIN(TestRegistry)
#include "tst_registry.moc"

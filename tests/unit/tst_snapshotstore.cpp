#include "core/daemon/registry.h"
#include "core/snapshot/durablefile.h"
#include "core/snapshot/snapshotarchive.h"
#include "core/snapshot/snapshotcatalog.h"
#include "core/snapshot/snapshotstore.h"
#include "resultcheck.h"

#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QTest>

#include <fcntl.h>
#include <limits>
#include <unistd.h>

using namespace airlock;

namespace {

constexpr qint64 kChunk = SnapshotStore::kDefaultChunkSize;

/// Guest-memory-like bytes: random pages (incompressible), runs of zero and repeated pages.
QByteArray memoryImage(qint64 size, quint32 seed)
{
    QByteArray data(qsizetype(size), '\0');
    QRandomGenerator random(seed);
    for (qint64 offset = 0; offset < size; offset += 4096) {
        const quint32 kind = random.bounded(4u);
        if (kind == 0)
            continue; // zero page
        if (kind == 1) {
            std::memset(data.data() + offset, 0x5a, 4096); // the same page many times
            continue;
        }
        random.fillRange(reinterpret_cast<quint32 *>(data.data() + offset), 1024);
    }
    return data;
}

QByteArray restoreToBytes(const SnapshotStore &store, const Manifest::Object &object)
{
    QTemporaryFile file;
    if (!file.open())
        return {};
    if (auto ok = store.writeObjectTo(object, file.handle()); !ok)
        return {};
    file.seek(0);
    return file.readAll();
}

} // namespace

class TestSnapshotStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();
    void roundTripWithHolesAndDuplicates();
    void identicalSnapshotAddsNothing();
    void growthIsBoundedByWhatChanged();
    void verifyFindsDamagedAndMissingChunks();
    void garbageCollectionKeepsSharedChunks();
    void garbageCollectionWaitsForWriters();
    void abandonedWriterLeavesNoManifest();
    void objectFromFileMatchesObjectFromMemory();
    void writerRefusesToFillTheFileSystem();
    void manifestRejectsDamage_data();
    void manifestRejectsDamage();
    void catalogReparentsChildrenOnDelete();
    void reconcileRemovesUncommittedManifests();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<SnapshotStore> m_store;
};

void TestSnapshotStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    auto store = SnapshotStore::open(m_dir->filePath(QStringLiteral("store")));
    QVERIFY_RESULT(store);
    m_store = std::move(*store);
}

void TestSnapshotStore::cleanup()
{
    m_store.reset();
    m_dir.reset();
}

void TestSnapshotStore::roundTripWithHolesAndDuplicates()
{
    // Not a multiple of the chunk size: the last chunk is short.
    const QByteArray memory = memoryImage(4 * 1024 * 1024 + 5000, 1);
    const QByteArray state = QByteArray("device state ").repeated(1000);
    auto writer = m_store->begin(QStringLiteral("a1"));
    QVERIFY(writer);
    auto stats = (*writer)->addObject(QStringLiteral("memory"), memory);
    QVERIFY_RESULT(stats);
    QCOMPARE(stats->logicalBytes, memory.size());
    QVERIFY(stats->zeroBytes > 0);
    QVERIFY(stats->newBytes < memory.size() - stats->zeroBytes); // repeated pages stored once
    QVERIFY(stats->newStoredBytes < stats->newBytes); // zstd did something
    QVERIFY((*writer)->addObject(QStringLiteral("device-state"), state));
    QVERIFY((*writer)->commit());
    writer->reset();

    auto manifest = m_store->manifest(QStringLiteral("a1"));
    QVERIFY_RESULT(manifest);
    QCOMPARE(restoreToBytes(*m_store, *manifest->find(QStringLiteral("memory"))), memory);
    auto read = m_store->readObject(*manifest->find(QStringLiteral("device-state")), 1 << 20);
    QVERIFY(read);
    QCOMPARE(*read, state);
    QCOMPARE(m_store->manifestIds(), QStringList {QStringLiteral("a1")});
    const auto report = m_store->verify();
    QVERIFY2(report.ok(), qPrintable(report.problems.join(u'\n')));
    QCOMPARE(report.unreferencedChunks, 0);
    // readObject refuses more than the caller allows.
    QVERIFY(!m_store->readObject(*manifest->find(QStringLiteral("memory")), 1024));
}

void TestSnapshotStore::identicalSnapshotAddsNothing()
{
    const QByteArray memory = memoryImage(2 * 1024 * 1024, 2);
    for (const QString &id : {QStringLiteral("b1"), QStringLiteral("b2")}) {
        auto writer = m_store->begin(id);
        QVERIFY(writer);
        auto stats = (*writer)->addObject(QStringLiteral("memory"), memory);
        QVERIFY(stats);
        if (id == QStringLiteral("b2"))
            QCOMPARE(stats->newBytes, 0);
        QVERIFY((*writer)->commit());
    }
    QVERIFY(!m_store->begin(QStringLiteral("b1"))); // ids are unique
}

void TestSnapshotStore::growthIsBoundedByWhatChanged()
{
    // The rule: after N MiB are dirtied, the next snapshot adds at most 1.25 x N MiB.
    // Dirty regions start at page (not chunk) boundaries, as a guest's allocator places them.
    QByteArray memory = memoryImage(8 * 1024 * 1024, 3);
    auto first = m_store->begin(QStringLiteral("c1"));
    QVERIFY((*first)->addObject(QStringLiteral("memory"), memory));
    QVERIFY((*first)->commit());
    first->reset();

    QRandomGenerator random(4);
    const qint64 dirtied = 1024 * 1024;
    const qint64 start = 3 * 4096; // not chunk aligned
    random.fillRange(reinterpret_cast<quint32 *>(memory.data() + start), dirtied / 4);
    auto second = m_store->begin(QStringLiteral("c2"));
    auto stats = (*second)->addObject(QStringLiteral("memory"), memory);
    QVERIFY(stats);
    QVERIFY((*second)->commit());
    qInfo("dirtied %lld bytes; snapshot added %lld (%lld compressed)", dirtied, stats->newBytes,
          stats->newStoredBytes);
    QVERIFY(stats->newBytes >= dirtied);
    QVERIFY(stats->newBytes <= dirtied * 5 / 4);
}

void TestSnapshotStore::verifyFindsDamagedAndMissingChunks()
{
    const QByteArray memory = memoryImage(1024 * 1024, 5);
    auto writer = m_store->begin(QStringLiteral("d1"));
    QVERIFY((*writer)->addObject(QStringLiteral("memory"), memory));
    auto manifest = (*writer)->commit();
    QVERIFY(manifest);
    QVERIFY(m_store->verify().ok());

    std::vector<ChunkDigest> stored;
    for (const ChunkDigest &digest : manifest->objects.front().chunks) {
        if (!digest.isZero())
            stored.push_back(digest);
    }
    QVERIFY(stored.size() >= 2);
    const ChunkStore chunks(m_store->root() + QStringLiteral("/chunks"),
                            m_store->root() + QStringLiteral("/tmp"));
    // A flipped byte inside a zstd frame, and a chunk that is gone.
    QFile damaged(chunks.pathOf(stored[0]));
    QVERIFY(damaged.open(QIODevice::ReadWrite));
    QByteArray bytes = damaged.readAll();
    bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x40);
    damaged.seek(0);
    damaged.write(bytes);
    damaged.close();
    QVERIFY(QFile::remove(chunks.pathOf(stored[1])));

    const auto report = m_store->verify();
    QVERIFY(!report.ok());
    const QString problems = report.problems.join(u'\n');
    QVERIFY2(problems.contains(stored[0].hex()), qPrintable(problems));
    QVERIFY2(problems.contains(stored[1].hex()), qPrintable(problems));
    // A restore refuses damaged data instead of writing it into a guest.
    QTemporaryFile target;
    QVERIFY(target.open());
    QVERIFY(!m_store->writeObjectTo(manifest->objects.front(), target.handle()));
}

void TestSnapshotStore::garbageCollectionKeepsSharedChunks()
{
    QByteArray memory = memoryImage(2 * 1024 * 1024, 6);
    auto first = m_store->begin(QStringLiteral("e1"));
    QVERIFY((*first)->addObject(QStringLiteral("memory"), memory));
    QVERIFY((*first)->commit());
    first->reset();
    QRandomGenerator(7).fillRange(reinterpret_cast<quint32 *>(memory.data()), 256 * 1024 / 4);
    auto second = m_store->begin(QStringLiteral("e2"));
    QVERIFY((*second)->addObject(QStringLiteral("memory"), memory));
    auto manifest = (*second)->commit();
    QVERIFY(manifest);
    second->reset();

    const qint64 before = m_store->storedBytes();
    auto nothing = m_store->collectGarbage();
    QVERIFY(nothing);
    QCOMPARE(nothing->chunksRemoved, 0);
    QVERIFY(m_store->removeManifest(QStringLiteral("e1")));
    auto report = m_store->collectGarbage();
    QVERIFY_RESULT(report);
    // Only the 256 KiB that e2 overwrote belonged to e1 alone.
    QCOMPARE(report->chunksRemoved, 256 * 1024 / kChunk);
    QVERIFY(report->bytesFreed > 0);
    QCOMPARE(m_store->storedBytes(), before - report->bytesFreed);
    QCOMPARE(restoreToBytes(*m_store, manifest->objects.front()), memory);
    QVERIFY(m_store->verify().ok());
    QCOMPARE(m_store->verify().unreferencedChunks, 0);
}

void TestSnapshotStore::garbageCollectionWaitsForWriters()
{
    auto writer = m_store->begin(QStringLiteral("f1"));
    QVERIFY((*writer)->addObject(QStringLiteral("memory"), memoryImage(256 * 1024, 8)));
    // The writer's chunks are named by no manifest yet: collecting now would delete them.
    auto busy = m_store->collectGarbage();
    QVERIFY(!busy);
    QCOMPARE(busy.error().kind, ErrorKind::Busy);
    QVERIFY((*writer)->commit());
    writer->reset();
    QVERIFY(m_store->collectGarbage());
    QVERIFY(m_store->verify().ok());
}

void TestSnapshotStore::abandonedWriterLeavesNoManifest()
{
    {
        auto writer = m_store->begin(QStringLiteral("g1"));
        QVERIFY((*writer)->addObject(QStringLiteral("memory"), memoryImage(256 * 1024, 9)));
    }
    QVERIFY(m_store->manifestIds().isEmpty());
    QVERIFY(QDir(m_store->root() + QStringLiteral("/tmp")).isEmpty());
    QVERIFY(QDir(m_store->root() + QStringLiteral("/pending")).isEmpty());
    // The id is free again.
    QVERIFY(m_store->begin(QStringLiteral("g1")));
}

void TestSnapshotStore::objectFromFileMatchesObjectFromMemory()
{
    // Over two read windows and not a multiple of the chunk size: the windows' boundaries
    // must not move the chunks' (the disk overlay is read from a file, docs/snapshots.md).
    constexpr qint64 kWindows = 2 * SnapshotStore::Writer::kReadWindowBytes;
    const QByteArray data = memoryImage(kWindows + 4 * kChunk, 4).left(kWindows + 3 * kChunk + 77);
    QTemporaryFile file;
    QVERIFY(file.open());
    QCOMPARE(file.write(data), data.size());
    QVERIFY(file.flush());
    auto fromMemory = m_store->begin(QStringLiteral("m1"));
    QVERIFY(fromMemory);
    QVERIFY((*fromMemory)->addObject(QStringLiteral("disk"), data));
    auto memoryManifest = (*fromMemory)->commit();
    QVERIFY(memoryManifest);
    auto fromFile = m_store->begin(QStringLiteral("f1"));
    QVERIFY(fromFile);
    auto stats = (*fromFile)->addObjectFromFile(QStringLiteral("disk"), file.handle());
    QVERIFY_RESULT(stats);
    QCOMPARE(stats->logicalBytes, data.size());
    QCOMPARE(stats->newBytes, 0); // every chunk already stored by m1
    auto fileManifest = (*fromFile)->commit();
    QVERIFY(fileManifest);
    const Manifest::Object *a = memoryManifest->find(QStringLiteral("disk"));
    const Manifest::Object *b = fileManifest->find(QStringLiteral("disk"));
    QVERIFY(a && b);
    QCOMPARE(b->size, a->size);
    QVERIFY(b->chunks == a->chunks);
    QCOMPARE(restoreToBytes(*m_store, *b), data);
}

void TestSnapshotStore::writerRefusesToFillTheFileSystem()
{
    // docs/reviews/2026-12-01-guest-channels-round4.md#f3, related: the store shares its file
    // system with every overlay and the registry. A margin above the free space stands in for a
    // full file system.
    m_store->setMinimumFreeBytes(std::numeric_limits<qint64>::max() / 2);
    {
        auto writer = m_store->begin(QStringLiteral("n1"));
        QVERIFY(writer);
        auto stats = (*writer)->addObject(QStringLiteral("memory"), memoryImage(256 * 1024, 3));
        QVERIFY(!stats);
        QCOMPARE(stats.error().kind, ErrorKind::BackendUnavailable);
        QVERIFY2(stats.error().message.contains(QStringLiteral("free")),
                 qPrintable(stats.error().message));
    }
    // Nothing half-written: no manifest, no staged chunk, no marker.
    QVERIFY(m_store->manifestIds().isEmpty());
    QVERIFY(QDir(m_store->root() + QStringLiteral("/tmp")).isEmpty());
    QVERIFY(QDir(m_store->root() + QStringLiteral("/pending")).isEmpty());
    QCOMPARE(m_store->storedBytes(), 0);
    // With room again the same snapshot stores; all-zero data never needs room.
    m_store->setMinimumFreeBytes(SnapshotStore::kDefaultMinimumFreeBytes);
    auto writer = m_store->begin(QStringLiteral("n1"));
    QVERIFY((*writer)->addObject(QStringLiteral("memory"), memoryImage(256 * 1024, 3)));
    QVERIFY((*writer)->commit());
}

void TestSnapshotStore::manifestRejectsDamage_data()
{
    QTest::addColumn<int>("offset");
    QTest::addColumn<int>("truncateTo");
    QTest::newRow("magic") << 0 << -1;
    QTest::newRow("version") << 8 << -1;
    QTest::newRow("body") << 20 << -1;
    QTest::newRow("trailer") << -1 << -1;
    QTest::newRow("truncated") << -2 << 30;
    QTest::newRow("empty") << -2 << 0;
}

void TestSnapshotStore::manifestRejectsDamage()
{
    QFETCH(int, offset);
    QFETCH(int, truncateTo);
    Manifest manifest;
    Manifest::Object object {QStringLiteral("memory"), 40000, 16384, {}};
    object.chunks = {ChunkDigest::of("a"), ChunkDigest::zero(), ChunkDigest::of("b")};
    manifest.objects.push_back(object);
    QByteArray bytes = manifest.serialize();
    auto good = Manifest::parse(bytes);
    QVERIFY(good);
    QCOMPARE(*good, manifest);
    if (offset == -1)
        offset = int(bytes.size() - 1);
    if (offset >= 0)
        bytes[offset] = char(bytes[offset] ^ 1);
    if (truncateTo >= 0)
        bytes.truncate(truncateTo);
    auto parsed = Manifest::parse(bytes);
    QVERIFY(!parsed);
    QVERIFY(parsed.error().message.startsWith(QStringLiteral("damaged manifest")));

    // An object whose chunk count does not fit its size is refused before it is written.
    Manifest wrong = manifest;
    wrong.objects.front().size = 100000;
    QVERIFY(!wrong.validate());
}

void TestSnapshotStore::catalogReparentsChildrenOnDelete()
{
    auto registry = Registry::open(m_dir->filePath(QStringLiteral("registry.sqlite")));
    QVERIFY_RESULT(registry);
    SnapshotCatalog catalog((*registry)->connectionName());
    const auto make = [](const QString &id, const QString &parent, int minute) {
        Snapshot s;
        s.id = id;
        s.sandbox = QStringLiteral("demo");
        s.parent = parent;
        s.createdAt = QDateTime(QDate(2025, 1, 1), QTime(10, minute), Qt::UTC);
        return s;
    };
    const QString a = QStringLiteral("000000000000000a");
    const QString b = QStringLiteral("000000000000000b");
    const QString c = QStringLiteral("000000000000000c");
    QVERIFY(catalog.insert(make(a, {}, 1)));
    QVERIFY(catalog.insert(make(b, a, 2)));
    QVERIFY(catalog.insert(make(c, b, 3)));
    QVERIFY(catalog.setHead(QStringLiteral("demo"), b));
    QVERIFY(!catalog.insert(make(a, {}, 4))); // primary key
    QVERIFY(catalog.remove(b));
    QCOMPARE(catalog.get(c)->parent, a);
    QCOMPARE(catalog.head(QStringLiteral("demo")), a);
    QCOMPARE(catalog.list(QStringLiteral("demo"))->size(), 2);
    QCOMPARE(catalog.remove(b).error().kind, ErrorKind::NotFound);
    Snapshot renamed = *catalog.get(c);
    renamed.label = QStringLiteral("before upgrade");
    renamed.pinned = true;
    QVERIFY(catalog.update(renamed));
    QCOMPARE(*catalog.get(c), renamed);
    SnapshotSchedule schedule;
    schedule.intervalMinutes = 30;
    QVERIFY(catalog.setSchedule(QStringLiteral("demo"), schedule));
    QCOMPARE(catalog.schedule(QStringLiteral("demo")), schedule);
    QCOMPARE(catalog.schedule(QStringLiteral("other")), SnapshotSchedule());
}

void TestSnapshotStore::reconcileRemovesUncommittedManifests()
{
    auto registry = Registry::open(m_dir->filePath(QStringLiteral("registry.sqlite")));
    QVERIFY(registry);
    SnapshotCatalog catalog((*registry)->connectionName());
    SnapshotArchive archive(*m_store, catalog);
    Snapshot meta;
    meta.sandbox = QStringLiteral("demo");
    const QByteArray memory = memoryImage(512 * 1024, 10);
    auto kept = archive.commit(meta, {{QStringLiteral("memory"), memory}});
    QVERIFY_RESULT(kept);
    QCOMPARE(catalog.head(QStringLiteral("demo")), kept->id);
    QCOMPARE(kept->logicalBytes, memory.size());
    // A manifest whose row never came (the helper died in between).
    auto orphan = m_store->begin(QStringLiteral("00000000000000ff"));
    QVERIFY((*orphan)->addObject(QStringLiteral("memory"), memoryImage(256 * 1024, 11)));
    QVERIFY((*orphan)->commit());
    orphan->reset();
    auto report = archive.reconcile();
    QVERIFY_RESULT(report);
    QCOMPARE(report->manifestsRemoved, QStringList {QStringLiteral("00000000000000ff")});
    QVERIFY(report->garbage.chunksRemoved > 0);
    QCOMPARE(m_store->manifestIds(), QStringList {kept->id});
    QVERIFY(m_store->verify().ok());
    QCOMPARE(m_store->verify().unreferencedChunks, 0);
    QVERIFY(archive.remove(kept->id));
    QVERIFY(m_store->manifestIds().isEmpty());
    QVERIFY(catalog.head(QStringLiteral("demo")).isEmpty());
}

QTEST_GUILESS_MAIN(TestSnapshotStore)
#include "tst_snapshotstore.moc"

#include "core/daemon/consolehub.h"

#include <QSignalSpy>
#include <QTest>

using airlock::ConsoleHub;

class TestConsoleHub : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void emptyReplay();
    void sequenceIncreasesPerChunk();
    void ringKeepsNewestBytes_data();
    void ringKeepsNewestBytes();
    void largeChunksAreSplit();
    void attachReplaysAndFansOut();
    void detachAndDisconnect();
    void clearKeepsSequence();
    void replayLimit();
    void memoryStaysBoundedForTinyReads();
};

void TestConsoleHub::emptyReplay()
{
    ConsoleHub hub(1024);
    const auto replay = hub.attach(QStringLiteral("a"), 1);
    QCOMPARE(replay.seq, quint64(0));
    QVERIFY(replay.data.isEmpty());
}

void TestConsoleHub::sequenceIncreasesPerChunk()
{
    ConsoleHub hub(1024);
    QCOMPARE(hub.append(QStringLiteral("a"), "one"), quint64(1));
    QCOMPARE(hub.append(QStringLiteral("a"), "two"), quint64(2));
    // Sequences are per sandbox.
    QCOMPARE(hub.append(QStringLiteral("b"), "x"), quint64(1));
    QCOMPARE(hub.append(QStringLiteral("a"), QByteArray()), quint64(2));
    const auto replay = hub.replay(QStringLiteral("a"));
    QCOMPARE(replay.seq, quint64(2));
    QCOMPARE(replay.data, QByteArray("onetwo"));
}

void TestConsoleHub::ringKeepsNewestBytes_data()
{
    QTest::addColumn<qsizetype>("capacity");
    QTest::addColumn<QList<QByteArray>>("chunks");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("fits") << qsizetype(10) << QList<QByteArray> {"abc", "def"}
                          << QByteArray("abcdef");
    QTest::newRow("exactly full") << qsizetype(6) << QList<QByteArray> {"abc", "def"}
                                  << QByteArray("abcdef");
    QTest::newRow("drops whole oldest chunk")
        << qsizetype(6) << QList<QByteArray> {"abc", "def", "ghi"} << QByteArray("defghi");
    QTest::newRow("cuts oldest chunk")
        << qsizetype(7) << QList<QByteArray> {"abc", "def", "gh"} << QByteArray("bcdefgh");
    QTest::newRow("chunk larger than ring")
        << qsizetype(4) << QList<QByteArray> {"ab", "0123456789"} << QByteArray("6789");
    QTest::newRow("many wraps") << qsizetype(3)
                                << QList<QByteArray> {"a", "b", "c", "d", "e", "f", "g"}
                                << QByteArray("efg");
}

void TestConsoleHub::ringKeepsNewestBytes()
{
    QFETCH(qsizetype, capacity);
    QFETCH(QList<QByteArray>, chunks);
    QFETCH(QByteArray, expected);

    ConsoleHub hub(capacity);
    for (const QByteArray &chunk : chunks)
        hub.append(QStringLiteral("s"), chunk);
    const auto replay = hub.replay(QStringLiteral("s"));
    QCOMPARE(replay.data, expected);
    QVERIFY(replay.data.size() <= capacity);
    QCOMPARE(replay.seq, quint64(chunks.size()));
}

void TestConsoleHub::largeChunksAreSplit()
{
    ConsoleHub hub(1024 * 1024);
    QSignalSpy spy(&hub, &ConsoleHub::output);
    const QByteArray big(ConsoleHub::kMaxChunkBytes * 2 + 10, 'x');
    QCOMPARE(hub.append(QStringLiteral("s"), big), quint64(3));
    QCOMPARE(spy.size(), 3);
    QCOMPARE(spy.at(0).at(2).toByteArray().size(), ConsoleHub::kMaxChunkBytes);
    QCOMPARE(spy.at(2).at(2).toByteArray().size(), qsizetype(10));
    QCOMPARE(spy.at(2).at(1).toULongLong(), quint64(3));
    QCOMPARE(hub.replay(QStringLiteral("s")).data, big);
}

void TestConsoleHub::attachReplaysAndFansOut()
{
    ConsoleHub hub(1024);
    hub.append(QStringLiteral("s"), "boot\n");
    QSignalSpy spy(&hub, &ConsoleHub::output);
    const auto first = hub.attach(QStringLiteral("s"), 7);
    QCOMPARE(first.data, QByteArray("boot\n"));
    QCOMPARE(first.seq, quint64(1));
    const auto second = hub.attach(QStringLiteral("s"), 8);
    QCOMPARE(second.data, first.data);

    hub.append(QStringLiteral("s"), "ready\n");
    QCOMPARE(spy.size(), 1);
    const auto recipients = spy.at(0).at(3).value<QSet<quint64>>();
    QCOMPARE(recipients, (QSet<quint64> {7, 8}));
    QCOMPARE(spy.at(0).at(1).toULongLong(), quint64(2));

    // Attaching again replaces the attachment and replays again.
    const auto again = hub.attach(QStringLiteral("s"), 7);
    QCOMPARE(again.data, QByteArray("boot\nready\n"));
    QCOMPARE(again.seq, quint64(2));
    QCOMPARE(hub.attachedClients(QStringLiteral("s")).size(), 2);
}

void TestConsoleHub::detachAndDisconnect()
{
    ConsoleHub hub(1024);
    hub.attach(QStringLiteral("a"), 1);
    hub.attach(QStringLiteral("b"), 1);
    hub.attach(QStringLiteral("a"), 2);
    QVERIFY(hub.detach(QStringLiteral("a"), 2));
    QVERIFY(!hub.detach(QStringLiteral("a"), 2));
    QVERIFY(!hub.detach(QStringLiteral("nothing"), 1));
    hub.detachAll(1);
    QVERIFY(hub.attachedClients(QStringLiteral("a")).isEmpty());
    QVERIFY(hub.attachedClients(QStringLiteral("b")).isEmpty());
}

void TestConsoleHub::clearKeepsSequence()
{
    ConsoleHub hub(1024);
    hub.append(QStringLiteral("s"), "old boot");
    hub.attach(QStringLiteral("s"), 3);
    hub.clear(QStringLiteral("s"));
    const auto cleared = hub.replay(QStringLiteral("s"));
    QVERIFY(cleared.data.isEmpty());
    QCOMPARE(cleared.seq, quint64(1));
    QCOMPARE(hub.append(QStringLiteral("s"), "new"), quint64(2));
    QCOMPARE(hub.attachedClients(QStringLiteral("s")), QSet<quint64> {3});
    hub.remove(QStringLiteral("s"));
    QCOMPARE(hub.replay(QStringLiteral("s")).seq, quint64(0));
}

void TestConsoleHub::replayLimit()
{
    ConsoleHub hub(1024);
    hub.append(QStringLiteral("s"), "0123456789");
    QCOMPARE(hub.replay(QStringLiteral("s"), 4).data, QByteArray("6789"));
    QCOMPARE(hub.attach(QStringLiteral("s"), 1, 3).data, QByteArray("789"));
}

void TestConsoleHub::memoryStaysBoundedForTinyReads()
{
    // What a flooding guest looks like to the helper: many reads of a few bytes, each in a
    // buffer with a large capacity (QIODevice::readAll reserves 16 KiB).
    const qsizetype capacity = 64 * 1024;
    ConsoleHub hub(capacity);
    QByteArray expected;
    for (int i = 0; i < 20000; ++i) {
        QByteArray read;
        read.reserve(16 * 1024);
        read.append(QByteArray::number(i % 10)).append("abcd");
        hub.append(QStringLiteral("box"), read);
        expected.append(read);
    }
    QVERIFY2(hub.memoryUsage(QStringLiteral("box")) <= 3 * capacity,
             qPrintable(QString::number(hub.memoryUsage(QStringLiteral("box")))));
    const ConsoleHub::Replay replay = hub.replay(QStringLiteral("box"));
    QCOMPARE(replay.seq, quint64(20000));
    QCOMPARE(replay.data, expected.right(capacity));
}

QTEST_GUILESS_MAIN(TestConsoleHub)
#include "tst_consolehub.moc"

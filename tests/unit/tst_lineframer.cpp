#include "core/protocol/lineframer.h"

#include <QTest>

using airlock::protocol::LineFramer;

namespace {

/// Feeds the pieces one after the other and collects every complete line; "!" marks an error.
QList<QByteArray> feed(LineFramer &framer, const QList<QByteArray> &pieces)
{
    QList<QByteArray> lines;
    for (const QByteArray &piece : pieces) {
        framer.append(piece);
        while (auto line = framer.next())
            lines.append(*line ? line->value() : QByteArray("!"));
    }
    return lines;
}

} // namespace

class TestLineFramer : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void split_data();
    void split();
    void oversizePoisons_data();
    void oversizePoisons();
    void bufferStaysBounded();
};

void TestLineFramer::split_data()
{
    QTest::addColumn<QList<QByteArray>>("pieces");
    QTest::addColumn<QList<QByteArray>>("lines");
    QTest::addColumn<qsizetype>("leftover");

    QTest::newRow("one line") << QList<QByteArray> {"{}\n"} << QList<QByteArray> {"{}"}
                              << qsizetype(0);
    QTest::newRow("two in one piece")
        << QList<QByteArray> {"a\nb\n"} << QList<QByteArray> {"a", "b"} << qsizetype(0);
    QTest::newRow("split across pieces")
        << QList<QByteArray> {"ab", "c", "d\ne"} << QList<QByteArray> {"abcd"} << qsizetype(1);
    QTest::newRow("partial only") << QList<QByteArray> {"{\"id\":"} << QList<QByteArray> {}
                                  << qsizetype(6);
    QTest::newRow("CRLF") << QList<QByteArray> {"a\r\nb\r", "\n"} << QList<QByteArray> {"a", "b"}
                          << qsizetype(0);
    QTest::newRow("CR inside a line stays")
        << QList<QByteArray> {"a\rb\n"} << QList<QByteArray> {"a\rb"} << qsizetype(0);
    QTest::newRow("empty lines") << QList<QByteArray> {"\n\nx\n"} << QList<QByteArray> {"", "", "x"}
                                 << qsizetype(0);
    QTest::newRow("byte by byte") << QList<QByteArray> {"h", "i", "\n", "?", "\n"}
                                  << QList<QByteArray> {"hi", "?"} << qsizetype(0);
    QTest::newRow("exactly the limit") << QList<QByteArray> {QByteArray(16, 'x') + '\n'}
                                       << QList<QByteArray> {QByteArray(16, 'x')} << qsizetype(0);
}

void TestLineFramer::split()
{
    QFETCH(QList<QByteArray>, pieces);
    QFETCH(QList<QByteArray>, lines);
    QFETCH(qsizetype, leftover);
    LineFramer framer(16);
    QCOMPARE(feed(framer, pieces), lines);
    QCOMPARE(framer.bufferedBytes(), leftover);
    QVERIFY(!framer.poisoned());
}

void TestLineFramer::oversizePoisons_data()
{
    QTest::addColumn<QList<QByteArray>>("pieces");
    QTest::addColumn<QList<QByteArray>>("lines");

    QTest::newRow("complete long line")
        << QList<QByteArray> {QByteArray(17, 'x') + "\nok\n"} << QList<QByteArray> {"!"};
    QTest::newRow("long line without newline yet")
        << QList<QByteArray> {QByteArray(17, 'x')} << QList<QByteArray> {"!"};
    QTest::newRow("grows over the limit")
        << QList<QByteArray> {"0123456789", "0123456789", "\n"} << QList<QByteArray> {"!"};
    QTest::newRow("good line first")
        << QList<QByteArray> {"ok\n" + QByteArray(40, 'y') + "\n"} << QList<QByteArray> {"ok", "!"};
    QTest::newRow("nothing after poison")
        << QList<QByteArray> {QByteArray(20, 'z'), "\nnext\n"} << QList<QByteArray> {"!"};
}

void TestLineFramer::oversizePoisons()
{
    QFETCH(QList<QByteArray>, pieces);
    QFETCH(QList<QByteArray>, lines);
    LineFramer framer(16);
    QCOMPARE(feed(framer, pieces), lines);
    QVERIFY(framer.poisoned());
    QCOMPARE(framer.bufferedBytes(), qsizetype(0));
    framer.append("more\n");
    QVERIFY(!framer.next());
}

void TestLineFramer::bufferStaysBounded()
{
    LineFramer framer(1024);
    for (int i = 0; i < 10000; ++i) {
        framer.append("line\npart");
        QVERIFY(framer.next().has_value());
        framer.append("ial\n");
        auto line = framer.next();
        QVERIFY(line && *line);
        QCOMPARE(line->value(), QByteArray("partial"));
    }
    QCOMPARE(framer.bufferedBytes(), qsizetype(0));
}

QTEST_APPLESS_MAIN(TestLineFramer)
#include "tst_lineframer.moc"

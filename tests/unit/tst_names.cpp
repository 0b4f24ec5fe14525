#include "core/model/names.h"
#include "resultcheck.h"

#include <QTest>

class TestNames : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void valid_data();
    void valid();
    void invalid_data();
    void invalid();
};

void TestNames::valid_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("single letter") << QStringLiteral("a");
    QTest::newRow("single digit") << QStringLiteral("7");
    QTest::newRow("demo") << QStringLiteral("demo");
    QTest::newRow("hyphens") << QStringLiteral("my-agent-1");
    QTest::newRow("trailing hyphen") << QStringLiteral("agent-");
    QTest::newRow("digits first") << QStringLiteral("0day");
    QTest::newRow("63 characters") << QString(63, u'x');
}

void TestNames::valid()
{
    QFETCH(QString, name);
    const auto result = airlock::validateName(name);
    QVERIFY_RESULT(result);
    QCOMPARE(*result, name);
}

void TestNames::invalid_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("messagePart");
    QTest::newRow("empty") << QString() << QStringLiteral("empty");
    QTest::newRow("64 characters") << QString(64, u'x') << QStringLiteral("64 characters");
    QTest::newRow("upper case") << QStringLiteral("Demo")
                                << QStringLiteral("'D' at position 1 (upper case is not allowed)");
    QTest::newRow("leading hyphen") << QStringLiteral("-demo") << QStringLiteral("must start");
    QTest::newRow("space") << QStringLiteral("a b") << QStringLiteral("a space at position 2");
    QTest::newRow("dot") << QStringLiteral("a.b") << QStringLiteral("'.' at position 2");
    QTest::newRow("slash (path)") << QStringLiteral("../etc")
                                  << QStringLiteral("'.' at position 1");
    QTest::newRow("underscore") << QStringLiteral("a_b") << QStringLiteral("'_' at position 2");
    QTest::newRow("non-ASCII") << QStringLiteral("caf\u00e9")
                               << QStringLiteral("'\u00e9' (U+00E9) at position 4");
    QTest::newRow("newline") << QStringLiteral("a\nb") << QStringLiteral("U+000A at position 2");
    QTest::newRow("right-to-left override")
        << QStringLiteral("a\u202eb") << QStringLiteral("U+202E at position 2");
    QTest::newRow("NUL") << QString(QChar(0)) << QStringLiteral("U+0000 at position 1");
}

void TestNames::invalid()
{
    QFETCH(QString, name);
    QFETCH(QString, messagePart);
    const auto result = airlock::validateName(name);
    QVERIFY(!result);
    QCOMPARE(result.error().kind, airlock::ErrorKind::InvalidName);
    QVERIFY2(result.error().message.contains(messagePart), qPrintable(result.error().message));
    QVERIFY(result.error().message.startsWith(QStringLiteral("sandbox name")));
    const auto image = airlock::validateName(name, u"image id");
    QVERIFY(!image);
    QVERIFY(image.error().message.startsWith(QStringLiteral("image id")));
}

QTEST_APPLESS_MAIN(TestNames)
#include "tst_names.moc"

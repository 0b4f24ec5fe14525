#include "core/terminal/escapefilter.h"
#include "core/terminal/terminalsession.h"

#include <QTest>

using airlock::EscapeFilter;

class TestEscapeFilter : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void filter_data();
    void filter();
    void splitAtEveryOffset_data();
    void splitAtEveryOffset();
    // Breaker 4: sequences a real terminal (xterm, VTE) parses as OSC/DCS/XTWINOPS that the
    // filter passes on.
    void break4_terminalStillSeesControlString_data();
    void break4_terminalStillSeesControlString();
    void break4_libvtermParsesTheFilteredOsc();
};

void TestEscapeFilter::filter_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("plain text") << QByteArray("hello\r\n") << QByteArray("hello\r\n");
    QTest::newRow("utf-8") << QByteArray("gr\xc3\xbc\xc3\x9f") << QByteArray("gr\xc3\xbc\xc3\x9f");
    QTest::newRow("sgr colour kept")
        << QByteArray("\x1b[1;31mred\x1b[0m") << QByteArray("\x1b[1;31mred\x1b[0m");
    QTest::newRow("cursor moves kept")
        << QByteArray("\x1b[2J\x1b[H\x1b[10;5H") << QByteArray("\x1b[2J\x1b[H\x1b[10;5H");
    QTest::newRow("osc 52 clipboard, BEL")
        << QByteArray("a\x1b]52;c;cm0gLXJmIH4K\x07z") << QByteArray("az");
    QTest::newRow("osc 52 clipboard, ST")
        << QByteArray("a\x1b]52;c;cm0gLXJmIH4K\x1b\\z") << QByteArray("az");
    QTest::newRow("osc 0 title") << QByteArray("\x1b]0;PWNED\x07ok") << QByteArray("ok");
    QTest::newRow("osc 8 hyperlink")
        << QByteArray("\x1b]8;;http://evil.test\x1b\\link\x1b]8;;\x1b\\") << QByteArray("link");
    QTest::newRow("dcs request status") << QByteArray("\x1bP$q\x1b\\x") << QByteArray("x");
    QTest::newRow("apc") << QByteArray("\x1b_Gf=100;AAAA\x1b\\x") << QByteArray("x");
    QTest::newRow("pm and sos") << QByteArray("\x1b^pm\x1b\\\x1bXsos\x1b\\x") << QByteArray("x");
    QTest::newRow("window resize") << QByteArray("\x1b[8;100;300tx") << QByteArray("x");
    QTest::newRow("title report") << QByteArray("\x1b[21tx") << QByteArray("x");
    QTest::newRow("esc inside string swallowed") << QByteArray("\x1b]2;a\x1b[31mb\x07"
                                                               "c")
                                                 << QByteArray("c");
    QTest::newRow("other escapes kept") << QByteArray("\x1b"
                                                      "7\x1b"
                                                      "8\x1b"
                                                      "c")
                                        << QByteArray("\x1b"
                                                      "7\x1b"
                                                      "8\x1b"
                                                      "c");
    QTest::newRow("double esc") << QByteArray("\x1b\x1b]0;t\x07!") << QByteArray("\x1b!");
    const QByteArray longCsi = QByteArray("\x1b[") + QByteArray(100, '1') + 'm';
    QTest::newRow("overlong csi passed on") << longCsi << longCsi;
}

void TestEscapeFilter::filter()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, expected);
    EscapeFilter filter;
    QCOMPARE(filter.feed(input), expected);
}

void TestEscapeFilter::splitAtEveryOffset_data()
{
    filter_data();
}

void TestEscapeFilter::splitAtEveryOffset()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, expected);
    for (qsizetype cut = 0; cut <= input.size(); ++cut) {
        EscapeFilter filter;
        QByteArray out = filter.feed(input.left(cut));
        out += filter.feed(input.mid(cut));
        QVERIFY2(out == expected, qPrintable(QStringLiteral("split at %1").arg(cut)));
    }
}

void TestEscapeFilter::break4_terminalStillSeesControlString_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("forbidden");
    // A terminal abandons a CSI at ESC and starts the new sequence (ECMA-48, xterm's parser):
    // the filter instead takes ']' as the CSI's final byte and leaves the OSC's body as text.
    QTest::newRow("esc inside csi opens osc 52")
        << QByteArray("\x1b[1\x1b]52;c;cm0gLXJmIH4K\x07z") << QByteArray("\x1b]");
    QTest::newRow("esc inside csi opens dcs")
        << QByteArray("\x1b[\x1bP$q\x1b\\x") << QByteArray("\x1bP");
    QTest::newRow("esc inside csi opens osc 8")
        << QByteArray("\x1b[\x1b]8;;http://evil.test\x07link") << QByteArray("\x1b]8");
    QTest::newRow("esc inside csi opens csi t")
        << QByteArray("\x1b[\x1b[21tx") << QByteArray("\x1b[21t");
    // The overlong-CSI escape hatch: leading zeros make any XTWINOPS longer than 64 bytes.
    QTest::newRow("overlong csi t")
        << (QByteArray("\x1b[") + QByteArray(70, '0') + "8;100;300tx") << QByteArray("8;100;300t");
    // C1 controls: 8-bit OSC/DCS/CSI, and the same code points UTF-8 encoded (xterm and VTE act
    // on U+0090/U+009B/U+009D in UTF-8 mode).
    QTest::newRow("8-bit osc 52") << QByteArray("\x9d" "52;c;cm0gLXJmIH4K\x07z")
                                  << QByteArray("52;c;");
    QTest::newRow("utf-8 c1 osc 52") << QByteArray("\xc2\x9d" "52;c;cm0gLXJmIH4K\x07z")
                                     << QByteArray("52;c;");
    QTest::newRow("utf-8 c1 csi 21t") << QByteArray("\xc2\x9b" "21tx") << QByteArray("21t");
    QTest::newRow("utf-8 c1 dcs") << QByteArray("\xc2\x90$q\xc2\x9cx") << QByteArray("$q");
}

void TestEscapeFilter::break4_terminalStillSeesControlString()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, forbidden);
    EscapeFilter filter;
    const QByteArray out = filter.feed(input);
    QVERIFY2(!out.contains(forbidden),
             qPrintable(QStringLiteral("passed on: %1").arg(QString::fromLatin1(out.toHex(' ')))));
}

// The same bytes through a real VT parser (libvterm): what comes out of the filter still sets
// the title, i.e. an OSC survived. (xterm's parser also restarts at ESC inside a CSI.)
void TestEscapeFilter::break4_libvtermParsesTheFilteredOsc()
{
    EscapeFilter filter;
    airlock::TerminalSession terminal;
    terminal.feed(filter.feed(QByteArray("\x1b[\x1b]2;PWNED\x07ok")));
    QCOMPARE(terminal.title(), QString());
}

QTEST_MAIN(TestEscapeFilter)
#include "tst_escapefilter.moc"

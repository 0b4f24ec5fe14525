#include "core/terminal/escapefilter.h"
#include "core/terminal/terminalsession.h"

#include <QRandomGenerator>
#include <QTest>

#include <iterator>

using airlock::EscapeFilter;

class TestEscapeFilter : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void filter_data();
    void filter();
    void splitAtEveryOffset_data();
    void splitAtEveryOffset();
    // docs/reviews/2026-12-01-guest-channels-round4.md#f1: sequences a real terminal (xterm, VTE)
    // parses as OSC/DCS/XTWINOPS that the filter passes on.
    void noControlStringAfterAbortedSequence_data();
    void noControlStringAfterAbortedSequence();
    void libvtermSeesNoFilteredOsc();
    void chunks_data();
    void chunks();
    void outputIsSafeForAnyInput();
    void terminalQueriesDroppedOnRequest_data();
    void terminalQueriesDroppedOnRequest();
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
    // A terminal ends the string at an ESC that is not ST, and parses what follows (DEC parser).
    QTest::newRow("esc ends string, next sequence parsed") << QByteArray("\x1b]2;a\x1b[31mb\x07"
                                                                         "c")
                                                           << QByteArray("\x1b[31mb\x07"
                                                                         "c");
    QTest::newRow("other escapes kept") << QByteArray("\x1b"
                                                      "7\x1b"
                                                      "8\x1b"
                                                      "c\x1b(B\x1b#8")
                                        << QByteArray("\x1b"
                                                      "7\x1b"
                                                      "8\x1b"
                                                      "c\x1b(B\x1b#8");
    // ESC ESC: the second ESC aborts the first (nothing is left for the terminal to complete).
    QTest::newRow("double esc") << QByteArray("\x1b\x1b]0;t\x07!") << QByteArray("!");
    QTest::newRow("esc then non-ascii") << QByteArray("\x1b\xc3\xbc") << QByteArray("\xc3\xbc");
    QTest::newRow("stray st dropped") << QByteArray("a\x1b\\b") << QByteArray("ab");
    // Too long to be a real CSI: dropped whole, up to its final byte, never shown as text.
    QTest::newRow("overlong csi dropped")
        << (QByteArray("\x1b[") + QByteArray(300, '1') + "mx") << QByteArray("x");
    const QByteArray longSgr = QByteArray("\x1b[0;1;3;4;38;2;100;100;100;48;2;200;200;200;"
                                          "58:2::1:2:3m");
    QTest::newRow("long sgr with colons kept") << longSgr << longSgr;
    QTest::newRow("private modes kept")
        << QByteArray("\x1b[?1049h\x1b[?25l\x1b[>4;1m\x1b[ q\x1b[6n")
        << QByteArray("\x1b[?1049h\x1b[?25l\x1b[>4;1m\x1b[ q\x1b[6n");
    QTest::newRow("erase and scroll kept") << QByteArray("\x1b[K\x1b[2K\x1b[J\x1b[1;24r\x1b[3S")
                                           << QByteArray("\x1b[K\x1b[2K\x1b[J\x1b[1;24r\x1b[3S");
    QTest::newRow("xtwinops with intermediate dropped")
        << QByteArray("\x1b[>3tx\x1b[ tx") << QByteArray("xx");
    QTest::newRow("media copy dropped") << QByteArray("\x1b[5ix\x1b[?4iy") << QByteArray("xy");
    QTest::newRow("malformed csi dropped")
        << QByteArray("\x1b[1?2mx\x1b[1 2mx") << QByteArray("xx");
    // C0 controls inside a CSI are executed by the terminal and leave the CSI going.
    QTest::newRow("c0 inside csi executed") << QByteArray("\x1b[3\r1m") << QByteArray("\r\x1b[31m");
    QTest::newRow("del inside csi ignored") << QByteArray("\x1b[3\x7f"
                                                          "1m")
                                            << QByteArray("\x1b[31m");
    QTest::newRow("docs leaves utf-8, dropped") << QByteArray("\x1b%@\x1b%Gx") << QByteArray("x");
    // CAN and SUB abort any sequence (DEC parser); elsewhere they pass.
    QTest::newRow("can aborts csi") << QByteArray("\x1b[21\x18tx") << QByteArray("tx");
    QTest::newRow("sub aborts csi") << QByteArray("\x1b[8;1;1\x1atx") << QByteArray("tx");
    QTest::newRow("can aborts osc")
        << QByteArray("\x1b]52;c;\x18YWJj\x07") << QByteArray("YWJj\x07");
    QTest::newRow("sub aborts dcs") << QByteArray("\x1bP$q\x1ax") << QByteArray("x");
    QTest::newRow("can aborts esc") << QByteArray("\x1b\x18]0;t\x07") << QByteArray("]0;t\x07");
    QTest::newRow("can and sub in text") << QByteArray("a\x18\x1a") << QByteArray("a\x18\x1a");
    // Valid UTF-8 passes as it is; C1 controls (UTF-8 encoded) are dropped and their 8-bit
    // sequences parsed like the 7-bit ones.
    QTest::newRow("cjk and emoji")
        << QByteArray("\xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x98\x80 \xc3\x9c")
        << QByteArray("\xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x98\x80 \xc3\x9c");
    QTest::newRow("edges of utf-8 kept")
        << QByteArray("\xc2\xa0\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf")
        << QByteArray("\xc2\xa0\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf");
    QTest::newRow("utf-8 c1 dropped") << QByteArray("a\xc2\x80\xc2\x85\xc2\x9c"
                                                    "b")
                                      << QByteArray("ab");
    QTest::newRow("utf-8 c1 csi kept as 7-bit") << QByteArray("\xc2\x9b"
                                                              "31mx")
                                                << QByteArray("\x1b[31mx");
    QTest::newRow("utf-8 c1 osc ended by c1 st") << QByteArray("\xc2\x9d"
                                                               "0;t\xc2\x9cx")
                                                 << QByteArray("x");
    QTest::newRow("utf-8 c1 aborts csi") << QByteArray("\x1b[21\xc2\x85tx") << QByteArray("tx");
    // Invalid UTF-8 becomes U+FFFD (one per maximal subpart); a raw 0x80..0x9f also acts as the
    // C1 control an 8-bit terminal takes it for.
    QTest::newRow("raw 8-bit csi") << QByteArray("\x9b"
                                                 "21tx")
                                   << QByteArray("\xef\xbf\xbdx");
    QTest::newRow("raw 8-bit dcs") << QByteArray("\x90$q\x9cx") << QByteArray("\xef\xbf\xbdx");
    QTest::newRow("overlong encodings") << QByteArray("\xc0\xaf\xe0\x80\xaf\xc1\x9b")
                                        << QByteArray("\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                                      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                                      "\xef\xbf\xbd");
    QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80x")
                               << QByteArray("\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx");
    QTest::newRow("truncated then ascii") << QByteArray("\xe6\xbc"
                                                        "a\xf0\x9f\x98")
                                          << QByteArray("\xef\xbf\xbd"
                                                        "a");
    QTest::newRow("truncated then c1 byte") << QByteArray("\xe6\x9b"
                                                          "21tx")
                                            << QByteArray("\xef\xbf\xbd"
                                                          "21tx");
    QTest::newRow("above u+10ffff") << QByteArray("\xf5\xbf\xbf\xbf\xff")
                                    << QByteArray("\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                                  "\xef\xbf\xbd\xef\xbf\xbd");
    QTest::newRow("utf-8 inside osc swallowed")
        << QByteArray("\x1b]0;\xc3\x9c\xe6\xbc\xa2\x07ok") << QByteArray("ok");
    QTest::newRow("unterminated osc swallowed to the end")
        << (QByteArray("\x1b]52;c;") + QByteArray(5000, 'A')) << QByteArray();
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

void TestEscapeFilter::noControlStringAfterAbortedSequence_data()
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
    QTest::newRow("8-bit osc 52") << QByteArray("\x9d"
                                                "52;c;cm0gLXJmIH4K\x07z")
                                  << QByteArray("52;c;");
    QTest::newRow("utf-8 c1 osc 52") << QByteArray("\xc2\x9d"
                                                   "52;c;cm0gLXJmIH4K\x07z")
                                     << QByteArray("52;c;");
    QTest::newRow("utf-8 c1 csi 21t") << QByteArray("\xc2\x9b"
                                                    "21tx")
                                      << QByteArray("21t");
    QTest::newRow("utf-8 c1 dcs") << QByteArray("\xc2\x90$q\xc2\x9cx") << QByteArray("$q");
}

void TestEscapeFilter::noControlStringAfterAbortedSequence()
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
void TestEscapeFilter::libvtermSeesNoFilteredOsc()
{
    EscapeFilter filter;
    airlock::TerminalSession terminal;
    terminal.feed(filter.feed(QByteArray("\x1b[\x1b]2;PWNED\x07ok")));
    QCOMPARE(terminal.title(), QString());
}

// Sequences and characters cut between reads of the serial console: the state is kept.
void TestEscapeFilter::chunks_data()
{
    QTest::addColumn<QList<QByteArray>>("chunks");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("esc at the end of a chunk starts osc")
        << QList<QByteArray> {"a\x1b", "]52;c;cm0=\x07z"} << QByteArray("az");
    QTest::newRow("esc at the end of a chunk starts sgr")
        << QList<QByteArray> {"a\x1b", "[1m", "b"} << QByteArray("a\x1b[1mb");
    QTest::newRow("esc ending a csi chunk")
        << QList<QByteArray> {"\x1b[1", "\x1b", "]0;t\x07ok"} << QByteArray("ok");
    QTest::newRow("utf-8 split") << QList<QByteArray> {"\xf0\x9f", "\x98", "\x80!"}
                                 << QByteArray("\xf0\x9f\x98\x80!");
    QTest::newRow("utf-8 c1 split") << QList<QByteArray> {"\xc2",
                                                          "\x9d"
                                                          "0;t\x07ok"}
                                    << QByteArray("ok");
    QTest::newRow("osc split, st split")
        << QList<QByteArray> {"\x1b]8;;http://e", "vil.test\x1b", "\\link\x1b]8;;\x1b", "\\"}
        << QByteArray("link");
    QTest::newRow("csi t split") << QList<QByteArray> {"\x1b[8;1", "00;300", "tx"}
                                 << QByteArray("x");
    QTest::newRow("overlong csi split")
        << QList<QByteArray> {"\x1b[" + QByteArray(200, '0'), QByteArray(200, '0'), "8;1;1tx"}
        << QByteArray("x");
    QTest::newRow("can in the next chunk")
        << QList<QByteArray> {"\x1b]52;c;", "\x18ok"} << QByteArray("ok");
}

void TestEscapeFilter::chunks()
{
    QFETCH(QList<QByteArray>, chunks);
    QFETCH(QByteArray, expected);
    EscapeFilter filter;
    QByteArray out;
    for (const QByteArray &chunk : chunks)
        out += filter.feed(chunk);
    QCOMPARE(out, expected);
}

namespace {

// An independent check of the filter's promise: the output is valid UTF-8 without C1 controls,
// and every ESC starts a complete sequence of the allowed kinds. Returns what is wrong, or {}.
QString unsafeIn(const QByteArray &out)
{
    const QString text = QString::fromUtf8(out);
    if (text.toUtf8() != out)
        return QStringLiteral("invalid UTF-8");
    for (const QChar ch : text) {
        if (ch.unicode() >= 0x80 && ch.unicode() <= 0x9f)
            return QStringLiteral("C1 control U+%1").arg(ch.unicode(), 4, 16, QLatin1Char('0'));
    }
    for (qsizetype i = 0; i < out.size(); ++i) {
        if (out[i] != '\x1b')
            continue;
        qsizetype j = i + 1;
        if (j < out.size() && out[j] == '[') {
            ++j;
            while (j < out.size() && out[j] >= 0x20 && out[j] <= 0x3f)
                ++j;
            if (j >= out.size() || out[j] < 0x40 || out[j] > 0x7e)
                return QStringLiteral("incomplete CSI at %1").arg(i);
            if (out[j] == 't' || out[j] == 'i')
                return QStringLiteral("CSI %1 at %2").arg(QLatin1Char(out[j])).arg(i);
        } else {
            while (j < out.size() && out[j] >= 0x20 && out[j] <= 0x2f)
                ++j;
            if (j >= out.size() || out[j] < 0x30 || out[j] > 0x7e)
                return QStringLiteral("incomplete ESC at %1").arg(i);
            if (j == i + 1 && QByteArrayView("]PX^_\\").contains(out[j]))
                return QStringLiteral("string or ST at %1").arg(i);
            if (out[i + 1] == '%')
                return QStringLiteral("DOCS at %1").arg(i);
        }
        i = j;
    }
    return {};
}

} // namespace

// Random bytes from the alphabet of the attacks, split at random: the output passes the
// independent check, and does not depend on where the input was split.
void TestEscapeFilter::outputIsSafeForAnyInput()
{
    static const QByteArray alphabet[] = {
        "\x1b", "[",    "]",        "P",    "X",    "^",        "_",        "\\",          "\x07",
        "\x18", "\x1a", "%",        " ",    "?",    "0",        "1",        "2",           ";",
        "t",    "i",    "m",        "a",    "\r",   "\x7f",     "\x9b",     "\x9c",        "\x9d",
        "\x90", "\xc2", "\xc3\xbc", "\xe6", "\xbc", "\xf0\x9f", "\x98\x80", "\xed\xa0\x80"};
    QRandomGenerator random(20261201);
    for (int round = 0; round < 20000; ++round) {
        QByteArray input;
        const int parts = random.bounded(1, 40);
        for (int p = 0; p < parts; ++p)
            input += alphabet[random.bounded(int(std::size(alphabet)))];
        EscapeFilter whole;
        const QByteArray out = whole.feed(input);
        // Each feed() output must be safe by itself: the terminal may see them one at a time.
        EscapeFilter pieces;
        QByteArray joined;
        for (qsizetype at = 0; at < input.size();) {
            const qsizetype n = random.bounded(1, 8);
            const QByteArray piece = pieces.feed(input.mid(at, n));
            const QString problem = unsafeIn(piece);
            QVERIFY2(problem.isEmpty(),
                     qPrintable(problem + QStringLiteral(" in ")
                                + QString::fromLatin1(input.toHex(' '))));
            joined += piece;
            at += n;
        }
        const QString problem = unsafeIn(out);
        QVERIFY2(
            problem.isEmpty(),
            qPrintable(problem + QStringLiteral(" in ") + QString::fromLatin1(input.toHex(' '))));
        QCOMPARE(joined, out);
    }
}

void TestEscapeFilter::terminalQueriesDroppedOnRequest_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QByteArray>("dropped"); // with setDropTerminalQueries(true)
    QTest::newRow("cursor position query") << QByteArray("a\x1b[6nb") << QByteArray("ab");
    QTest::newRow("status report") << QByteArray("\x1b[5n~ # ") << QByteArray("~ # ");
    QTest::newRow("private dsr") << QByteArray("\x1b[?6nx") << QByteArray("x");
    QTest::newRow("da1") << QByteArray("\x1b[cx") << QByteArray("x");
    QTest::newRow("da2") << QByteArray("\x1b[>0cx") << QByteArray("x");
    QTest::newRow("decrqm") << QByteArray("\x1b[?2004$px") << QByteArray("x");
    QTest::newRow("xtversion") << QByteArray("\x1b[>qx") << QByteArray("x");
    QTest::newRow("decid") << QByteArray("\x1bZx") << QByteArray("x");
    // Not queries: kept either way.
    QTest::newRow("sgr kept") << QByteArray("\x1b[1mx") << QByteArray("\x1b[1mx");
    QTest::newRow("cursor up kept") << QByteArray("\x1b[2Ax") << QByteArray("\x1b[2Ax");
    QTest::newRow("decstr kept") << QByteArray("\x1b[!px") << QByteArray("\x1b[!px");
    QTest::newRow("decscusr kept") << QByteArray("\x1b[2 qx") << QByteArray("\x1b[2 qx");
}

void TestEscapeFilter::terminalQueriesDroppedOnRequest()
{
    QFETCH(QByteArray, input);
    QFETCH(QByteArray, dropped);
    EscapeFilter dropping;
    dropping.setDropTerminalQueries(true);
    QCOMPARE(dropping.feed(input), dropped);
    // By default a terminal gets its queries: the person at it can answer (raw mode).
    EscapeFilter keeping;
    QCOMPARE(keeping.feed(input), input);
}

QTEST_MAIN(TestEscapeFilter)
#include "tst_escapefilter.moc"

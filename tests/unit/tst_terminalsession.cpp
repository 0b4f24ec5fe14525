#include "core/terminal/terminalfeeder.h"
#include "core/terminal/terminalsession.h"

#include <QSignalSpy>
#include <QTest>
#include <QTimer>

using airlock::TerminalCell;
using airlock::TerminalFeeder;
using airlock::TerminalSession;

namespace {

// Escape sequences in the tables are easier to read with a short ESC.
QByteArray esc(const char *tail)
{
    return QByteArray("\x1b") + tail;
}

// Colours compare as "#rrggbb" so a failure prints something readable.
QString hex(airlock::TerminalRgb rgb)
{
    return QStringLiteral("#%1").arg(rgb & 0xffffff, 6, 16, QLatin1Char('0'));
}

} // namespace

/// The terminal model without any widget: bytes in, screen and key bytes out.
class TestTerminalSession : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void screenText_data();
    void screenText();
    void cursor_data();
    void cursor();
    void colours_data();
    void colours();
    void attributes();
    void scrollback();
    void scrollbackBounded();
    void scrollbackReturnsOnGrow();
    void wideCharacters();
    void reflowJoinsAndRewraps();
    void reflowKeepsHardLineEnds();
    void reflowKeepsCursorAndWideCharacters();
    void reflowMovesRowsThroughScrollback();
    void utf8SplitAcrossFeeds();
    void damageCoalesced();
    void keys_data();
    void keys();
    void applicationCursorKeys();
    void pastePlainAndBracketed();
    void answersCursorReport();
    void resetClears();
    void feederSlicesAndYields_data();
    void feederSlicesAndYields();
    void feederBoundsItsBacklog();
};

void TestTerminalSession::screenText_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("expected");

    QTest::newRow("plain text") << QByteArray("hello") << QStringLiteral("hello");
    QTest::newRow("CR LF") << QByteArray("one\r\ntwo") << QStringLiteral("one\ntwo");
    QTest::newRow("LF without CR keeps column")
        << QByteArray("ab\ncd") << QStringLiteral("ab\n  cd");
    QTest::newRow("CR overwrites") << QByteArray("hello\rJ") << QStringLiteral("Jello");
    QTest::newRow("backspace") << QByteArray("abc\bX") << QStringLiteral("abX");
    QTest::newRow("tab stop") << QByteArray("a\tb") << QStringLiteral("a       b");
    QTest::newRow("cursor position CUP")
        << (QByteArray("x") + esc("[3;5Hy")) << QStringLiteral("x\n\n    y");
    QTest::newRow("cursor up/forward")
        << (QByteArray("a\r\nb") + esc("[A") + esc("[2Cz")) << QStringLiteral("a  z\nb");
    QTest::newRow("erase to end of line")
        << (QByteArray("hello") + esc("[3D") + esc("[K")) << QStringLiteral("he");
    QTest::newRow("erase whole line")
        << (QByteArray("hello") + esc("[2K") + "X") << QStringLiteral("     X");
    QTest::newRow("erase screen") << (QByteArray("one\r\ntwo") + esc("[2J") + esc("[Hnew"))
                                  << QStringLiteral("new");
    QTest::newRow("erase below") << (QByteArray("one\r\ntwo\r\nthree") + esc("[2;1H") + esc("[J"))
                                 << QStringLiteral("one");
    QTest::newRow("insert line") << (QByteArray("a\r\nb") + esc("[1;1H") + esc("[L") + "n")
                                 << QStringLiteral("n\na\nb");
    QTest::newRow("delete chars") << (QByteArray("abcdef") + esc("[1;2H") + esc("[2P"))
                                  << QStringLiteral("adef");
    QTest::newRow("SGR does not print")
        << (esc("[1;31m") + "red" + esc("[0m")) << QStringLiteral("red");
    QTest::newRow("OSC title does not print")
        << (esc("]0;my title\x07") + "x") << QStringLiteral("x");
    QTest::newRow("UTF-8") << QByteArray("gr\xc3\xbc\xc3\x9f") << QStringLiteral("grüß");
}

void TestTerminalSession::screenText()
{
    QFETCH(QByteArray, input);
    QFETCH(QString, expected);
    TerminalSession session(10, 40);
    session.feed(input);
    QCOMPARE(session.screenText(), expected);
}

void TestTerminalSession::cursor_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QPoint>("expected"); // (col, row)
    QTest::addColumn<bool>("visible");

    QTest::newRow("start") << QByteArray() << QPoint(0, 0) << true;
    QTest::newRow("after text") << QByteArray("abc") << QPoint(3, 0) << true;
    QTest::newRow("CUP") << esc("[5;10H") << QPoint(9, 4) << true;
    QTest::newRow("down and back") << (esc("[3B") + esc("[2C") + esc("[D")) << QPoint(1, 3) << true;
    QTest::newRow("clamped") << esc("[99;99H") << QPoint(39, 9) << true;
    QTest::newRow("hidden") << esc("[?25l") << QPoint(0, 0) << false;
    QTest::newRow("hidden then shown") << (esc("[?25l") + esc("[?25h")) << QPoint(0, 0) << true;
    QTest::newRow("save/restore") << (esc("[2;2H") + esc("7") + esc("[5;5H") + esc("8"))
                                  << QPoint(1, 1) << true;
}

void TestTerminalSession::cursor()
{
    QFETCH(QByteArray, input);
    QFETCH(QPoint, expected);
    QFETCH(bool, visible);
    TerminalSession session(10, 40);
    session.feed(input);
    QCOMPARE(session.cursorPosition(), expected);
    QCOMPARE(session.cursorVisible(), visible);
}

void TestTerminalSession::colours_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<airlock::TerminalRgb>("foreground");
    QTest::addColumn<airlock::TerminalRgb>("background");

    TerminalSession reference;
    const airlock::TerminalRgb fg = reference.defaultForeground();
    const airlock::TerminalRgb bg = reference.defaultBackground();

    QTest::newRow("default") << QByteArray("x") << fg << bg;
    QTest::newRow("16: red fg") << (esc("[31m") + "x") << airlock::terminalRgb(204, 0, 0) << bg;
    QTest::newRow("16: green bg") << (esc("[42m") + "x") << fg << airlock::terminalRgb(78, 154, 6);
    QTest::newRow("16: bright blue fg")
        << (esc("[94m") + "x") << airlock::terminalRgb(114, 159, 207) << bg;
    QTest::newRow("16: reset fg") << (esc("[31m") + esc("[39m") + "x") << fg << bg;
    QTest::newRow("256: cube red")
        << (esc("[38;5;196m") + "x") << airlock::terminalRgb(255, 0, 0) << bg;
    QTest::newRow("256: cube bg") << (esc("[48;5;21m") + "x") << fg
                                  << airlock::terminalRgb(0, 0, 255);
    QTest::newRow("256: low index is palette")
        << (esc("[38;5;1m") + "x") << airlock::terminalRgb(204, 0, 0) << bg;
    QTest::newRow("256: grey ramp")
        << (esc("[38;5;232m") + "x") << airlock::terminalRgb(0, 0, 0) << bg;
    QTest::newRow("truecolor fg") << (esc("[38;2;10;20;30m") + "x")
                                  << airlock::terminalRgb(10, 20, 30) << bg;
    QTest::newRow("truecolor bg") << (esc("[48;2;200;100;50m") + "x") << fg
                                  << airlock::terminalRgb(200, 100, 50);
    QTest::newRow("SGR 0 resets") << (esc("[31;42m") + esc("[0m") + "x") << fg << bg;
}

void TestTerminalSession::colours()
{
    QFETCH(QByteArray, input);
    QFETCH(airlock::TerminalRgb, foreground);
    QFETCH(airlock::TerminalRgb, background);
    TerminalSession session(5, 20);
    session.feed(input);
    const TerminalCell cell = session.cell(0, 0);
    QCOMPARE(cell.text, QStringLiteral("x"));
    QCOMPARE(hex(cell.foreground), hex(foreground));
    QCOMPARE(hex(cell.background), hex(background));
}

void TestTerminalSession::attributes()
{
    TerminalSession session(5, 20);
    session.feed(esc("[1mB") + esc("[22;4mU") + esc("[24;7mR") + esc("[27;3mI") + esc("[0mN"));
    QVERIFY(session.cell(0, 0).bold);
    QVERIFY(!session.cell(0, 0).underline);
    QVERIFY(session.cell(0, 1).underline);
    QVERIFY(!session.cell(0, 1).bold);
    QVERIFY(session.cell(0, 2).reverse);
    QVERIFY(!session.cell(0, 2).underline);
    QVERIFY(session.cell(0, 3).italic);
    QVERIFY(!session.cell(0, 3).reverse);
    const TerminalCell plain = session.cell(0, 4);
    QVERIFY(!plain.bold && !plain.underline && !plain.reverse && !plain.italic);
    QCOMPARE(plain.text, QStringLiteral("N"));
}

void TestTerminalSession::scrollback()
{
    TerminalSession session(3, 20);
    session.feed("l1\r\nl2\r\nl3\r\nl4\r\nl5");
    QCOMPARE(session.screenText(), QStringLiteral("l3\nl4\nl5"));
    QCOMPARE(session.scrollbackCount(), 2);
    QCOMPARE(session.scrollbackLineText(0), QStringLiteral("l1"));
    QCOMPARE(session.scrollbackLineText(1), QStringLiteral("l2"));
    QCOMPARE(session.allText(), QStringLiteral("l1\nl2\nl3\nl4\nl5"));

    // Colours survive the trip into the scrollback.
    session.feed(esc("[1;1H") + esc("[31mR") + esc("[0m") + esc("[3;1H") + "\r\n\r\n\r\n");
    QCOMPARE(session.scrollbackLineText(2), QStringLiteral("R3"));
    QCOMPARE(hex(session.scrollbackCell(2, 0).foreground), hex(airlock::terminalRgb(204, 0, 0)));
    QCOMPARE(hex(session.scrollbackCell(2, 1).foreground), hex(session.defaultForeground()));
    QCOMPARE(session.scrollbackCell(2, 15).text, QString());
}

void TestTerminalSession::scrollbackBounded()
{
    TerminalSession session(2, 10);
    session.setScrollbackLimit(100);
    QByteArray flood;
    for (int i = 0; i < 500; ++i)
        flood += QByteArray::number(i) + "\r\n";
    session.feed(flood);
    QCOMPARE(session.scrollbackCount(), 100);
    QCOMPARE(session.scrollbackPushedTotal(), 499);
    QCOMPARE(session.scrollbackLineText(99), QStringLiteral("498"));
    QCOMPARE(session.scrollbackLineText(0), QStringLiteral("399"));
    QCOMPARE(TerminalSession().scrollbackLimit(), TerminalSession::kDefaultScrollbackLines);
}

void TestTerminalSession::scrollbackReturnsOnGrow()
{
    TerminalSession session(2, 10);
    session.feed("a\r\nb\r\nc");
    QCOMPARE(session.scrollbackCount(), 1);
    session.resize(4, 10);
    QCOMPARE(session.rows(), 4);
    QCOMPARE(session.scrollbackCount(), 0);
    QCOMPARE(session.screenText(), QStringLiteral("a\nb\nc"));
    session.resize(2, 12);
    QCOMPARE(session.cols(), 12);
    QCOMPARE(session.screenText(), QStringLiteral("b\nc"));
    QCOMPARE(session.scrollbackLineText(0), QStringLiteral("a"));
}

void TestTerminalSession::reflowJoinsAndRewraps()
{
    TerminalSession session(5, 20);
    QByteArray line;
    for (int i = 1000; i <= 1010; ++i)
        line += QByteArray::number(i) + ' ';
    line.chop(1); // 54 characters: three rows at 20 columns
    session.feed("$ echo\r\n" + line + "\r\n$ ");
    QCOMPARE(session.lineText(1), QString::fromLatin1(line.left(20)).trimmed());
    session.resize(5, 8);
    QCOMPARE(session.cols(), 8);
    // Nothing lost, nothing doubled: the rows joined give the line again.
    QString joined;
    for (int i = 0; i < session.scrollbackCount(); ++i)
        joined += session.scrollbackLineText(i) + QLatin1Char('|');
    for (int row = 0; row < session.rows(); ++row)
        joined += session.lineText(row) + QLatin1Char('|');
    // (lineText() drops a row's trailing blank, so blanks are left out of the comparison.)
    joined.remove(QLatin1Char('|')).remove(QLatin1Char(' '));
    QVERIFY2(joined.contains(QString::fromLatin1(line).remove(QLatin1Char(' '))),
             qPrintable(joined));
    session.resize(5, 80);
    QCOMPARE(session.screenText(),
             QStringLiteral("$ echo\n") + QString::fromLatin1(line) + QStringLiteral("\n$"));
    QCOMPARE(session.cursorPosition(), QPoint(2, 2));
    QCOMPARE(session.scrollbackCount(), 0);
    // The guest goes on writing where the cursor is.
    session.feed("ls");
    QCOMPARE(session.lineText(2), QStringLiteral("$ ls"));
}

void TestTerminalSession::reflowKeepsHardLineEnds()
{
    TerminalSession session(4, 10);
    // Exactly ten characters and a line feed: a line of its own, not the start of the next.
    session.feed("0123456789\r\nabc\r\n");
    session.resize(4, 20);
    QCOMPARE(session.screenText(), QStringLiteral("0123456789\nabc"));
    session.resize(4, 5);
    QCOMPARE(session.screenText(), QStringLiteral("01234\n56789\nabc"));
    session.resize(4, 10);
    QCOMPARE(session.screenText(), QStringLiteral("0123456789\nabc"));
    // A row cleared and written again by wrapping text is no longer the line-fed row it was.
    session.feed("\x1b[H\x1b[2J9876543210abcdefghij");
    session.resize(4, 30);
    QCOMPARE(session.screenText(), QStringLiteral("9876543210abcdefghij"));
}

void TestTerminalSession::reflowKeepsCursorAndWideCharacters()
{
    TerminalSession session(3, 6);
    session.feed("ab\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad"); // ab中中中: 中 does not fit at col 5
    QCOMPARE(session.lineText(0), QStringLiteral("ab中中"));
    QCOMPARE(session.lineText(1), QStringLiteral("中"));
    session.resize(3, 12);
    QCOMPARE(session.screenText(), QStringLiteral("ab中中中"));
    QCOMPARE(session.cursorPosition(), QPoint(8, 0));
    session.resize(3, 3);
    QCOMPARE(session.screenText(), QStringLiteral("中\n中\n中"));
    QCOMPARE(session.scrollbackCount(), 1);
    QCOMPARE(session.scrollbackLineText(0), QStringLiteral("ab"));
    session.resize(3, 5);
    QCOMPARE(session.screenText(), QStringLiteral("ab中\n中中"));
    QCOMPARE(session.cursorPosition(), QPoint(4, 1));
}

void TestTerminalSession::reflowMovesRowsThroughScrollback()
{
    TerminalSession session(3, 10);
    session.feed("aaaaaaaaaabbbbbbbbbbcc\r\nline2\r\nline3\r\n$ ");
    QCOMPARE(session.scrollbackCount(), 3);
    const auto firstStored = [&] {
        return session.scrollbackPushedTotal() - session.scrollbackCount();
    };
    QCOMPARE(firstStored(), 0);
    session.resize(3, 30);
    QCOMPARE(session.scrollbackCount(), 1);
    QCOMPARE(session.screenText(), QStringLiteral("line2\nline3\n$"));
    QCOMPARE(session.allText(), QStringLiteral("aaaaaaaaaabbbbbbbbbbcc\nline2\nline3\n$"));
    session.resize(3, 10);
    QCOMPARE(session.allText(), QStringLiteral("aaaaaaaaaa\nbbbbbbbbbb\ncc\nline2\nline3\n$"));
    QCOMPARE(firstStored(), 0); // the oldest stored line keeps its number for the view
}

void TestTerminalSession::wideCharacters()
{
    TerminalSession session(3, 10);
    session.feed("a\xe4\xb8\xad"
                 "b"); // a 中 b
    QCOMPARE(session.cell(0, 1).text, QStringLiteral("中"));
    QCOMPARE(session.cell(0, 1).width, 2);
    QCOMPARE(session.cell(0, 2).width, 0);
    QCOMPARE(session.cell(0, 3).text, QStringLiteral("b"));
    QCOMPARE(session.lineText(0), QStringLiteral("a中b"));
    QCOMPARE(session.cursorPosition(), QPoint(4, 0));
}

void TestTerminalSession::utf8SplitAcrossFeeds()
{
    TerminalSession session(3, 10);
    const QByteArray euro("\xe2\x82\xac"); // €
    session.feed(euro.left(1));
    session.feed(euro.mid(1, 1));
    session.feed(euro.mid(2) + "!");
    QCOMPARE(session.lineText(0), QStringLiteral("€!"));
}

void TestTerminalSession::damageCoalesced()
{
    TerminalSession session(5, 20);
    QSignalSpy spy(&session, &TerminalSession::screenChanged);
    session.feed("many\r\nlines\r\nof\r\ntext\r\nin\r\none\r\nfeed");
    QCOMPARE(spy.count(), 1);
    session.feed(QByteArray());
    QCOMPARE(spy.count(), 1);
    session.feed(esc("[?25l"));
    QCOMPARE(spy.count(), 2);
}

void TestTerminalSession::keys_data()
{
    QTest::addColumn<int>("key");
    QTest::addColumn<int>("modifiers");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QByteArray>("bytes");

    const int none = Qt::NoModifier;
    const int ctrl = Qt::ControlModifier;
    const int shift = Qt::ShiftModifier;
    const int alt = Qt::AltModifier;

    QTest::newRow("letter") << int(Qt::Key_A) << none << QStringLiteral("a") << QByteArray("a");
    QTest::newRow("shift letter") << int(Qt::Key_A) << shift << QStringLiteral("A")
                                  << QByteArray("A");
    QTest::newRow("dollar") << int(Qt::Key_Dollar) << none << QStringLiteral("$")
                            << QByteArray("$");
    QTest::newRow("umlaut") << int(Qt::Key_Udiaeresis) << none << QStringLiteral("ü")
                            << QByteArray("\xc3\xbc");
    QTest::newRow("enter") << int(Qt::Key_Return) << none << QStringLiteral("\r")
                           << QByteArray("\r");
    QTest::newRow("keypad enter") << int(Qt::Key_Enter) << int(Qt::KeypadModifier)
                                  << QStringLiteral("\r") << QByteArray("\r");
    QTest::newRow("backspace") << int(Qt::Key_Backspace) << none << QStringLiteral("\b")
                               << QByteArray("\x7f");
    QTest::newRow("tab") << int(Qt::Key_Tab) << none << QStringLiteral("\t") << QByteArray("\t");
    QTest::newRow("backtab") << int(Qt::Key_Backtab) << shift << QString() << esc("[Z");
    QTest::newRow("escape") << int(Qt::Key_Escape) << none << QStringLiteral("\x1b") << esc("");
    QTest::newRow("up") << int(Qt::Key_Up) << none << QString() << esc("[A");
    QTest::newRow("down") << int(Qt::Key_Down) << none << QString() << esc("[B");
    QTest::newRow("right") << int(Qt::Key_Right) << none << QString() << esc("[C");
    QTest::newRow("left") << int(Qt::Key_Left) << none << QString() << esc("[D");
    QTest::newRow("ctrl up") << int(Qt::Key_Up) << ctrl << QString() << esc("[1;5A");
    QTest::newRow("shift right") << int(Qt::Key_Right) << shift << QString() << esc("[1;2C");
    QTest::newRow("home") << int(Qt::Key_Home) << none << QString() << esc("[H");
    QTest::newRow("end") << int(Qt::Key_End) << none << QString() << esc("[F");
    QTest::newRow("page up") << int(Qt::Key_PageUp) << none << QString() << esc("[5~");
    QTest::newRow("page down") << int(Qt::Key_PageDown) << none << QString() << esc("[6~");
    QTest::newRow("insert") << int(Qt::Key_Insert) << none << QString() << esc("[2~");
    QTest::newRow("delete") << int(Qt::Key_Delete) << none << QString() << esc("[3~");
    QTest::newRow("F1") << int(Qt::Key_F1) << none << QString() << esc("OP");
    QTest::newRow("F4") << int(Qt::Key_F4) << none << QString() << esc("OS");
    QTest::newRow("F5") << int(Qt::Key_F5) << none << QString() << esc("[15~");
    QTest::newRow("F12") << int(Qt::Key_F12) << none << QString() << esc("[24~");
    QTest::newRow("ctrl c (control text)")
        << int(Qt::Key_C) << ctrl << QStringLiteral("\x03") << QByteArray("\x03");
    QTest::newRow("ctrl d (no text)") << int(Qt::Key_D) << ctrl << QString() << QByteArray("\x04");
    QTest::newRow("ctrl shift z") << int(Qt::Key_Z) << (ctrl | shift) << QStringLiteral("\x1a")
                                  << QByteArray("\x1a");
    QTest::newRow("ctrl backslash")
        << int(Qt::Key_Backslash) << ctrl << QStringLiteral("\x1c") << QByteArray("\x1c");
    QTest::newRow("ctrl space") << int(Qt::Key_Space) << ctrl << QString() << QByteArray(1, '\0');
    QTest::newRow("alt x") << int(Qt::Key_X) << alt << QStringLiteral("x") << esc("x");
    QTest::newRow("lone shift") << int(Qt::Key_Shift) << shift << QString() << QByteArray();
    QTest::newRow("lone control") << int(Qt::Key_Control) << ctrl << QString() << QByteArray();
}

void TestTerminalSession::keys()
{
    QFETCH(int, key);
    QFETCH(int, modifiers);
    QFETCH(QString, text);
    QFETCH(QByteArray, bytes);
    TerminalSession session;
    QSignalSpy spy(&session, &TerminalSession::outputReady);
    const bool produced = session.sendKey(key, Qt::KeyboardModifiers(modifiers), text);
    QCOMPARE(produced, !bytes.isEmpty());
    QByteArray sent;
    for (const QList<QVariant> &args : spy)
        sent += args.at(0).toByteArray();
    QCOMPARE(sent, bytes);
    if (!bytes.isEmpty())
        QCOMPARE(spy.count(), 1);
}

void TestTerminalSession::applicationCursorKeys()
{
    TerminalSession session;
    QSignalSpy spy(&session, &TerminalSession::outputReady);
    session.feed(esc("[?1h")); // DECCKM: the guest (e.g. vi, less) asks for SS3 arrows
    session.sendKey(Qt::Key_Up, Qt::NoModifier, {});
    QCOMPARE(spy.takeLast().at(0).toByteArray(), esc("OA"));
    session.feed(esc("[?1l"));
    session.sendKey(Qt::Key_Up, Qt::NoModifier, {});
    QCOMPARE(spy.takeLast().at(0).toByteArray(), esc("[A"));
}

void TestTerminalSession::pastePlainAndBracketed()
{
    TerminalSession session;
    QSignalSpy spy(&session, &TerminalSession::outputReady);
    session.sendText(QStringLiteral("ls -l\nexit\n"));
    QCOMPARE(spy.takeLast().at(0).toByteArray(), QByteArray("ls -l\rexit\r"));

    session.feed(esc("[?2004h"));
    session.sendText(QStringLiteral("päste"));
    QCOMPARE(spy.takeLast().at(0).toByteArray(), esc("[200~p\xc3\xa4ste") + esc("[201~"));

    // Typed text (not a paste) is never bracketed.
    session.sendText(QStringLiteral("ab"), false);
    QCOMPARE(spy.takeLast().at(0).toByteArray(), QByteArray("ab"));
}

void TestTerminalSession::answersCursorReport()
{
    TerminalSession session(10, 40);
    QSignalSpy spy(&session, &TerminalSession::outputReady);
    session.feed(esc("[4;7H") + esc("[6n"));
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toByteArray(), esc("[4;7R"));
}

void TestTerminalSession::resetClears()
{
    TerminalSession session(3, 10);
    session.feed("a\r\nb\r\nc\r\nd" + esc("[31m"));
    QVERIFY(session.scrollbackCount() > 0);
    session.reset();
    QCOMPARE(session.screenText(), QString());
    QCOMPARE(session.scrollbackCount(), 0);
    QCOMPARE(session.cursorPosition(), QPoint(0, 0));
    session.feed("x");
    QCOMPARE(hex(session.cell(0, 0).foreground), hex(session.defaultForeground()));
}

// docs/reviews/2026-12-01-guest-channels-round4.md#f4: the window feeds every console.output
// notification (up to ConsoleHub's kMaxChunkBytes = 64 KiB of guest bytes) to TerminalSession on
// its GUI thread. Some cheap sequences cost libvterm a whole-screen operation each: DECALN (ESC #
// 8) fills the screen, reverse index at the top (ESC M) and a line feed at the bottom scroll all of
// it. A guest printing them keeps the window's event loop busy for seconds per notification (every
// tab, every dialog, every host), and the helper, whose notifications then pile up unread, drops
// the window's connection at 16 MiB (RpcConnection::kMaxPendingOutputBytes). A 60x200 console
// (a maximised window) is assumed; the budget is 250 ms per notification.
// Output that is slow to draw (DECALN fills the 60×200 screen: about 1.6 s for 64 KiB here,
// line feeds at the bottom scroll it) reaches the session a slice per event-loop turn, so the
// window's thread stays free (docs/reviews/2026-12-01-guest-channels-round4.md#f4); the screen ends
// up as if fed at once, whatever the slices split.
void TestTerminalSession::feederSlicesAndYields_data()
{
    QTest::addColumn<QByteArray>("op");
    QTest::newRow("DECALN") << esc("#8");
    QTest::newRow("line feeds") << QByteArray("ab\r\n");
    QTest::newRow("colours and UTF-8 across slice ends")
        << (esc("[1;31m") + "gr\xc3\xbc\xc3\x9f " + esc("[0m") + esc("[2;3H") + "\xe2\x82\xac");
}

void TestTerminalSession::feederSlicesAndYields()
{
    QFETCH(QByteArray, op);
    QByteArray chunk;
    while (chunk.size() + op.size() <= 16 * 1024)
        chunk += op;
    chunk += "end";
    TerminalSession direct(60, 200);
    direct.feed(chunk);

    TerminalSession session(60, 200);
    TerminalFeeder feeder(&session);
    feeder.setBudgetMs(0); // one slice per turn, whatever this machine's speed
    feeder.enqueue(chunk.left(5000));
    feeder.enqueue(chunk.mid(5000));
    QCOMPARE(feeder.backlog(), chunk.size()); // nothing is fed inside enqueue()
    QCOMPARE(session.screenText(), QString());
    QCOMPARE(feeder.step(), TerminalFeeder::kSliceBytes);
    QCOMPARE(feeder.backlog(), chunk.size() - TerminalFeeder::kSliceBytes);
    // Other events run between the slices.
    qsizetype backlogWhenOtherEventRan = -1;
    QTimer::singleShot(0, this, [&] { backlogWhenOtherEventRan = feeder.backlog(); });
    QTRY_COMPARE(feeder.backlog(), 0);
    QVERIFY2(backlogWhenOtherEventRan > 0, qPrintable(QString::number(backlogWhenOtherEventRan)));
    QCOMPARE(session.screenText(), direct.screenText());
    QCOMPARE(session.cursorPosition(), direct.cursorPosition());
}

void TestTerminalSession::feederBoundsItsBacklog()
{
    TerminalSession session(24, 80);
    TerminalFeeder feeder(&session);
    QSignalSpy skipped(&feeder, &TerminalFeeder::skipped);
    const QByteArray mib(1024 * 1024, 'x');
    for (int i = 0; i < 5; ++i)
        feeder.enqueue(mib);
    QCOMPARE(skipped.count(), 1);
    QCOMPARE(skipped.first().first().toLongLong(),
             5 * mib.size() - TerminalFeeder::kKeepOnOverflow);
    QCOMPARE(feeder.backlog(), TerminalFeeder::kKeepOnOverflow);
    feeder.enqueue("tail");
    QCOMPARE(feeder.backlog(), TerminalFeeder::kKeepOnOverflow + 4);
    feeder.clear();
    QCOMPARE(feeder.backlog(), 0);
    QCOMPARE(feeder.step(), 0);
}

QTEST_GUILESS_MAIN(TestTerminalSession)
#include "tst_terminalsession.moc"

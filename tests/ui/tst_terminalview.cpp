#include "core/terminal/terminalsession.h"
#include "eventloop.h"
#include "ui/terminalview.h"

#include <QApplication>
#include <QClipboard>
#include <QFontMetricsF>
#include <QLineEdit>
#include <QMenu>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabBar>
#include <QTabWidget>
#include <QTest>
#include <QTimer>
#include <QVBoxLayout>

using namespace airlock;

namespace {

/// Counts paint events of a widget.
class PaintCounter : public QObject
{
public:
    int paints = 0;

protected:
    bool eventFilter(QObject *, QEvent *event) override
    {
        if (event->type() == QEvent::Paint)
            ++paints;
        return false;
    }
};

QByteArray sent(const QSignalSpy &spy)
{
    QByteArray bytes;
    for (const QList<QVariant> &args : spy)
        bytes += args.at(0).toByteArray();
    return bytes;
}

} // namespace

/// The console widget on the offscreen platform: keys, clipboard, scrollback, throttling.
class TestTerminalView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void sizeFollowsWidget();
    void keysGoToTheGuest();
    void tabStaysInTheTerminal();
    void copyAndPaste();
    void scrollbackWithWheelAndScrollBar();
    void floodIsThrottled();
    void columnsAreWhatTheViewportShows_data();
    void columnsAreWhatTheViewportShows();
    void waysOutOfTheTerminal();
    void longLineReflowsOnResize();

private:
    std::unique_ptr<QWidget> m_window;
    TerminalSession *m_session = nullptr;
    TerminalView *m_view = nullptr;
    QLineEdit *m_neighbour = nullptr;
};

void TestTerminalView::initTestCase()
{
    // The leave shortcut lives in QSettings: keep the user's own out of the test.
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("airlock-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_terminalview"));
    QSettings().clear();
}

void TestTerminalView::init()
{
    m_window = std::make_unique<QWidget>();
    auto *layout = new QVBoxLayout(m_window.get());
    m_session = new TerminalSession(24, 80, m_window.get());
    m_view = new TerminalView(m_session, m_window.get());
    m_neighbour = new QLineEdit(m_window.get());
    layout->addWidget(m_view);
    layout->addWidget(m_neighbour);
    m_window->resize(800, 500);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_view->setFocus();
}

void TestTerminalView::cleanup()
{
    m_window.reset();
}

void TestTerminalView::sizeFollowsWidget()
{
    const QSize cell = m_view->cellSize();
    QVERIFY(cell.width() > 0 && cell.height() > 0);
    const int cols = m_session->cols();
    const int rows = m_session->rows();
    QVERIFY(cols >= m_view->viewport()->width() / cell.width() - 1);
    QVERIFY(rows >= m_view->viewport()->height() / cell.height() - 1);
    QSignalSpy resized(m_view, &TerminalView::terminalSizeChanged);
    m_window->resize(1000, 700);
    QTRY_VERIFY(!resized.isEmpty());
    QVERIFY(m_session->cols() > cols);
    QVERIFY(m_session->rows() > rows);
}

void TestTerminalView::keysGoToTheGuest()
{
    QSignalSpy output(m_session, &TerminalSession::outputReady);
    QTest::keyClicks(m_view, QStringLiteral("ls"));
    QTest::keyClick(m_view, Qt::Key_Return);
    QTest::keyClick(m_view, Qt::Key_C, Qt::ControlModifier);
    QTest::keyClick(m_view, Qt::Key_Up);
    QTest::keyClick(m_view, Qt::Key_F2);
    QCOMPARE(sent(output), QByteArray("ls\r\x03\x1b[A\x1bOQ"));
}

void TestTerminalView::tabStaysInTheTerminal()
{
    QSignalSpy output(m_session, &TerminalSession::outputReady);
    QTest::keyClick(m_view, Qt::Key_Tab);
    QCOMPARE(sent(output), QByteArray("\t"));
    QVERIFY(QApplication::focusWidget() != m_neighbour);

    // A window shortcut like Ctrl+N does not steal Ctrl keys from the terminal.
    QKeyEvent override(QEvent::ShortcutOverride, Qt::Key_N, Qt::ControlModifier);
    QApplication::sendEvent(m_view, &override);
    QVERIFY(override.isAccepted());
}

void TestTerminalView::copyAndPaste()
{
    m_session->feed("hello world\r\nsecond line");
    m_view->selectAll();
    QCOMPARE(m_view->selectedText().trimmed(), QStringLiteral("hello world\nsecond line"));

    QSignalSpy output(m_session, &TerminalSession::outputReady);
    QTest::keyClick(m_view, Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(output.count(), 0); // copying sends nothing to the guest
    QCOMPARE(QApplication::clipboard()->text().trimmed(),
             QStringLiteral("hello world\nsecond line"));

    // Drag-select "world" on the first line.
    const QSize cell = m_view->cellSize();
    const int y = cell.height() / 2 + 4;
    QTest::mousePress(m_view->viewport(), Qt::LeftButton, {}, QPoint(4 + 6 * cell.width(), y));
    QTest::mouseMove(m_view->viewport(), QPoint(4 + 11 * cell.width(), y));
    QTest::mouseRelease(m_view->viewport(), Qt::LeftButton, {}, QPoint(4 + 11 * cell.width(), y));
    QCOMPARE(m_view->selectedText(), QStringLiteral("world"));

    QApplication::clipboard()->setText(QStringLiteral("pasted\n"));
    QTest::keyClick(m_view, Qt::Key_V, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(sent(output), QByteArray("pasted\r"));
    output.clear();
    m_session->feed("\x1b[?2004h");
    QTest::keyClick(m_view, Qt::Key_V, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(sent(output), QByteArray("\x1b[200~pasted\r\x1b[201~"));
}

void TestTerminalView::scrollbackWithWheelAndScrollBar()
{
    QByteArray text;
    for (int i = 0; i < 200; ++i)
        text += "line " + QByteArray::number(i) + "\r\n";
    m_session->feed(text);
    QScrollBar *bar = m_view->verticalScrollBar();
    QTRY_VERIFY(bar->maximum() > 100);
    QCOMPARE(bar->value(), bar->maximum()); // following the output

    QWheelEvent wheel(QPointF(50, 50), m_view->viewport()->mapToGlobal(QPointF(50, 50)), {},
                      QPoint(0, 120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(m_view->viewport(), &wheel);
    QVERIFY(bar->value() < bar->maximum());
    const int reading = bar->value();

    // New output while the user reads the history does not yank the view down (once the view
    // took it: the history grew by the line).
    const int maximum = bar->maximum();
    m_session->feed("more\r\n");
    QTRY_VERIFY(bar->maximum() > maximum);
    QCOMPARE(bar->value(), reading);

    // Typing returns to the bottom.
    QTest::keyClick(m_view, Qt::Key_A);
    QCOMPARE(bar->value(), bar->maximum());
}

void TestTerminalView::floodIsThrottled()
{
    auto *counter = new PaintCounter;
    m_view->viewport()->installEventFilter(counter);
    QByteArray chunk;
    for (int i = 0; i < 60; ++i)
        chunk += "flood flood flood flood flood flood flood flood flood flood flood\r\n";

    // Feed chunks as fast as console.output could deliver them, letting the event loop run
    // between chunks as it would between socket reads.
    auto *repaint = m_view->findChild<QTimer *>(QStringLiteral("repaint"));
    QVERIFY(repaint);
    QSignalSpy ticks(repaint, &QTimer::timeout);
    const int feeds = 2000;
    for (int i = 0; i < feeds; ++i) {
        m_session->feed(chunk);
        QCoreApplication::processEvents();
    }
    // The last repaint happened and was painted.
    QTRY_VERIFY(!repaint->isActive());
    QVERIFY(airlock::test::runUntilIdle());
    qInfo("%d feeds (%lld KiB), %lld ticks of the repaint timer, %d paints", feeds,
          qint64(feeds) * chunk.size() / 1024, qint64(ticks.count()), counter->paints);
    QVERIFY(counter->paints > 0);
    // At most one repaint per tick of the 10 ms timer (plus slack), never one per feed.
    QVERIFY2(
        counter->paints <= ticks.count() + 5,
        qPrintable(QStringLiteral("%1 paints, %2 ticks").arg(counter->paints).arg(ticks.count())));
    QVERIFY(counter->paints < feeds / 4);
    QVERIFY(m_session->screenText().contains(QStringLiteral("flood")));
    delete counter;
}

void TestTerminalView::columnsAreWhatTheViewportShows_data()
{
    QTest::addColumn<int>("width");
    // The widths of issue 17 (1-2 characters lost at 811 px, about 4 at 1600 px) and others.
    for (const int width : {400, 811, 1000, 1237, 1600, 1920})
        QTest::addRow("%d px", width) << width;
}

void TestTerminalView::columnsAreWhatTheViewportShows()
{
    QFETCH(int, width);
    m_window->resize(width, 500);
    QScrollBar *bar = m_view->verticalScrollBar();
    QVERIFY(bar->isVisible());
    const QWidget *viewport = m_view->viewport();
    // The viewport ends where the scroll bar begins.
    // (The bar sits in a container widget of the scroll area: compare in the view's coordinates.)
    QVERIFY(viewport->mapTo(m_view, QPoint(viewport->width(), 0)).x()
            <= bar->mapTo(m_view, QPoint(0, 0)).x());
    const int usable = viewport->width() - 2 * TerminalView::kMargin;
    const int cell = m_view->cellSize().width();
    QTRY_COMPARE(m_session->cols(), usable / cell);
    const int cols = m_session->cols();
    // A full line, drawn in the view's font as paintEvent() draws a run, ends inside the
    // viewport: no character under the scroll bar.
    const QString line(cols, QLatin1Char('8'));
    const qreal drawn = QFontMetricsF(m_view->font()).horizontalAdvance(line);
    QVERIFY2(TerminalView::kMargin + drawn <= viewport->width() + 0.5,
             qPrintable(QStringLiteral("%1 columns drawn %2 px wide in a %3 px viewport")
                            .arg(cols)
                            .arg(drawn)
                            .arg(viewport->width())));
    // And the grid is the text: each column starts where the font puts its character.
    QVERIFY2(qAbs(drawn - cols * cell) < 1.0,
             qPrintable(QStringLiteral("grid %1 px, text %2 px").arg(cols * cell).arg(drawn)));
    // No column wasted either.
    QVERIFY((cols + 1) * cell > usable);
}

void TestTerminalView::waysOutOfTheTerminal()
{
    // The view in the middle tab of three, as a console among the window's tabs.
    QTabWidget tabs;
    auto *before = new QLineEdit(&tabs);
    auto *session = new TerminalSession(24, 80, &tabs);
    auto *view = new TerminalView(session, &tabs);
    auto *after = new QLineEdit(&tabs);
    tabs.addTab(before, QStringLiteral("before"));
    tabs.addTab(view, QStringLiteral("console"));
    tabs.addTab(after, QStringLiteral("after"));
    tabs.resize(600, 400);
    tabs.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tabs));
    QSignalSpy output(session, &TerminalSession::outputReady);
    const auto backToConsole = [&] {
        tabs.setCurrentWidget(view);
        view->setFocus();
        QTRY_VERIFY(view->hasFocus());
    };
    backToConsole();

    // Keys the guest needs stay with it (shell completion, readline's Alt+F, mc's F10, Ctrl+1).
    QTest::keyClick(view, Qt::Key_Tab);
    QTest::keyClick(view, Qt::Key_F, Qt::AltModifier);
    QTest::keyClick(view, Qt::Key_F10);
    QCOMPARE(tabs.currentWidget(), view);
    QVERIFY(!sent(output).isEmpty());
    output.clear();

    // The exits are ours even when the window has a shortcut on the same key.
    for (const auto &[key, mods] :
         {std::pair {Qt::Key_PageDown, Qt::KeyboardModifiers(Qt::ControlModifier)},
          std::pair {Qt::Key_Backtab, Qt::ControlModifier | Qt::ShiftModifier},
          std::pair {Qt::Key_BracketRight, Qt::KeyboardModifiers(Qt::ControlModifier)}}) {
        QKeyEvent override(QEvent::ShortcutOverride, key, mods);
        override.ignore();
        QApplication::sendEvent(view, &override);
        QVERIFY(override.isAccepted());
    }

    QTest::keyClick(view, Qt::Key_PageDown, Qt::ControlModifier);
    QCOMPARE(tabs.currentWidget(), after);
    QTRY_VERIFY(after->hasFocus());
    backToConsole();
    QTest::keyClick(view, Qt::Key_PageUp, Qt::ControlModifier);
    QCOMPARE(tabs.currentWidget(), before);
    backToConsole();
    QTest::keyClick(view, Qt::Key_Backtab, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(tabs.currentWidget(), before);
    backToConsole();
    QTest::keyClick(view, Qt::Key_Tab, Qt::ControlModifier);
    QCOMPARE(tabs.currentWidget(), after);
    backToConsole();

    // The leave shortcut (Ctrl+] by default) puts the focus on the tab bar; Tab goes on from
    // there as everywhere else.
    QCOMPARE(TerminalView::leaveShortcut(),
             QKeySequence(Qt::ControlModifier | Qt::Key_BracketRight));
    QTest::keyClick(view, Qt::Key_BracketRight, Qt::ControlModifier);
    QTRY_COMPARE(QApplication::focusWidget(), tabs.tabBar());
    QCOMPARE(tabs.currentWidget(), view);
    QCOMPARE(sent(output), QByteArray()); // none of the exits reached the guest

    // Configurable: another key leaves, and Ctrl+] is the guest's again.
    TerminalView::setLeaveShortcut(QKeySequence(Qt::Key_F12));
    backToConsole();
    QTest::keyClick(view, Qt::Key_BracketRight, Qt::ControlModifier);
    QCOMPARE(sent(output), QByteArray("\x1d"));
    QTest::keyClick(view, Qt::Key_F12);
    QTRY_COMPARE(QApplication::focusWidget(), tabs.tabBar());

    // The context menu shows the ways out with their keys.
    std::unique_ptr<QMenu> menu(view->createContextMenu(nullptr));
    const auto *leave = menu->findChild<QAction *>(QStringLiteral("leaveConsole"));
    QVERIFY(leave);
    QCOMPARE(leave->shortcut(), QKeySequence(Qt::Key_F12));
    QStringList shortcuts;
    for (const QAction *action : menu->actions())
        for (const QKeySequence &sequence : action->shortcuts())
            shortcuts.append(sequence.toString(QKeySequence::PortableText));
    QVERIFY2(shortcuts.contains(QStringLiteral("Ctrl+PgDown"))
                 && shortcuts.contains(QStringLiteral("Ctrl+PgUp")),
             qPrintable(shortcuts.join(QLatin1Char(' '))));
    TerminalView::setLeaveShortcut({});
    QCOMPARE(TerminalView::leaveShortcut(),
             QKeySequence(Qt::ControlModifier | Qt::Key_BracketRight));
}

void TestTerminalView::longLineReflowsOnResize()
{
    // `echo $(seq 1000 1080)` as the guest's tty writes it: one line of 404 characters.
    QStringList numbers;
    for (int i = 1000; i <= 1080; ++i)
        numbers.append(QString::number(i));
    const QString line = numbers.join(QLatin1Char(' '));
    m_window->resize(1000, 500);
    QTRY_VERIFY(m_session->cols() > 80);
    const int wide = m_session->cols();
    m_session->feed("$ echo $(seq 1000 1080)\r\n" + line.toLatin1() + "\r\n$ ");
    const auto rowsOfLine = [&] {
        // The rows between the command and the next prompt, in scrollback and on the screen.
        QStringList all = m_session->allText().split(QLatin1Char('\n'));
        const qsizetype first = all.indexOf(QStringLiteral("$ echo $(seq 1000 1080)"));
        const qsizetype prompt = all.lastIndexOf(QStringLiteral("$"));
        return first < 0 || prompt <= first ? QStringList()
                                            : all.mid(first + 1, prompt - first - 1);
    };
    const qsizetype wideRows = rowsOfLine().size();
    QCOMPARE(wideRows, (line.size() + wide - 1) / wide);

    // Narrow: the line wraps into more rows, every character kept.
    QSignalSpy resized(m_view, &TerminalView::terminalSizeChanged);
    m_window->resize(300, 500);
    QTRY_VERIFY(!resized.isEmpty());
    const int narrow = m_session->cols();
    QVERIFY(narrow < 40);
    QStringList narrowRows = rowsOfLine();
    QVERIFY2(narrowRows.size() > wideRows, qPrintable(narrowRows.join(QLatin1Char('|'))));
    for (const QString &row : std::as_const(narrowRows))
        QVERIFY(row.size() <= narrow);
    // lineText() drops a row's trailing blank: compare without blanks.
    QString joined = narrowRows.join(QString());
    QCOMPARE(joined.remove(QLatin1Char(' ')), QString(line).remove(QLatin1Char(' ')));

    // Wide again: the rows join back into the line, wrapped only where the view ends.
    resized.clear();
    m_window->resize(1000, 500);
    QTRY_VERIFY(!resized.isEmpty());
    QCOMPARE(m_session->cols(), wide);
    QStringList wideAgain = rowsOfLine();
    QCOMPARE(wideAgain.size(), wideRows);
    QString rejoined;
    for (int i = 0; i < wideAgain.size(); ++i)
        rejoined += wideAgain.at(i).leftJustified(i + 1 < wideAgain.size() ? wide : 0);
    QCOMPARE(rejoined, line);
    // The cursor is still after the prompt, where the guest's next byte goes.
    m_session->feed("ls");
    QCOMPARE(m_session->allText().split(QLatin1Char('\n')).constLast(), QStringLiteral("$ ls"));
}

QTEST_MAIN(TestTerminalView)
#include "tst_terminalview.moc"

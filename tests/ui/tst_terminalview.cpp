#include "core/terminal/terminalsession.h"
#include "eventloop.h"
#include "ui/terminalview.h"

#include <QApplication>
#include <QClipboard>
#include <QLineEdit>
#include <QScrollBar>
#include <QSignalSpy>
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
    void init();
    void cleanup();
    void sizeFollowsWidget();
    void keysGoToTheGuest();
    void tabStaysInTheTerminal();
    void copyAndPaste();
    void scrollbackWithWheelAndScrollBar();
    void floodIsThrottled();

private:
    std::unique_ptr<QWidget> m_window;
    TerminalSession *m_session = nullptr;
    TerminalView *m_view = nullptr;
    QLineEdit *m_neighbour = nullptr;
};

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
    QKeyEvent tabSwitch(QEvent::ShortcutOverride, Qt::Key_PageDown, Qt::ControlModifier);
    tabSwitch.ignore();
    QApplication::sendEvent(m_view, &tabSwitch);
    QVERIFY(!tabSwitch.isAccepted());
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

QTEST_MAIN(TestTerminalView)
#include "tst_terminalview.moc"

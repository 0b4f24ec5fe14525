// HttpResponseTracker (docs/gateway.md, "Responses"): where each upstream response ends and
// its status, whatever the split; interim 1xx, HEAD, chunked, close-delimited, garbage.
#include "core/gateway/http/httpresponsetracker.h"

#include <QTest>

using namespace airlock::gateway;

namespace {

struct Outcome
{
    int status = 0;
    bool finished = false;
    bool keepAlive = true;
    bool error = false;
    qsizetype consumed = 0;
};

// Feeds `bytes` in pieces of `step` bytes (0: all at once) for one request.
Outcome track(const QByteArray &bytes, bool head, qsizetype step, bool eof = false)
{
    HttpResponseTracker tracker;
    tracker.expect(head);
    Outcome outcome;
    qsizetype offset = 0;
    while (offset < bytes.size() && !outcome.finished && !outcome.error) {
        const qsizetype size =
            step == 0 ? bytes.size() - offset : qMin(step, bytes.size() - offset);
        QByteArrayView piece = QByteArrayView(bytes).sliced(offset, size);
        while (!piece.isEmpty()) {
            const auto progress = tracker.feed(piece);
            outcome.consumed += progress.consumed;
            if (progress.status != 0 && !progress.interim)
                outcome.status = progress.status;
            if (progress.error) {
                outcome.error = true;
                break;
            }
            if (progress.finished) {
                outcome.finished = true;
                outcome.keepAlive = progress.keepAlive;
                break;
            }
            piece = piece.sliced(progress.consumed);
            if (progress.consumed == 0)
                break;
        }
        offset += size;
    }
    if (eof && !outcome.finished && !outcome.error) {
        outcome.finished = tracker.finishOnEof();
        outcome.keepAlive = false; // the upstream closed
    }
    return outcome;
}

} // namespace

class TestHttpResponseTracker : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void responses_data();
    void responses();
    void pipelinedSecondResponseStaysUnread();
    void unsolicitedBytesAreAnError();
};

void TestHttpResponseTracker::responses_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<bool>("head");
    QTest::addColumn<bool>("eof");
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("finished");
    QTest::addColumn<bool>("keepAlive");
    QTest::addColumn<bool>("error");

    QTest::newRow("content-length")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello") << false << false << 200
        << true << true << false;
    QTest::newRow("no body 204") << QByteArray("HTTP/1.1 204 No Content\r\n\r\n") << false << false
                                 << 204 << true << true << false;
    QTest::newRow("redirect passed")
        << QByteArray("HTTP/1.1 302 Found\r\nLocation: https://evil.test/\r\nContent-Length: 0"
                      "\r\n\r\n")
        << false << false << 302 << true << true << false;
    QTest::newRow("HEAD ignores length")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 999\r\n\r\n") << true << false << 200
        << true << true << false;
    QTest::newRow("chunked") << QByteArray(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
                             << false << false << 200 << true << true << false;
    QTest::newRow("interim 100 then 201") << QByteArray(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
                                          << false << false << 201 << true << true << false;
    QTest::newRow("connection close")
        << QByteArray("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
        << false << false << 200 << true << false << false;
    QTest::newRow("close-delimited at EOF") << QByteArray("HTTP/1.1 200 OK\r\n\r\nuntil the end")
                                            << false << true << 200 << true << false << false;
    QTest::newRow("truncated body at EOF")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort") << false << true << 200
        << false << true << false;
    QTest::newRow("HTTP/1.0 without keep-alive")
        << QByteArray("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n") << false << false << 200
        << true << false << false;
    QTest::newRow("garbage") << QByteArray("SSH-2.0-x\r\n\r\n") << false << false << 0 << false
                             << true << true;
}

void TestHttpResponseTracker::responses()
{
    QFETCH(QByteArray, bytes);
    QFETCH(bool, head);
    QFETCH(bool, eof);
    QFETCH(int, status);
    QFETCH(bool, finished);
    QFETCH(bool, keepAlive);
    QFETCH(bool, error);
    for (const qsizetype step : {qsizetype(0), qsizetype(1), qsizetype(3), qsizetype(7)}) {
        const Outcome outcome = track(bytes, head, step, eof);
        QCOMPARE(outcome.error, error);
        if (error)
            continue;
        QCOMPARE(outcome.status, status);
        QCOMPARE(outcome.finished, finished);
        if (finished) {
            QCOMPARE(outcome.keepAlive, keepAlive);
            if (!eof)
                QCOMPARE(outcome.consumed, bytes.size());
        }
    }
}

void TestHttpResponseTracker::pipelinedSecondResponseStaysUnread()
{
    HttpResponseTracker tracker;
    tracker.expect(false);
    const QByteArray first = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na";
    const QByteArray second = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    const auto progress = tracker.feed(first + second);
    QVERIFY(progress.finished);
    QCOMPARE(progress.consumed, first.size());
    QVERIFY(!tracker.active());
    tracker.expect(false);
    const auto next = tracker.feed(second);
    QCOMPARE(next.status, 404);
    QVERIFY(next.finished);
}

void TestHttpResponseTracker::unsolicitedBytesAreAnError()
{
    HttpResponseTracker tracker;
    QVERIFY(tracker.feed("HTTP/1.1 200 OK\r\n\r\n").error);
}

QTEST_APPLESS_MAIN(TestHttpResponseTracker)
#include "tst_httpresponsetracker.moc"

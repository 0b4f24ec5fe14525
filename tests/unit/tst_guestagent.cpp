// GuestAgent against a scripted "guest" on the other end of a socketpair: the refresh lines it
// sends, and how strictly it reads what a hostile guest answers (oversized lines, garbage,
// acknowledgements of other nonces, a failure, silence, a closed channel, a flood), and that it
// reads nothing while it expects nothing.

#include "core/vmm/guestagent.h"
#include "eventloop.h"

#include <QDeadlineTimer>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <atomic>
#include <chrono>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using airlock::ErrorKind;
using airlock::GuestAgent;
using airlock::GuestIdentity;
using airlock::SeedFile;

Q_DECLARE_METATYPE(airlock::GuestIdentity)

namespace {

GuestIdentity sampleIdentity()
{
    GuestIdentity identity;
    identity.hostname = QStringLiteral("fork1");
    identity.mac = QStringLiteral("02:61:6c:00:00:01");
    identity.address = QStringLiteral("100.96.0.6");
    identity.prefixLength = 30;
    identity.gateway = QStringLiteral("100.96.0.5");
    identity.dns = QStringLiteral("100.96.0.5");
    identity.files = {SeedFile {QStringLiteral("ca.pem"), QByteArray("-----BEGIN X-----\n"), 0644}};
    identity.entropy = QByteArray(64, 'e');
    return identity;
}

/// The guest end: reads until the commit line, then writes `answer(nonce)` and returns
/// everything it read.
class FakeGuest
{
public:
    explicit FakeGuest(int fd) : m_fd(fd) { }
    ~FakeGuest()
    {
        if (m_thread.joinable())
            m_thread.join();
        ::close(m_fd);
    }
    void answer(std::function<QByteArray(const QByteArray &nonce)> reply)
    {
        m_thread = std::thread([this, reply] {
            char buffer[4096];
            while (!m_received.contains("commit ")
                   || !m_received.mid(m_received.indexOf("commit ")).contains('\n')) {
                const ssize_t n = ::read(m_fd, buffer, sizeof buffer);
                if (n <= 0)
                    return;
                m_received.append(buffer, n);
            }
            const qsizetype at = m_received.indexOf("commit ") + 7;
            const QByteArray nonce = m_received.mid(at, m_received.indexOf('\n', at) - at);
            const QByteArray bytes = reply(nonce);
            // MSG_NOSIGNAL: the helper's end may be gone by then (a test that ends early).
            if (!bytes.isEmpty()) [[maybe_unused]]
                auto written = ::send(m_fd, bytes.constData(), bytes.size(), MSG_NOSIGNAL);
        });
    }
    QByteArray received()
    {
        if (m_thread.joinable())
            m_thread.join();
        return m_received;
    }
    int fd() const { return m_fd; }

private:
    int m_fd;
    std::thread m_thread;
    QByteArray m_received;
};

/// Writes short lines to `fd` until the socket takes no more, lets the event loop handle what
/// is there (runUntilIdle(): a reader reads now), and writes again, until a round takes nothing
/// (nobody reads) or 64 MiB went in (somebody does); returns the bytes written.
qint64 flood(int fd)
{
    const QByteArray lines = QByteArray("x\n").repeated(32 * 1024);
    qint64 written = 0;
    for (qint64 round = -1; round != 0 && written < 64LL * 1024 * 1024;) {
        round = 0;
        for (ssize_t n;
             (n = ::send(fd, lines.constData(), size_t(lines.size()), MSG_DONTWAIT | MSG_NOSIGNAL))
             > 0;)
            round += n;
        written += round;
        airlock::test::runUntilIdle();
    }
    return written;
}

} // namespace

class TestGuestAgent : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();

    void encodesEveryField();
    void encodeRefusesWhatBreaksTheFraming_data();
    void encodeRefusesWhatBreaksTheFraming();
    void acknowledgedRefresh();
    void hostileLinesAreDroppedAndOnlyTheRightNonceCounts();
    void failureNamesTheStep();
    void silenceTimesOut();
    void closedChannelFailsAtOnce();
    void awaitReadyReadsOnlyUpToTheReadyLine();
    void awaitReadyTimesOut();
    void floodInsteadOfReadyEndsTheWait();
    void floodDuringARefreshEndsIt();
    void endlessLineDuringARefreshEndsIt();
    void refreshAnswersFromTheEventLoop();
    void freshChannelIsNotRead();
    void restoredGuestIsNotRead();

private:
    std::unique_ptr<GuestAgent> m_agent;
    std::unique_ptr<FakeGuest> m_guest;
};

void TestGuestAgent::init()
{
    int fds[2];
    QCOMPARE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    auto *socket = new QLocalSocket;
    QVERIFY(socket->setSocketDescriptor(fds[0]));
    m_agent = std::make_unique<GuestAgent>(socket);
    m_guest = std::make_unique<FakeGuest>(fds[1]);
}

void TestGuestAgent::cleanup()
{
    m_agent.reset();
    m_guest.reset();
}

void TestGuestAgent::encodesEveryField()
{
    auto lines = GuestAgent::encode(sampleIdentity(), QStringLiteral("0123456789abcdef"));
    QVERIFY(lines);
    const QList<QByteArray> split = lines->split('\n');
    // The begin line announces the length of everything after it.
    QVERIFY(split.first().startsWith("begin 0123456789abcdef "));
    QCOMPARE(split.first().mid(23).toLongLong(), lines->size() - split.first().size() - 1);
    QVERIFY(split.contains("name fork1"));
    QVERIFY(split.contains("mac 02:61:6c:00:00:01"));
    QVERIFY(split.contains("addr 100.96.0.6/30"));
    QVERIFY(split.contains("gw 100.96.0.5"));
    QVERIFY(split.contains("dns 100.96.0.5"));
    QVERIFY(split.contains("entropy " + QByteArray(64, 'e').toBase64()));
    QVERIFY(split.contains("file ca.pem 644 " + QByteArray("-----BEGIN X-----\n").toBase64()));
    QCOMPARE(split.at(split.size() - 2), QByteArray("commit 0123456789abcdef"));
    QCOMPARE(split.last(), QByteArray());
}

void TestGuestAgent::encodeRefusesWhatBreaksTheFraming_data()
{
    QTest::addColumn<GuestIdentity>("identity");
    QTest::addColumn<QString>("nonce");
    GuestIdentity identity = sampleIdentity();
    const QString nonce = QStringLiteral("0123456789abcdef");
    GuestIdentity newline = identity;
    newline.hostname = QStringLiteral("a\ncommit 0123456789abcdef");
    QTest::newRow("newline in a field") << newline << nonce;
    GuestIdentity space = identity;
    space.gateway = QStringLiteral("1.2.3.4 evil");
    QTest::newRow("space in a field") << space << nonce;
    GuestIdentity slash = identity;
    slash.files = {SeedFile {QStringLiteral("../etc/passwd"), "x", 0644}};
    QTest::newRow("path in a file name") << slash << nonce;
    GuestIdentity dot = identity;
    dot.files = {SeedFile {QStringLiteral(".profile"), "x", 0644}};
    QTest::newRow("hidden file name") << dot << nonce;
    GuestIdentity big = identity;
    big.files = {
        SeedFile {QStringLiteral("env"), QByteArray(GuestAgent::kMaxFileBytes + 1, 'x'), 0600}};
    QTest::newRow("oversized file") << big << nonce;
    GuestIdentity prefix = identity;
    prefix.prefixLength = 33;
    QTest::newRow("prefix length") << prefix << nonce;
    QTest::newRow("short nonce") << identity << QStringLiteral("0123");
    QTest::newRow("nonce not hex") << identity << QStringLiteral("0123456789abcdeg");
}

void TestGuestAgent::encodeRefusesWhatBreaksTheFraming()
{
    QFETCH(GuestIdentity, identity);
    QFETCH(QString, nonce);
    auto lines = GuestAgent::encode(identity, nonce);
    QVERIFY(!lines);
    QCOMPARE(lines.error().kind, ErrorKind::InvalidParams);
}

void TestGuestAgent::acknowledgedRefresh()
{
    m_guest->answer([](const QByteArray &nonce) { return "ack " + nonce + '\n'; });
    QVERIFY(m_agent->refreshAndWait(sampleIdentity(), 5000));
    const QByteArray sent = m_guest->received();
    QVERIFY(sent.startsWith("begin "));
    QVERIFY(sent.contains("\nname fork1\n"));
    QCOMPARE(m_agent->rejectedLines(), 0);
}

void TestGuestAgent::hostileLinesAreDroppedAndOnlyTheRightNonceCounts()
{
    m_guest->answer([](const QByteArray &nonce) {
        QByteArray hostile;
        // Far over the line limit (all of it within the refresh's byte budget: more ends the
        // refresh, floodDuringARefreshEndsIt).
        hostile += QByteArray(1000, 'A') + '\n';
        hostile += "ack " + nonce + "x\n"; // not exactly the nonce
        hostile += "ack ffffffffffffffff\n"; // another refresh's nonce
        hostile += "ACK " + nonce + '\n';
        hostile += "fail " + nonce + " Step With Capitals\n";
        hostile += QByteArray("\x00\xff\n", 3);
        // Over the limit without a newline for a while, then a newline: all one dropped line,
        // including an ack hidden at its end.
        hostile += QByteArray(200, 'B') + "ack " + nonce + '\n';
        hostile += "ack " + nonce + '\n'; // the real one, last
        return hostile;
    });
    QVERIFY(m_agent->refreshAndWait(sampleIdentity(), 5000));
    QCOMPARE(m_agent->rejectedLines(), 7);
}

void TestGuestAgent::failureNamesTheStep()
{
    m_guest->answer([](const QByteArray &nonce) { return "fail " + nonce + " network\n"; });
    auto refreshed = m_agent->refreshAndWait(sampleIdentity(), 5000);
    QVERIFY(!refreshed);
    QCOMPARE(refreshed.error().kind, ErrorKind::OperationFailed);
    QVERIFY2(refreshed.error().message.contains(QStringLiteral("network")),
             qPrintable(refreshed.error().message));
}

void TestGuestAgent::silenceTimesOut()
{
    m_guest->answer([](const QByteArray &) { return QByteArray("ready 1\n"); });
    // Not before the 400 ms asked for (a deadline started first has passed), and by the
    // timeout (the kind), not by anything else.
    const QDeadlineTimer notBefore(350);
    auto refreshed = m_agent->refreshAndWait(sampleIdentity(), 400);
    QVERIFY(!refreshed);
    QCOMPARE(refreshed.error().kind, ErrorKind::Timeout);
    QVERIFY(notBefore.hasExpired());
}

void TestGuestAgent::closedChannelFailsAtOnce()
{
    m_guest->answer([this](const QByteArray &) {
        ::shutdown(m_guest->fd(), SHUT_RDWR);
        return QByteArray();
    });
    // At once: the closed channel ends it (OperationFailed), not the 5 s timeout (Timeout).
    auto refreshed = m_agent->refreshAndWait(sampleIdentity(), 5000);
    QVERIFY(!refreshed);
    QCOMPARE(refreshed.error().kind, ErrorKind::OperationFailed);
}

void TestGuestAgent::awaitReadyReadsOnlyUpToTheReadyLine()
{
    // Sent before anyone waits (the agent starts before airlockd asks): read once a wait opens.
    const QByteArray lines = "noise\nready 1\nready 2\nmore noise\n";
    QCOMPARE(::write(m_guest->fd(), lines.constData(), size_t(lines.size())), lines.size());
    QVERIFY(airlock::test::runUntilIdle()); // the lines are there to read: nobody does
    QVERIFY(!m_agent->isReady());
    QCOMPARE(m_agent->rejectedLines(), 0);
    std::optional<airlock::Result<void>> outcome;
    m_agent->awaitReady(5000, [&outcome](const airlock::Result<void> &done) { outcome = done; });
    QVERIFY(!outcome); // from the event loop, not inside the call
    QTRY_VERIFY(outcome.has_value());
    QVERIFY(*outcome);
    QVERIFY(m_agent->isReady());
    // The lines after `ready 1` are nobody's business: not read.
    QVERIFY(airlock::test::runUntilIdle());
    QCOMPARE(m_agent->rejectedLines(), 1);
    // Already ready on this connection: at once.
    std::optional<airlock::Result<void>> again;
    m_agent->awaitReady(5000, [&again](const airlock::Result<void> &done) { again = done; });
    QVERIFY(again && *again);
    QCOMPARE(m_agent->rejectedLines(), 1);
    // The next window starts where the last one stopped, at a line boundary: the two stale
    // lines are dropped (within the refresh's budget), then comes the ack.
    m_guest->answer([](const QByteArray &nonce) { return "ack " + nonce + '\n'; });
    QVERIFY(m_agent->refreshAndWait(sampleIdentity(), 5000));
    QCOMPARE(m_agent->rejectedLines(), 3);
}

void TestGuestAgent::awaitReadyTimesOut()
{
    std::optional<airlock::Result<void>> outcome;
    // Not before the 300 ms asked for: a 250 ms timer started first fires before the outcome.
    QObject context;
    bool earlierTimerFired = false;
    QTimer::singleShot(250, Qt::PreciseTimer, &context, [&] { earlierTimerFired = !outcome; });
    m_agent->awaitReady(300, [&outcome](const airlock::Result<void> &done) { outcome = done; });
    QTRY_VERIFY(outcome.has_value());
    QVERIFY(!*outcome);
    QCOMPARE(outcome->error().kind, ErrorKind::Timeout);
    QVERIFY(earlierTimerFired);
    QVERIFY(!m_agent->isReady());
}

void TestGuestAgent::floodInsteadOfReadyEndsTheWait()
{
    // More than the wait's budget, then the ready line: the wait ends at the budget, at once.
    const QByteArray lines = QByteArray("x\n").repeated(16 * 1024) + "ready 1\n";
    QCOMPARE(::send(m_guest->fd(), lines.constData(), size_t(lines.size()), MSG_DONTWAIT),
             lines.size());
    std::optional<airlock::Result<void>> outcome;
    // Ended by the budget (OperationFailed), not by the 10 s timeout (Timeout).
    m_agent->awaitReady(10000, [&outcome](const airlock::Result<void> &done) { outcome = done; });
    QTRY_VERIFY(outcome.has_value());
    QVERIFY(!*outcome);
    QCOMPARE(outcome->error().kind, ErrorKind::OperationFailed);
    QVERIFY(!m_agent->isReady());
    QCOMPARE(m_agent->rejectedLines(), GuestAgent::kMaxAnswerLines);
    QVERIFY(airlock::test::runUntilIdle());
    QCOMPARE(m_agent->rejectedLines(), GuestAgent::kMaxAnswerLines);
}

void TestGuestAgent::floodDuringARefreshEndsIt()
{
    m_guest->answer([](const QByteArray &nonce) {
        return QByteArray("x\n").repeated(16 * 1024) + "ack " + nonce + '\n';
    });
    // Ended by the budget (OperationFailed), not by the 10 s timeout (Timeout).
    auto refreshed = m_agent->refreshAndWait(sampleIdentity(), 10000);
    QVERIFY(!refreshed);
    QCOMPARE(refreshed.error().kind, ErrorKind::OperationFailed);
    QVERIFY2(refreshed.error().message.contains(QStringLiteral("without answering")),
             qPrintable(refreshed.error().message));
    QCOMPARE(m_agent->rejectedLines(), GuestAgent::kMaxAnswerLines);
    QVERIFY(airlock::test::runUntilIdle());
    QCOMPARE(m_agent->rejectedLines(), GuestAgent::kMaxAnswerLines);
}

void TestGuestAgent::endlessLineDuringARefreshEndsIt()
{
    // One line without an end: the byte budget, not the line budget, ends the refresh.
    m_guest->answer([](const QByteArray &) { return QByteArray(64 * 1024, 'A'); });
    auto refreshed = m_agent->refreshAndWait(sampleIdentity(), 10000);
    QVERIFY(!refreshed);
    QCOMPARE(refreshed.error().kind, ErrorKind::OperationFailed);
    QCOMPARE(m_agent->rejectedLines(), 1);
}

void TestGuestAgent::refreshAnswersFromTheEventLoop()
{
    m_guest->answer([](const QByteArray &nonce) { return "ack " + nonce + '\n'; });
    std::optional<airlock::Result<void>> outcome;
    m_agent->refresh(sampleIdentity(), 5000,
                     [&outcome](const airlock::Result<void> &done) { outcome = done; });
    // One at a time: a second refresh while the first waits is refused at once.
    std::optional<airlock::Result<void>> second;
    m_agent->refresh(sampleIdentity(), 5000,
                     [&second](const airlock::Result<void> &done) { second = done; });
    QVERIFY(second && !*second);
    QCOMPARE(second->error().kind, ErrorKind::Busy);
    QVERIFY(!outcome); // not before the event loop ran
    QTRY_VERIFY(outcome.has_value());
    QVERIFY(*outcome);
    // Destroyed while a refresh waits: the callback is never called.
    bool called = false;
    m_agent->refresh(sampleIdentity(), 5000,
                     [&called](const airlock::Result<void> &) { called = true; });
    m_agent.reset();
    QVERIFY(airlock::test::runUntilIdle());
    QVERIFY(!called);
}

void TestGuestAgent::freshChannelIsNotRead()
{
    // A cold-booted guest nobody waits for (no template being prepared): its agent's channel
    // is not read at all.
    const qint64 written = flood(m_guest->fd());
    QVERIFY2(written < 2 * 1024 * 1024, qPrintable(QString::number(written)));
    QCOMPARE(m_agent->rejectedLines(), 0);
    QVERIFY(!m_agent->isReady());
}

// docs/reviews/2026-12-01-guest-channels-round4.md#f2: a restored or forked guest's agent is
// already running: it never says `ready 1` on the new connection, so m_ready stays false and
// readPending() reads (and parses) every line the guest sends for the rest of its life, on
// airlockd's event loop, although no refresh waits. The header promises the opposite: "it is only
// read while an answer is expected ... otherwise its bytes wait in a bounded buffer" (a chatty
// guest blocks on its own writes).
void TestGuestAgent::restoredGuestIsNotRead()
{
    m_guest->answer([](const QByteArray &nonce) { return "ack " + nonce + '\n'; });
    QVERIFY(m_agent->refreshAndWait(sampleIdentity(), 5000));
    QVERIFY(!m_agent->isReady()); // what a restored guest looks like
    const qint64 rejectedBefore = m_agent->rejectedLines();
    (void)m_guest->received(); // joins the answering thread

    // The guest floods its port with short lines nobody waits for.
    const qint64 written = flood(m_guest->fd());
    qInfo("guest wrote %lld bytes, the helper parsed %lld lines", static_cast<long long>(written),
          static_cast<long long>(m_agent->rejectedLines() - rejectedBefore));
    // Not read: the guest's writes stall once the socket buffers and the 64 KiB read buffer are
    // full, and nothing is parsed.
    QVERIFY2(
        written < 2 * 1024 * 1024,
        qPrintable(QStringLiteral("the guest wrote %1 bytes that nobody waited for").arg(written)));
    QCOMPARE(m_agent->rejectedLines(), rejectedBefore);
}

QTEST_GUILESS_MAIN(TestGuestAgent)
#include "tst_guestagent.moc"

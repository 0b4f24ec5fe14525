// GuestAgent against a scripted protocol 2 "guest" on the other end of a socketpair: the
// identity messages it sends, the resync preamble of a restored guest, and how it takes what a
// hostile guest answers (an answer under another nonce, a failure, silence, a closed channel,
// garbage instead of a handshake), and that it reads nothing before anyone waits.

#include "core/agent/agentclient.h"
#include "core/agentwire/framedecoder.h"
#include "core/vmm/guestagent.h"
#include "eventloop.h"

#include <QDeadlineTimer>
#include <QLocalSocket>
#include <QTest>
#include <QTimer>

#include <functional>
#include <sys/socket.h>
#include <unistd.h>

using airlock::ErrorKind;
using airlock::GuestAgent;
using airlock::GuestIdentity;
using airlock::SeedFile;
using namespace airlock::agentwire;

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
    identity.files = {SeedFile {QStringLiteral("ca.pem"), QByteArray("-----BEGIN X-----\n"), 0644},
                      SeedFile {QStringLiteral("env"), QByteArray("A=b\n"), 0600}};
    identity.entropy = QByteArray(64, 'e');
    return identity;
}

/// The guest end, on this thread's event loop: seeks the host's first Hello as the real agent
/// does (skipping a resync preamble), decodes the host's frames and hands each to a script.
class FakeGuest : public QObject
{
public:
    using Script = std::function<void(FakeGuest &, const Frame &)>;

    explicit FakeGuest(int fd) : m_fd(fd), m_decoder(Sender::Host, FrameDecoder::Mode::SeekHello)
    {
        m_socket.setSocketDescriptor(fd);
        connect(&m_socket, &QLocalSocket::readyRead, this, &FakeGuest::readPending);
    }

    /// Starts decoding (before: nothing is read, as a guest that is still booting).
    void run(Script script)
    {
        m_script = std::move(script);
        readPending();
    }
    void send(MessageType type, std::uint64_t request, const Bytes &payload = {})
    {
        raw(encodeFrame(type, 0, request, payload));
    }
    void raw(const Bytes &bytes)
    {
        m_socket.write(reinterpret_cast<const char *>(bytes.data()), qint64(bytes.size()));
        m_socket.flush();
    }
    void hello(std::uint64_t request)
    {
        Hello hello;
        hello.software = "fake";
        send(MessageType::Hello, request, *hello.encode());
    }
    int fd() const { return m_fd; }
    /// Bytes skipped before the host's first Hello.
    qint64 skipped() const { return qint64(m_decoder.skipped()); }
    const std::vector<Frame> &frames() const { return m_frames; }

private:
    void readPending()
    {
        if (!m_script)
            return;
        while (m_socket.bytesAvailable() > 0) {
            const QByteArray bytes = m_socket.read(65536);
            ByteView rest(reinterpret_cast<const std::uint8_t *>(bytes.constData()),
                          std::size_t(bytes.size()));
            while (!rest.empty()) {
                rest = rest.subspan(m_decoder.feed(rest));
                if (m_decoder.error())
                    QFAIL("the host sent a malformed frame");
                if (m_decoder.hasFrame()) {
                    m_frames.push_back(m_decoder.take());
                    m_script(*this, m_frames.back());
                }
            }
        }
    }

    int m_fd;
    QLocalSocket m_socket;
    FrameDecoder m_decoder;
    Script m_script;
    std::vector<Frame> m_frames;
};

/// A guest that answers the handshake, and the identity refresh with `answer` once its files
/// all came (nothing when `answer` is empty).
FakeGuest::Script refreshes(std::function<void(FakeGuest &, std::uint64_t request)> answer)
{
    auto filesDue = std::make_shared<int>(-1);
    return [answer, filesDue](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Hello) {
            guest.hello(frame.header.request);
        } else if (frame.header.type == MessageType::Identity) {
            *filesDue = IdentityRequest::decode(frame.payload)->fileCount;
        } else if (frame.header.type == MessageType::IdentityFile && --*filesDue == 0 && answer) {
            answer(guest, frame.header.request);
        }
    };
}

} // namespace

class TestGuestAgent : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();

    void encodesEveryField();
    void encodeRefusesWhatCannotBeSent_data();
    void encodeRefusesWhatCannotBeSent();
    void acknowledgedRefresh();
    void onlyTheRightNonceCounts();
    void failureNamesTheStep();
    void silenceTimesOut();
    void closedChannelFailsAtOnce();
    void awaitReady();
    void connectionOfAColdBoot();
    void awaitReadyTimesOut();
    void garbageInsteadOfAHandshakeEndsTheWait();
    void refreshAnswersFromTheEventLoop();
    void freshChannelIsNotRead();

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
    auto message = GuestAgent::encode(sampleIdentity());
    QVERIFY(message);
    const IdentityRequest &request = message->request;
    QCOMPARE(request.hostname, "fork1");
    QCOMPARE(request.mac, "02:61:6c:00:00:01");
    QCOMPARE(request.address, "100.96.0.6");
    QCOMPARE(int(request.prefixLength), 30);
    QCOMPARE(request.gateway, "100.96.0.5");
    QCOMPARE(request.dns, "100.96.0.5");
    QCOMPARE(request.entropy, Bytes(64, 'e'));
    QCOMPARE(int(request.fileCount), 2);
    QCOMPARE(message->files.size(), std::size_t(2));
    QCOMPARE(message->files[0].name, "ca.pem");
    QCOMPARE(message->files[0].mode, 0644u);
    QCOMPARE(message->files[1].name, "env");
    QCOMPARE(message->files[1].mode, 0600u);
    QCOMPARE(message->files[1].content, Bytes({'A', '=', 'b', '\n'}));
}

void TestGuestAgent::encodeRefusesWhatCannotBeSent_data()
{
    QTest::addColumn<GuestIdentity>("identity");
    GuestIdentity identity = sampleIdentity();
    GuestIdentity newline = identity;
    newline.hostname = QStringLiteral("a\nb");
    QTest::newRow("newline in the name") << newline;
    GuestIdentity space = identity;
    space.gateway = QStringLiteral("1.2.3.4 evil");
    QTest::newRow("space in an address") << space;
    GuestIdentity mac = identity;
    mac.mac = QStringLiteral("02:61:6c:00:00");
    QTest::newRow("short MAC") << mac;
    GuestIdentity slash = identity;
    slash.files = {SeedFile {QStringLiteral("../etc/passwd"), "x", 0644}};
    QTest::newRow("path in a file name") << slash;
    GuestIdentity dot = identity;
    dot.files = {SeedFile {QStringLiteral(".profile"), "x", 0644}};
    QTest::newRow("hidden file name") << dot;
    GuestIdentity big = identity;
    big.files = {
        SeedFile {QStringLiteral("env"), QByteArray(GuestAgent::kMaxFileBytes + 1, 'x'), 0600}};
    QTest::newRow("oversized file") << big;
    GuestIdentity many = identity;
    many.files.clear();
    for (int i = 0; i <= GuestAgent::kMaxFiles; ++i)
        many.files.append(SeedFile {QStringLiteral("f%1").arg(i), "x", 0644});
    QTest::newRow("too many files") << many;
    GuestIdentity prefix = identity;
    prefix.prefixLength = 33;
    QTest::newRow("prefix length") << prefix;
}

void TestGuestAgent::encodeRefusesWhatCannotBeSent()
{
    QFETCH(GuestIdentity, identity);
    auto message = GuestAgent::encode(identity);
    QVERIFY(!message);
    QCOMPARE(message.error().kind, ErrorKind::InvalidParams);
    // refresh() refuses it at once, before anything is sent.
    std::optional<airlock::Result<void>> outcome;
    m_agent->refresh(identity, 5000,
                     [&outcome](const airlock::Result<void> &done) { outcome = done; });
    QVERIFY(outcome && !*outcome);
    QCOMPARE(outcome->error().kind, ErrorKind::InvalidParams);
}

void TestGuestAgent::acknowledgedRefresh()
{
    m_guest->run(refreshes(
        [](FakeGuest &guest, std::uint64_t request) { guest.send(MessageType::Ok, request); }));
    QVERIFY(m_agent->refreshAndWait(sampleIdentity(), 5000));
    QVERIFY(m_agent->isReady());
    // A restored guest may be inside a frame of its previous host: the preamble completes it.
    QCOMPARE(m_guest->skipped(), airlock::agent::AgentClient::kResyncPreambleBytes);
    std::vector<MessageType> types;
    for (const Frame &frame : m_guest->frames()) {
        if (frame.header.type != MessageType::Hello)
            types.push_back(frame.header.type);
    }
    QCOMPARE(types,
             (std::vector<MessageType> {MessageType::Identity, MessageType::IdentityFile,
                                        MessageType::IdentityFile}));
    for (const Frame &frame : m_guest->frames()) {
        if (frame.header.type == MessageType::Identity) {
            const auto identity = IdentityRequest::decode(frame.payload);
            QVERIFY(identity);
            QCOMPARE(identity->hostname, "fork1");
            QCOMPARE(identity->address, "100.96.0.6");
        } else if (frame.header.type == MessageType::IdentityFile) {
            const auto file = IdentityFile::decode(frame.payload);
            QVERIFY(file && (file->name == "ca.pem" || file->name == "env"));
        }
    }
    // A second refresh on the same connection needs no handshake and no preamble.
    QVERIFY(m_agent->refreshAndWait(sampleIdentity(), 5000));
    QCOMPARE(m_guest->skipped(), airlock::agent::AgentClient::kResyncPreambleBytes);
    // Exec and files share that connection.
    airlock::agent::AgentClient *client = m_agent->connection();
    QVERIFY(client && client->isReady());
    QCOMPARE(m_agent->connection(), client);
}

void TestGuestAgent::onlyTheRightNonceCounts()
{
    // An `ok` under a request id the host never used is a protocol error, not a success: the
    // refresh fails and the connection with it.
    m_guest->run(refreshes([](FakeGuest &guest, std::uint64_t request) {
        guest.send(MessageType::Ok, request ^ 1);
        guest.send(MessageType::Ok, request);
    }));
    auto refreshed = m_agent->refreshAndWait(sampleIdentity(), 5000);
    QVERIFY(!refreshed);
    QCOMPARE(refreshed.error().kind, ErrorKind::OperationFailed);
    QVERIFY2(refreshed.error().message.contains(QStringLiteral("protocol_error")),
             qPrintable(refreshed.error().message));
    QVERIFY(m_agent->isClosed());
    QCOMPARE(m_agent->connection(), nullptr);
    // Closed: the next refresh fails at once.
    std::optional<airlock::Result<void>> outcome;
    m_agent->refresh(sampleIdentity(), 5000,
                     [&outcome](const airlock::Result<void> &done) { outcome = done; });
    QVERIFY(outcome && !*outcome);
    QCOMPARE(outcome->error().kind, ErrorKind::OperationFailed);
}

void TestGuestAgent::failureNamesTheStep()
{
    m_guest->run(refreshes([](FakeGuest &guest, std::uint64_t request) {
        IdentityFail failure;
        failure.step = "network";
        guest.send(MessageType::IdentityFail, request, *failure.encode());
    }));
    auto refreshed = m_agent->refreshAndWait(sampleIdentity(), 5000);
    QVERIFY(!refreshed);
    QCOMPARE(refreshed.error().kind, ErrorKind::OperationFailed);
    QVERIFY2(refreshed.error().message.contains(QStringLiteral("step network")),
             qPrintable(refreshed.error().message));
}

void TestGuestAgent::silenceTimesOut()
{
    // Answers the handshake, never the refresh.
    m_guest->run(refreshes({}));
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
    m_guest->run(
        refreshes([](FakeGuest &guest, std::uint64_t) { ::shutdown(guest.fd(), SHUT_RDWR); }));
    // At once: the closed channel ends it (OperationFailed), not the 5 s timeout (Timeout).
    const QDeadlineTimer before(4000);
    auto refreshed = m_agent->refreshAndWait(sampleIdentity(), 5000);
    QVERIFY(!refreshed);
    QCOMPARE(refreshed.error().kind, ErrorKind::OperationFailed);
    QVERIFY(!before.hasExpired());
}

void TestGuestAgent::awaitReady()
{
    // The guest's own announcement before anyone waits (the agent starts before airlockd asks):
    // not an answer; the host's Hello is.
    m_guest->hello(0);
    QVERIFY(airlock::test::runUntilIdle());
    QVERIFY(!m_agent->isReady());
    std::optional<airlock::Result<void>> outcome;
    m_agent->awaitReady(5000, [&outcome](const airlock::Result<void> &done) { outcome = done; });
    QVERIFY(!outcome); // from the event loop, not inside the call
    QVERIFY(airlock::test::runUntilIdle());
    QVERIFY(!outcome); // the guest has not answered yet: it is still booting
    m_guest->run(refreshes(
        [](FakeGuest &guest, std::uint64_t request) { guest.send(MessageType::Ok, request); }));
    QTRY_VERIFY(outcome.has_value());
    QVERIFY(*outcome);
    QVERIFY(m_agent->isReady());
    QCOMPARE(m_guest->skipped(), qint64(0)); // a cold boot's agent is between frames
    // Already ready on this connection: at once.
    std::optional<airlock::Result<void>> again;
    m_agent->awaitReady(5000, [&again](const airlock::Result<void> &done) { again = done; });
    QVERIFY(again && *again);
    // And a refresh on it goes through.
    QVERIFY(m_agent->refreshAndWait(sampleIdentity(), 5000));
}

void TestGuestAgent::connectionOfAColdBoot()
{
    // Nobody waited and nothing was restored: the connection starts on first use, without the
    // preamble, and a request issued before the handshake waits for it.
    m_guest->run([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Hello)
            guest.hello(frame.header.request);
        else if (frame.header.type == MessageType::Ping)
            guest.send(MessageType::Pong, frame.header.request, frame.payload);
    });
    airlock::agent::AgentClient *client = m_agent->connection();
    QVERIFY(client);
    std::optional<airlock::agent::AgentResult<QByteArray>> pong;
    client->ping("echo",
                 [&pong](const airlock::agent::AgentResult<QByteArray> &done) { pong = done; });
    QTRY_VERIFY(pong.has_value());
    QVERIFY(*pong);
    QCOMPARE(**pong, QByteArray("echo"));
    QCOMPARE(m_guest->skipped(), qint64(0));
    QVERIFY(m_agent->isReady());
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

void TestGuestAgent::garbageInsteadOfAHandshakeEndsTheWait()
{
    // More than the handshake's seek budget without a Hello: the wait ends at the budget, at
    // once (OperationFailed), not by the 20 s timeout (Timeout).
    const QByteArray garbage(2 * 1024 * 1024, 'x');
    QObject context;
    qint64 written = 0;
    const auto feed = [&] {
        while (written < garbage.size()) {
            const ssize_t n = ::send(m_guest->fd(), garbage.constData() + written,
                                     size_t(garbage.size() - written), MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n <= 0)
                break;
            written += n;
        }
    };
    QTimer feeder;
    connect(&feeder, &QTimer::timeout, &context, feed);
    feeder.start(5);
    std::optional<airlock::Result<void>> outcome;
    const QDeadlineTimer before(15000);
    m_agent->awaitReady(20000, [&outcome](const airlock::Result<void> &done) { outcome = done; });
    QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 20000);
    QVERIFY(!*outcome);
    QCOMPARE(outcome->error().kind, ErrorKind::OperationFailed);
    QVERIFY(!before.hasExpired());
    QVERIFY(!m_agent->isReady());
    QVERIFY(m_agent->isClosed());
}

void TestGuestAgent::refreshAnswersFromTheEventLoop()
{
    m_guest->run(refreshes(
        [](FakeGuest &guest, std::uint64_t request) { guest.send(MessageType::Ok, request); }));
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
    // is not read at all; the guest's writes stall once the socket buffers and the
    // kReadBufferBytes read buffer are full.
    const QByteArray chunk(64 * 1024, 'x');
    qint64 written = 0;
    for (qint64 round = -1; round != 0 && written < 64LL * 1024 * 1024;) {
        round = 0;
        for (ssize_t n; (n = ::send(m_guest->fd(), chunk.constData(), size_t(chunk.size()),
                                    MSG_DONTWAIT | MSG_NOSIGNAL))
             > 0;)
            round += n;
        written += round;
        airlock::test::runUntilIdle();
    }
    QVERIFY2(written < 4 * 1024 * 1024, qPrintable(QString::number(written)));
    QVERIFY(!m_agent->isReady());
    QVERIFY(!m_agent->isClosed());
}

QTEST_GUILESS_MAIN(TestGuestAgent)
#include "tst_guestagent.moc"

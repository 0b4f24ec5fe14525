// AgentClient against a hostile guest: a scripted fake agent on the other end of a socketpair
// that stalls, sends garbage, oversized frames, lying lengths, unknown types, frames the guest
// never sends, answers to requests nobody made, more data than it was granted, or floods.
// Each costs only this client's requests, with a clear error (timeout, protocol_error,
// agent_unavailable), the client stays bounded in memory, and a second client on another
// channel keeps being served meanwhile.

#include "core/agent/agentclient.h"
#include "core/agent/agentprocess.h"
#include "core/agent/agentreadstream.h"
#include "core/agentwire/framedecoder.h"

#include <QLocalSocket>
#include <QSignalSpy>
#include <QTest>

#include <functional>
#include <sys/socket.h>

using namespace airlock::agent;
using namespace airlock::agentwire;

namespace {

constexpr int kWaitMs = 10000;

/// The guest end: decodes what the client sends and hands each frame to a script.
class FakeGuest : public QObject
{
public:
    FakeGuest(int fd, std::function<void(FakeGuest &, const Frame &)> script)
        : m_decoder(Sender::Host), m_script(std::move(script))
    {
        m_socket.setSocketDescriptor(fd);
        connect(&m_socket, &QLocalSocket::readyRead, this, &FakeGuest::readPending);
    }

    void send(MessageType type, std::uint32_t stream, std::uint64_t request,
              const Bytes &payload = {}, std::uint16_t flags = 0)
    {
        raw(encodeFrame(type, stream, request, payload, flags));
    }
    void raw(const Bytes &bytes)
    {
        m_socket.write(reinterpret_cast<const char *>(bytes.data()), qint64(bytes.size()));
    }
    void hello(std::uint64_t request, std::uint16_t version = kVersion)
    {
        Hello hello;
        hello.version = version;
        hello.software = "fake";
        send(MessageType::Hello, 0, request, *hello.encode());
    }
    /// Frames received, by type.
    int count(MessageType type) const { return m_counts.value(int(type)); }
    QLocalSocket &socket() { return m_socket; }

private:
    void readPending()
    {
        while (m_socket.bytesAvailable() > 0) {
            const QByteArray bytes = m_socket.read(65536);
            ByteView rest(reinterpret_cast<const std::uint8_t *>(bytes.constData()),
                          std::size_t(bytes.size()));
            while (!rest.empty() && !m_decoder.error()) {
                rest = rest.subspan(m_decoder.feed(rest));
                if (m_decoder.hasFrame()) {
                    const Frame frame = m_decoder.take();
                    m_counts[int(frame.header.type)] += 1;
                    m_script(*this, frame);
                }
            }
        }
    }

    QLocalSocket m_socket;
    FrameDecoder m_decoder;
    std::function<void(FakeGuest &, const Frame &)> m_script;
    QHash<int, int> m_counts;
};

/// A well-behaved guest for the handshake, then `rest` for everything else.
std::function<void(FakeGuest &, const Frame &)>
answersHello(std::function<void(FakeGuest &, const Frame &)> rest = {})
{
    return [rest](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Hello)
            guest.hello(frame.header.request);
        else if (rest)
            rest(guest, frame);
    };
}

struct Pair
{
    std::unique_ptr<AgentClient> client;
    std::unique_ptr<FakeGuest> guest;
};

AgentClient::Limits shortLimits()
{
    AgentClient::Limits limits;
    limits.handshakeTimeoutMs = 1000;
    limits.helloRepeatMs = 100;
    limits.requestTimeoutMs = 500;
    limits.stallTimeoutMs = 500;
    limits.seekBudgetBytes = 64 * 1024;
    limits.maxStrayFrames = 100;
    return limits;
}

Pair makePair(std::function<void(FakeGuest &, const Frame &)> script,
              AgentClient::Limits limits = shortLimits())
{
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return {};
    auto *socket = new QLocalSocket;
    socket->setSocketDescriptor(fds[0]);
    Pair pair;
    pair.client = std::make_unique<AgentClient>(socket, limits);
    pair.guest = std::make_unique<FakeGuest>(fds[1], std::move(script));
    return pair;
}

/// Starts the client and waits for ready() or failed(); the error when it failed.
std::optional<AgentError> handshake(AgentClient &client)
{
    std::optional<AgentError> error;
    bool ready = false;
    // A context object that goes with this function: the lambdas hold its locals.
    QObject context;
    QObject::connect(&client, &AgentClient::ready, &context, [&] { ready = true; });
    QObject::connect(&client, &AgentClient::failed, &context,
                     [&](const AgentError &e) { error = e; });
    client.start();
    if (!QTest::qWaitFor([&] { return ready || error; }, kWaitMs))
        return AgentError::invalid(QStringLiteral("the test gave up waiting"));
    return error;
}

AgentResult<FileInfo> statOnce(AgentClient &client)
{
    std::optional<AgentResult<FileInfo>> result;
    client.stat(StatRequest {"/x", false}, [&](const AgentResult<FileInfo> &r) { result = r; });
    if (!QTest::qWaitFor([&] { return result.has_value(); }, kWaitMs))
        return std::unexpected(AgentError::invalid(QStringLiteral("the test gave up waiting")));
    return result.value_or(std::unexpected(AgentError::timeout(QStringLiteral("test"))));
}

Bytes headerWithLength(MessageType type, std::uint64_t request, std::uint32_t length)
{
    Bytes frame = encodeFrame(type, 0, request, {});
    frame[20] = std::uint8_t(length);
    frame[21] = std::uint8_t(length >> 8);
    frame[22] = std::uint8_t(length >> 16);
    frame[23] = std::uint8_t(length >> 24);
    return frame;
}

} // namespace

class TestAgentHostile : public QObject
{
    Q_OBJECT
private slots:
    void silentGuestTimesOutTheHandshake();
    void lateAgentIsMetWhenItStarts();
    void wrongVersionIsUnavailable();
    void garbageBeforeHelloIsSkippedWithinBudget();
    void endlessGarbageIsAProtocolError();
    void helloIsRepeatedForARestoredGuest();
    void hostileFrames_data();
    void hostileFrames();
    void lyingLengthStallsOnlyItsRequests();
    void stalledAnswerTimesOutOthersStillWork();
    void lateAnswerToATimedOutRequestIsDropped();
    void creditOverrunIsAProtocolError();
    void readStreamBeyondItsSizeIsAProtocolError();
    void readAnnouncingMoreThanAskedIsAProtocolError();
    void floodOfHellosIsBounded();
    void closedChannelIsUnavailable();
    void guestErrorTextIsSanitised();
    void otherClientsKeepBeingServed();
};

void TestAgentHostile::silentGuestTimesOutTheHandshake()
{
    Pair pair = makePair([](FakeGuest &, const Frame &) {});
    const auto error = handshake(*pair.client);
    QVERIFY(error);
    QCOMPARE(error->name(), QStringLiteral("timeout"));
    QCOMPARE(pair.client->state(), AgentClient::State::Failed);
    // Requests after the failure fail at once.
    QCOMPARE(statOnce(*pair.client).error().name(), QStringLiteral("agent_unavailable"));
}

void TestAgentHostile::lateAgentIsMetWhenItStarts()
{
    // A cold boot on TCG: exec is asked for before init started the agent.
    bool started = false;
    AgentClient::Limits limits = shortLimits();
    limits.handshakeTimeoutMs = 300;
    limits.keepTryingHandshake = true;
    Pair pair = makePair(
        [&started](FakeGuest &guest, const Frame &frame) {
            if (started && frame.header.type == MessageType::Hello)
                guest.hello(frame.header.request);
        },
        limits);
    QSignalSpy failed(pair.client.get(), &AgentClient::failed);
    QSignalSpy ready(pair.client.get(), &AgentClient::ready);
    pair.client->start();
    std::optional<AgentResult<void>> early;
    pair.client->mkdir({"/early", 0755, false},
                       [&early](const AgentResult<void> &result) { early = result; });
    QTRY_VERIFY_WITH_TIMEOUT(early.has_value(), kWaitMs);
    QVERIFY(!*early);
    QCOMPARE(early->error().kind, AgentError::Kind::AgentUnavailable);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(pair.client->state(), AgentClient::State::Handshake);

    started = true;
    QVERIFY(ready.wait(kWaitMs));
    // The request its caller was told failed never reaches the guest; a new one does.
    pair.client->mkdir({"/late", 0755, false}, [](const AgentResult<void> &) {});
    QTRY_COMPARE_WITH_TIMEOUT(pair.guest->count(MessageType::Mkdir), 1, kWaitMs);
    QCOMPARE(failed.count(), 0);
}

void TestAgentHostile::wrongVersionIsUnavailable()
{
    Pair pair = makePair([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Hello)
            guest.hello(frame.header.request, 3);
    });
    const auto error = handshake(*pair.client);
    QVERIFY(error);
    QCOMPARE(error->name(), QStringLiteral("agent_unavailable"));
    QVERIFY(error->message.contains(QStringLiteral("protocol 3")));
}

void TestAgentHostile::garbageBeforeHelloIsSkippedWithinBudget()
{
    // What a restored guest may have left in the channel: garbage, a stale frame's tail, and
    // whole frames of another host's streams.
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Stat)
            guest.send(MessageType::Error, 0, frame.header.request,
                       *ErrorMessage {ErrorCode::NotFound, "no"}.encode());
    }));
    pair.guest->raw(Bytes(5000, 0x41));
    pair.guest->hello(0); // the guest's own announcement
    pair.guest->send(MessageType::Stdout, 7, 1234, Bytes(100, 'x'));
    QVERIFY(!handshake(*pair.client));
    QVERIFY(pair.client->isReady());
    QCOMPARE(statOnce(*pair.client).error().name(), QStringLiteral("not_found"));
}

void TestAgentHostile::endlessGarbageIsAProtocolError()
{
    Pair pair = makePair([](FakeGuest &, const Frame &) {});
    pair.guest->raw(Bytes(200 * 1024, 0x41));
    const auto error = handshake(*pair.client);
    QVERIFY(error);
    QCOMPARE(error->name(), QStringLiteral("protocol_error"));
}

void TestAgentHostile::helloIsRepeatedForARestoredGuest()
{
    // The first Hellos are lost (a restored guest's decoder ate them): the client repeats.
    int hellos = 0;
    Pair pair = makePair([&hellos](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Hello && ++hellos == 3)
            guest.hello(frame.header.request);
    });
    QVERIFY(!handshake(*pair.client));
    QVERIFY(hellos >= 3);
}

void TestAgentHostile::hostileFrames_data()
{
    QTest::addColumn<QByteArray>("frame");
    const auto bytes = [](const Bytes &b) {
        return QByteArray(reinterpret_cast<const char *>(b.data()), qsizetype(b.size()));
    };
    QTest::newRow("oversized 1 GiB") << bytes(headerWithLength(MessageType::Pong, 1, 1u << 30));
    QTest::newRow("oversized 64 KiB + 1")
        << bytes(headerWithLength(MessageType::Pong, 1, kMaxPayloadBytes + 1));
    Bytes unknown = encodeFrame(MessageType::Ok, 0, 1, {});
    unknown[3] = 0x99;
    QTest::newRow("unknown type") << bytes(unknown);
    QTest::newRow("a type only the host sends") << bytes(encodeFrame(MessageType::Exec, 1, 1, {}));
    Bytes version = encodeFrame(MessageType::Ok, 0, 1, {});
    version[2] = 1;
    QTest::newRow("protocol 1 mid-connection") << bytes(version);
    QTest::newRow("answer to a request nobody sent")
        << bytes(encodeFrame(MessageType::Ok, 0, 0x1234, {}));
    QTest::newRow("frame for a stream nobody opened")
        << bytes(encodeFrame(MessageType::Stdout, 99, 1, Bytes(10, 'x')));
    QTest::newRow("hello answering nobody")
        << bytes(encodeFrame(MessageType::Hello, 0, 77, *Hello {}.encode()));
    QTest::newRow("guest reports our frames unparseable") << bytes(encodeFrame(
        MessageType::Error, 0, 0, *ErrorMessage {ErrorCode::ProtocolError, "bad"}.encode()));
}

void TestAgentHostile::hostileFrames()
{
    QFETCH(QByteArray, frame);
    Pair pair = makePair(answersHello());
    QVERIFY(!handshake(*pair.client));
    QSignalSpy failed(pair.client.get(), &AgentClient::failed);
    std::optional<AgentResult<FileInfo>> pending;
    pair.client->stat(StatRequest {"/x", false},
                      [&](const AgentResult<FileInfo> &r) { pending = r; });
    pair.guest->raw(Bytes(frame.begin(), frame.end()));
    QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, kWaitMs));
    const auto error = failed.first().first().value<AgentError>();
    QCOMPARE(error.name(), QStringLiteral("protocol_error"));
    // The request in flight failed with it, and nothing was buffered for the lie.
    QVERIFY(QTest::qWaitFor([&] { return pending.has_value(); }, kWaitMs));
    QCOMPARE(pending->error().name(), QStringLiteral("protocol_error"));
    QVERIFY(pair.client->bufferedBytes() < 1024);
    QCOMPARE(pair.client->state(), AgentClient::State::Failed);
}

void TestAgentHostile::lyingLengthStallsOnlyItsRequests()
{
    // A header announcing 60000 bytes, then 10: the client waits for the rest, and the
    // request times out.
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type != MessageType::Stat)
            return;
        Bytes lie = headerWithLength(MessageType::StatResult, frame.header.request, 60000);
        lie.resize(lie.size() + 10, 0);
        guest.raw(lie);
    }));
    QVERIFY(!handshake(*pair.client));
    const auto result = statOnce(*pair.client);
    QVERIFY(!result);
    QCOMPARE(result.error().name(), QStringLiteral("timeout"));
}

void TestAgentHostile::stalledAnswerTimesOutOthersStillWork()
{
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Ping)
            guest.send(MessageType::Pong, 0, frame.header.request, frame.payload);
        // Stat is never answered.
    }));
    QVERIFY(!handshake(*pair.client));
    std::optional<AgentResult<FileInfo>> stat;
    pair.client->stat(StatRequest {"/x", false}, [&](const AgentResult<FileInfo> &r) { stat = r; });
    std::optional<AgentResult<QByteArray>> pong;
    pair.client->ping("p", [&](const AgentResult<QByteArray> &r) { pong = r; });
    QVERIFY(QTest::qWaitFor([&] { return stat && pong; }, kWaitMs));
    QVERIFY(*pong);
    QCOMPARE(stat->error().name(), QStringLiteral("timeout"));
    QVERIFY(pair.client->isReady());
}

void TestAgentHostile::lateAnswerToATimedOutRequestIsDropped()
{
    std::uint64_t statRequest = 0;
    Pair pair = makePair(answersHello([&](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Stat)
            statRequest = frame.header.request;
        if (frame.header.type == MessageType::Ping)
            guest.send(MessageType::Pong, 0, frame.header.request, frame.payload);
    }));
    QVERIFY(!handshake(*pair.client));
    QCOMPARE(statOnce(*pair.client).error().name(), QStringLiteral("timeout"));
    QVERIFY(statRequest != 0);
    // The answer comes after all: dropped, the connection stays.
    pair.guest->send(MessageType::Error, 0, statRequest,
                     *ErrorMessage {ErrorCode::NotFound, "late"}.encode());
    std::optional<AgentResult<QByteArray>> pong;
    pair.client->ping("p", [&](const AgentResult<QByteArray> &r) { pong = r; });
    QVERIFY(QTest::qWaitFor([&] { return pong.has_value(); }, kWaitMs));
    QVERIFY(*pong);
}

void TestAgentHostile::creditOverrunIsAProtocolError()
{
    // The guest sends more output than the client granted (a window and one byte).
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type != MessageType::Exec)
            return;
        const auto stream = frame.header.stream;
        const auto request = frame.header.request;
        guest.send(MessageType::Started, stream, request, *Started {77}.encode());
        for (int i = 0; i < 4; ++i)
            guest.send(MessageType::Stdout, stream, request, Bytes(kMaxPayloadBytes, 'x'));
        guest.send(MessageType::Stdout, stream, request, Bytes(1, 'x'));
    }));
    QVERIFY(!handshake(*pair.client));
    ExecRequest request;
    request.argv = {"yes"};
    AgentProcess *process = pair.client->exec(request);
    std::optional<AgentError> error;
    connect(process, &AgentProcess::failed, process, [&](const AgentError &e) { error = e; });
    QVERIFY(QTest::qWaitFor([&] { return error.has_value(); }, kWaitMs));
    QCOMPARE(error->name(), QStringLiteral("protocol_error"));
    QVERIFY(error->message.contains(QStringLiteral("credit_exceeded")));
}

void TestAgentHostile::readStreamBeyondItsSizeIsAProtocolError()
{
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type != MessageType::Read)
            return;
        guest.send(MessageType::FileOpened, frame.header.stream, frame.header.request,
                   *FileOpened {10, 0100644}.encode());
        guest.send(MessageType::Data, frame.header.stream, frame.header.request, Bytes(11, 'x'));
    }));
    QVERIFY(!handshake(*pair.client));
    AgentReadStream *stream = pair.client->readFile(ReadRequest {"/f", 0, 0});
    std::optional<AgentError> error;
    connect(stream, &AgentReadStream::failed, stream, [&](const AgentError &e) { error = e; });
    QVERIFY(QTest::qWaitFor([&] { return error.has_value(); }, kWaitMs));
    QCOMPARE(error->name(), QStringLiteral("protocol_error"));
}

void TestAgentHostile::readAnnouncingMoreThanAskedIsAProtocolError()
{
    // files.read asks for a bounded range and buffers it whole: a guest announcing more would
    // make the helper hold whatever it then streams.
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type != MessageType::Read)
            return;
        guest.send(MessageType::FileOpened, frame.header.stream, frame.header.request,
                   *FileOpened {1ull << 40, 0100644}.encode());
    }));
    QVERIFY(!handshake(*pair.client));
    AgentReadStream *stream = pair.client->readFile(ReadRequest {"/f", 0, 4096});
    std::optional<AgentError> error;
    connect(stream, &AgentReadStream::failed, stream, [&](const AgentError &e) { error = e; });
    QVERIFY(QTest::qWaitFor([&] { return error.has_value(); }, kWaitMs));
    QCOMPARE(error->name(), QStringLiteral("protocol_error"));
}

void TestAgentHostile::floodOfHellosIsBounded()
{
    // Unasked Hellos mean "the agent restarted": each fails what is in flight; a flood of
    // them is a protocol error once past the stray budget.
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type != MessageType::Ping)
            return;
        Bytes flood;
        for (int i = 0; i < 10000; ++i) {
            const Bytes hello = encodeFrame(MessageType::Hello, 0, 0, *Hello {}.encode());
            flood.insert(flood.end(), hello.begin(), hello.end());
        }
        guest.raw(flood);
    }));
    QVERIFY(!handshake(*pair.client));
    QSignalSpy failed(pair.client.get(), &AgentClient::failed);
    std::optional<AgentResult<QByteArray>> pong;
    pair.client->ping("p", [&](const AgentResult<QByteArray> &r) { pong = r; });
    QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, kWaitMs));
    QCOMPARE(failed.first().first().value<AgentError>().name(), QStringLiteral("protocol_error"));
    QVERIFY(pong);
    QCOMPARE(pong->error().name(), QStringLiteral("agent_unavailable")); // the first Hello
}

void TestAgentHostile::closedChannelIsUnavailable()
{
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Stat)
            guest.socket().abort();
    }));
    QVERIFY(!handshake(*pair.client));
    const auto result = statOnce(*pair.client);
    QCOMPARE(result.error().name(), QStringLiteral("agent_unavailable"));
}

void TestAgentHostile::guestErrorTextIsSanitised()
{
    Pair pair = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Stat)
            guest.send(MessageType::Error, 0, frame.header.request,
                       *ErrorMessage {ErrorCode::Permission, "\x1b]0;pwned\x07 no\n"}.encode());
    }));
    QVERIFY(!handshake(*pair.client));
    const auto result = statOnce(*pair.client);
    QCOMPARE(result.error().name(), QStringLiteral("permission"));
    QCOMPARE(result.error().message, QStringLiteral("?]0;pwned? no?"));
}

void TestAgentHostile::otherClientsKeepBeingServed()
{
    // One guest floods its client as fast as it can write with frames the client must read
    // and drop (late answers to a request that timed out, within a large stray budget);
    // another guest's client, on the same event loop, keeps getting its answers.
    AgentClient::Limits limits = shortLimits();
    limits.maxStrayFrames = 1000000;
    std::uint64_t abandoned = 0;
    Pair flooder =
        makePair(answersHello([&abandoned](FakeGuest &guest, const Frame &frame) {
                     if (frame.header.type != MessageType::Ping)
                         return;
                     if (abandoned == 0) {
                         abandoned = frame.header.request; // never answered: it times out
                         return;
                     }
                     Bytes burst;
                     for (int i = 0; i < 4000; ++i) {
                         const Bytes pong =
                             encodeFrame(MessageType::Pong, 0, abandoned, Bytes(1000, 'f'));
                         burst.insert(burst.end(), pong.begin(), pong.end());
                     }
                     guest.raw(burst);
                 }),
                 limits);
    Pair good = makePair(answersHello([](FakeGuest &guest, const Frame &frame) {
        if (frame.header.type == MessageType::Ping)
            guest.send(MessageType::Pong, 0, frame.header.request, frame.payload);
    }));
    QVERIFY(!handshake(*flooder.client));
    QVERIFY(!handshake(*good.client));
    std::optional<AgentResult<QByteArray>> first;
    flooder.client->ping("first", [&](const AgentResult<QByteArray> &r) { first = r; });
    QVERIFY(QTest::qWaitFor([&] { return first.has_value(); }, kWaitMs));
    QCOMPARE(first->error().name(), QStringLiteral("timeout"));
    flooder.client->ping("go", [](const AgentResult<QByteArray> &) {});
    int answered = 0;
    for (int i = 0; i < 20; ++i) {
        std::optional<AgentResult<QByteArray>> pong;
        good.client->ping("p", [&](const AgentResult<QByteArray> &r) { pong = r; });
        QVERIFY(QTest::qWaitFor([&] { return pong.has_value(); }, kWaitMs));
        answered += pong->has_value() ? 1 : 0;
        QVERIFY(flooder.client->bufferedBytes() < 1024 * 1024);
    }
    QCOMPARE(answered, 20);
    QVERIFY(good.client->isReady());
    QVERIFY(flooder.client->isReady());
}

QTEST_GUILESS_MAIN(TestAgentHostile)
#include "tst_agenthostile.moc"

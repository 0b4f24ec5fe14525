// The agent wire protocol without processes or sockets (docs/agent-protocol.md): each message
// round-trips through its codec; the frame decoder takes bytes in any split and refuses what
// a hostile guest sends (truncated, oversized, wrong version, bad magic, unknown type, a type
// the guest never sends, undefined flags), never reading a payload it refused; payloads with
// a short field, trailing bytes, a NUL in a string or an invalid value do not decode; credit
// windows refuse overruns and overflows; the Hello seek skips garbage.

#include "core/agentwire/creditwindow.h"
#include "core/agentwire/framedecoder.h"
#include "core/agentwire/messages.h"
#include "core/agentwire/payloadwriter.h"

#include <QTest>

using namespace airlock::agentwire;

namespace {

Bytes frameOf(MessageType type, std::uint32_t stream, std::uint64_t request, const Bytes &payload,
              std::uint16_t flags = 0)
{
    return encodeFrame(type, stream, request, payload, flags);
}

/// Feeds `bytes` in pieces of `step` and collects the frames; stops at an error.
std::vector<Frame> decodeAll(FrameDecoder &decoder, const Bytes &bytes, std::size_t step)
{
    std::vector<Frame> frames;
    ByteView rest(bytes);
    while (!rest.empty() && !decoder.error()) {
        ByteView piece = rest.first(std::min(step, rest.size()));
        while (!piece.empty() && !decoder.error()) {
            const std::size_t used = decoder.feed(piece);
            piece = piece.subspan(used);
            rest = rest.subspan(used);
            if (decoder.hasFrame())
                frames.push_back(decoder.take());
        }
    }
    if (decoder.hasFrame())
        frames.push_back(decoder.take());
    return frames;
}

template<typename T>
void roundTrip(const T &message)
{
    const auto payload = message.encode();
    QVERIFY2(payload.has_value(), payload ? "" : payload.error().c_str());
    const auto decoded = T::decode(*payload);
    QVERIFY(decoded.has_value());
    const auto again = decoded->encode();
    QVERIFY(again.has_value());
    QCOMPARE(*again, *payload);
    // Any truncation fails, and so does a trailing byte.
    for (std::size_t cut = 0; cut < payload->size(); ++cut)
        QVERIFY(!T::decode(ByteView(*payload).first(cut)).has_value());
    Bytes longer = *payload;
    longer.push_back(0);
    QVERIFY(!T::decode(longer).has_value());
}

} // namespace

class TestAgentWire : public QObject
{
    Q_OBJECT
private slots:
    void messagesRoundTrip();
    void invalidValuesDoNotEncodeOrDecode();
    void decoderAnySplit_data();
    void decoderAnySplit();
    void decoderRefuses_data();
    void decoderRefuses();
    void decoderWaitsForTruncatedFrames();
    void oversizedIsRefusedBeforeThePayload();
    void seekHelloSkipsGarbage();
    void creditWindow();
    void namesAreStable();
    void watchRecordsAnySplit();
    void watchRecordsRefused();
};

void TestAgentWire::messagesRoundTrip()
{
    roundTrip(Hello {kVersion, kCapExec | kCapPty, kMaxPayloadBytes, "airlock-agent 0.1.0"});
    roundTrip(ErrorMessage {ErrorCode::NotFound, "cannot open /x: No such file or directory"});
    roundTrip(Credit {65536});
    ExecRequest exec;
    exec.argv = {"sh", "-c", "echo hi"};
    exec.env = {{"FOO", "bar"}, {"_X1", ""}};
    exec.cwd = "/tmp";
    exec.user = "agent";
    exec.stdinOpen = true;
    exec.pty = true;
    exec.rows = 40;
    exec.cols = 100;
    exec.timeoutMs = 1500;
    roundTrip(exec);
    ExecRequest shell;
    shell.argv = {"echo $HOME | tr a-z A-Z"};
    shell.shell = true;
    roundTrip(shell);
    roundTrip(AttachRequest {4242});
    roundTrip(Started {1});
    roundTrip(ExitStatus {false, 3, false});
    roundTrip(ExitStatus {true, 9, true});
    roundTrip(SignalRequest {15});
    roundTrip(ResizeRequest {50, 120});
    ProcessList processes;
    processes.processes = {{12, true, false, true, "root", "sleep 30"},
                           {13, false, true, false, "agent", "make -j2"}};
    roundTrip(processes);
    roundTrip(StatRequest {"/workspace/a", true});
    FileInfo info {FileKind::Symlink, 0120777, 11, 1700000000123456789, 0, 0, "link", "../target"};
    roundTrip(StatResult {info});
    roundTrip(ListRequest {"/workspace", 3, 500});
    ListResult list;
    list.truncated = true;
    list.entries = {info, FileInfo {FileKind::File, 0100644, 5, 0, 1000, 1000, "a/b.txt", ""}};
    roundTrip(list);
    roundTrip(ReadRequest {"/etc/hostname", 10, 100});
    roundTrip(FileOpened {16 << 20, 0100600});
    roundTrip(WriteRequest {"/workspace/new/file", 0600, true, false, true});
    roundTrip(MkdirRequest {"/workspace/d", 0700, true});
    roundTrip(RemoveRequest {"/workspace/d", true});
    roundTrip(RenameRequest {"/a", "/b", true});
    roundTrip(WatchRequest {"/workspace", true});
    roundTrip(ArchiveOutRequest {"/workspace"});
    roundTrip(ArchiveInRequest {"/workspace", "agent"});
    roundTrip(ArchiveResult {10, 1234, 2, {{"x/fifo", "fifo"}, {"dev", "device"}}});
    IdentityRequest identity;
    identity.hostname = "fork1";
    identity.mac = "02:61:6c:00:00:01";
    identity.address = "100.96.0.6";
    identity.prefixLength = 30;
    identity.gateway = "100.96.0.5";
    identity.dns = "100.96.0.5";
    identity.entropy = Bytes(64, 0xee);
    identity.fileCount = 2;
    roundTrip(identity);
    roundTrip(IdentityFile {"ca.pem", 0644, Bytes(1000, 'c')});
    roundTrip(IdentityFail {"network"});
}

void TestAgentWire::invalidValuesDoNotEncodeOrDecode()
{
    // What encode() refuses, decode() refuses too: the same validate() on both ends.
    ExecRequest exec;
    QVERIFY(!exec.encode()); // no argv
    exec.argv = {"ls"};
    exec.cwd = "relative";
    QVERIFY(!exec.encode());
    exec.cwd.clear();
    exec.env = {{"BAD-NAME", "x"}};
    QVERIFY(!exec.encode());
    exec.env.clear();
    exec.user = "Root";
    QVERIFY(!exec.encode());
    exec.user.clear();
    exec.pty = true;
    exec.rows = 0;
    QVERIFY(!exec.encode());
    QVERIFY(!(StatRequest {"", false}.encode()));
    QVERIFY(!(StatRequest {"no/leading/slash", false}.encode()));
    QVERIFY(!(StatRequest {std::string("/a\0b", 4), false}.encode()));
    QVERIFY(!(Credit {0}.encode()));
    QVERIFY(!(SignalRequest {65}.encode()));
    QVERIFY(!(ExitStatus {false, 256, false}.encode()));
    QVERIFY(!(ExitStatus {false, 0, true}.encode())); // a timeout that did not kill
    QVERIFY(!(IdentityFile {"../ca.pem", 0644, {}}.encode()));
    QVERIFY(!(IdentityFile {".hidden", 0644, {}}.encode()));
    QVERIFY(!(IdentityFail {"Network!"}.encode()));
    IdentityRequest identity;
    identity.hostname = "bad name";
    QVERIFY(!identity.encode());
    identity.hostname = "ok";
    identity.mac = "02:61:6c:00:00:zz";
    QVERIFY(!identity.encode());

    // Hand-made payloads a hostile guest could send.
    PayloadWriter nulInString;
    nulInString.u16(1).str(std::string("a\0b", 3));
    QVERIFY(!ErrorMessage::decode(nulInString.bytes()));
    PayloadWriter unknownCode;
    unknownCode.u16(999).str("x");
    QVERIFY(!ErrorMessage::decode(unknownCode.bytes()));
    PayloadWriter badBoolean;
    badBoolean.boolean(false).i32(0).u8(2);
    QVERIFY(!ExitStatus::decode(badBoolean.bytes()));
    PayloadWriter lyingLength;
    lyingLength.u16(1).u32(60000); // a blob that claims more bytes than the payload has
    QVERIFY(!IdentityFile::decode(lyingLength.bytes()));
    PayloadWriter tooManyProcesses;
    tooManyProcesses.u16(65);
    QVERIFY(!ProcessList::decode(tooManyProcesses.bytes()));
    PayloadWriter badKind;
    badKind.u8(9).u32(0).u64(0).i64(0).u32(0).u32(0).str("x").str("");
    QVERIFY(!StatResult::decode(badKind.bytes()));
}

void TestAgentWire::decoderAnySplit_data()
{
    QTest::addColumn<int>("step");
    for (int step : {1, 2, 7, 23, 24, 25, 4096, 1 << 20})
        QTest::addRow("step %d", step) << step;
}

void TestAgentWire::decoderAnySplit()
{
    QFETCH(int, step);
    Bytes stream;
    const Bytes big(kMaxPayloadBytes, 0x5a);
    for (const Bytes &frame :
         {frameOf(MessageType::Hello, 0, 7, *Hello {}.encode()),
          frameOf(MessageType::Stdout, 3, 99, big), frameOf(MessageType::Ok, 0, 8, {}),
          frameOf(MessageType::ListResult, 0, 9, *ListResult {}.encode(), kFlagEnd)})
        stream.insert(stream.end(), frame.begin(), frame.end());
    FrameDecoder decoder(Sender::Guest);
    const auto frames = decodeAll(decoder, stream, std::size_t(step));
    QVERIFY(!decoder.error());
    QCOMPARE(frames.size(), std::size_t(4));
    QCOMPARE(frames[0].header.type, MessageType::Hello);
    QCOMPARE(frames[0].header.request, std::uint64_t(7));
    QCOMPARE(frames[1].header.stream, std::uint32_t(3));
    QCOMPARE(frames[1].payload, big);
    QCOMPARE(frames[2].header.type, MessageType::Ok);
    QCOMPARE(frames[3].header.flags, kFlagEnd);
}

void TestAgentWire::decoderRefuses_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<int>("error");
    const auto make = [](auto change) {
        Bytes frame = encodeFrame(MessageType::Ok, 0, 1, {});
        change(frame);
        return QByteArray(reinterpret_cast<const char *>(frame.data()), qsizetype(frame.size()));
    };
    QTest::newRow("bad magic") << make([](Bytes &f) { f[0] = 'X'; })
                               << int(ProtocolError::BadMagic);
    QTest::newRow("protocol 1") << make([](Bytes &f) { f[2] = 1; })
                                << int(ProtocolError::BadVersion);
    QTest::newRow("protocol 3") << make([](Bytes &f) { f[2] = 3; })
                                << int(ProtocolError::BadVersion);
    QTest::newRow("unknown type") << make([](Bytes &f) { f[3] = 0x7f; })
                                  << int(ProtocolError::UnknownType);
    QTest::newRow("type zero") << make([](Bytes &f) { f[3] = 0; })
                               << int(ProtocolError::UnknownType);
    QTest::newRow("guest sends exec")
        << make([](Bytes &f) { f[3] = std::uint8_t(MessageType::Exec); })
        << int(ProtocolError::WrongSender);
    QTest::newRow("guest sends stdin")
        << make([](Bytes &f) { f[3] = std::uint8_t(MessageType::Stdin); })
        << int(ProtocolError::WrongSender);
    QTest::newRow("undefined flag")
        << make([](Bytes &f) { f[5] = 0x80; }) << int(ProtocolError::BadFlags);
    QTest::newRow("end flag on ok")
        << make([](Bytes &f) { f[4] = 1; }) << int(ProtocolError::BadFlags);
    QTest::newRow("reserved set") << make([](Bytes &f) { f[6] = 1; })
                                  << int(ProtocolError::BadHeader);
    QTest::newRow("length 64 KiB + 1") << make([](Bytes &f) {
        f[20] = 0x01;
        f[21] = 0x00;
        f[22] = 0x01;
        f[23] = 0x00;
    }) << int(ProtocolError::Oversized);
    QTest::newRow("length 4 GiB") << make([](Bytes &f) {
        std::fill(f.begin() + 20, f.end(), 0xff);
    }) << int(ProtocolError::Oversized);
}

void TestAgentWire::decoderRefuses()
{
    QFETCH(QByteArray, header);
    QFETCH(int, error);
    FrameDecoder decoder(Sender::Guest);
    const ByteView bytes(reinterpret_cast<const std::uint8_t *>(header.constData()),
                         std::size_t(header.size()));
    QCOMPARE(decoder.feed(bytes), kHeaderBytes);
    QVERIFY(decoder.error().has_value());
    QCOMPARE(int(*decoder.error()), error);
    QVERIFY(!decoder.hasFrame());
    // Stopped: nothing more is taken.
    QCOMPARE(decoder.feed(bytes), std::size_t(0));
    QCOMPARE(decoder.wanted(), std::size_t(0));
}

void TestAgentWire::decoderWaitsForTruncatedFrames()
{
    const Bytes frame = frameOf(MessageType::Stdout, 1, 2, Bytes(1000, 1));
    for (std::size_t cut : {std::size_t(1), kHeaderBytes - 1, kHeaderBytes, frame.size() - 1}) {
        FrameDecoder decoder(Sender::Guest);
        QCOMPARE(decoder.feed(ByteView(frame).first(cut)), cut);
        QVERIFY(!decoder.hasFrame());
        QVERIFY(!decoder.error());
        QCOMPARE(decoder.wanted(), cut < kHeaderBytes ? kHeaderBytes - cut : frame.size() - cut);
    }
}

void TestAgentWire::oversizedIsRefusedBeforeThePayload()
{
    // A header announcing 1 GiB: refused after its 24 bytes, the rest is never taken.
    Bytes frame = frameOf(MessageType::Data, 1, 1, {});
    frame[20] = 0;
    frame[21] = 0;
    frame[22] = 0;
    frame[23] = 0x40;
    frame.resize(frame.size() + 1000, 0);
    FrameDecoder decoder(Sender::Guest);
    QCOMPARE(decoder.feed(frame), kHeaderBytes);
    QCOMPARE(*decoder.error(), ProtocolError::Oversized);
}

void TestAgentWire::seekHelloSkipsGarbage()
{
    Bytes stream(1000, 0x41); // "AAAA...", which even starts like the magic
    const Bytes stale = frameOf(MessageType::Stdout, 1, 1, Bytes(10, 1)); // an older host's frame
    stream.insert(stream.end(), stale.begin() + 5, stale.end()); // its tail only
    const Bytes hello = frameOf(MessageType::Hello, 0, 0, *Hello {}.encode());
    stream.insert(stream.end(), hello.begin(), hello.end());
    const Bytes ok = frameOf(MessageType::Ok, 0, 5, {});
    stream.insert(stream.end(), ok.begin(), ok.end());
    FrameDecoder decoder(Sender::Guest, FrameDecoder::Mode::SeekHello);
    const auto frames = decodeAll(decoder, stream, 7);
    QVERIFY(!decoder.error());
    QCOMPARE(frames.size(), std::size_t(2));
    QCOMPARE(frames[0].header.type, MessageType::Hello);
    QCOMPARE(frames[1].header.type, MessageType::Ok);
    QCOMPARE(decoder.skipped(), std::uint64_t(1000 + stale.size() - 5));
    QCOMPARE(decoder.mode(), FrameDecoder::Mode::Strict);
}

void TestAgentWire::creditWindow()
{
    CreditWindow window;
    QVERIFY(!window.spend(1)); // nothing before the first grant
    QVERIFY(window.spend(0));
    QVERIFY(window.grant(1000));
    QVERIFY(window.spend(600));
    QVERIFY(!window.spend(401)); // overrun
    QVERIFY(window.spend(400));
    QCOMPARE(window.available(), std::uint64_t(0));
    QVERIFY(window.grant(kMaxCreditWindow));
    QVERIFY(!window.grant(1)); // past the window
    QCOMPARE(window.available(), kMaxCreditWindow);
    QVERIFY(!CreditWindow().grant(kMaxCreditWindow + 1));
}

void TestAgentWire::namesAreStable()
{
    QCOMPARE(errorCodeName(ErrorCode::NotFound), std::string_view("not_found"));
    QCOMPARE(errorCodeName(ErrorCode::IsADirectory), std::string_view("is_a_directory"));
    QCOMPARE(errorCodeName(ErrorCode::NotADirectory), std::string_view("not_a_directory"));
    QCOMPARE(errorCodeName(ErrorCode::Exists), std::string_view("exists"));
    QCOMPARE(errorCodeName(ErrorCode::Permission), std::string_view("permission"));
    QCOMPARE(errorCodeName(ErrorCode::Invalid), std::string_view("invalid"));
    QCOMPARE(errorCodeName(ErrorCode::Internal), std::string_view("internal"));
    QCOMPARE(errorCodeName(ErrorCode(999)), std::string_view("internal"));
    QCOMPARE(protocolErrorName(ProtocolError::CreditExceeded), std::string_view("credit_exceeded"));
    QCOMPARE(messageTypeName(MessageType::StdinClose), std::string_view("stdin_close"));
    for (int type = 0; type < 256; ++type) {
        const auto sender = senderOf(std::uint8_t(type));
        if (sender)
            QVERIFY(messageTypeName(MessageType(type)) != "unknown");
    }
}

void TestAgentWire::watchRecordsAnySplit()
{
    const std::vector<WatchRecord> sent {{WatchOp::Create, "a.txt"},
                                         {WatchOp::Write, "sub/b"},
                                         {WatchOp::Overflow, ""},
                                         {WatchOp::Remove, std::string(kMaxPathBytes, 'x')}};
    Bytes stream;
    for (const WatchRecord &record : sent)
        QVERIFY(record.appendTo(stream));
    for (std::size_t piece : {std::size_t(1), std::size_t(2), std::size_t(7), stream.size()}) {
        WatchRecordDecoder decoder;
        std::vector<WatchRecord> got;
        for (std::size_t at = 0; at < stream.size(); at += piece)
            QVERIFY(decoder.feed(ByteView(stream).subspan(at, std::min(piece, stream.size() - at)),
                                 got));
        QCOMPARE(got.size(), sent.size());
        for (std::size_t i = 0; i < sent.size(); ++i) {
            QCOMPARE(got[i].op, sent[i].op);
            QCOMPARE(got[i].name, sent[i].name);
        }
    }
}

void TestAgentWire::watchRecordsRefused()
{
    // What a hostile guest could put in a watch stream: each breaks the decoder for good.
    const std::vector<Bytes> bad {
        {0, 1, 0, 'a'}, // op 0
        {7, 1, 0, 'a'}, // op 7
        {1, 0, 0}, // an empty name on a create
        {6, 1, 0, 'a'}, // a name on an overflow
        {1, 1, 0, 0}, // a NUL in the name
        {1, 0x01, 0x10}, // a name of 4097 bytes: refused from its length, nothing buffered
    };
    for (const Bytes &bytes : bad) {
        WatchRecordDecoder decoder;
        std::vector<WatchRecord> got;
        QVERIFY(!decoder.feed(bytes, got));
        QVERIFY(decoder.failed());
        QVERIFY(!decoder.feed(Bytes {1, 1, 0, 'a'}, got));
        QVERIFY(got.empty());
    }
    Bytes nothing;
    QVERIFY(!(WatchRecord {WatchOp::Create, ""}.appendTo(nothing)));
    QVERIFY(nothing.empty());
}

QTEST_APPLESS_MAIN(TestAgentWire)
#include "tst_agentwire.moc"

// libFuzzer target: what the host reads from a hostile guest agent (docs/agent-protocol.md):
// FrameDecoder (seeking the first Hello, then strict, resynchronising after an error as the
// host does before its handshake), every payload codec of the types a guest sends, credit
// accounting of data frames, and the archive stream of Data payloads with the host's refusal
// policy, and the watch records of Data payloads. The first input byte picks how the rest is
// cut into reads.
//
// Checks beyond "no crash": a frame never exceeds kMaxPayloadBytes, the decoder never hands
// out more bytes than it was fed and takes all it is fed while a frame is incomplete; every payload
// that decodes encodes back to the same bytes (one canonical form, so nothing is read two ways); an
// archive entry the policy accepts is relative, without "." or ".." components, and not a device,
// FIFO, socket, hard link, setuid or setgid file, nor a symlink that climbs out; a watch record
// that decodes validates and encodes back to the bytes it came from.
#include "core/agentwire/archivepolicy.h"
#include "core/agentwire/creditwindow.h"
#include "core/agentwire/framedecoder.h"
#include "core/agentwire/messages.h"

#include <cstdlib>
#include <sys/stat.h>

using namespace airlock::agentwire;

namespace {

void check(bool condition)
{
    if (!condition)
        std::abort();
}

template<typename T>
void canonical(ByteView payload)
{
    const auto decoded = T::decode(payload);
    if (!decoded)
        return;
    const auto encoded = decoded->encode();
    check(encoded.has_value());
    check(Bytes(payload.begin(), payload.end()) == *encoded);
}

/// Checks what the host's policy lets through.
class PolicySink : public ArchiveSink
{
public:
    bool entry(const ArchiveEntry &entry) override
    {
        if (archiveRefusal(entry, ArchivePolicy {}))
            return true;
        check(!entry.path.empty() && entry.path.front() != '/');
        std::size_t start = 0;
        for (;;) {
            const std::size_t slash = entry.path.find('/', start);
            const std::string part = entry.path.substr(start, slash - start);
            check(!part.empty() && part != "." && part != "..");
            if (slash == std::string::npos)
                break;
            start = slash + 1;
        }
        check(entry.kind != ArchiveKind::Other && entry.kind != ArchiveKind::Hardlink);
        check((entry.mode & (S_ISUID | S_ISGID)) == 0);
        if (entry.kind == ArchiveKind::Symlink)
            check(symlinkStaysInside(entry.path, entry.link));
        return true;
    }
    bool content(ByteView) override { return true; }
    bool entryDone() override { return true; }
    void end() override { }
};

void checkPayload(const Frame &frame)
{
    const ByteView payload(frame.payload);
    switch (frame.header.type) {
    case MessageType::Hello:
        return canonical<Hello>(payload);
    case MessageType::Error:
        return canonical<ErrorMessage>(payload);
    case MessageType::Credit:
        return canonical<Credit>(payload);
    case MessageType::Started:
        return canonical<Started>(payload);
    case MessageType::Exit:
        return canonical<ExitStatus>(payload);
    case MessageType::ProcessList:
        return canonical<ProcessList>(payload);
    case MessageType::StatResult:
        return canonical<StatResult>(payload);
    case MessageType::ListResult:
        return canonical<ListResult>(payload);
    case MessageType::FileOpened:
        return canonical<FileOpened>(payload);
    case MessageType::ArchiveResult:
        return canonical<ArchiveResult>(payload);
    case MessageType::IdentityFail:
        return canonical<IdentityFail>(payload);
    default:
        return;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const std::size_t step = std::size_t(data[0] % 97) + 1;
    ByteView input(data + 1, size - 1);
    FrameDecoder decoder(Sender::Guest, FrameDecoder::Mode::SeekHello);
    CreditWindow credit;
    credit.grant(256 * 1024);
    PolicySink sink;
    ArchiveDecoder archive(sink);
    WatchRecordDecoder watch;
    std::size_t fed = 0;
    int resyncs = 0;
    while (!input.empty()) {
        const ByteView piece = input.first(std::min(step, input.size()));
        const bool strict = decoder.mode() == FrameDecoder::Mode::Strict;
        const std::size_t used = decoder.feed(piece);
        check(used <= piece.size());
        // An incomplete frame takes everything; a complete one stops at its end.
        if (strict && !decoder.error() && !decoder.hasFrame())
            check(used == piece.size());
        fed += used;
        input = input.subspan(used);
        if (decoder.error()) {
            if (++resyncs > 8)
                break;
            decoder.resync();
            continue;
        }
        if (!decoder.hasFrame()) {
            check(used > 0);
            continue;
        }
        const Frame &frame = decoder.frame();
        check(frame.payload.size() == frame.header.length);
        check(frame.payload.size() <= kMaxPayloadBytes);
        check(frame.payload.size() + kHeaderBytes <= fed);
        checkPayload(frame);
        switch (frame.header.type) {
        case MessageType::Data: {
            archive.feed(frame.payload);
            std::vector<WatchRecord> records;
            watch.feed(frame.payload, records);
            for (const WatchRecord &record : records) {
                check(!record.validate());
                Bytes again;
                check(record.appendTo(again));
                check(again.size() == 3 + record.name.size());
            }
            [[fallthrough]];
        }
        case MessageType::Stdout:
        case MessageType::Stderr:
            credit.spend(frame.payload.size());
            break;
        default:
            break;
        }
        decoder.pop();
    }
    return 0;
}

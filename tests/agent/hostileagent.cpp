// airlock-hostile-agent: a guest agent that breaks protocol 2 on purpose, for
// tst_agenthostileguest, which puts it in place of /sbin/airlock-agent inside a real guest (the
// guest's init respawns it there). It serves the org.airlock.agent port like the real agent:
// says Hello unasked when it starts and answers the host's Hellos, then misbehaves by the type
// of each request, so that the test chooses the attack by what it calls (the same script as
// the in-process fake guest of tst_agenthostile, but from inside a guest, through QEMU):
//
//   exec   (exec.start)  stall: never answered
//   stat   (files.stat)  lying length: a header announcing 60000 payload bytes, then 10 of them
//                        and nothing more
//   list   (files.list)  flood: the rest of a lie still open, then Pong frames of 4 KiB under the
//                        id of a request it never answered (stray frames for the host) as fast as
//                        the port takes them, at most 256 MiB
//   mkdir  (files.mkdir) oversized: a header announcing a 1 GiB payload
//   anything else        ignored
//
// Static like the real agent (guest/agent/CMakeLists.txt), so it runs in both images.

#include "core/agentwire/framedecoder.h"
#include "core/agentwire/messages.h"
#include "guest/agent/channel.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

using namespace airlock::agentwire;

namespace {

constexpr std::size_t kLieLength = 60000;
constexpr std::size_t kLieSent = 10;
constexpr std::size_t kFloodPayload = 4096;
constexpr std::uint64_t kFloodLimitBytes = 256ull << 20;

/// Writes all of `bytes` (blocking); false when the port failed.
bool writeAll(int fd, const std::uint8_t *data, std::size_t size)
{
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= std::size_t(n);
    }
    return true;
}

bool writeAll(int fd, const Bytes &bytes)
{
    return writeAll(fd, bytes.data(), bytes.size());
}

void hello(int fd, std::uint64_t request)
{
    Hello message;
    message.capabilities = kCapExec | kCapPty | kCapFiles | kCapArchive | kCapIdentity;
    message.software = "airlock-hostile-agent";
    if (const auto payload = message.encode())
        writeAll(fd, encodeFrame(MessageType::Hello, 0, request, *payload));
}

class Hostile
{
public:
    explicit Hostile(int fd) : m_fd(fd) { }

    void handle(const Frame &frame)
    {
        const FrameHeader &header = frame.header;
        switch (header.type) {
        case MessageType::Hello:
            hello(m_fd, header.request);
            return;
        case MessageType::Exec:
            m_unanswered = header.request; // stall
            return;
        case MessageType::Stat: {
            // A whole frame's header, then a few bytes of its payload: the host waits for the
            // rest in the middle of a frame.
            const Bytes frameBytes =
                encodeFrame(MessageType::Pong, 0, header.request, Bytes(kLieLength, 0));
            writeAll(m_fd, frameBytes.data(), kHeaderBytes + kLieSent);
            m_lieOpen = kLieLength - kLieSent;
            m_unanswered = header.request;
            return;
        }
        case MessageType::List:
            flood(m_unanswered != 0 ? m_unanswered : header.request);
            return;
        case MessageType::Mkdir: {
            Bytes bytes = encodeFrame(MessageType::StatResult, 0, header.request, {});
            const std::uint32_t length = 1u << 30;
            for (int i = 0; i < 4; ++i)
                bytes[20 + i] = std::uint8_t(length >> (8 * i));
            bytes.resize(bytes.size() + 4096, 0x41);
            writeAll(m_fd, bytes);
            return;
        }
        default:
            return;
        }
    }

private:
    void flood(std::uint64_t request)
    {
        if (m_lieOpen > 0 && !writeAll(m_fd, Bytes(m_lieOpen, 0)))
            return;
        m_lieOpen = 0;
        const Bytes frame = encodeFrame(MessageType::Pong, 0, request, Bytes(kFloodPayload, 0x46));
        // Blocks once the host stops reading (its channel dropped): that ends the flood too.
        for (std::uint64_t sent = 0; sent < kFloodLimitBytes; sent += frame.size()) {
            if (!writeAll(m_fd, frame))
                return;
        }
    }

    int m_fd;
    std::uint64_t m_unanswered = 0; ///< a request left without an answer
    std::size_t m_lieOpen = 0; ///< payload bytes a lying header still announces
};

} // namespace

int main()
{
    std::string port;
    for (int tries = 0; (port = airlock::guest::findVirtioPort("org.airlock.agent")).empty();
         ++tries) {
        if (tries == 50) {
            std::fputs("airlock-hostile-agent: no org.airlock.agent port\n", stderr);
            return 1;
        }
        ::usleep(100 * 1000);
    }
    const int fd = ::open(port.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        std::perror("airlock-hostile-agent: open");
        return 1;
    }
    hello(fd, 0);
    Hostile hostile(fd);
    // Strict from the first byte: the host is connected already and sends no Hello again.
    FrameDecoder decoder(Sender::Host);
    std::uint8_t buffer[64 * 1024];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return 1;
        if (n == 0) {
            // No host on the port: it reads end of file until one connects.
            ::usleep(200 * 1000);
            continue;
        }
        ByteView bytes(buffer, std::size_t(n));
        while (!bytes.empty() || decoder.hasFrame()) {
            bytes = bytes.subspan(decoder.feed(bytes));
            if (decoder.error()) {
                decoder.reset(); // whatever the host sent the previous agent, half of it
                continue;
            }
            if (!decoder.hasFrame())
                break;
            hostile.handle(decoder.frame());
            decoder.pop();
        }
    }
}

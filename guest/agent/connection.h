#pragma once

#include "core/agentwire/framedecoder.h"

#include <deque>
#include <functional>

namespace airlock::guest {

/// Frames in and out over the channel's descriptor: a FrameDecoder for the host's bytes and a
/// queue of encoded frames written as the descriptor takes them (non-blocking). The queue is
/// the agent's only output buffer: producers check outputFull() before they make more.
class Connection
{
public:
    /// Output queued beyond which producers (process output, file and archive streams) wait.
    static constexpr std::size_t kOutputHighBytes = 256 * 1024;

    Connection();

    /// Starts over on a new host connection: a fresh decoder and an empty queue.
    void reset(int fd);
    /// Drops the queue except a frame already partly written (the host HELLO resets the
    /// connection without closing it, and a half frame would desynchronise the host).
    void dropQueued();

    enum class ReadResult { Ok, Closed };
    /// Reads what is there (at most `budget` bytes) and hands each complete frame to
    /// `handle`. A ProtocolError goes to `failed`, after which the decoder seeks the host's
    /// next Hello in the bytes that follow. Closed at end of file or a read error.
    ReadResult read(std::size_t budget, const std::function<void(const agentwire::Frame &)> &handle,
                    const std::function<void(agentwire::ProtocolError)> &failed);
    /// Writes queued frames; false when the descriptor failed (the host went away).
    bool flush();

    void send(agentwire::MessageType type, std::uint32_t stream, std::uint64_t request,
              agentwire::ByteView payload = {}, std::uint16_t flags = 0);
    std::size_t queuedBytes() const { return m_queued; }
    bool outputFull() const { return m_queued >= kOutputHighBytes; }
    bool hasOutput() const { return m_queued > 0; }

    agentwire::FrameDecoder &decoder() { return m_decoder; }

private:
    int m_fd = -1;
    agentwire::FrameDecoder m_decoder;
    std::deque<agentwire::Bytes> m_out;
    std::size_t m_frontWritten = 0;
    std::size_t m_queued = 0;
};

} // namespace airlock::guest

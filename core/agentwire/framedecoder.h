#pragma once

#include "core/agentwire/frame.h"

#include <optional>

namespace airlock::agentwire {

/// Cuts a peer's byte stream into frames, strictly and incrementally: feed() takes bytes, at
/// most up to the end of the current frame, and a complete frame waits in frame() until pop().
/// It never holds more than one frame (kHeaderBytes + kMaxPayloadBytes, allocated once), never
/// reads a payload whose header it rejected, and stops at the first ProtocolError (error()).
///
/// In SeekHello mode (a connection's start, or after an error when the receiver chooses to
/// resynchronise) bytes are skipped one at a time until a header parses as a Hello; the
/// skipped bytes are counted (skipped()) so that a receiver can bound them.
class FrameDecoder
{
public:
    enum class Mode : std::uint8_t { Strict, SeekHello };

    /// Decodes frames sent by `from` (the host decodes Sender::Guest).
    explicit FrameDecoder(Sender from, Mode mode = Mode::Strict);

    /// Consumes bytes from the front of `bytes` and returns how many: none while a frame waits
    /// or after an error, otherwise at most what completes the current frame.
    std::size_t feed(ByteView bytes);
    /// Bytes the current frame still needs (its header's, then its payload's); a reader that
    /// reads no more than this from its channel leaves the rest there (backpressure).
    std::size_t wanted() const;

    bool hasFrame() const { return m_ready; }
    /// The complete frame; valid until pop().
    const Frame &frame() const { return m_frame; }
    /// Moves the complete frame out and starts the next.
    Frame take();
    void pop();

    const std::optional<ProtocolError> &error() const { return m_error; }
    /// Forgets a partial frame and an error, and seeks the next Hello (resynchronisation).
    void resync();
    /// Starts over in Strict mode (a new connection).
    void reset();
    Mode mode() const { return m_mode; }
    /// Bytes skipped in SeekHello mode since construction or the last reset().
    std::uint64_t skipped() const { return m_skipped; }

private:
    std::size_t seek(ByteView bytes);

    Sender m_from;
    Mode m_mode;
    std::uint8_t m_header[kHeaderBytes] {};
    std::size_t m_headerFill = 0;
    bool m_haveHeader = false;
    std::size_t m_payloadFill = 0;
    bool m_ready = false;
    Frame m_frame;
    std::optional<ProtocolError> m_error;
    std::uint64_t m_skipped = 0;
};

} // namespace airlock::agentwire

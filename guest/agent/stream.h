#pragma once

#include "core/agentwire/creditwindow.h"
#include "core/agentwire/frame.h"
#include "core/agentwire/messages.h"
#include "guest/agent/connection.h"

#include <optional>
#include <poll.h>
#include <vector>

namespace airlock::guest {

class Stream;

/// A descriptor a stream wants polled, and for what.
struct PollInterest
{
    int fd;
    short events;
    Stream *stream; ///< compared, never dereferenced, once its stream may have gone
    std::uint32_t streamId;
};

/// One open stream of the current connection (docs/agent-protocol.md, "Streams"): the frames
/// the host sends on it go to frame(), and it sends its own through the Connection. It ends
/// (finished()) after its last frame; the agent then forgets it. Data a stream sends stays
/// within the credit the host granted (m_sendCredit); data the host sends beyond what the
/// stream granted is a protocol error.
class Stream
{
public:
    Stream(Connection &connection, std::uint32_t id, std::uint64_t request)
        : m_connection(connection), m_id(id), m_request(request)
    { }
    virtual ~Stream() = default;
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;

    std::uint32_t id() const { return m_id; }
    std::uint64_t request() const { return m_request; }
    bool finished() const { return m_finished; }

    /// A host frame on this stream; a ProtocolError when it breaks the rules. Credit is
    /// handled here; other types go to onFrame().
    std::optional<agentwire::ProtocolError> frame(const agentwire::Frame &frame);
    /// The host's Cancel: an Error `canceled` ends the stream (an exec stream detaches).
    virtual void cancel();
    /// The connection is gone: end without sending anything.
    virtual void drop() { m_finished = true; }

    virtual void pollInterest(std::vector<PollInterest> &) { }
    virtual void ready(int /*fd*/, short /*revents*/) { }
    /// True when produce() would send data now (no descriptor to wait for).
    virtual bool canProduce() const { return false; }
    virtual void produce() { }
    /// Called once per loop pass: state changes without a descriptor (a process ended).
    virtual void poke() { }

protected:
    virtual std::optional<agentwire::ProtocolError> onFrame(const agentwire::Frame &frame) = 0;

    void send(agentwire::MessageType type, agentwire::ByteView payload = {});
    /// Sends an Error and ends the stream.
    void failWith(agentwire::ErrorCode code, const std::string &message);
    void finish() { m_finished = true; }
    /// Grants the host `bytes` more of its data on this stream.
    void grant(std::uint32_t bytes);
    /// The largest data frame the host's credit allows now (0: none).
    std::size_t sendable() const;

    Connection &m_connection;
    agentwire::CreditWindow m_sendCredit; ///< what the host granted us
    agentwire::CreditWindow m_receiveCredit; ///< what we granted the host

private:
    std::uint32_t m_id;
    std::uint64_t m_request;
    bool m_finished = false;
};

} // namespace airlock::guest

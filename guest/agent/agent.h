#pragma once

#include "guest/agent/channel.h"
#include "guest/agent/connection.h"
#include "guest/agent/identityrefresh.h"
#include "guest/agent/processtable.h"
#include "guest/agent/stream.h"

#include <deque>
#include <map>
#include <memory>

namespace airlock::guest {

/// The guest agent's single-threaded poll() loop (docs/agent-protocol.md): serves the
/// requests of the host on the channel, runs the processes, streams and the identity refresh,
/// and says Hello when it starts and on each new host connection. Processes outlive a
/// connection; everything else of a connection ends with it.
class Agent
{
public:
    struct Options
    {
        SpawnContext spawn;
        IdentityTargets identity;
    };
    static constexpr std::size_t kMaxStreams = 256;

    Agent(Channel &channel, Options options);
    ~Agent();

    /// Runs until the channel can never come back (an inherited descriptor at end of file).
    int run();

private:
    void connected();
    void disconnected();
    /// Forgets the connection's streams and pending requests; processes detach.
    void dropConnectionState();
    void handleFrame(const agentwire::Frame &frame);
    void protocolError(agentwire::ProtocolError error);
    void handleRequest(const agentwire::Frame &frame);
    void openStream(const agentwire::Frame &frame);
    void identityFrame(const agentwire::Frame &frame);

    void sendHello(std::uint64_t request);
    void sendError(const agentwire::FrameHeader &to, agentwire::ErrorCode code,
                   const std::string &message);
    void sendOk(const agentwire::FrameHeader &to);
    void sendPayload(const agentwire::FrameHeader &to, agentwire::MessageType type,
                     const agentwire::EncodeResult &payload);
    void produceLists();
    int pollTimeoutMs() const;

    struct PendingList
    {
        std::uint64_t request = 0;
        agentwire::ListResult result;
        std::size_t next = 0;
    };
    struct PendingIdentity
    {
        std::uint64_t request = 0;
        agentwire::IdentityRequest identity;
        std::vector<agentwire::IdentityFile> files;
    };

    Channel &m_channel;
    Options m_options;
    Connection m_connection;
    ProcessTable m_processes;
    IdentityRefresh m_identity;
    std::map<std::uint32_t, std::unique_ptr<Stream>> m_streams;
    std::deque<PendingList> m_lists;
    std::optional<PendingIdentity> m_pendingIdentity;
    int m_signalFd = -1;
};

} // namespace airlock::guest

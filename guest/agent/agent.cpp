#include "guest/agent/agent.h"

#include "guest/agent/archiveinstream.h"
#include "guest/agent/archiveoutstream.h"
#include "guest/agent/execstream.h"
#include "guest/agent/fileops.h"
#include "guest/agent/filereadstream.h"
#include "guest/agent/filewritestream.h"
#include "guest/agent/watchstream.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#ifndef AIRLOCK_VERSION
#define AIRLOCK_VERSION "0"
#endif

namespace airlock::guest {

using namespace agentwire;
using Clock = std::chrono::steady_clock;

namespace {

/// Bytes read from the host per loop pass, so that process output keeps flowing meanwhile.
constexpr std::size_t kReadBudget = 256 * 1024;

constexpr std::uint64_t kCapabilities =
    kCapExec | kCapPty | kCapFiles | kCapArchive | kCapIdentity | kCapAttach | kCapWatch;

bool opensStream(MessageType type)
{
    switch (type) {
    case MessageType::Exec:
    case MessageType::Attach:
    case MessageType::Read:
    case MessageType::Watch:
    case MessageType::Write:
    case MessageType::ArchiveOut:
    case MessageType::ArchiveIn:
        return true;
    default:
        return false;
    }
}

bool isStreamFrame(MessageType type)
{
    switch (type) {
    case MessageType::Credit:
    case MessageType::Cancel:
    case MessageType::End:
    case MessageType::Data:
    case MessageType::Stdin:
    case MessageType::StdinClose:
    case MessageType::Signal:
    case MessageType::Resize:
        return true;
    default:
        return false;
    }
}

} // namespace

Agent::Agent(Channel &channel, Options options)
    : m_channel(channel), m_options(std::move(options)), m_identity(m_options.identity)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    m_signalFd = ::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    // A host that goes away mid-write is a write error, not the end of the agent.
    ::signal(SIGPIPE, SIG_IGN);
}

Agent::~Agent()
{
    m_streams.clear();
    if (m_signalFd >= 0)
        ::close(m_signalFd);
}

void Agent::connected()
{
    m_connection.reset(m_channel.fd());
    dropConnectionState();
    // The ready signal of protocol 1's `ready 1`: unasked, request id 0.
    sendHello(0);
}

void Agent::disconnected()
{
    dropConnectionState();
    m_connection.reset(-1);
    m_channel.lost();
}

void Agent::dropConnectionState()
{
    for (auto &[id, stream] : m_streams)
        stream->drop();
    m_streams.clear();
    m_lists.clear();
    m_pendingIdentity.reset();
}

void Agent::sendHello(std::uint64_t request)
{
    Hello hello;
    hello.capabilities = kCapabilities;
    hello.software = std::string("airlock-agent ") + AIRLOCK_VERSION;
    sendPayload(FrameHeader {MessageType::Hello, 0, 0, request, 0}, MessageType::Hello,
                hello.encode());
}

void Agent::sendPayload(const FrameHeader &to, MessageType type, const EncodeResult &payload)
{
    if (payload)
        m_connection.send(type, to.stream, to.request, *payload);
    else
        sendError(to, ErrorCode::Internal, payload.error());
}

void Agent::sendError(const FrameHeader &to, ErrorCode code, const std::string &message)
{
    ErrorMessage error {code, message.substr(0, 1024)};
    if (auto payload = error.encode())
        m_connection.send(MessageType::Error, to.stream, to.request, *payload);
}

void Agent::sendOk(const FrameHeader &to)
{
    m_connection.send(MessageType::Ok, to.stream, to.request);
}

void Agent::protocolError(ProtocolError error)
{
    // The host's bytes are not the protocol: say so, forget the connection's state (the host
    // fails everything it had asked), and wait for its next Hello (the decoder seeks it).
    sendError(FrameHeader {}, ErrorCode::ProtocolError,
              std::string("the agent could not parse the host's frames: ")
                  + std::string(protocolErrorName(error)));
    dropConnectionState();
}

void Agent::handleFrame(const Frame &frame)
{
    const FrameHeader &header = frame.header;
    if (header.type == MessageType::Hello) {
        if (!Hello::decode(frame.payload)) {
            protocolError(ProtocolError::BadPayload);
            return;
        }
        // A host Hello starts the connection over (a new airlockd, or a restored guest whose
        // snapshot held another host's half-sent state).
        m_connection.dropQueued();
        dropConnectionState();
        sendHello(header.request);
        return;
    }
    if (isStreamFrame(header.type)) {
        const auto it = m_streams.find(header.stream);
        // Frames for a stream that ended are late, not wrong: the host sent them before it
        // saw the end.
        if (it == m_streams.end() || it->second->request() != header.request)
            return;
        if (const auto error = it->second->frame(frame))
            protocolError(*error);
        return;
    }
    if (opensStream(header.type)) {
        openStream(frame);
        return;
    }
    handleRequest(frame);
}

void Agent::openStream(const Frame &frame)
{
    const FrameHeader &header = frame.header;
    if (header.stream == 0 || m_streams.contains(header.stream)) {
        sendError(header, ErrorCode::Invalid, "stream id 0 or in use");
        return;
    }
    if (m_streams.size() >= kMaxStreams) {
        sendError(header, ErrorCode::Limit, "256 streams are open");
        return;
    }
    const auto bad = [&] { protocolError(ProtocolError::BadPayload); };
    std::unique_ptr<Stream> stream;
    switch (header.type) {
    case MessageType::Exec: {
        const auto request = ExecRequest::decode(frame.payload);
        if (!request)
            return bad();
        auto child = m_processes.start(*request, m_options.spawn);
        if (!child) {
            sendError(header, child.error().code, child.error().message);
            return;
        }
        auto exec = std::make_unique<ExecStream>(m_connection, header.stream, header.request,
                                                 **child, m_processes);
        exec->start();
        stream = std::move(exec);
        break;
    }
    case MessageType::Attach: {
        const auto request = AttachRequest::decode(frame.payload);
        if (!request)
            return bad();
        ChildProcess *child = m_processes.find(pid_t(request->pid));
        if (!child) {
            sendError(header, ErrorCode::NotFound,
                      "no process " + std::to_string(request->pid) + " of this agent");
            return;
        }
        if (m_processes.attachedStream(child->pid())) {
            sendError(header, ErrorCode::Busy, "the process is attached to another stream");
            return;
        }
        auto exec = std::make_unique<ExecStream>(m_connection, header.stream, header.request,
                                                 *child, m_processes);
        exec->start();
        stream = std::move(exec);
        break;
    }
    case MessageType::Read: {
        const auto request = ReadRequest::decode(frame.payload);
        if (!request)
            return bad();
        auto read = std::make_unique<FileReadStream>(m_connection, header.stream, header.request);
        read->open(*request);
        stream = std::move(read);
        break;
    }
    case MessageType::Watch: {
        const auto request = WatchRequest::decode(frame.payload);
        if (!request)
            return bad();
        auto watch = std::make_unique<WatchStream>(m_connection, header.stream, header.request);
        watch->open(*request);
        stream = std::move(watch);
        break;
    }
    case MessageType::Write: {
        const auto request = WriteRequest::decode(frame.payload);
        if (!request)
            return bad();
        auto write = std::make_unique<FileWriteStream>(m_connection, header.stream, header.request);
        write->open(*request);
        stream = std::move(write);
        break;
    }
    case MessageType::ArchiveOut: {
        const auto request = ArchiveOutRequest::decode(frame.payload);
        if (!request)
            return bad();
        auto out = std::make_unique<ArchiveOutStream>(m_connection, header.stream, header.request);
        out->open(*request);
        stream = std::move(out);
        break;
    }
    case MessageType::ArchiveIn: {
        const auto request = ArchiveInRequest::decode(frame.payload);
        if (!request)
            return bad();
        auto in = std::make_unique<ArchiveInStream>(m_connection, header.stream, header.request);
        in->open(*request, m_options.spawn.passwdPath, m_options.spawn.groupPath);
        stream = std::move(in);
        break;
    }
    default:
        return;
    }
    if (!stream->finished())
        m_streams.emplace(header.stream, std::move(stream));
}

void Agent::handleRequest(const Frame &frame)
{
    const FrameHeader &header = frame.header;
    const auto bad = [&] { protocolError(ProtocolError::BadPayload); };
    const auto answer = [&](const auto &result, auto encodeValue) {
        if (result)
            encodeValue(*result);
        else
            sendError(header, result.error().code, result.error().message);
    };
    switch (header.type) {
    case MessageType::Ping:
        m_connection.send(MessageType::Pong, header.stream, header.request, frame.payload);
        return;
    case MessageType::ListProcesses:
        if (!frame.payload.empty())
            return bad();
        sendPayload(header, MessageType::ProcessList, m_processes.list().encode());
        return;
    case MessageType::Stat: {
        const auto request = StatRequest::decode(frame.payload);
        if (!request)
            return bad();
        answer(fileops::statPath(*request), [&](const FileInfo &info) {
            sendPayload(header, MessageType::StatResult, StatResult {info}.encode());
        });
        return;
    }
    case MessageType::List: {
        const auto request = ListRequest::decode(frame.payload);
        if (!request)
            return bad();
        answer(fileops::listFolder(*request), [&](const ListResult &result) {
            m_lists.push_back(PendingList {header.request, result, 0});
        });
        return;
    }
    case MessageType::Mkdir: {
        const auto request = MkdirRequest::decode(frame.payload);
        if (!request)
            return bad();
        const auto result = fileops::makeFolder(*request);
        result ? sendOk(header) : sendError(header, result.error().code, result.error().message);
        return;
    }
    case MessageType::Remove: {
        const auto request = RemoveRequest::decode(frame.payload);
        if (!request)
            return bad();
        const auto result = fileops::removePath(*request);
        result ? sendOk(header) : sendError(header, result.error().code, result.error().message);
        return;
    }
    case MessageType::Rename: {
        const auto request = RenameRequest::decode(frame.payload);
        if (!request)
            return bad();
        const auto result = fileops::renamePath(*request);
        result ? sendOk(header) : sendError(header, result.error().code, result.error().message);
        return;
    }
    case MessageType::Identity:
    case MessageType::IdentityFile:
        identityFrame(frame);
        return;
    default:
        protocolError(ProtocolError::Unexpected);
        return;
    }
}

void Agent::identityFrame(const Frame &frame)
{
    const FrameHeader &header = frame.header;
    if (header.type == MessageType::Identity) {
        const auto request = IdentityRequest::decode(frame.payload);
        if (!request)
            return protocolError(ProtocolError::BadPayload);
        // A new refresh replaces one whose files never all came.
        if (m_pendingIdentity)
            sendError(FrameHeader {MessageType::Error, 0, 0, m_pendingIdentity->request, 0},
                      ErrorCode::Canceled, "replaced by a newer refresh");
        m_pendingIdentity = PendingIdentity {header.request, *request, {}};
    } else {
        const auto file = IdentityFile::decode(frame.payload);
        if (!file)
            return protocolError(ProtocolError::BadPayload);
        if (!m_pendingIdentity || m_pendingIdentity->request != header.request
            || m_pendingIdentity->files.size() >= m_pendingIdentity->identity.fileCount) {
            sendError(header, ErrorCode::Invalid, "a seed file outside a refresh");
            return;
        }
        m_pendingIdentity->files.push_back(*file);
    }
    if (m_pendingIdentity->files.size() < m_pendingIdentity->identity.fileCount)
        return;
    const PendingIdentity pending = std::move(*m_pendingIdentity);
    m_pendingIdentity.reset();
    const FrameHeader to {MessageType::Ok, 0, 0, pending.request, 0};
    if (const auto failed = m_identity.apply(pending.identity, pending.files))
        sendPayload(to, MessageType::IdentityFail, IdentityFail {*failed}.encode());
    else
        sendOk(to);
}

void Agent::produceLists()
{
    while (!m_lists.empty() && !m_connection.outputFull()) {
        PendingList &list = m_lists.front();
        ListResult batch;
        std::size_t bytes = ListResult::kBaseBytes;
        while (list.next < list.result.entries.size()) {
            const std::size_t more = ListResult::entryBytes(list.result.entries[list.next]);
            if (bytes + more > kMaxPayloadBytes)
                break;
            bytes += more;
            batch.entries.push_back(std::move(list.result.entries[list.next++]));
        }
        const bool last = list.next == list.result.entries.size();
        batch.truncated = last && list.result.truncated;
        auto payload = batch.encode();
        if (payload)
            m_connection.send(MessageType::ListResult, 0, list.request, *payload,
                              last ? kFlagEnd : 0);
        if (last || !payload)
            m_lists.pop_front();
    }
}

int Agent::pollTimeoutMs() const
{
    if (!m_connection.outputFull()) {
        if (!m_lists.empty())
            return 0;
        for (const auto &[id, stream] : m_streams) {
            if (stream->canProduce())
                return 0;
        }
    }
    auto wake = Clock::time_point::max();
    if (const auto deadline = m_processes.nextDeadline())
        wake = *deadline;
    if (!m_channel.connected())
        wake = std::min(wake, m_channel.nextRetry());
    if (wake == Clock::time_point::max())
        return -1;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now()).count();
    return int(std::clamp<long long>(ms, 0, 60000));
}

int Agent::run()
{
    if (m_channel.connected())
        connected();
    std::vector<pollfd> fds;
    std::vector<PollInterest> interests;
    for (;;) {
        if (!m_channel.connected()) {
            if (m_channel.finished())
                return 0;
            if (m_channel.retry(Clock::now()))
                connected();
        }
        fds.clear();
        interests.clear();
        fds.push_back({m_signalFd, POLLIN, 0});
        const int channelFd = m_channel.fd();
        if (channelFd >= 0) {
            short events = 0;
            if (!m_connection.outputFull())
                events |= POLLIN;
            if (m_connection.hasOutput())
                events |= POLLOUT;
            fds.push_back({channelFd, events, 0});
        }
        const std::size_t firstStreamFd = fds.size();
        for (auto &[id, stream] : m_streams)
            stream->pollInterest(interests);
        for (const PollInterest &interest : interests)
            fds.push_back({interest.fd, interest.events, 0});

        const int ready = ::poll(fds.data(), fds.size(), pollTimeoutMs());
        if (ready < 0 && errno != EINTR)
            return 1;

        if (fds[0].revents & POLLIN) {
            signalfd_siginfo info;
            while (::read(m_signalFd, &info, sizeof info) == sizeof info) { }
            m_processes.reap();
        }
        if (channelFd >= 0) {
            const short revents = fds[1].revents;
            bool lost = false;
            if (revents & POLLIN) {
                const auto result = m_connection.read(
                    kReadBudget, [this](const Frame &frame) { handleFrame(frame); },
                    [this](ProtocolError error) { protocolError(error); });
                lost = result == Connection::ReadResult::Closed;
            } else if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
                lost = true;
            }
            if (lost)
                disconnected();
        }
        for (std::size_t i = firstStreamFd; i < fds.size(); ++i) {
            if (fds[i].revents == 0)
                continue;
            const PollInterest &interest = interests[i - firstStreamFd];
            // The stream may have ended while an earlier descriptor was handled.
            const auto it = m_streams.find(interest.streamId);
            if (it != m_streams.end() && it->second.get() == interest.stream)
                interest.stream->ready(interest.fd, fds[i].revents);
        }
        m_processes.checkDeadlines(Clock::now());
        if (m_channel.connected()) {
            produceLists();
            for (auto &[id, stream] : m_streams) {
                if (stream->canProduce())
                    stream->produce();
                stream->poke();
            }
            if (!m_connection.flush())
                disconnected();
        }
        std::erase_if(m_streams, [](const auto &entry) { return entry.second->finished(); });
    }
}

} // namespace airlock::guest

#include "core/agent/agentclient.h"

#include "core/agent/agentprocess.h"
#include "core/agent/agentreadstream.h"
#include "core/agent/agentstream.h"
#include "core/agent/agentwritestream.h"

#include <QIODevice>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QPointer>
#include <QRandomGenerator>

namespace airlock::agent {

using namespace agentwire;

namespace {

Q_LOGGING_CATEGORY(lcAgentClient, "airlock.agent.client")

QString latin1(std::string_view text)
{
    return QString::fromLatin1(text.data(), qsizetype(text.size()));
}

/// The guest's Error frame as an AgentError; std::nullopt when its payload is malformed.
std::optional<AgentError> guestError(const Frame &frame)
{
    const auto error = ErrorMessage::decode(frame.payload);
    if (!error)
        return std::nullopt;
    return AgentError::fromGuest(*error);
}

} // namespace

AgentClient::AgentClient(QIODevice *device, QObject *parent) : AgentClient(device, Limits(), parent)
{ }

AgentClient::AgentClient(QIODevice *device, Limits limits, QObject *parent)
    : QObject(parent)
    , m_device(device)
    , m_limits(limits)
    , m_decoder(Sender::Guest, FrameDecoder::Mode::SeekHello)
{
    m_device->setParent(this);
    // Bounded: when nothing reads, Qt stops pulling from the socket and the guest's writes
    // block in QEMU and in its virtio queue.
    if (auto *socket = qobject_cast<QLocalSocket *>(m_device)) {
        socket->setReadBufferSize(m_limits.readBufferBytes);
        connect(socket, &QLocalSocket::disconnected, this, &AgentClient::channelClosed);
    }
    connect(m_device, &QIODevice::readyRead, this, &AgentClient::readPending);
    connect(m_device, &QIODevice::readChannelFinished, this, &AgentClient::channelClosed);
    connect(m_device, &QIODevice::bytesWritten, this, &AgentClient::pumpWriters);
    m_helloTimer.setInterval(m_limits.helloRepeatMs);
    connect(&m_helloTimer, &QTimer::timeout, this, &AgentClient::sendHello);
    m_deadlineTimer.setInterval(100);
    connect(&m_deadlineTimer, &QTimer::timeout, this, &AgentClient::checkDeadlines);
}

AgentClient::~AgentClient()
{
    // Closing the socket below must not come back as a failure of a half-destroyed client.
    disconnect(m_device, nullptr, this, nullptr);
    m_state = State::Failed;
    // Streams are children: they must not call back into a half-destroyed client.
    for (auto &[id, stream] : m_streams)
        stream->m_client = nullptr;
    const auto children = findChildren<AgentStream *>(Qt::FindDirectChildrenOnly);
    for (AgentStream *stream : children)
        stream->m_client = nullptr;
    m_streams.clear();
    m_pending.clear();
    if (auto *socket = qobject_cast<QLocalSocket *>(m_device))
        socket->abort();
}

void AgentClient::start()
{
    if (m_state != State::Idle)
        return;
    m_state = State::Handshake;
    m_handshakeDeadline = QDeadlineTimer(m_limits.handshakeTimeoutMs);
    if (m_limits.resyncPreambleBytes > 0)
        m_device->write(QByteArray(m_limits.resyncPreambleBytes, '\0'));
    sendHello();
    m_helloTimer.start();
    m_deadlineTimer.start();
    later([this] { readPending(); });
}

void AgentClient::sendHello()
{
    if (m_state != State::Handshake)
        return;
    // A guest that does not read yet (its agent not started) gets no more Hellos queued for it
    // than one, however long the handshake goes on.
    if (m_device->bytesToWrite() > 4096)
        return;
    // Each Hello has its own nonce; the guest answers each (a late answer is dropped). A guest
    // that reads but never answers gets its oldest ones forgotten.
    if (m_helloNonces.size() >= 1024)
        m_helloNonces.clear();
    const quint64 nonce = newRequestId();
    m_helloNonces.insert(nonce);
    Hello hello;
    hello.capabilities = kCapExec | kCapPty | kCapFiles | kCapArchive | kCapIdentity | kCapAttach;
    hello.software = "airlockd " AIRLOCK_VERSION;
    const Bytes frame = encodeFrame(MessageType::Hello, 0, nonce, *hello.encode());
    m_device->write(reinterpret_cast<const char *>(frame.data()), qint64(frame.size()));
}

qint64 AgentClient::bufferedBytes() const
{
    qint64 total = 0;
    for (const auto &[id, stream] : m_streams)
        total += stream->buffered();
    for (const auto &[id, pending] : m_pending)
        total += pending.listBytes;
    return total;
}

quint64 AgentClient::newRequestId()
{
    for (;;) {
        const quint64 id = QRandomGenerator::system()->generate64();
        if (id != 0 && !m_pending.contains(id) && !m_abandoned.contains(id)
            && !m_helloNonces.contains(id))
            return id;
    }
}

quint32 AgentClient::newStreamId()
{
    for (;;) {
        const quint32 id = m_nextStream++;
        if (id != 0 && !m_streams.contains(id) && !m_canceledStreams.contains(id))
            return id;
    }
}

void AgentClient::later(std::function<void()> call)
{
    QMetaObject::invokeMethod(this, std::move(call), Qt::QueuedConnection);
}

void AgentClient::sendFrame(MessageType type, quint32 stream, quint64 request, ByteView payload,
                            quint16 flags)
{
    if (m_state == State::Failed)
        return;
    Bytes frame = encodeFrame(type, stream, request, payload, flags);
    if (m_state != State::Ready) {
        m_queued.push_back(std::move(frame));
        return;
    }
    m_device->write(reinterpret_cast<const char *>(frame.data()), qint64(frame.size()));
}

void AgentClient::flushQueued()
{
    while (!m_queued.empty()) {
        const Bytes frame = std::move(m_queued.front());
        m_queued.pop_front();
        m_device->write(reinterpret_cast<const char *>(frame.data()), qint64(frame.size()));
    }
}

quint64 AgentClient::request(MessageType type, const EncodeResult &payload, Answer answer,
                             std::function<void(const AgentError &)> fail)
{
    const auto failLater = [this, fail](AgentError error) -> quint64 {
        later([fail, error] { fail(error); });
        return 0;
    };
    if (!payload)
        return failLater(AgentError::invalid(QString::fromStdString(payload.error())));
    if (m_state == State::Failed || m_state == State::Idle)
        return failLater(AgentError::unavailable(
            m_state == State::Idle ? QStringLiteral("the agent client was not started")
                                   : QStringLiteral("the agent connection failed")));
    if (int(m_pending.size() + m_streams.size()) >= m_limits.maxPending)
        return failLater(AgentError::unavailable(QStringLiteral("too many requests in flight")));
    const quint64 id = newRequestId();
    m_pending.emplace(id,
                      Pending {type,
                               std::move(answer),
                               std::move(fail),
                               QDeadlineTimer(m_limits.requestTimeoutMs),
                               {},
                               0});
    sendFrame(type, 0, id, *payload);
    return id;
}

void AgentClient::requestOk(MessageType type, const EncodeResult &payload, Callback<void> done)
{
    request(
        type, payload,
        [done](Pending &, const Frame &frame) -> std::expected<bool, ProtocolError> {
            if (frame.header.type == MessageType::Error) {
                const auto error = guestError(frame);
                if (!error)
                    return std::unexpected(ProtocolError::BadPayload);
                done(std::unexpected(*error));
                return true;
            }
            if (frame.header.type != MessageType::Ok)
                return std::unexpected(ProtocolError::Unexpected);
            if (!frame.payload.empty())
                return std::unexpected(ProtocolError::BadPayload);
            done({});
            return true;
        },
        [done](const AgentError &error) { done(std::unexpected(error)); });
}

bool AgentClient::openStream(AgentStream *stream, MessageType type, const EncodeResult &payload)
{
    const QPointer<AgentStream> target(stream);
    const auto failLater = [this, target](AgentError error) {
        later([target, error] {
            if (target)
                target->fail(error);
        });
        return false;
    };
    stream->m_deadline = QDeadlineTimer(m_limits.requestTimeoutMs);
    if (!payload)
        return failLater(AgentError::invalid(QString::fromStdString(payload.error())));
    if (m_state == State::Failed || m_state == State::Idle)
        return failLater(AgentError::unavailable(
            m_state == State::Idle ? QStringLiteral("the agent client was not started")
                                   : QStringLiteral("the agent connection failed")));
    if (int(m_pending.size() + m_streams.size()) >= m_limits.maxPending)
        return failLater(AgentError::unavailable(QStringLiteral("too many requests in flight")));
    m_streams.emplace(stream->m_id, stream);
    sendFrame(type, stream->m_id, stream->m_request, *payload);
    return true;
}

void AgentClient::forgetStream(AgentStream *stream, bool cancel)
{
    const auto it = m_streams.find(stream->m_id);
    if (it == m_streams.end() || it->second != stream)
        return;
    m_streams.erase(it);
    if (!cancel || m_state == State::Failed)
        return;
    sendFrame(MessageType::Cancel, stream->m_id, stream->m_request);
    // Its frames in flight are dropped until the guest's last one for it.
    m_canceledStreams[stream->m_id] = stream->m_request;
    while (int(m_canceledStreams.size()) > m_limits.maxPending * 4)
        m_canceledStreams.erase(m_canceledStreams.begin());
}

bool AgentClient::stray()
{
    return ++m_strays > m_limits.maxStrayFrames;
}

// Unary requests

void AgentClient::ping(const QByteArray &payload, Callback<QByteArray> done)
{
    EncodeResult bytes = payload.size() <= qsizetype(kMaxPayloadBytes)
        ? EncodeResult(Bytes(payload.begin(), payload.end()))
        : EncodeResult(std::unexpected(std::string("a ping over 64 KiB")));
    request(
        MessageType::Ping, bytes,
        [done](Pending &, const Frame &frame) -> std::expected<bool, ProtocolError> {
            if (frame.header.type != MessageType::Pong)
                return std::unexpected(ProtocolError::Unexpected);
            done(QByteArray(reinterpret_cast<const char *>(frame.payload.data()),
                            qsizetype(frame.payload.size())));
            return true;
        },
        [done](const AgentError &error) { done(std::unexpected(error)); });
}

void AgentClient::stat(const StatRequest &statRequest, Callback<FileInfo> done)
{
    request(
        MessageType::Stat, statRequest.encode(),
        [done](Pending &, const Frame &frame) -> std::expected<bool, ProtocolError> {
            if (frame.header.type == MessageType::Error) {
                const auto error = guestError(frame);
                if (!error)
                    return std::unexpected(ProtocolError::BadPayload);
                done(std::unexpected(*error));
                return true;
            }
            if (frame.header.type != MessageType::StatResult)
                return std::unexpected(ProtocolError::Unexpected);
            const auto result = StatResult::decode(frame.payload);
            if (!result)
                return std::unexpected(ProtocolError::BadPayload);
            done(result->info);
            return true;
        },
        [done](const AgentError &error) { done(std::unexpected(error)); });
}

void AgentClient::list(const ListRequest &listRequest, Callback<ListResult> done)
{
    const qint64 maxBytes = m_limits.maxListBytes;
    const std::uint32_t maxEntries = listRequest.maxEntries;
    request(
        MessageType::List, listRequest.encode(),
        [done, maxBytes, maxEntries](Pending &pending,
                                     const Frame &frame) -> std::expected<bool, ProtocolError> {
            if (frame.header.type == MessageType::Error) {
                const auto error = guestError(frame);
                if (!error)
                    return std::unexpected(ProtocolError::BadPayload);
                done(std::unexpected(*error));
                return true;
            }
            if (frame.header.type != MessageType::ListResult)
                return std::unexpected(ProtocolError::Unexpected);
            // Bounded before decoding: a guest that keeps sending batches is a flood.
            pending.listBytes += qint64(frame.payload.size());
            if (pending.listBytes > maxBytes)
                return std::unexpected(ProtocolError::Flood);
            auto batch = ListResult::decode(frame.payload);
            if (!batch)
                return std::unexpected(ProtocolError::BadPayload);
            const bool last = frame.header.flags & kFlagEnd;
            if (batch->truncated && !last)
                return std::unexpected(ProtocolError::BadPayload);
            if (pending.list.entries.size() + batch->entries.size() > maxEntries)
                return std::unexpected(ProtocolError::Flood);
            for (FileInfo &info : batch->entries)
                pending.list.entries.push_back(std::move(info));
            if (!last)
                return false;
            pending.list.truncated = batch->truncated;
            done(std::move(pending.list));
            return true;
        },
        [done](const AgentError &error) { done(std::unexpected(error)); });
}

void AgentClient::mkdir(const MkdirRequest &mkdirRequest, Callback<void> done)
{
    requestOk(MessageType::Mkdir, mkdirRequest.encode(), std::move(done));
}

void AgentClient::remove(const RemoveRequest &removeRequest, Callback<void> done)
{
    requestOk(MessageType::Remove, removeRequest.encode(), std::move(done));
}

void AgentClient::rename(const RenameRequest &renameRequest, Callback<void> done)
{
    requestOk(MessageType::Rename, renameRequest.encode(), std::move(done));
}

void AgentClient::listProcesses(Callback<ProcessList> done)
{
    request(
        MessageType::ListProcesses, EncodeResult(Bytes()),
        [done](Pending &, const Frame &frame) -> std::expected<bool, ProtocolError> {
            if (frame.header.type != MessageType::ProcessList)
                return std::unexpected(ProtocolError::Unexpected);
            auto list = ProcessList::decode(frame.payload);
            if (!list)
                return std::unexpected(ProtocolError::BadPayload);
            done(std::move(*list));
            return true;
        },
        [done](const AgentError &error) { done(std::unexpected(error)); });
}

void AgentClient::refreshIdentity(IdentityRequest identity, const std::vector<IdentityFile> &files,
                                  Callback<void> done)
{
    if (files.size() > kMaxIdentityFiles) {
        later([done] {
            done(std::unexpected(AgentError::invalid(QStringLiteral("over 16 seed files"))));
        });
        return;
    }
    identity.fileCount = quint16(files.size());
    // Every frame is encoded before anything is sent: a file that cannot be sent fails the
    // refresh here instead of leaving the guest waiting for it.
    std::vector<Bytes> encodedFiles;
    for (const IdentityFile &file : files) {
        auto payload = file.encode();
        if (!payload) {
            const QString why = QString::fromStdString(payload.error());
            later([done, why] { done(std::unexpected(AgentError::invalid(why))); });
            return;
        }
        encodedFiles.push_back(std::move(*payload));
    }
    const quint64 id = request(
        MessageType::Identity, identity.encode(),
        [done](Pending &, const Frame &frame) -> std::expected<bool, ProtocolError> {
            if (frame.header.type == MessageType::Error) {
                const auto error = guestError(frame);
                if (!error)
                    return std::unexpected(ProtocolError::BadPayload);
                done(std::unexpected(*error));
                return true;
            }
            if (frame.header.type == MessageType::IdentityFail) {
                const auto failure = IdentityFail::decode(frame.payload);
                if (!failure)
                    return std::unexpected(ProtocolError::BadPayload);
                AgentError error;
                error.kind = AgentError::Kind::IdentityFailed;
                error.detail = latin1(failure->step);
                error.message =
                    QStringLiteral("the guest agent could not apply its new identity (step %1)")
                        .arg(error.detail);
                done(std::unexpected(error));
                return true;
            }
            if (frame.header.type != MessageType::Ok || !frame.payload.empty())
                return std::unexpected(ProtocolError::Unexpected);
            done({});
            return true;
        },
        [done](const AgentError &error) { done(std::unexpected(error)); });
    if (id == 0)
        return; // failed at once
    // The files follow under the same request id; the guest applies after the last.
    for (const Bytes &payload : encodedFiles)
        sendFrame(MessageType::IdentityFile, 0, id, payload);
}

// Streams

AgentProcess *AgentClient::exec(const ExecRequest &execRequest)
{
    auto *process = new AgentProcess(this, newStreamId(), newRequestId(), execRequest.timeoutMs);
    if (openStream(process, MessageType::Exec, execRequest.encode()))
        process->grantInitialCredit();
    return process;
}

AgentProcess *AgentClient::attach(quint32 pid)
{
    auto *process = new AgentProcess(this, newStreamId(), newRequestId(), 0);
    if (openStream(process, MessageType::Attach, AttachRequest {pid}.encode()))
        process->grantInitialCredit();
    return process;
}

AgentReadStream *AgentClient::readFile(const ReadRequest &readRequest)
{
    auto *stream =
        new AgentReadStream(this, newStreamId(), newRequestId(), AgentReadStream::Kind::File);
    stream->m_maxSize = readRequest.length;
    if (openStream(stream, MessageType::Read, readRequest.encode()))
        stream->grantInitialCredit();
    return stream;
}

AgentReadStream *AgentClient::archiveOut(const ArchiveOutRequest &archiveRequest)
{
    auto *stream =
        new AgentReadStream(this, newStreamId(), newRequestId(), AgentReadStream::Kind::Archive);
    if (openStream(stream, MessageType::ArchiveOut, archiveRequest.encode()))
        stream->grantInitialCredit();
    return stream;
}

AgentReadStream *AgentClient::watch(const WatchRequest &watchRequest)
{
    auto *stream =
        new AgentReadStream(this, newStreamId(), newRequestId(), AgentReadStream::Kind::Watch);
    // An agent of an older image does not know the type and would take it for a protocol
    // error of the whole connection: refuse it here instead.
    if (m_state == State::Ready && !(m_guestHello.capabilities & kCapWatch)) {
        const QPointer<AgentStream> target(stream);
        later([target] {
            if (target)
                target->fail(AgentError::guest(
                    ErrorCode::Unsupported,
                    QStringLiteral("this guest's agent cannot watch folders (an older image)")));
        });
        return stream;
    }
    if (openStream(stream, MessageType::Watch, watchRequest.encode()))
        stream->grantInitialCredit();
    return stream;
}

AgentWriteStream *AgentClient::writeFile(const WriteRequest &writeRequest)
{
    auto *stream =
        new AgentWriteStream(this, newStreamId(), newRequestId(), AgentWriteStream::Kind::File);
    openStream(stream, MessageType::Write, writeRequest.encode());
    return stream;
}

AgentWriteStream *AgentClient::archiveIn(const ArchiveInRequest &archiveRequest)
{
    auto *stream =
        new AgentWriteStream(this, newStreamId(), newRequestId(), AgentWriteStream::Kind::Archive);
    openStream(stream, MessageType::ArchiveIn, archiveRequest.encode());
    return stream;
}

// Reading

void AgentClient::readPending()
{
    m_readScheduled = false;
    if (m_state != State::Handshake && m_state != State::Ready)
        return;
    const QPointer<AgentClient> self(this);
    std::uint8_t buffer[kHeaderBytes + kMaxPayloadBytes];
    int frames = 0;
    while (frames < m_limits.framesPerSlice) {
        // Exactly what the current frame still needs: the rest stays in the socket.
        const std::size_t want = std::min(m_decoder.wanted(), sizeof buffer);
        if (want == 0)
            break;
        const qint64 n = m_device->read(reinterpret_cast<char *>(buffer), qint64(want));
        if (n <= 0)
            break;
        m_decoder.feed(ByteView(buffer, std::size_t(n)));
        if (m_decoder.mode() == FrameDecoder::Mode::SeekHello
            && qint64(m_decoder.skipped()) > m_limits.seekBudgetBytes) {
            failConnection(
                AgentError::protocol(QStringLiteral("the guest agent sent %1 bytes without a Hello")
                                         .arg(m_decoder.skipped())));
            return;
        }
        if (const auto error = m_decoder.error()) {
            if (m_state == State::Handshake) {
                // Before the handshake the channel may hold what a restored guest sent to
                // another host: seek the next Hello (within the seek budget).
                m_decoder.resync();
                continue;
            }
            failConnection(AgentError::protocol(
                QStringLiteral("the guest agent sent %1").arg(latin1(protocolErrorName(*error)))));
            return;
        }
        if (!m_decoder.hasFrame())
            continue;
        ++frames;
        handleFrame(m_decoder.frame());
        if (!self || m_state == State::Failed)
            return;
        m_decoder.pop();
    }
    if (m_device->bytesAvailable() > 0 && !m_readScheduled) {
        // Later, after the other work of the event loop: a flood is read in slices.
        m_readScheduled = true;
        QTimer::singleShot(0, this, &AgentClient::readPending);
    }
}

void AgentClient::handleFrame(const Frame &frame)
{
    const MessageType type = frame.header.type;
    if (type == MessageType::Hello) {
        handleHello(frame);
        return;
    }
    if (m_state == State::Handshake) {
        // Frames before our Hello's answer belong to an earlier host (a restored guest's
        // queue): dropped, within the seek budget.
        m_handshakeIgnored += qint64(kHeaderBytes + frame.payload.size());
        if (m_handshakeIgnored > m_limits.seekBudgetBytes)
            failConnection(AgentError::protocol(
                QStringLiteral("the guest agent sent over %1 bytes before its Hello")
                    .arg(m_limits.seekBudgetBytes)));
        return;
    }
    const std::optional<ProtocolError> error =
        frame.header.stream != 0 ? handleStreamFrame(frame) : handleAnswer(frame);
    if (error)
        failConnection(AgentError::protocol(
            QStringLiteral("the guest agent sent %1 (%2 frame)")
                .arg(latin1(protocolErrorName(*error)), latin1(messageTypeName(type)))));
}

void AgentClient::handleHello(const Frame &frame)
{
    const auto hello = Hello::decode(frame.payload);
    const quint64 request = frame.header.request;
    if (m_state == State::Handshake) {
        if (!hello) {
            m_decoder.resync();
            return;
        }
        if (!m_helloNonces.contains(request))
            return; // the guest's own announcement; our answer is what counts
        if (hello->version != kVersion) {
            failConnection(
                AgentError::unavailable(QStringLiteral("the guest agent speaks protocol %1, not %2")
                                            .arg(hello->version)
                                            .arg(kVersion)));
            return;
        }
        m_guestHello = *hello;
        m_state = State::Ready;
        m_helloTimer.stop();
        flushQueued();
        emit ready();
        return;
    }
    if (!hello) {
        failConnection(AgentError::protocol(QStringLiteral("the guest agent sent a bad Hello")));
        return;
    }
    if (stray()) {
        failConnection(
            AgentError::protocol(QStringLiteral("the guest agent sent too many Hellos")));
        return;
    }
    if (m_helloNonces.contains(request))
        return; // a late answer to a repeated Hello
    if (request != 0) {
        failConnection(AgentError::protocol(QStringLiteral("the guest agent answered a Hello "
                                                           "nobody sent")));
        return;
    }
    // The agent started over (it lost its connection state): what was in flight is gone.
    qCWarning(lcAgentClient, "the guest agent announced itself again; failing what was in flight");
    failAll(AgentError::unavailable(QStringLiteral("the guest agent restarted")));
}

std::optional<ProtocolError> AgentClient::handleAnswer(const Frame &frame)
{
    const quint64 request = frame.header.request;
    auto it = m_pending.find(request);
    if (it == m_pending.end()) {
        if (request == 0 && frame.header.type == MessageType::Error) {
            // The guest could not parse what we sent: nothing of this connection holds.
            const auto error = guestError(frame);
            failConnection(AgentError::protocol(
                QStringLiteral("the guest agent could not parse the host's frames: %1")
                    .arg(error ? error->message : QStringLiteral("(malformed)"))));
            return std::nullopt;
        }
        if (m_abandoned.contains(request))
            return stray() ? std::optional(ProtocolError::Flood) : std::nullopt;
        return ProtocolError::UnknownRequest;
    }
    auto node = m_pending.extract(it);
    Pending &pending = node.mapped();
    const auto outcome = pending.answer(pending, frame);
    if (outcome && *outcome)
        return std::nullopt; // answered: `this` may be gone, nothing more is touched
    // More to come, or a protocol error (then failConnection() fails it with the rest).
    m_pending.insert(std::move(node));
    if (!outcome)
        return outcome.error();
    return std::nullopt;
}

std::optional<ProtocolError> AgentClient::handleStreamFrame(const Frame &frame)
{
    const quint32 id = frame.header.stream;
    const auto it = m_streams.find(id);
    if (it == m_streams.end()) {
        const auto canceled = m_canceledStreams.find(id);
        if (canceled == m_canceledStreams.end() || canceled->second != frame.header.request)
            return ProtocolError::UnknownStream;
        switch (frame.header.type) {
        case MessageType::Exit:
        case MessageType::End:
        case MessageType::Ok:
        case MessageType::Error:
        case MessageType::ArchiveResult:
            m_canceledStreams.erase(canceled); // its last frame
            break;
        default:
            break;
        }
        return stray() ? std::optional(ProtocolError::Flood) : std::nullopt;
    }
    AgentStream *stream = it->second;
    if (stream->m_request != frame.header.request)
        return ProtocolError::UnknownRequest;
    return stream->handleFrame(frame);
}

// Failures and deadlines

void AgentClient::channelClosed()
{
    // What the guest sent before it went is still handled (an Exit, the last answer).
    const QPointer<AgentClient> self(this);
    while (self && (m_state == State::Ready || m_state == State::Handshake)
           && m_device->bytesAvailable() > 0) {
        const qint64 before = m_device->bytesAvailable();
        readPending();
        if (self && m_device->bytesAvailable() == before)
            break;
    }
    if (self)
        failConnection(AgentError::unavailable(QStringLiteral("the agent channel closed")));
}

void AgentClient::failConnection(const AgentError &error)
{
    if (m_state == State::Failed)
        return;
    qCWarning(lcAgentClient, "agent connection failed: %s: %s", qPrintable(error.name()),
              qPrintable(error.message));
    m_state = State::Failed;
    m_helloTimer.stop();
    m_deadlineTimer.stop();
    m_queued.clear();
    disconnect(m_device, nullptr, this, nullptr);
    if (auto *socket = qobject_cast<QLocalSocket *>(m_device))
        socket->abort();
    else
        m_device->close();
    const QPointer<AgentClient> self(this);
    failAll(error);
    if (self)
        emit failed(error);
}

void AgentClient::failAll(const AgentError &error)
{
    const QPointer<AgentClient> self(this);
    std::map<quint64, Pending> pending;
    pending.swap(m_pending);
    for (auto &[id, entry] : pending) {
        m_abandoned.insert(id);
        m_abandonedOrder.push_back(id);
    }
    std::vector<QPointer<AgentStream>> streams;
    for (auto &[id, stream] : m_streams)
        streams.emplace_back(stream);
    for (auto &[id, entry] : pending)
        entry.fail(error);
    for (const QPointer<AgentStream> &stream : streams) {
        if (stream)
            stream->fail(error);
    }
    if (!self)
        return;
    while (int(m_abandonedOrder.size()) > m_limits.maxPending * 4) {
        m_abandoned.erase(m_abandonedOrder.front());
        m_abandonedOrder.pop_front();
    }
}

void AgentClient::checkDeadlines()
{
    const QPointer<AgentClient> self(this);
    if (m_state == State::Handshake) {
        if (!m_handshakeDeadline.hasExpired())
            return;
        if (!m_limits.keepTryingHandshake) {
            failConnection(AgentError::timeout(
                QStringLiteral("the guest agent did not answer its Hello within %1 ms")
                    .arg(m_limits.handshakeTimeoutMs)));
            return;
        }
        // The frames of the requests that fail now must never reach the guest later: a
        // command its caller gave up on would run after all.
        m_queued.clear();
        m_handshakeDeadline = QDeadlineTimer(m_limits.handshakeTimeoutMs);
        failAll(AgentError::unavailable(
            QStringLiteral("the guest agent has not answered within %1 ms (is the guest still "
                           "booting?)")
                .arg(m_limits.handshakeTimeoutMs)));
        return;
    }
    if (m_state != State::Ready)
        return;
    std::vector<Pending> expired;
    for (auto it = m_pending.begin(); it != m_pending.end();) {
        if (!it->second.deadline.hasExpired()) {
            ++it;
            continue;
        }
        m_abandoned.insert(it->first);
        m_abandonedOrder.push_back(it->first);
        expired.push_back(std::move(it->second));
        it = m_pending.erase(it);
    }
    std::vector<QPointer<AgentStream>> stalled;
    for (auto &[id, stream] : m_streams) {
        if (stream->m_deadline.hasExpired())
            stalled.emplace_back(stream);
    }
    while (int(m_abandonedOrder.size()) > m_limits.maxPending * 4) {
        m_abandoned.erase(m_abandonedOrder.front());
        m_abandonedOrder.pop_front();
    }
    const AgentError timeout =
        AgentError::timeout(QStringLiteral("the guest agent did not answer in time"));
    for (Pending &entry : expired)
        entry.fail(timeout);
    for (const QPointer<AgentStream> &stream : stalled) {
        if (!self)
            return;
        if (!stream)
            continue;
        // Canceled in the guest, so that what it still sends for it is dropped.
        stream->fail(AgentError::timeout(QStringLiteral("the guest agent stalled the stream")),
                     true);
    }
}

void AgentClient::pumpWriters()
{
    if (m_state != State::Ready)
        return;
    std::vector<QPointer<AgentStream>> streams;
    for (auto &[id, stream] : m_streams)
        streams.emplace_back(stream);
    const QPointer<AgentClient> self(this);
    for (const QPointer<AgentStream> &stream : streams) {
        if (!self)
            return;
        if (stream)
            stream->pump();
    }
}

} // namespace airlock::agent

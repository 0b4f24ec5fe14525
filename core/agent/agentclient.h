#pragma once

#include "core/agent/agenterror.h"
#include "core/agentwire/framedecoder.h"
#include "core/agentwire/messages.h"

#include <QByteArray>
#include <QDeadlineTimer>
#include <QObject>
#include <QTimer>

#include <deque>
#include <functional>
#include <map>
#include <set>

class QIODevice;

namespace airlock::agent {

class AgentProcess;
class AgentReadStream;
class AgentStream;
class AgentWriteStream;

/// The host end of the guest agent protocol, version 2 (docs/agent-protocol.md), on a
/// QIODevice: in airlockd the QLocalSocket of the sandbox's `org.airlock.agent` port. It does
/// the handshake, sends requests with fresh random request ids (the nonces the guest must
/// echo), matches the answers, and runs the streams (AgentProcess, AgentReadStream,
/// AgentWriteStream).
///
/// The guest is hostile (root in the guest, knows this code). What it sends is parsed
/// strictly by FrameDecoder and the message codecs; every buffer is bounded (one frame being
/// decoded, the socket's read buffer, each stream's credit window, list answers); the device
/// is read at most Limits::framesPerSlice frames per event loop pass, so a flood cannot starve
/// the event loop; each request has a deadline. A guest that breaks the protocol fails every
/// request of this client with `protocol_error` and the channel is closed; a guest that
/// stalls fails each waiting request with `timeout`; a closed channel fails them with
/// `agent_unavailable`. Nothing the guest says becomes a host path or is believed beyond the
/// answer it is.
///
/// Callbacks and signals come from the event loop, never from inside the call that issued the
/// request; none comes once the client is destroyed.
class AgentClient : public QObject
{
    Q_OBJECT
public:
    struct Limits
    {
        int handshakeTimeoutMs = 10000; ///< from start() to the guest's Hello answer
        int helloRepeatMs = 500; ///< Hello is sent again until answered (a restored guest)
        int requestTimeoutMs = 30000; ///< each answer, and each stream's first frame
        int stallTimeoutMs = 60000; ///< a stream that owes data or an answer and is silent
        quint32 window = 256 * 1024; ///< credit of each stream the host reads
        qint64 writeBufferBytes = 1024 * 1024; ///< data queued on the device before writers wait
        qint64 readBufferBytes = 256 * 1024; ///< the QLocalSocket's read buffer
        int framesPerSlice = 64; ///< frames handled per event loop pass
        qint64 seekBudgetBytes = 1024 * 1024; ///< bytes skipped before the guest's first Hello
        int maxPending = 256; ///< requests and streams in flight
        int maxStrayFrames = 1024; ///< late answers to timed-out requests, unasked Hellos
        qint64 maxListBytes = 16 * 1024 * 1024; ///< of one list answer
        /// Zero bytes sent before the first Hello. For a guest restored from a snapshot
        /// (restore, fork, template start), whose agent may have been inside a frame of the
        /// previous host when the snapshot was taken: kResyncPreambleBytes completes any such
        /// frame, after which the guest fails to parse the zeros and seeks our Hello. 0 for a
        /// guest that saw its host go (a new airlockd, a cold boot).
        qint64 resyncPreambleBytes = 0;
        /// A cold-booted guest whose agent has not started yet: when handshakeTimeoutMs
        /// passes, the requests issued so far fail (agent_unavailable) but Hello goes on, and
        /// the connection becomes ready whenever the agent answers. Without it the
        /// connection fails (timeout) and is closed.
        bool keepTryingHandshake = false;
    };
    /// Enough to complete the largest frame a guest may be inside of.
    static constexpr qint64 kResyncPreambleBytes =
        qint64(agentwire::kHeaderBytes + agentwire::kMaxPayloadBytes);
    enum class State { Idle, Handshake, Ready, Failed };

    template<typename T>
    using Callback = std::function<void(const AgentResult<T> &)>;

    /// Takes `device` (open, read-write) as its child. Nothing is sent before start().
    explicit AgentClient(QIODevice *device, QObject *parent = nullptr);
    AgentClient(QIODevice *device, Limits limits, QObject *parent = nullptr);
    ~AgentClient() override;

    /// Starts the handshake: Hello until the guest answers (ready()) or
    /// Limits::handshakeTimeoutMs passes (failed(), timeout; with keepTryingHandshake only the
    /// requests issued so far fail, and Hello goes on). Requests issued before ready() wait
    /// for it.
    void start();
    State state() const { return m_state; }
    bool isReady() const { return m_state == State::Ready; }
    /// The guest's Hello (valid once ready).
    const agentwire::Hello &guestHello() const { return m_guestHello; }
    const Limits &limits() const { return m_limits; }
    /// Bytes held for the guest's streams and answers right now (the bound tests check).
    qint64 bufferedBytes() const;

    /// Echo: the guest answers Pong with `payload` (at most 64 KiB); a round trip measure.
    void ping(const QByteArray &payload, Callback<QByteArray> done);
    void stat(const agentwire::StatRequest &request, Callback<agentwire::FileInfo> done);
    /// All entries (the guest sends them in batches; at most Limits::maxListBytes).
    void list(const agentwire::ListRequest &request, Callback<agentwire::ListResult> done);
    void mkdir(const agentwire::MkdirRequest &request, Callback<void> done);
    void remove(const agentwire::RemoveRequest &request, Callback<void> done);
    void rename(const agentwire::RenameRequest &request, Callback<void> done);
    void listProcesses(Callback<agentwire::ProcessList> done);
    /// The identity refresh of a restored guest (request.fileCount is set from `files`);
    /// fails with Kind::IdentityFailed naming the step.
    void refreshIdentity(agentwire::IdentityRequest request,
                         const std::vector<agentwire::IdentityFile> &files, Callback<void> done);

    /// Starts a process (AgentProcess, a child of this client).
    AgentProcess *exec(const agentwire::ExecRequest &request);
    /// Binds process `pid` (from listProcesses) to a new AgentProcess: its output from where
    /// the last reader stopped, then its exit.
    AgentProcess *attach(quint32 pid);
    /// Streams a file out.
    AgentReadStream *readFile(const agentwire::ReadRequest &request);
    /// Streams the folder out as an archive stream (core/agentwire/archiveformat.h); feed it
    /// to an ArchiveDecoder with an ArchiveExtractor to write it under a host folder.
    AgentReadStream *archiveOut(const agentwire::ArchiveOutRequest &request);
    /// Watches a guest folder: opened() once the watch is set, then WatchRecord bytes
    /// (docs/agent-protocol.md, "Watch"); unsupported when the agent lacks kCapWatch.
    AgentReadStream *watch(const agentwire::WatchRequest &request);
    /// Streams bytes into a file.
    AgentWriteStream *writeFile(const agentwire::WriteRequest &request);
    /// Streams an archive into a folder (AgentWriteStream::archiveResult()).
    AgentWriteStream *archiveIn(const agentwire::ArchiveInRequest &request);

signals:
    /// The handshake completed.
    void ready();
    /// The connection failed (timeout of the handshake, protocol_error, agent_unavailable);
    /// every request was failed with `error`, and nothing more is sent or read.
    void failed(const airlock::agent::AgentError &error);

private:
    friend class AgentStream;
    friend class AgentProcess;
    friend class AgentReadStream;
    friend class AgentWriteStream;

    struct Pending;
    /// Handles one answer frame of a pending request: true when the answer is complete (the
    /// callback was called), false when more frames belong to it (list batches), or the
    /// ProtocolError the frame is.
    using Answer = std::function<std::expected<bool, agentwire::ProtocolError>(
        Pending &, const agentwire::Frame &)>;
    /// An answer expected on stream 0.
    struct Pending
    {
        agentwire::MessageType request;
        Answer answer;
        std::function<void(const AgentError &)> fail;
        QDeadlineTimer deadline;
        agentwire::ListResult list; ///< batches so far (List)
        qint64 listBytes = 0;
    };

    quint64 newRequestId();
    /// Sends now when ready, else queues for ready().
    void sendFrame(agentwire::MessageType type, quint32 stream, quint64 request,
                   agentwire::ByteView payload = {}, quint16 flags = 0);
    void flushQueued();
    /// Registers a unary request: `answer` handles its frames.
    /// Its request id, or 0 when it failed at once (`fail` is then called from the event loop).
    quint64 request(agentwire::MessageType type, const agentwire::EncodeResult &payload,
                    Answer answer, std::function<void(const AgentError &)> fail);
    /// Ok or Error answers.
    void requestOk(agentwire::MessageType type, const agentwire::EncodeResult &payload,
                   Callback<void> done);
    /// For an AgentStream subclass: sends its opening frame (true), or fails it from the event
    /// loop (false).
    bool openStream(AgentStream *stream, agentwire::MessageType type,
                    const agentwire::EncodeResult &payload);
    quint32 newStreamId();
    void forgetStream(AgentStream *stream, bool cancel);
    /// Runs `call` from the event loop unless this client is gone.
    void later(std::function<void()> call);

    void readPending();
    void handleFrame(const agentwire::Frame &frame);
    void handleHello(const agentwire::Frame &frame);
    std::optional<agentwire::ProtocolError> handleAnswer(const agentwire::Frame &frame);
    std::optional<agentwire::ProtocolError> handleStreamFrame(const agentwire::Frame &frame);
    bool stray();
    void channelClosed();
    void failConnection(const AgentError &error);
    void failAll(const AgentError &error);
    void sendHello();
    void checkDeadlines();
    void pumpWriters();

    QIODevice *m_device;
    Limits m_limits;
    State m_state = State::Idle;
    agentwire::FrameDecoder m_decoder;
    agentwire::Hello m_guestHello;
    std::set<quint64> m_helloNonces;
    QDeadlineTimer m_handshakeDeadline;
    QTimer m_helloTimer;
    QTimer m_deadlineTimer;
    bool m_readScheduled = false;
    std::deque<agentwire::Bytes> m_queued; ///< frames issued before ready()
    std::map<quint64, Pending> m_pending;
    std::map<quint32, AgentStream *> m_streams;
    /// Request ids whose answers may still come and are dropped: timed out, canceled.
    std::set<quint64> m_abandoned;
    std::deque<quint64> m_abandonedOrder;
    std::map<quint32, quint64> m_canceledStreams;
    quint32 m_nextStream = 1;
    int m_strays = 0;
    qint64 m_handshakeIgnored = 0;
};

} // namespace airlock::agent

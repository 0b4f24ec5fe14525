#pragma once

#include "core/agentwire/messages.h"
#include "core/model/error.h"
#include "core/vmm/seedimage.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <vector>

class QIODevice;

namespace airlock {

namespace agent {
class AgentClient;
struct AgentError;
} // namespace agent

/// What a guest restored from a snapshot is told about itself (docs/snapshots.md, "Guest
/// agent"): the identity a cold boot would have read from its kernel command line and seed
/// disk, plus fresh entropy.
struct GuestIdentity
{
    QString hostname; ///< the sandbox name (validated)
    QString mac; ///< "02:61:6c:xx:xx:xx"; empty: no network
    QString address; ///< "100.96.0.6"
    int prefixLength = 30;
    QString gateway; ///< default route
    QString dns; ///< resolver (the gateway)
    /// The complete seed set (SandboxService::seedFiles): the guest replaces /run/airlock with
    /// it, and swaps the sandbox CA (ca.pem) in its trust bundle.
    QList<SeedFile> files;
    QByteArray entropy; ///< random bytes the guest writes to /dev/urandom
};

/// The identity refresh as the protocol 2 messages that carry it: one identity frame and one
/// identity_file frame per seed file.
struct GuestIdentityMessage
{
    agentwire::IdentityRequest request;
    std::vector<agentwire::IdentityFile> files;
};

/// The host end of the guest agent channel: a virtio-serial port named `org.airlock.agent`
/// (QEMU `virtserialport` on a `virtio-serial-device`), whose chardev is a Unix socket in the
/// sandbox's runtime dir that only airlockd connects to. The guest side is `airlock-agent`
/// (guest/agent), and the protocol is version 2 (docs/agent-protocol.md): this class runs an
/// agent::AgentClient on the channel for the two jobs the helper has for it, the ready wait of
/// a cold boot (a template being prepared) and the identity refresh of a restored guest.
///
/// The guest is hostile (root, knows this code). Nothing is read from the channel until the
/// first refresh() or awaitReady(): a cold-booted guest nobody waits for fills only the
/// socket's kReadBufferBytes buffer, then the kernel's and QEMU's, and its writes block. From
/// then on the AgentClient reads with its bounds (one frame at a time, a bounded read buffer,
/// 64 frames per event loop pass, a budget for stray frames past which the connection is
/// dropped) and believes nothing but answers under the random request ids (nonces) of its own
/// requests: a refresh succeeds only on the guest's `ok` to this refresh's identity request.
/// A guest that breaks the protocol, floods or lies about lengths fails the refresh or the
/// wait and loses its channel (a later refresh fails at once); one that stays silent times out.
///
/// A restored, forked or template-started guest resumes its agent's connection state from the
/// snapshot, possibly inside a frame from or to the previous host: the first refresh() on a
/// connection sends AgentClient::kResyncPreambleBytes zero bytes before its Hello, and the
/// handshake skips whatever stale frames the guest still had queued (docs/agent-protocol.md,
/// "Connection, handshake, errors").
class GuestAgent : public QObject
{
    Q_OBJECT
public:
    /// What the socket buffers from the guest while nobody reads (the AgentClient sets its own
    /// Limits::readBufferBytes once it runs).
    static constexpr qint64 kReadBufferBytes = 64 * 1024;
    /// Longest seed file sent in one refresh (the seed files are a CA and a small env file).
    static constexpr qsizetype kMaxFileBytes = qsizetype(agentwire::kMaxIdentityFileBytes);
    /// Seed files per refresh.
    static constexpr qsizetype kMaxFiles = qsizetype(agentwire::kMaxIdentityFiles);
    /// How long refresh() waits by default; a restored guest answers in milliseconds, a TCG
    /// guest on a loaded machine in well under a second.
    static constexpr int kDefaultRefreshTimeoutMs = 10000;

    /// Takes `device` (an open QLocalSocket to the port's socket) as its child.
    explicit GuestAgent(QIODevice *device, QObject *parent = nullptr);
    ~GuestAgent() override;

    /// The refresh messages for `identity`. InvalidParams when a field cannot be sent (a name
    /// outside [a-zA-Z0-9._-], an address that is not one, a file name that is not plain, a
    /// file over kMaxFileBytes, over kMaxFiles files).
    static Result<GuestIdentityMessage> encode(const GuestIdentity &identity);

    using Done = std::function<void(const Result<void> &)>;
    /// Sends `identity`; `done` gets the outcome from the event loop once the guest answered
    /// `ok` (success), `identity_fail` (OperationFailed naming the step), after `timeoutMs`
    /// (Timeout, the handshake included), when the channel closes or the guest broke the
    /// protocol (OperationFailed), or at once for InvalidParams (encode()), Busy (a refresh or
    /// awaitReady() is under way) and a channel already closed (OperationFailed). Never called
    /// once this object is destroyed.
    void refresh(const GuestIdentity &identity, int timeoutMs, Done done);
    /// Waits for the agent of a cold boot (it starts after the kernel and init) to answer the
    /// handshake. `done` gets success once it did (at once when it already did on this
    /// connection), Timeout after `timeoutMs`, OperationFailed when the channel closes or the
    /// guest broke the protocol, Busy at once while a refresh or another wait is under way;
    /// from the event loop otherwise, never once this object is destroyed.
    void awaitReady(int timeoutMs, Done done);
    /// refresh() that blocks the calling thread, running a local event loop, until the
    /// outcome (tests).
    Result<void> refreshAndWait(const GuestIdentity &identity,
                                int timeoutMs = kDefaultRefreshTimeoutMs);

    /// The protocol 2 connection, for exec and files (core/daemon/agentapi.h): the one the
    /// refresh or the ready wait started, or one started now with a handshake of at most
    /// `handshakeTimeoutMs` (a cold-booted guest, between frames: no preamble); requests issued
    /// before its handshake wait for it. nullptr once the channel closed. Owned by this object.
    agent::AgentClient *connection(int handshakeTimeoutMs = kDefaultRefreshTimeoutMs);
    /// True once the agent answered the handshake on this connection.
    bool isReady() const;
    /// True once the channel closed or the connection failed: refresh() fails at once.
    bool isClosed() const;

private:
    /// The connection, started on first use; `restored`: with the resync preamble.
    agent::AgentClient *client(bool restored, int timeoutMs);
    /// Opens the wait for one outcome: callback and timer.
    void expect(int timeoutMs, Done done);
    void finish(const Result<void> &result);
    /// finish() with `result` from the event loop, unless this attempt ended meanwhile.
    void finishLater(const Result<void> &result);
    void onTimeout();
    void onClientReady();
    void onClientFailed(const agent::AgentError &error);
    static Result<void> fromAgent(const agent::AgentError &error);

    QIODevice *m_device;
    agent::AgentClient *m_client = nullptr;
    Done m_done; ///< callback of the outcome awaited
    bool m_awaitingReady = false; ///< inside awaitReady()
    quint64 m_attempt = 0; ///< increases with each finish(): late callbacks are dropped
    QTimer m_timer;
    int m_timeoutMs = 0;
};

} // namespace airlock

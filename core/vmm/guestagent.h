#pragma once

#include "core/model/error.h"
#include "core/vmm/seedimage.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>

class QIODevice;

namespace airlock {

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

/// The host end of the guest agent channel: a virtio-serial port named `org.airlock.agent`
/// (QEMU `virtserialport` on a `virtio-serial-device`), whose chardev is a Unix socket in the
/// sandbox's runtime dir that only airlockd connects to. The guest side is
/// installers/guest/files/airlock-agent.
///
/// Protocol 1, ASCII lines. Host to guest: `begin NONCE LENGTH`, then LENGTH bytes of lines:
/// `name`, `mac`, `addr ADDR/PREFIX`, `gw`, `dns`, `file NAME MODE BASE64`, `entropy BASE64`,
/// and last `commit NONCE`. Guest to host: `ready 1` when the agent starts, `ack NONCE` or
/// `fail NONCE STEP` after a commit.
///
/// The guest is hostile (root, knows this code): its lines are parsed strictly (at most
/// kMaxLineBytes each, longer ones are discarded up to their newline, anything but the three
/// forms above is counted and dropped), and nothing it says is believed except that it
/// acknowledged the nonce of the refresh we sent. The channel is read only while an answer is
/// expected: during a refresh (the `ack`/`fail`), or during awaitReady() (the `ready` line
/// after a cold boot; a restored or forked agent is already running and never says it again).
/// Each such window reads at most kMaxAnswerLines lines / kMaxAnswerBytes bytes and ends at
/// its timeout; one spent without its answer fails as a timeout would. Outside a window
/// nothing is read: the guest's bytes wait in the socket's kReadBufferBytes buffer, then in
/// the kernel's and QEMU's, and its writes block.
class GuestAgent : public QObject
{
    Q_OBJECT
public:
    /// Longest line accepted from the guest, newline included.
    static constexpr qsizetype kMaxLineBytes = 128;
    /// What the socket buffers from the guest while nobody reads.
    static constexpr qint64 kReadBufferBytes = 64 * 1024;
    /// Lines read per expected answer (one refresh, one awaitReady()): the answer itself plus
    /// a few stale ones (a `ready` nobody waited for, a late `ack` of a timed-out refresh).
    static constexpr qint64 kMaxAnswerLines = 16;
    /// Bytes read per expected answer, discarded oversized lines included.
    static constexpr qint64 kMaxAnswerBytes = kMaxAnswerLines * kMaxLineBytes;
    /// Longest file sent in one refresh (the seed files are a CA and a small env file).
    static constexpr qsizetype kMaxFileBytes = 48 * 1024;
    /// Longest refresh body the agent accepts (installers/guest/files/airlock-agent).
    static constexpr qsizetype kMaxBodyBytes = 256 * 1024;
    /// How long refresh() waits by default; a restored guest answers in milliseconds, a TCG
    /// guest on a loaded machine in well under a second.
    static constexpr int kDefaultRefreshTimeoutMs = 10000;

    /// Takes `device` (an open QLocalSocket to the port's socket) as its child.
    explicit GuestAgent(QIODevice *device, QObject *parent = nullptr);
    ~GuestAgent() override;

    /// The refresh commands for `identity` under `nonce`, as sent. InvalidParams when a field
    /// would break the framing (a line break, a name outside [a-zA-Z0-9._-], a file over
    /// kMaxFileBytes).
    static Result<QByteArray> encode(const GuestIdentity &identity, const QString &nonce);

    using Done = std::function<void(const Result<void> &)>;
    /// Sends `identity`; `done` gets the outcome from the event loop once the guest answered
    /// `ack` (success), `fail` (OperationFailed naming the step), after `timeoutMs` (Timeout),
    /// when the channel closes or the guest sent kMaxAnswerLines / kMaxAnswerBytes without
    /// answering (OperationFailed), or at once for InvalidParams (encode()) and Busy (a
    /// refresh or awaitReady() is under way). Never called once this object is destroyed.
    void refresh(const GuestIdentity &identity, int timeoutMs, Done done);
    /// Reads the channel for the agent's `ready 1` (a cold boot: it starts after the kernel and
    /// init). `done` gets success once the line came (at once when it already did on this
    /// connection), Timeout after `timeoutMs`, OperationFailed when the channel closes or the
    /// guest sent kMaxAnswerLines / kMaxAnswerBytes without it, Busy at once while a refresh or
    /// another wait is under way; from the event loop otherwise, never once this object is
    /// destroyed. Lines the guest sent before the call are read first.
    void awaitReady(int timeoutMs, Done done);
    /// refresh() that blocks the calling thread until the outcome (tests).
    Result<void> refreshAndWait(const GuestIdentity &identity,
                                int timeoutMs = kDefaultRefreshTimeoutMs);

    /// True once the agent's `ready` on this connection was read (only awaitReady() reads it).
    bool isReady() const { return m_ready; }
    /// Lines from the guest that were dropped (malformed, oversized, unexpected).
    qint64 rejectedLines() const { return m_rejected; }

private:
    /// Opens the window for one expected answer: budget, timer, callback.
    void expect(int timeoutMs, Done done);
    void readPending();
    /// Ends the window: the guest spent its budget without the expected line.
    void overBudget();
    void handleLine(QByteArrayView line);
    void reject(const char *why);
    void finish(const Result<void> &result);
    void onTimeout();
    void onDisconnected();

    QIODevice *m_device;
    QByteArray m_buffer;
    bool m_discarding = false; ///< inside an oversized line, until its newline
    bool m_ready = false;
    qint64 m_rejected = 0;
    QString m_waitingFor; ///< nonce of the refresh in flight
    bool m_awaitingReady = false; ///< inside awaitReady()
    Done m_done; ///< callback of the answer expected; reading only while set
    qint64 m_budgetLines = 0; ///< lines the current window may still read
    qint64 m_budgetBytes = 0; ///< bytes the current window may still read
    QTimer m_timer;
    int m_timeoutMs = 0;
};

} // namespace airlock

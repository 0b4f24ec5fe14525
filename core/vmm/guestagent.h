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
/// forms above is counted and dropped), nothing it says is believed except that it
/// acknowledged the nonce of the refresh we sent, and it is only read while an answer is
/// expected (before `ready`, during a refresh); otherwise its bytes wait in a bounded buffer.
class GuestAgent : public QObject
{
    Q_OBJECT
public:
    /// Longest line accepted from the guest, newline included.
    static constexpr qsizetype kMaxLineBytes = 128;
    /// What the socket buffers from the guest while nobody reads.
    static constexpr qint64 kReadBufferBytes = 64 * 1024;
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
    /// when the channel closes (OperationFailed), or at once for InvalidParams (encode()) and
    /// Busy (a refresh is under way). Never called once this object is destroyed.
    void refresh(const GuestIdentity &identity, int timeoutMs, Done done);
    /// refresh() that blocks the calling thread until the outcome (tests).
    Result<void> refreshAndWait(const GuestIdentity &identity,
                                int timeoutMs = kDefaultRefreshTimeoutMs);

    /// True once the agent said `ready` on this connection.
    bool isReady() const { return m_ready; }
    /// Lines from the guest that were dropped (malformed, oversized, unexpected).
    qint64 rejectedLines() const { return m_rejected; }

Q_SIGNALS:
    /// The agent announced itself (`ready 1`): after a boot it is listening.
    void ready();

private:
    void readPending();
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
    Done m_done; ///< the refresh in flight's callback
    QTimer m_timer;
    int m_timeoutMs = 0;
};

} // namespace airlock

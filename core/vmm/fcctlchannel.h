#pragma once

#include "core/model/error.h"
#include "core/vmm/vmmprocess.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>
#include <map>
#include <memory>

class QSocketNotifier;
class QTimer;

namespace airlock::protocol {
class LineFramer;
}

namespace airlock {

/// airlockd's end of one airlock-fcctl (docs/vmm.md, "airlock-fcctl"): spawns it as the VMM's
/// uid with PR_SET_NO_NEW_PRIVS and no capabilities, sends it typed commands
/// (core/fcctl/fcctlprotocol.h) and reads its answers with Qt JSON only, so airlockd parses no
/// HTTP: airlock-fcctl, not root, reads what Firecracker (and a guest that escaped into it)
/// answers.
///
/// Answers are believed only for their shape: one line of at most fcctl::kMaxLineBytes, an
/// object with a pending `id`, `ok` a bool, on error a known kind name (else operation_failed)
/// and a printable message of at most fcctl::kMaxMessageChars. Anything else breaks the channel:
/// every pending command fails with OperationFailed, airlock-fcctl is killed, and later commands
/// fail at once. Its exit fails the pending commands with Disconnected.
///
/// Callbacks run from the event loop, never inside send(), and never after destruction.
/// Destruction closes the channel (airlock-fcctl exits on it) and reaps the process without
/// blocking (ProcessReaper); the VMM itself is not touched.
class FcctlChannel : public QObject
{
    Q_OBJECT
public:
    using Reply = std::function<void(const Result<QJsonObject> &)>;

    explicit FcctlChannel(QObject *parent = nullptr);
    ~FcctlChannel() override;

    /// Spawns `program --control-fd 3 --api-sock apiSocket` with stdout and stderr in `logPath`.
    /// OperationFailed when it cannot be started.
    Result<void> spawn(const QString &program, const QString &apiSocket, const QString &logPath,
                       const VmmCredentials &credentials);

    /// Sends `{id, op, ...fields}`; `reply` gets the answer's other fields, or the error (also
    /// Timeout after `timeoutMs`, which should exceed what airlock-fcctl itself waits).
    void send(QLatin1StringView op, QJsonObject fields, int timeoutMs, Reply reply);

    /// The pid of airlock-fcctl (0 before spawn()).
    pid_t pid() const { return m_process ? m_process->pid() : 0; }

private:
    struct Pending
    {
        Reply reply;
        QTimer *timer = nullptr;
    };
    void onReadable();
    Result<void> take(const QByteArray &line);
    void breakChannel(const Error &error);
    void failAll(const Error &error);
    void later(Reply reply, const Result<QJsonObject> &result);

    int m_control = -1;
    VmmProcess *m_process = nullptr;
    QSocketNotifier *m_notifier = nullptr;
    std::unique_ptr<protocol::LineFramer> m_framer;
    std::map<qint64, Pending> m_pending;
    qint64 m_nextId = 1;
    std::optional<Error> m_broken;
};

} // namespace airlock

#pragma once

#include <QJsonObject>
#include <QList>
#include <QProcess>
#include <QString>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace airlock::test {

/// The real airlock-gateway binary, started inside a network namespace with one end of a
/// socketpair(AF_UNIX, SOCK_STREAM) as its control fd (docs/gateway.md): the test writes
/// `config` and `policy` messages and collects `ready`, `fatal`, `applied`, `error` and
/// `egress` messages on a reader thread. stdout/stderr go to a log file the test can print on
/// failure.
///
/// Three ways to read what arrived, for three styles of test:
/// - waitFor(): the next message of any type matching a predicate, in arrival order; the
///   messages it passes over are consumed (a test that follows one exchange after another);
/// - waitForMessage(): the next message of one type, egress events left aside;
/// - mark(), eventsSinceMark(), waitForEvent(): the egress events of one test function,
///   searched as a whole (a red-team case that asks "was there a denial for X?").
class GatewayProcess final
{
public:
    GatewayProcess() = default;
    ~GatewayProcess();
    GatewayProcess(const GatewayProcess &) = delete;
    GatewayProcess &operator=(const GatewayProcess &) = delete;

    /// The binary: $AIRLOCK_GATEWAY, else the build tree's app/airlock-gateway/airlock-gateway.
    static QString binaryPath();

    /// Starts `program --control-fd N` inside namespace `nsFd`, logging to `logFile`; sends
    /// nothing. `inherit` are further fds the child inherits under the same numbers (listening
    /// sockets named in a config, the way airlockd hands them over). False with `error` set
    /// when the process cannot start.
    bool spawn(int nsFd, const QString &logFile, QString *error, const QList<int> &inherit = {});
    /// spawn(), then sends `config` (type "config" is set here).
    bool start(int nsFd, const QString &logFile, QJsonObject config, QString *error);
    /// Waits for the `ready` message; false (error says why: fatal message, exit, timeout).
    bool waitReady(int timeoutMs, QString *error);
    /// The `ready` message (tcpPort, dnsPort), empty before it arrived.
    QJsonObject readyMessage() const;
    /// Sends one control message (one JSON line). False when the socket is gone.
    bool send(const QJsonObject &message);
    /// Sends one message followed by its raw payload (the credentials message): sets
    /// "payloadBytes" to the payload's size when it is not empty.
    bool send(QJsonObject message, const QByteArray &payload);
    /// Sends bytes as they are (a broken control line).
    bool sendRaw(const QByteArray &bytes);
    /// Waits for a message other than egress whose "type" is `type` and that arrived after the
    /// last call; returns it, or nullopt on timeout.
    std::optional<QJsonObject> waitForMessage(const QString &type, int timeoutMs);
    /// The next message (any type, egress messages whole: {"type":"egress","event":{...}})
    /// after the ones earlier calls consumed that satisfies `match`; every message before it is
    /// consumed too. nullopt on timeout or when the gateway closed the channel.
    std::optional<QJsonObject> waitFor(const std::function<bool(const QJsonObject &)> &match,
                                       int timeoutMs);
    /// Before start(): run the gateway with `directory` as its working directory and no limit
    /// on core files (RLIMIT_CORE), so a crash would leave a core file there (I4).
    void setCoreDumpDirectory(const QString &directory) { m_coreDirectory = directory; }
    /// Before start(): more command-line arguments (--log-level, --max-log-bytes, ...).
    void setExtraArguments(const QStringList &arguments) { m_extraArguments = arguments; }
    /// The gateway's pid (0 when not running) and its log file (stdout and stderr).
    qint64 pid() const;
    QString logFile() const { return m_logFile; }
    /// Closes our end of the control channel for writing: the gateway exits 0 on EOF.
    void closeControl();
    /// Waits up to `timeoutMs` for the gateway to exit; its exit code, -1 on timeout or crash.
    int waitForExit(int timeoutMs);
    /// Closes the control fd (the gateway exits 0 on EOF), waits, kills if needed. Idempotent.
    void stop();
    bool isRunning() const;

    /// Every `egress` event (the inner "event" objects) received so far, oldest first.
    QList<QJsonObject> events() const;
    /// Marks the current end of the event list; eventsSinceMark() and waitForEvent() only look
    /// at later events (one test function's events).
    void mark();
    QList<QJsonObject> eventsSinceMark() const;
    /// Waits until an event after the mark satisfies `match`; returns it, or nullopt on timeout.
    std::optional<QJsonObject> waitForEvent(const std::function<bool(const QJsonObject &)> &match,
                                            int timeoutMs) const;
    /// The last lines of the gateway's log, for failure messages.
    QString logTail(int lines = 40) const;

private:
    void readLoop(int fd);
    std::optional<QJsonObject> waitFor(qsizetype &cursor,
                                       const std::function<bool(const QJsonObject &)> &match,
                                       int timeoutMs);

    QProcess m_process;
    QString m_logFile;
    QStringList m_extraArguments;
    int m_controlFd = -1;
    std::thread m_reader;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_changed;
    QList<QJsonObject> m_all; // every message in arrival order, egress ones whole
    QList<QJsonObject> m_events; // the inner objects of the egress messages
    qsizetype m_mark = 0; // into m_events
    qsizetype m_typedSeen = 0; // into m_all: waitForMessage()
    qsizetype m_consumed = 0; // into m_all: waitFor()
    bool m_eof = false;
    QString m_coreDirectory;
};

} // namespace airlock::test

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

namespace airlock::redteam {

/// The real airlock-gateway binary, started inside a network namespace with one end of a
/// socketpair(AF_UNIX, SOCK_STREAM) as its control fd (docs/gateway.md):
/// the test writes `config` and `policy` messages and collects `ready`, `fatal` and `egress`
/// messages on a reader thread. stdout/stderr go to a log file the test can print on failure.
class GatewayProcess final
{
public:
    GatewayProcess() = default;
    ~GatewayProcess();
    GatewayProcess(const GatewayProcess &) = delete;
    GatewayProcess &operator=(const GatewayProcess &) = delete;

    /// The binary: $AIRLOCK_GATEWAY, else the build tree's app/airlock-gateway/airlock-gateway.
    static QString binaryPath();

    /// Starts `program --control-fd N` inside namespace `nsFd`, logging to `logFile`, and sends
    /// `config` (type "config" is set here). Returns false with `error` set when the process
    /// cannot start.
    bool start(int nsFd, const QString &logFile, QJsonObject config, QString *error);
    /// Waits for the `ready` message; false (error says why: fatal message, exit, timeout).
    bool waitReady(int timeoutMs, QString *error);
    /// Sends one control message (one JSON line). False when the socket is gone.
    bool send(const QJsonObject &message);
    /// Sends one message followed by its raw payload (the credentials message): sets
    /// "payloadBytes" to the payload's size when it is not empty.
    bool send(QJsonObject message, const QByteArray &payload);
    /// Waits for a message other than egress whose "type" is `type` and that arrived after the
    /// last call; returns it, or nullopt on timeout.
    std::optional<QJsonObject> waitForMessage(const QString &type, int timeoutMs);
    /// Before start(): run the gateway with `directory` as its working directory and no limit
    /// on core files (RLIMIT_CORE), so a crash would leave a core file there (I4).
    void setCoreDumpDirectory(const QString &directory) { m_coreDirectory = directory; }
    /// Before start(): more command-line arguments (--log-level, --max-log-bytes, ...).
    void setExtraArguments(const QStringList &arguments) { m_extraArguments = arguments; }
    /// The gateway's pid (0 when not running) and its log file (stdout and stderr).
    qint64 pid() const;
    QString logFile() const { return m_logFile; }
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

    QProcess m_process;
    QString m_logFile;
    QStringList m_extraArguments;
    int m_controlFd = -1;
    std::thread m_reader;
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_changed;
    QList<QJsonObject> m_messages; // every message but egress events
    QList<QJsonObject> m_events;
    qsizetype m_mark = 0;
    qsizetype m_messagesSeen = 0;
    bool m_eof = false;
    QString m_coreDirectory;
};

} // namespace airlock::redteam

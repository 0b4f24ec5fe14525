#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

namespace airlock {

class HelperClient;

/// How a guest process ended, from its `exec.exit` notification (docs/protocol.md, "Exec").
struct CommandExit
{
    enum class Kind {
        Exited, ///< exitCode holds its status
        Signalled, ///< killed by `signal`; `timedOut` when its deadline did it
        Failed, ///< the agent channel failed first (error)
    };
    Kind kind = Kind::Exited;
    int exitCode = 0;
    int signal = 0;
    bool timedOut = false;
    Error error;

    /// Parses an `exec.exit` params object.
    static CommandExit fromJson(const QJsonObject &params);
};

/// Runs one shell command line in a sandbox's guest (`exec.start` with `command`, no stdin,
/// no PTY, so stdout and stderr stay apart) and follows its `exec.output` and `exec.exit`
/// notifications. One process per runner at a time. Destroying a runner whose process still
/// runs sends it SIGTERM: the person closed the view that showed it.
class CommandRunner : public QObject
{
    Q_OBJECT
public:
    enum class Stream { Stdout, Stderr };
    Q_ENUM(Stream)

    CommandRunner(HelperClient *client, QString sandbox, QObject *parent = nullptr);
    ~CommandRunner() override;

    /// Starts `command` (one line for `/bin/sh -c`) as `user` ("root", "agent", a guest user;
    /// empty: the agent's default) in `cwd` (empty: the user's home). started() or failed()
    /// follows; then output() and, last, finished(). False when a process is still running.
    bool start(const QString &command, const QString &cwd = {}, const QString &user = {});
    /// Sends `signal` (default SIGTERM) to the running process with `exec.signal`.
    void stop(int signal = 15);
    bool isRunning() const { return m_running; }
    /// The guest pid of the running (or last) process; 0 before the first start.
    qint64 pid() const { return m_pid; }
    QString sandbox() const { return m_sandbox; }

signals:
    void started(qint64 pid);
    /// Raw bytes of one stream, in order per stream; untrusted.
    void output(airlock::CommandRunner::Stream stream, const QByteArray &data);
    void finished(const airlock::CommandExit &exit);
    /// exec.start (or exec.signal) was refused: not running, no agent, bad cwd or user.
    void failed(const airlock::Error &error);

private:
    void onNotification(const QString &method, const QJsonObject &params);
    void handle(const QString &method, const QJsonObject &params);

    HelperClient *m_client;
    QString m_sandbox;
    qint64 m_pid = 0;
    bool m_running = false;
    bool m_starting = false;
    quint64 m_generation = 0; ///< tells a stale exec.start answer from the current one
    /// Exec notifications for this sandbox that arrived while exec.start was unanswered.
    QList<QPair<QString, QJsonObject>> m_early;
};

} // namespace airlock

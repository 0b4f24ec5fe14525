#pragma once

#include "core/terminal/escapefilter.h"

#include <QByteArray>
#include <QEventLoop>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QTextStream>

#include <deque>

namespace airlock {
class HelperClient;
}

namespace airlock::ctl {

class RawTerminal;
class StdinReader;
class WindowSizeWatcher;

/// `airlockctl exec`: runs one command in a sandbox through the helper (exec.start,
/// docs/protocol.md "Exec and files") and mirrors it here: its stdout to `outFd`, its stderr to
/// `errFd` (each through an EscapeFilter when it is a terminal: the guest is hostile), our stdin
/// to its stdin with `-i` (one exec.input at a time, so a slow guest slows the reading here), with
/// a PTY our terminal's size changes (SIGWINCH) as exec.resize, and its exit as ours: the exit
/// code, 128 + the signal for a killed process, kExitUnavailable when the command could not run
/// or the channel failed (the message says why).
class ExecRunner : public QObject
{
    Q_OBJECT
public:
    /// What run() returns when the command did not run to an exit (as `docker exec`'s 125):
    /// the helper refused, the sandbox is not running, the agent channel failed.
    static constexpr int kExitUnavailable = 125;

    /// `client` must be Ready and outlive the runner. `start` holds exec.start's params
    /// (name, argv, ...); with `stdin` set there, `inFd` is forwarded; with `pty` and a
    /// terminal on `inFd`, that terminal is put into raw mode for the run, and the size of the
    /// terminal on `outFd` (else `inFd`) is followed.
    ExecRunner(HelperClient *client, QJsonObject start, int inFd, int outFd, int errFd,
               QTextStream &err, QObject *parent = nullptr);
    ~ExecRunner() override;

    /// Runs the command to its end; returns the exit status as described above.
    int run();

private:
    void onStarted(quint32 pid);
    void onNotification(const QString &method, const QJsonObject &params);
    void onInput(const QByteArray &bytes);
    void sendInput();
    void onResized(int rows, int cols);
    void sendSize();
    void finish(int code, const QString &message = {});

    HelperClient *m_client;
    QJsonObject m_start;
    QString m_sandbox;
    int m_inFd;
    int m_outFd;
    int m_errFd;
    QTextStream &m_err;
    QEventLoop m_loop;
    quint32 m_pid = 0;
    /// Notifications that came before the answer naming the pid (none do today: the helper
    /// answers first; kept so that a reordering transport cannot lose output).
    std::deque<std::pair<QString, QJsonObject>> m_early;
    StdinReader *m_reader = nullptr;
    RawTerminal *m_terminal = nullptr;
    WindowSizeWatcher *m_sizeWatcher = nullptr;
    /// The PTY size the guest was last told (exec.start, exec.resize), and the one to tell it.
    int m_sentRows = 0;
    int m_sentCols = 0;
    int m_wantedRows = 0;
    int m_wantedCols = 0;
    QByteArray m_pendingInput;
    bool m_inputEnded = false;
    bool m_eofSent = false;
    bool m_inputInFlight = false;
    bool m_filterOut = false;
    bool m_filterErr = false;
    EscapeFilter m_outFilter;
    EscapeFilter m_errFilter;
    bool m_finished = false;
    int m_exitCode = 0;
};

} // namespace airlock::ctl

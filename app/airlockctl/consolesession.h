#pragma once

#include "core/terminal/escapefilter.h"

#include <QEventLoop>
#include <QObject>
#include <QString>
#include <QTextStream>
#include <QTimer>

namespace airlock {
class HelperClient;
class ConsoleStream;
} // namespace airlock

namespace airlock::ctl {

class RawTerminal;
class StdinReader;

/// `airlockctl console NAME`: console output to stdout, stdin typed into the guest. Ctrl-]
/// (0x1d) detaches; the session also ends when the sandbox stops or the helper goes away.
///
/// When stdin is a terminal it is put in raw mode and the scrollback is replayed first. When it
/// is not (a pipe, a file), the session is a script's: it attaches without the scrollback, drops
/// the terminal queries (`ESC [ 6 n`, ...) that nobody could answer, types the input, and after
/// the end of input waits until its writes reached the guest and the guest has then been quiet
/// for `idleTimeoutMs` before it ends with 0 (unless `follow`: then it ends only with the
/// sandbox, as for a terminal).
class ConsoleSession : public QObject
{
    Q_OBJECT
public:
    /// The byte that detaches, as in telnet and virsh console.
    static constexpr char kDetachByte = 0x1d;
    /// Default quiet time after piped input ended (`--timeout`).
    static constexpr int kDefaultIdleTimeoutMs = 2000;

    struct Options
    {
        int idleTimeoutMs = kDefaultIdleTimeoutMs;
        bool follow = false; ///< piped input: keep following after its end
        bool scrollback = false; ///< piped input: replay the scrollback all the same
    };

    /// `client` must be Ready and outlive the session; messages for the user go to `err`.
    ConsoleSession(HelperClient *client, const QString &sandbox, int inFd, int outFd,
                   QTextStream &err, const Options &options, QObject *parent = nullptr);
    ~ConsoleSession() override;

    /// Runs until detach/stop/disconnect; returns the exit code (0 detached or stopped, 1 error).
    int run();

private:
    void onInput(const QByteArray &bytes);
    void onNotification(const QString &method, const QJsonObject &params);
    /// `byUser`: Ctrl-] (says so on stderr); false: the quiet period after piped input ended.
    void detach(bool byUser);
    void onEndOfInput();
    /// After the end of piped input: (re)starts the quiet period once all writes are answered.
    void armIdleTimer();
    void finish(int code, const QString &message = {});

    HelperClient *m_client;
    QString m_sandbox;
    int m_inFd;
    int m_outFd;
    QTextStream &m_err;
    QEventLoop m_loop;
    ConsoleStream *m_stream = nullptr;
    StdinReader *m_reader = nullptr;
    RawTerminal *m_terminal = nullptr;
    bool m_finished = false;
    int m_exitCode = 0;
    bool m_detaching = false;
    bool m_inputEnded = false;
    Options m_options;
    QTimer *m_idle = nullptr;
    EscapeFilter m_filter;
};

} // namespace airlock::ctl

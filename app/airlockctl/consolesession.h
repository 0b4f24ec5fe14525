#pragma once

#include "core/terminal/escapefilter.h"

#include <QEventLoop>
#include <QObject>
#include <QString>
#include <QTextStream>

namespace airlock {
class HelperClient;
class ConsoleStream;
} // namespace airlock

namespace airlock::ctl {

class RawTerminal;
class StdinReader;

/// `airlockctl console NAME`: console output to stdout, stdin typed into the guest. Raw
/// terminal when stdin is a tty; piped input is forwarded the same way. Ctrl-] (0x1d) detaches;
/// the session also ends when the sandbox stops or the helper goes away.
class ConsoleSession : public QObject
{
    Q_OBJECT
public:
    /// The byte that detaches, as in telnet and virsh console.
    static constexpr char kDetachByte = 0x1d;

    /// `client` must be Ready and outlive the session; messages for the user go to `err`.
    ConsoleSession(HelperClient *client, const QString &sandbox, int inFd, int outFd,
                   QTextStream &err, QObject *parent = nullptr);
    ~ConsoleSession() override;

    /// Runs until detach/stop/disconnect; returns the exit code (0 detached or stopped, 1 error).
    int run();

private:
    void onInput(const QByteArray &bytes);
    void onNotification(const QString &method, const QJsonObject &params);
    void detach();
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
    EscapeFilter m_filter;
};

} // namespace airlock::ctl

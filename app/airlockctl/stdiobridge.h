#pragma once

#include <QEventLoop>
#include <QObject>
#include <QTextStream>

namespace airlock {
class LocalSocketTransport;
}

namespace airlock::ctl {

class StdinReader;

/// `airlockctl bridge`: copies stdin to the helper socket and the socket to stdout, byte for
/// byte, so a remote client can speak JSON-RPC through `ssh host airlockctl bridge`. The
/// helper still checks the peer credentials of this process, i.e. of the SSH user. When stdin
/// ends, the bridge waits until every request it forwarded has been answered, then closes:
/// the helper drops a half-closed connection without answering, so it cannot simply shut down
/// its sending side.
class StdioBridge : public QObject
{
    Q_OBJECT
public:
    StdioBridge(const QString &socketPath, int inFd, int outFd, QTextStream &err,
                QObject *parent = nullptr);
    ~StdioBridge() override;

    /// Runs until either side closes; 0 after a clean end, 1 when the socket cannot be reached.
    int run();

private:
    void onEndOfInput();
    void closeWhenAnswered();
    /// Counts complete lines in `pending` (consumed) that are requests (+1) or answers (-1).
    static int countLines(QByteArray &pending, bool requests);
    void finish(int code);

    LocalSocketTransport *m_transport;
    StdinReader *m_reader;
    int m_outFd;
    QTextStream &m_err;
    QEventLoop m_loop;
    QByteArray m_inputLine;
    QByteArray m_outputLine;
    int m_outstanding = 0;
    bool m_inputEnded = false;
    bool m_connected = false;
    bool m_finished = false;
    int m_exitCode = 0;
};

} // namespace airlock::ctl

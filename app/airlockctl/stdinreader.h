#pragma once

#include <QByteArray>
#include <QObject>

class QSocketNotifier;

namespace airlock::ctl {

/// Reads a file descriptor (stdin) from the event loop in whatever chunks arrive, so keystrokes
/// in raw mode and piped input are forwarded as soon as they exist.
class StdinReader : public QObject
{
    Q_OBJECT
public:
    explicit StdinReader(int fd, QObject *parent = nullptr);
    ~StdinReader() override;

    void start();
    void stop();

Q_SIGNALS:
    void bytesRead(const QByteArray &bytes);
    /// End of input (or a read error); no more bytesRead() follow.
    void endOfInput();

private:
    void onReadable();

    int m_fd;
    QSocketNotifier *m_notifier = nullptr;
};

/// Writes all of `bytes` to `fd`, retrying short writes; false when the reader went away.
bool writeAll(int fd, const QByteArray &bytes);

} // namespace airlock::ctl

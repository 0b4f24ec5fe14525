#pragma once

#include <QObject>

#include <csignal>

class QSocketNotifier;

namespace airlock::ctl {

/// Watches the size of a terminal for `exec -t`: SIGWINCH (which the kernel sends to the
/// terminal's foreground process group when its size changes) is turned into a byte on a
/// self-pipe, read from the event loop, and changed() reports the size TIOCGWINSZ gives then,
/// only when it differs from the last one reported. One watcher at a time per process (the
/// signal handler is process-wide); the previous SIGWINCH disposition comes back on
/// destruction.
class WindowSizeWatcher : public QObject
{
    Q_OBJECT
public:
    /// `fd`: the terminal whose size is read. Watches from construction.
    explicit WindowSizeWatcher(int fd, QObject *parent = nullptr);
    ~WindowSizeWatcher() override;
    WindowSizeWatcher(const WindowSizeWatcher &) = delete;
    WindowSizeWatcher &operator=(const WindowSizeWatcher &) = delete;

    /// False when the pipe or the handler could not be set up (nothing is reported then).
    bool isWatching() const { return m_notifier != nullptr; }
    /// The terminal's size now, rows and columns; false when `fd` is not a terminal or reports
    /// no size (0 x 0).
    static bool currentSize(int fd, int *rows, int *cols);

Q_SIGNALS:
    /// The terminal now has `rows` x `cols` (both at least 1).
    void changed(int rows, int cols);

private:
    void onSignal();

    int m_fd;
    int m_pipe[2] = {-1, -1};
    QSocketNotifier *m_notifier = nullptr;
    struct sigaction m_previous
    {
    };
    int m_rows = 0;
    int m_cols = 0;
};

} // namespace airlock::ctl

#include "app/airlockctl/windowsizewatcher.h"

#include <QSocketNotifier>

#include <cerrno>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace airlock::ctl {

namespace {

// The write end of the active watcher's pipe; the handler may only touch this.
volatile sig_atomic_t g_pipeFd = -1;

void onWindowChange(int)
{
    const int saved = errno;
    if (g_pipeFd >= 0) {
        const char byte = 'w';
        [[maybe_unused]] const ssize_t n = ::write(g_pipeFd, &byte, 1); // full pipe: one is queued
    }
    errno = saved;
}

} // namespace

WindowSizeWatcher::WindowSizeWatcher(int fd, QObject *parent) : QObject(parent), m_fd(fd)
{
    currentSize(m_fd, &m_rows, &m_cols);
    if (g_pipeFd >= 0 || ::pipe2(m_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return;
    g_pipeFd = m_pipe[1];
    struct sigaction action
    {
    };
    action.sa_handler = onWindowChange;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (::sigaction(SIGWINCH, &action, &m_previous) != 0) {
        g_pipeFd = -1;
        return;
    }
    m_notifier = new QSocketNotifier(m_pipe[0], QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &WindowSizeWatcher::onSignal);
}

WindowSizeWatcher::~WindowSizeWatcher()
{
    if (m_notifier) {
        ::sigaction(SIGWINCH, &m_previous, nullptr);
        g_pipeFd = -1;
    }
    for (const int fd : m_pipe) {
        if (fd >= 0)
            ::close(fd);
    }
}

bool WindowSizeWatcher::currentSize(int fd, int *rows, int *cols)
{
    winsize size {};
    if (::ioctl(fd, TIOCGWINSZ, &size) != 0 || size.ws_row == 0 || size.ws_col == 0)
        return false;
    *rows = size.ws_row;
    *cols = size.ws_col;
    return true;
}

void WindowSizeWatcher::onSignal()
{
    char bytes[64];
    while (::read(m_pipe[0], bytes, sizeof bytes) > 0) { }
    int rows = 0;
    int cols = 0;
    // Several signals in a row become one report of the size they ended at.
    if (!currentSize(m_fd, &rows, &cols) || (rows == m_rows && cols == m_cols))
        return;
    m_rows = rows;
    m_cols = cols;
    Q_EMIT changed(rows, cols);
}

} // namespace airlock::ctl

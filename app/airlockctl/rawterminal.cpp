#include "app/airlockctl/rawterminal.h"

#include <csignal>
#include <unistd.h>

namespace airlock::ctl {

namespace {

// Read by the signal handler, which may only touch async-signal-safe state.
volatile sig_atomic_t g_savedValid = 0;
int g_savedFd = -1;
termios g_saved {};

constexpr int kSignals[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};

void restoreAndDie(int signal)
{
    if (g_savedValid)
        ::tcsetattr(g_savedFd, TCSANOW, &g_saved);
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

} // namespace

RawTerminal::RawTerminal(int fd) : m_fd(fd) { }

RawTerminal::~RawTerminal()
{
    restore();
}

bool RawTerminal::enable()
{
    if (m_raw)
        return true;
    if (!::isatty(m_fd) || ::tcgetattr(m_fd, &m_saved) != 0)
        return false;
    g_saved = m_saved;
    g_savedFd = m_fd;
    g_savedValid = 1;
    for (const int signal : kSignals)
        std::signal(signal, restoreAndDie);
    termios raw = m_saved;
    ::cfmakeraw(&raw);
    if (::tcsetattr(m_fd, TCSANOW, &raw) != 0) {
        g_savedValid = 0;
        return false;
    }
    m_raw = true;
    return true;
}

void RawTerminal::restore()
{
    if (!m_raw)
        return;
    ::tcsetattr(m_fd, TCSANOW, &m_saved);
    g_savedValid = 0;
    for (const int signal : kSignals)
        std::signal(signal, SIG_DFL);
    m_raw = false;
}

} // namespace airlock::ctl

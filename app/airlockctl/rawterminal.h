#pragma once

#include <termios.h>

namespace airlock::ctl {

/// Puts a terminal into raw mode for `console` and guarantees it comes back: on destruction,
/// on restore(), and when SIGTERM/SIGHUP/SIGINT/SIGQUIT end the process.
class RawTerminal
{
public:
    explicit RawTerminal(int fd);
    ~RawTerminal();
    RawTerminal(const RawTerminal &) = delete;
    RawTerminal &operator=(const RawTerminal &) = delete;

    /// False (and nothing changed) when `fd` is not a terminal.
    bool enable();
    void restore();
    bool isRaw() const { return m_raw; }

private:
    int m_fd;
    bool m_raw = false;
    termios m_saved {};
};

} // namespace airlock::ctl

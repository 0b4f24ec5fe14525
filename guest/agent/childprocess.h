#pragma once

#include "core/agentwire/messages.h"

#include <chrono>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>

namespace airlock::guest {

/// Why a process could not start: the code and a message naming the step.
struct SpawnFailure
{
    agentwire::ErrorCode code;
    std::string message;
};

/// What the agent needs besides the request to start a process.
struct SpawnContext
{
    std::string sysroot = "/"; ///< where /run/airlock/env is read (tests: a temp folder)
    std::string passwdPath = "/etc/passwd";
    std::string groupPath = "/etc/group";
};

/// One process the agent started: its own session and process group (setsid), so that
/// signals and the timeout reach everything it started; stdin, stdout and stderr on pipes, or
/// all three on a PTY (posix_openpt, the slave its controlling terminal). The agent's ends of
/// the descriptors are non-blocking and close-on-exec. The process outlives the connection it
/// was started from; its output waits in the pipes while nobody reads.
class ChildProcess
{
public:
    using Clock = std::chrono::steady_clock;

    /// Forks and execs `request`: user switch (setgroups, setgid, setuid) to the passwd entry
    /// of request.user (root when empty), cwd (the user's home when empty), environment
    /// (defaults, /run/airlock/env, then request.env), PATH search for argv[0]. Failures of
    /// the child before exec come back through a close-on-exec pipe and fail this call:
    /// not_found (user, cwd, program), permission, invalid.
    static std::expected<std::unique_ptr<ChildProcess>, SpawnFailure>
    spawn(const agentwire::ExecRequest &request, const SpawnContext &context);
    ~ChildProcess();
    ChildProcess(const ChildProcess &) = delete;
    ChildProcess &operator=(const ChildProcess &) = delete;

    pid_t pid() const { return m_pid; }
    bool pty() const { return m_pty; }
    const std::string &user() const { return m_user; }
    const std::string &command() const { return m_command; }

    /// Descriptors the agent reads (-1 once at end of file and closed).
    int stdoutFd() const { return m_stdout; }
    int stderrFd() const { return m_stderr; }
    /// Where input goes (-1 without stdin or once closed); with a PTY, the master.
    int stdinFd() const { return m_pty ? m_stdout : m_stdin; }
    /// Closes a pipe end at end of file.
    void closeStdout();
    void closeStderr();
    /// End of input: closes the stdin pipe, or sends the PTY's EOF character.
    void closeStdin();
    bool stdinClosed() const { return m_stdinClosed; }

    /// The signal to the process group; false when it is gone.
    bool signal(int signal);
    /// TIOCSWINSZ on the PTY master (the kernel sends SIGWINCH).
    void resize(std::uint16_t rows, std::uint16_t cols);

    /// Kills the group with SIGKILL once the deadline passed; true when it did now.
    bool checkDeadline(Clock::time_point now);
    std::optional<Clock::time_point> deadline() const { return m_deadline; }

    /// waitpid() saw it end.
    void setExited(int waitStatus);
    bool exited() const { return m_exitStatus.has_value(); }
    /// Ended and its output all read: the exec stream can send Exit.
    bool finished() const { return exited() && m_stdout < 0 && m_stderr < 0; }
    agentwire::ExitStatus exitStatus() const;

private:
    ChildProcess() = default;

    pid_t m_pid = -1;
    bool m_pty = false;
    int m_stdin = -1;
    int m_stdout = -1; ///< the PTY master with a PTY
    int m_stderr = -1;
    bool m_stdinClosed = false;
    std::string m_user;
    std::string m_command;
    std::optional<Clock::time_point> m_deadline;
    bool m_timedOut = false;
    std::optional<int> m_exitStatus;
};

} // namespace airlock::guest

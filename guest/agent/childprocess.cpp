#include "guest/agent/childprocess.h"

#include "core/agentwire/errnocode.h"
#include "guest/agent/sysfile.h"
#include "guest/agent/userdb.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

namespace airlock::guest {

using agentwire::ErrorCode;

namespace {

constexpr const char *kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Steps of the child that can fail before exec, reported in ChildSetup::report.
enum class ChildStep : int { Terminal = 1, Credentials, Cwd, Exec };

struct ChildError
{
    int step;
    int error;
};

void setNonBlocking(int fd)
{
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

void closeFd(int &fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

bool validEnvName(std::string_view name)
{
    if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || c == '_';
    });
}

void setVar(std::vector<std::string> &env, std::string_view name, std::string_view value)
{
    const std::string prefix = std::string(name) + "=";
    std::string entry = prefix + std::string(value);
    for (std::string &existing : env) {
        if (existing.starts_with(prefix)) {
            existing = std::move(entry);
            return;
        }
    }
    env.push_back(std::move(entry));
}

std::string pathOf(const std::vector<std::string> &env)
{
    for (const std::string &entry : env) {
        if (entry.starts_with("PATH="))
            return entry.substr(5);
    }
    return kDefaultPath;
}

/// Candidates for argv[0]: itself when it holds a slash, else each PATH folder's.
std::vector<std::string> programCandidates(const std::string &program, const std::string &path)
{
    if (program.find('/') != std::string::npos)
        return {program};
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t colon = std::min(path.find(':', start), path.size());
        const std::string folder = path.substr(start, colon - start);
        out.push_back((folder.empty() ? std::string(".") : folder) + "/" + program);
        start = colon + 1;
    }
    return out;
}

/// What the child of spawn() reads, all of it built before the clone, and where it reports the
/// step that failed (shared memory: CLONE_VM).
struct ChildSetup
{
    bool pty = false;
    const char *slavePath = nullptr;
    int in = -1; ///< -1: /dev/null
    int out = -1;
    int err = -1;
    uid_t uid = 0;
    gid_t gid = 0;
    const gid_t *groups = nullptr;
    std::size_t groupCount = 0;
    const char *cwd = nullptr;
    const char *const *candidates = nullptr;
    std::size_t candidateCount = 0;
    char *const *argv = nullptr;
    char *const *envp = nullptr;
    ChildError report {};
};

constexpr std::size_t kChildStackBytes = 256 * 1024;

/// The child's stack: one at a time (the parent waits for each child's exec), untouched pages
/// stay unmapped.
char *childStack()
{
    alignas(64) static char stack[kChildStackBytes];
    return stack;
}

// Not instrumented in a sanitized build: the child runs on a stack the sanitizer never saw.
[[noreturn]] __attribute__((no_sanitize("address"))) void childFail(ChildSetup &setup,
                                                                    ChildStep step, int error)
{
    setup.report = ChildError {static_cast<int>(step), error};
    ::_exit(127);
}

/// The child between clone and exec. Only system calls: it runs on our memory. The
/// credentials are set with the raw system calls, not glibc's wrappers, which would try to
/// reach the threads of a process this child only shares memory with.
__attribute__((no_sanitize("address"))) int runChild(void *argument)
{
    ChildSetup &setup = *static_cast<ChildSetup *>(argument);
    // Default signal dispositions and mask, its own session.
    for (int sig = 1; sig < NSIG; ++sig)
        ::signal(sig, SIG_DFL);
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    ::setsid();
    if (setup.pty) {
        const int slave = ::open(setup.slavePath, O_RDWR);
        if (slave < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0)
            childFail(setup, ChildStep::Terminal, errno);
        ::dup2(slave, 0);
        ::dup2(slave, 1);
        ::dup2(slave, 2);
        if (slave > 2)
            ::close(slave);
    } else {
        const int in = setup.in >= 0 ? setup.in : ::open("/dev/null", O_RDONLY);
        ::dup2(in, 0);
        ::dup2(setup.out, 1);
        ::dup2(setup.err, 2);
    }
    if (::syscall(SYS_setgroups, setup.groupCount, setup.groups) != 0
        || ::syscall(SYS_setgid, setup.gid) != 0 || ::syscall(SYS_setuid, setup.uid) != 0)
        childFail(setup, ChildStep::Credentials, errno);
    if (::chdir(setup.cwd) != 0)
        childFail(setup, ChildStep::Cwd, errno);
    int error = ENOENT;
    for (std::size_t i = 0; i < setup.candidateCount; ++i) {
        ::execve(setup.candidates[i], setup.argv, setup.envp);
        // The first reason other than "not in this folder" is the one to report.
        if (errno != ENOENT && errno != ENOTDIR && error == ENOENT)
            error = errno;
    }
    childFail(setup, ChildStep::Exec, error);
}

SpawnFailure failureOf(const ChildError &report, const agentwire::ExecRequest &request,
                       const std::string &cwd)
{
    const char *why = std::strerror(report.error);
    switch (static_cast<ChildStep>(report.step)) {
    case ChildStep::Terminal:
        return {ErrorCode::Io, std::string("cannot set up the terminal: ") + why};
    case ChildStep::Credentials:
        return {ErrorCode::Permission, std::string("cannot switch to the user: ") + why};
    case ChildStep::Cwd:
        return {agentwire::errorCodeOfErrno(report.error), "cwd " + cwd + ": " + why};
    case ChildStep::Exec:
        break;
    }
    const std::string program = request.shell ? std::string("/bin/sh") : request.argv[0];
    return {agentwire::errorCodeOfErrno(report.error), program + ": " + why};
}

} // namespace

std::expected<std::unique_ptr<ChildProcess>, SpawnFailure>
ChildProcess::spawn(const agentwire::ExecRequest &request, const SpawnContext &context)
{
    const std::string userName = request.user.empty() ? std::string("root") : request.user;
    const std::optional<UserEntry> user =
        lookupUser(userName, context.passwdPath, context.groupPath);
    if (!user)
        return std::unexpected(
            SpawnFailure {ErrorCode::NotFound, "no user '" + userName + "' in /etc/passwd"});

    // Everything the child needs is built before the fork.
    std::vector<std::string> env;
    setVar(env, "PATH", kDefaultPath);
    setVar(env, "HOME", user->home);
    setVar(env, "USER", user->name);
    setVar(env, "LOGNAME", user->name);
    setVar(env, "SHELL", user->shell);
    if (request.pty)
        setVar(env, "TERM", "xterm-256color");
    // The credential placeholders of the seed (docs/credentials.md), as the console shell
    // exports them: NAME=VALUE lines.
    const std::string seedEnv =
        (context.sysroot == "/" ? std::string() : context.sysroot) + "/run/airlock/env";
    if (const auto text = readSmallFile(seedEnv, 256 * 1024)) {
        std::string_view rest = *text;
        while (!rest.empty()) {
            const std::size_t newline = rest.find('\n');
            const std::string_view line = rest.substr(0, newline);
            rest =
                newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
            const std::size_t equals = line.find('=');
            if (equals != std::string_view::npos && validEnvName(line.substr(0, equals)))
                setVar(env, line.substr(0, equals), line.substr(equals + 1));
        }
    }
    for (const auto &[name, value] : request.env)
        setVar(env, name, value);
    const std::string cwd = request.cwd.empty() ? user->home : request.cwd;

    std::vector<std::string> argv;
    std::vector<std::string> candidates;
    if (request.shell) {
        argv = {"sh", "-c", request.argv[0]};
        candidates = {"/bin/sh"};
    } else {
        argv = request.argv;
        candidates = programCandidates(request.argv[0], pathOf(env));
    }
    std::vector<char *> argvPointers;
    for (std::string &arg : argv)
        argvPointers.push_back(arg.data());
    argvPointers.push_back(nullptr);
    std::vector<char *> envPointers;
    for (std::string &entry : env)
        envPointers.push_back(entry.data());
    envPointers.push_back(nullptr);

    std::unique_ptr<ChildProcess> child(new ChildProcess);
    child->m_pty = request.pty;
    child->m_user = user->name;
    for (const std::string &arg : request.argv)
        child->m_command += (child->m_command.empty() ? "" : " ") + arg;
    if (child->m_command.size() > 256)
        child->m_command.resize(256);

    int childIn = -1, childOut = -1, childErr = -1;
    std::string slavePath;
    const auto cleanup = [&] {
        closeFd(childIn);
        closeFd(childOut);
        closeFd(childErr);
    };
    if (request.pty) {
        const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        char name[128];
        if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0
            || ::ptsname_r(master, name, sizeof name) != 0) {
            const int error = errno;
            if (master >= 0)
                ::close(master);
            cleanup();
            return std::unexpected(
                SpawnFailure {ErrorCode::Io, std::string("no PTY: ") + std::strerror(error)});
        }
        slavePath = name;
        const winsize size {request.rows, request.cols, 0, 0};
        ::ioctl(master, TIOCSWINSZ, &size);
        child->m_stdout = master;
    } else {
        int out[2], err[2];
        if (::pipe2(out, O_CLOEXEC) != 0) {
            cleanup();
            return std::unexpected(SpawnFailure {ErrorCode::Limit, std::strerror(errno)});
        }
        child->m_stdout = out[0];
        childOut = out[1];
        if (::pipe2(err, O_CLOEXEC) != 0) {
            cleanup();
            return std::unexpected(SpawnFailure {ErrorCode::Limit, std::strerror(errno)});
        }
        child->m_stderr = err[0];
        childErr = err[1];
        if (request.stdinOpen) {
            int in[2];
            if (::pipe2(in, O_CLOEXEC) != 0) {
                cleanup();
                return std::unexpected(SpawnFailure {ErrorCode::Limit, std::strerror(errno)});
            }
            child->m_stdin = in[1];
            childIn = in[0];
        }
    }
    if (!request.pty && !request.stdinOpen)
        child->m_stdinClosed = true;

    std::vector<const char *> candidatePointers;
    for (const std::string &candidate : candidates)
        candidatePointers.push_back(candidate.c_str());
    ChildSetup setup;
    setup.pty = request.pty;
    setup.slavePath = slavePath.c_str();
    setup.in = childIn;
    setup.out = childOut;
    setup.err = childErr;
    setup.uid = user->uid;
    setup.gid = user->gid;
    setup.groups = user->groups.data();
    setup.groupCount = user->groups.size();
    setup.cwd = cwd.c_str();
    setup.candidates = candidatePointers.data();
    setup.candidateCount = candidatePointers.size();
    setup.argv = argvPointers.data();
    setup.envp = envPointers.data();
    // The child shares our memory until it execs (or fails), and we wait until then
    // (CLONE_VFORK): no page tables are copied and no page is faulted in twice, which is most
    // of a fork's cost on an emulated CPU (docs/agent-protocol.md, "Exec"). The child has its
    // own stack and signal dispositions, and runs only system calls.
    const pid_t pid = ::clone(runChild, childStack() + kChildStackBytes,
                              CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
    if (pid < 0) {
        const int error = errno;
        cleanup();
        return std::unexpected(SpawnFailure {ErrorCode::Limit, std::strerror(error)});
    }

    child->m_pid = pid;
    closeFd(childIn);
    closeFd(childOut);
    closeFd(childErr);
    if (setup.report.step != 0) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        child->m_pid = -1;
        return std::unexpected(failureOf(setup.report, request, cwd));
    }
    for (int fd : {child->m_stdin, child->m_stdout, child->m_stderr}) {
        if (fd >= 0)
            setNonBlocking(fd);
    }
    if (request.timeoutMs > 0)
        child->m_deadline = Clock::now() + std::chrono::milliseconds(request.timeoutMs);
    return child;
}

ChildProcess::~ChildProcess()
{
    closeFd(m_stdin);
    closeFd(m_stdout);
    closeFd(m_stderr);
}

void ChildProcess::closeStdout()
{
    closeFd(m_stdout);
}

void ChildProcess::closeStderr()
{
    closeFd(m_stderr);
}

void ChildProcess::closeStdin()
{
    if (m_stdinClosed)
        return;
    m_stdinClosed = true;
    if (m_pty) {
        // A PTY has no half close: the line discipline's EOF character ends the input of a
        // reader in canonical mode, as ^D at a terminal does.
        if (m_stdout >= 0) {
            const char eof = '\x04';
            [[maybe_unused]] const ssize_t n = ::write(m_stdout, &eof, 1);
        }
        return;
    }
    closeFd(m_stdin);
}

bool ChildProcess::signal(int signal)
{
    if (m_pid <= 0 || exited())
        return false;
    return ::kill(-m_pid, signal) == 0 || ::kill(m_pid, signal) == 0;
}

void ChildProcess::resize(std::uint16_t rows, std::uint16_t cols)
{
    if (!m_pty || m_stdout < 0)
        return;
    const winsize size {rows, cols, 0, 0};
    ::ioctl(m_stdout, TIOCSWINSZ, &size);
}

bool ChildProcess::checkDeadline(Clock::time_point now)
{
    if (!m_deadline || exited() || now < *m_deadline)
        return false;
    m_deadline.reset();
    m_timedOut = true;
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL);
    return true;
}

void ChildProcess::setExited(int waitStatus)
{
    m_exitStatus = waitStatus;
    m_deadline.reset();
}

agentwire::ExitStatus ChildProcess::exitStatus() const
{
    agentwire::ExitStatus status;
    const int raw = m_exitStatus.value_or(0);
    if (WIFSIGNALED(raw)) {
        status.signaled = true;
        status.value = WTERMSIG(raw);
        status.timedOut = m_timedOut;
    } else {
        status.value = WEXITSTATUS(raw);
    }
    return status;
}

} // namespace airlock::guest

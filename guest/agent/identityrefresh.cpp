#include "guest/agent/identityrefresh.h"

#include "guest/agent/sysfile.h"

#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <linux/random.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace airlock::guest {

namespace {

constexpr std::string_view kCaBegin = "# airlock sandbox CA {";
constexpr std::string_view kCaEnd = "# }";

bool writeAll(int fd, const std::uint8_t *data, std::size_t size)
{
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        data += n;
        size -= std::size_t(n);
    }
    return true;
}

} // namespace

std::string IdentityRefresh::path(std::string_view absolute) const
{
    return (m_targets.sysroot == "/" ? std::string() : m_targets.sysroot) + std::string(absolute);
}

std::optional<std::string> IdentityRefresh::apply(const agentwire::IdentityRequest &request,
                                                  const std::vector<agentwire::IdentityFile> &files)
{
    std::optional<std::string> failed;
    const auto step = [&failed](bool ok, const char *name) {
        if (!ok && !failed)
            failed = name;
    };
    step(applyEntropy(request), "entropy");
    step(applyName(request), "name");
    step(applyFiles(files), "files");
    step(applyNetwork(request), "network");
    if (!failed && m_targets.sysroot == "/") {
        // The console's ready line, as after a boot (installers/guest/README.md, the contract).
        const int console = ::open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (console >= 0) {
            constexpr std::string_view line = "airlock-guest ready\n";
            writeAll(console, reinterpret_cast<const std::uint8_t *>(line.data()), line.size());
            ::close(console);
        }
    }
    return failed;
}

bool IdentityRefresh::applyEntropy(const agentwire::IdentityRequest &request)
{
    if (request.entropy.empty())
        return true;
    const int fd = ::open(path("/dev/urandom").c_str(), O_WRONLY | O_CLOEXEC | O_CREAT, 0600);
    if (fd < 0)
        return false;
    const bool ok = writeAll(fd, request.entropy.data(), request.entropy.size());
    // A write only mixes the bytes into the input pool; the CRNG would go on from the
    // snapshot's state until its next reseed (up to a minute). Reseed now; a kernel without
    // the ioctl (before 4.17) reseeds on its own schedule.
    if (ok && m_targets.sysroot == "/")
        ::ioctl(fd, RNDRESEEDCRNG);
    ::close(fd);
    return ok;
}

bool IdentityRefresh::applyName(const agentwire::IdentityRequest &request)
{
    if (request.hostname.empty())
        return true;
    if (m_targets.sysroot == "/"
        && ::sethostname(request.hostname.data(), request.hostname.size()) != 0)
        return false;
    if (!makeDirectories(path("/etc")))
        return false;
    return writeFileAtomically(path("/etc/hostname"), request.hostname + "\n", 0644);
}

bool IdentityRefresh::replaceCa(const std::string &pem)
{
    const std::string bundle = path("/etc/ssl/certs/ca-certificates.crt");
    if (!makeDirectories(path("/etc/ssl/certs")))
        return false;
    const std::string old = readSmallFile(bundle, 16 << 20).value_or(std::string());
    // The rest of the bundle (a distribution's CAs) stays; the block goes to the end.
    std::string out;
    out.reserve(old.size() + pem.size() + 64);
    bool skip = false;
    std::string_view rest = old;
    while (!rest.empty()) {
        const std::size_t newline = rest.find('\n');
        const std::string_view line = rest.substr(0, newline);
        rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
        if (line == kCaBegin) {
            skip = true;
            continue;
        }
        if (skip && line == kCaEnd) {
            skip = false;
            continue;
        }
        if (!skip) {
            out.append(line);
            out.push_back('\n');
        }
    }
    out.append(kCaBegin).push_back('\n');
    out.append(pem);
    if (!pem.empty() && pem.back() != '\n')
        out.push_back('\n');
    out.append(kCaEnd).push_back('\n');
    if (!writeFileAtomically(bundle, out, 0644))
        return false;
    const std::string debianCopies = path("/usr/local/share/ca-certificates");
    struct stat st
    {
    };
    if (::stat(debianCopies.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return writeFileAtomically(debianCopies + "/airlock-sandbox.crt", pem, 0644);
    return true;
}

bool IdentityRefresh::applyFiles(const std::vector<agentwire::IdentityFile> &files)
{
    const std::string seed = path("/run/airlock");
    if (!makeDirectories(seed))
        return false;
    for (const agentwire::IdentityFile &file : files) {
        if (file.name == "ca.pem" && !file.content.empty()
            && !replaceCa(std::string(file.content.begin(), file.content.end())))
            return false;
    }
    // The seed set is complete: files the snapshot's sandbox had and this one has not go.
    if (DIR *dir = ::opendir(seed.c_str())) {
        std::vector<std::string> stale;
        while (const dirent *entry = ::readdir(dir)) {
            const std::string name = entry->d_name;
            if (name == "." || name == "..")
                continue;
            bool kept = false;
            for (const agentwire::IdentityFile &file : files)
                kept = kept || file.name == name;
            if (!kept)
                stale.push_back(name);
        }
        ::closedir(dir);
        for (const std::string &name : stale)
            ::unlink((seed + "/" + name).c_str());
    }
    for (const agentwire::IdentityFile &file : files) {
        const std::string_view content(reinterpret_cast<const char *>(file.content.data()),
                                       file.content.size());
        if (!writeFileAtomically(seed + "/" + file.name, content, file.mode))
            return false;
    }
    return true;
}

bool IdentityRefresh::ip(std::vector<std::string> args)
{
    std::string program = m_targets.ipCommand;
    if (program.find('/') == std::string::npos) {
        // The agent's own PATH is whatever init gave it: look in the usual places.
        for (const char *folder : {"/sbin/", "/bin/", "/usr/sbin/", "/usr/bin/"}) {
            if (::access((folder + m_targets.ipCommand).c_str(), X_OK) == 0) {
                program = folder + m_targets.ipCommand;
                break;
            }
        }
    }
    args.insert(args.begin(), program);
    std::vector<char *> argv;
    for (std::string &arg : args)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
        char path[] = "PATH=/sbin:/bin:/usr/sbin:/usr/bin";
        char *env[] = {path, nullptr};
        ::execve(argv[0], argv.data(), env);
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool IdentityRefresh::applyNetwork(const agentwire::IdentityRequest &request)
{
    if (request.address.empty())
        return true;
    const std::string &dev = m_targets.interface;
    // virtio-net changes its MAC while up; the old addresses, routes and neighbours (the old
    // gateway's MAC) go explicitly.
    ip({"addr", "flush", "dev", dev});
    ip({"neigh", "flush", "dev", dev});
    if (!request.mac.empty() && !ip({"link", "set", dev, "address", request.mac}))
        return false;
    const std::string address = request.address + "/" + std::to_string(request.prefixLength);
    if (!ip({"link", "set", dev, "up"}) || !ip({"addr", "add", address, "dev", dev})
        || !ip({"route", "replace", "default", "via", request.gateway}))
        return false;
    if (!makeDirectories(path("/etc")))
        return false;
    const std::string &dns = request.dns.empty() ? request.gateway : request.dns;
    return writeFileAtomically(path("/etc/resolv.conf"), "nameserver " + dns + "\n", 0644);
}

} // namespace airlock::guest

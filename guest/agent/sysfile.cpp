#include "guest/agent/sysfile.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::guest {

std::optional<std::string> readSmallFile(const std::string &path, std::size_t maxBytes)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return std::nullopt;
    std::string out;
    char buffer[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || out.size() + std::size_t(n) > maxBytes) {
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0)
            break;
        out.append(buffer, std::size_t(n));
    }
    ::close(fd);
    return out;
}

bool writeFileAtomically(const std::string &path, std::string_view content, unsigned mode)
{
    const std::string temporary = path + ".airlock-new";
    const int fd =
        ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return false;
    bool ok = true;
    while (ok && !content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0;
        if (ok)
            content.remove_prefix(std::size_t(n));
    }
    ok = ok && ::fchmod(fd, mode) == 0;
    const int error = errno;
    ::close(fd);
    if (!ok || ::rename(temporary.c_str(), path.c_str()) != 0) {
        const int renameError = ok ? errno : error;
        ::unlink(temporary.c_str());
        errno = renameError;
        return false;
    }
    return true;
}

bool makeDirectories(const std::string &path, unsigned mode)
{
    std::size_t at = 0;
    while (at != std::string::npos) {
        at = path.find('/', at + 1);
        const std::string prefix = path.substr(0, at);
        if (prefix.empty())
            continue;
        if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST)
            return false;
    }
    struct stat st
    {
    };
    if (::stat(path.c_str(), &st) != 0)
        return false;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return false;
    }
    return true;
}

} // namespace airlock::guest

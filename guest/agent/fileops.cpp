#include "guest/agent/fileops.h"

#include "core/agentwire/errnocode.h"
#include "guest/agent/sysfile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::guest::fileops {

using agentwire::ErrorCode;
using agentwire::FileInfo;
using agentwire::FileKind;

namespace {

std::string baseName(const std::string &path)
{
    const std::size_t slash = path.find_last_not_of('/');
    if (slash == std::string::npos)
        return "/";
    const std::string trimmed = path.substr(0, slash + 1);
    return trimmed.substr(trimmed.rfind('/') + 1);
}

std::vector<std::string> sortedNames(int dirFd)
{
    std::vector<std::string> names;
    const int listFd = ::dup(dirFd);
    DIR *dir = listFd >= 0 ? ::fdopendir(listFd) : nullptr;
    if (!dir) {
        if (listFd >= 0)
            ::close(listFd);
        return names;
    }
    while (const dirent *entry = ::readdir(dir)) {
        const std::string_view name(entry->d_name);
        if (name != "." && name != "..")
            names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

void listInto(int dirFd, const std::string &prefix, int depthLeft, agentwire::ListResult &out,
              std::uint32_t maxEntries)
{
    for (const std::string &name : sortedNames(dirFd)) {
        if (out.entries.size() >= maxEntries) {
            out.truncated = true;
            return;
        }
        struct stat st
        {
        };
        if (::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        const std::string path = prefix + name;
        if (path.size() > agentwire::kMaxPathBytes)
            continue;
        FileInfo info = infoOf(st, path);
        if (info.kind == FileKind::Symlink) {
            char target[agentwire::kMaxPathBytes];
            const ssize_t n = ::readlinkat(dirFd, name.c_str(), target, sizeof target);
            if (n > 0)
                info.linkTarget.assign(target, std::size_t(n));
        }
        out.entries.push_back(std::move(info));
        if (S_ISDIR(st.st_mode) && depthLeft > 1) {
            const int sub =
                ::openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                listInto(sub, path + "/", depthLeft - 1, out, maxEntries);
                ::close(sub);
            }
        }
    }
}

/// Removes everything inside the folder `dirFd` (not the folder itself).
int removeContent(int dirFd)
{
    for (const std::string &name : sortedNames(dirFd)) {
        struct stat st
        {
        };
        if (::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            const int sub =
                ::openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0)
                return errno;
            const int error = removeContent(sub);
            ::close(sub);
            if (error != 0)
                return error;
            if (::unlinkat(dirFd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
                return errno;
        } else if (::unlinkat(dirFd, name.c_str(), 0) != 0 && errno != ENOENT) {
            return errno;
        }
    }
    return 0;
}

} // namespace

Failure failure(int error, std::string_view what, std::string_view path)
{
    return Failure {agentwire::errorCodeOfErrno(error),
                    std::string(what) + " " + std::string(path) + ": " + std::strerror(error)};
}

FileInfo infoOf(const struct stat &st, std::string name)
{
    FileInfo info;
    switch (st.st_mode & S_IFMT) {
    case S_IFREG:
        info.kind = FileKind::File;
        break;
    case S_IFDIR:
        info.kind = FileKind::Directory;
        break;
    case S_IFLNK:
        info.kind = FileKind::Symlink;
        break;
    default:
        info.kind = FileKind::Other;
    }
    info.mode = st.st_mode;
    info.size = std::uint64_t(st.st_size);
    info.mtimeNs = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    info.uid = st.st_uid;
    info.gid = st.st_gid;
    info.name = std::move(name);
    return info;
}

std::expected<FileInfo, Failure> statPath(const agentwire::StatRequest &request)
{
    struct stat st
    {
    };
    const int rc =
        request.follow ? ::stat(request.path.c_str(), &st) : ::lstat(request.path.c_str(), &st);
    if (rc != 0)
        return std::unexpected(failure(errno, "cannot stat", request.path));
    FileInfo info = infoOf(st, baseName(request.path));
    if (info.kind == FileKind::Symlink) {
        char target[agentwire::kMaxPathBytes];
        const ssize_t n = ::readlink(request.path.c_str(), target, sizeof target);
        if (n > 0)
            info.linkTarget.assign(target, std::size_t(n));
    }
    return info;
}

std::expected<agentwire::ListResult, Failure> listFolder(const agentwire::ListRequest &request)
{
    const int fd = ::open(request.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return std::unexpected(failure(errno, "cannot list", request.path));
    agentwire::ListResult out;
    listInto(fd, std::string(), request.depth, out, request.maxEntries);
    ::close(fd);
    return out;
}

std::expected<void, Failure> makeFolder(const agentwire::MkdirRequest &request)
{
    if (request.parents) {
        if (!makeDirectories(request.path, request.mode))
            return std::unexpected(failure(errno, "cannot create folder", request.path));
        return {};
    }
    if (::mkdir(request.path.c_str(), request.mode) != 0)
        return std::unexpected(failure(errno, "cannot create folder", request.path));
    return {};
}

std::expected<void, Failure> removePath(const agentwire::RemoveRequest &request)
{
    if (request.path.find_first_not_of('/') == std::string::npos)
        return std::unexpected(Failure {ErrorCode::Invalid, "refusing to remove /"});
    struct stat st
    {
    };
    if (::lstat(request.path.c_str(), &st) != 0)
        return std::unexpected(failure(errno, "cannot remove", request.path));
    if (!S_ISDIR(st.st_mode)) {
        if (::unlink(request.path.c_str()) != 0)
            return std::unexpected(failure(errno, "cannot remove", request.path));
        return {};
    }
    if (request.recursive) {
        const int fd =
            ::open(request.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return std::unexpected(failure(errno, "cannot remove", request.path));
        const int error = removeContent(fd);
        ::close(fd);
        if (error != 0)
            return std::unexpected(failure(error, "cannot remove the content of", request.path));
    }
    if (::rmdir(request.path.c_str()) != 0)
        return std::unexpected(failure(errno, "cannot remove", request.path));
    return {};
}

std::expected<void, Failure> renamePath(const agentwire::RenameRequest &request)
{
    const unsigned flags = request.noReplace ? RENAME_NOREPLACE : 0;
    if (::renameat2(AT_FDCWD, request.from.c_str(), AT_FDCWD, request.to.c_str(), flags) != 0)
        return std::unexpected(failure(errno, "cannot rename", request.from));
    return {};
}

} // namespace airlock::guest::fileops

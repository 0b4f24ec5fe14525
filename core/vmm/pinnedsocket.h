#pragma once

#include "core/model/error.h"

#include <QString>

#include <memory>

namespace airlock {

/// A Unix socket in a directory another user controls, pinned for one connect. The runtime
/// directory belongs to the VMM user, so a compromised VMM could swap its sockets for symlinks
/// to other root-only sockets. The socket is therefore opened with O_PATH|O_NOFOLLOW and
/// connected through /proc/self/fd, which cannot be redirected between check and connect.
class PinnedSocket
{
public:
    /// NotFound while nothing is there yet; OperationFailed when it is not a plain socket.
    static Result<std::unique_ptr<PinnedSocket>> open(const QString &path);
    ~PinnedSocket();
    PinnedSocket(const PinnedSocket &) = delete;
    PinnedSocket &operator=(const PinnedSocket &) = delete;
    /// The path to connect to while this object lives.
    QString path() const;

private:
    explicit PinnedSocket(int fd) : m_fd(fd) { }
    int m_fd;
};

} // namespace airlock

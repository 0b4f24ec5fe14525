#include "core/daemon/socketactivation.h"

#include <QByteArray>
#include <QtGlobal>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock {

int takeInheritedListenSocket()
{
    constexpr int kListenFdsStart = 3;
    const QByteArray pid = qgetenv("LISTEN_PID");
    const QByteArray fds = qgetenv("LISTEN_FDS");
    qunsetenv("LISTEN_PID");
    qunsetenv("LISTEN_FDS");
    qunsetenv("LISTEN_FDNAMES");
    bool pidOk = false;
    bool fdsOk = false;
    if (pid.toLongLong(&pidOk) != ::getpid() || !pidOk || fds.toInt(&fdsOk) < 1 || !fdsOk)
        return -1;
    // Only a listening stream socket is ours to serve; anything else is a misconfigured unit.
    int listening = 0;
    socklen_t length = sizeof(listening);
    if (::getsockopt(kListenFdsStart, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0
        || !listening)
        return -1;
    ::fcntl(kListenFdsStart, F_SETFD, FD_CLOEXEC);
    return kListenFdsStart;
}

} // namespace airlock

#pragma once

#include "core/ssh/sshendpoint.h"

#include <QString>
#include <QThread>

namespace airlock::test {

/// Lets tests written against a local socket (RpcTestClient blocks on a QLocalSocket) run over
/// the SSH transport: listens on a Unix socket of its own and, for every client, opens an
/// SshTransport to `endpoint` and copies bytes both ways until either side closes. Runs on its
/// own thread, because the test's client blocks the main thread while it waits. The endpoint's
/// known_hosts must already hold the server's key (nobody is asked).
class SshSocketForwarder
{
public:
    explicit SshSocketForwarder(SshEndpoint endpoint);
    ~SshSocketForwarder();
    SshSocketForwarder(const SshSocketForwarder &) = delete;
    SshSocketForwarder &operator=(const SshSocketForwarder &) = delete;

    /// Listens on `path`; false when it cannot.
    bool listen(const QString &path);
    QString path() const { return m_path; }

private:
    SshEndpoint m_endpoint;
    QThread m_thread;
    QString m_path;
};

} // namespace airlock::test

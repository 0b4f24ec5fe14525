#pragma once

// Real parts for gateway tests and the gateway benchmark: a private network namespace with
// the sandbox's nftables redirect, local HTTPS/HTTP "upstream" servers under a test CA, a
// local authoritative DNS server (ldns), the real airlock-gateway process on a socketpair
// control channel, and a blocking "guest" client. Nothing leaves the namespace, and the
// namespace dies with the test process.

#include "core/pki/sandboxca.h"

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QJsonObject>
#include <QList>
#include <QMutex>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

namespace airlock::test {

/// Addresses of the test network (all on the namespace's loopback device).
inline const QString kLinkGateway = QStringLiteral("10.77.0.1"); ///< GW on the "sandbox link"
inline const QString kLinkGuest = QStringLiteral("10.77.0.2"); ///< the guest's source address
inline const QString kDnsUpstream = QStringLiteral("127.0.0.53"); ///< the test authority
constexpr quint16 kRedirectPort = 15001; ///< the gateway's transparent listener

/// Moves the calling process into a new network namespace (unshare CLONE_NEWNET; call before
/// starting threads) with loopback up, GW and GUEST addresses on it, a route for the
/// synthetic pool 100.112.0.0/16, and an nftables nat rule redirecting every TCP connection
/// from GUEST to 127.0.0.1:kRedirectPort — the way airlockd's table redirects a guest's TCP.
/// Returns an error text, empty on success. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN).
QString enterGatewayTestNetwork();

/// A blocking local HTTP/1.1 server (TLS or plain) on its own threads. Answers every request
/// with 200 and the body "hello <host> <path>\n" (Content-Length, keep-alive), except
/// /big (1 MiB body) and /redirect (302 to https://evil.test/c). Records what reached it.
class TestUpstream
{
public:
    struct Options
    {
        QHostAddress address;
        quint16 port = 443;
        bool tls = true;
        airlock::pki::SandboxCa *ca = nullptr; ///< signs the server's leaves (tls)
        QStringList names; ///< leaves minted up front; chosen by SNI
        QString forcedName; ///< if set: always present the leaf of this name (wrong-cert tests)
    };

    TestUpstream();
    ~TestUpstream();
    bool start(const Options &options);
    void stop();

    int connections() const { return m_connections.load(); }
    /// Every request head received, in order.
    QByteArrayList requests() const;
    /// Every SNI received (TLS).
    QStringList snis() const;

private:
    void acceptLoop();
    void serve(int fd);

    struct Leaf;
    Options m_options;
    int m_listenFd = -1;
    std::atomic<bool> m_stop {false};
    std::atomic<int> m_connections {0};
    std::thread m_acceptThread;
    QList<std::shared_ptr<std::thread>> m_threads;
    mutable QMutex m_mutex;
    QByteArrayList m_requests;
    QStringList m_snis;
    void *m_ctx = nullptr; ///< SSL_CTX
    QHash<QString, std::shared_ptr<Leaf>> m_leaves;
};

/// A local authoritative DNS server (UDP, ldns) answering A queries from a fixed table and
/// NXDOMAIN otherwise; logs every question name.
class TestDnsServer
{
public:
    ~TestDnsServer();
    bool start(const QHostAddress &address, quint16 port, QHash<QString, QString> aRecords);
    void stop();
    QStringList queries() const;

private:
    void loop();

    int m_fd = -1;
    std::atomic<bool> m_stop {false};
    std::thread m_thread;
    QHash<QString, QString> m_records;
    mutable QMutex m_mutex;
    QStringList m_queries;
};

/// The real airlock-gateway ($AIRLOCK_GATEWAY) with a socketpair control channel.
class GatewayProcess
{
public:
    ~GatewayProcess();
    /// Spawns the gateway (nothing sent yet); `inherit` are further fds the child inherits
    /// under the same numbers (listening sockets named in a config).
    bool spawn(QString *error, const QList<int> &inherit = {});
    /// Spawns, sends `config` and waits for "ready" (or returns the fatal error).
    bool startAndWaitReady(const QJsonObject &config, QString *error);
    /// Sends one message line; `raw` sends bytes as they are.
    void send(const QJsonObject &message);
    void sendRaw(const QByteArray &bytes);
    /// The next message from the gateway, waiting up to `timeoutMs`.
    std::optional<QJsonObject> next(int timeoutMs);
    /// Waits for a message matching `match`, keeping the others in received().
    std::optional<QJsonObject> waitFor(const std::function<bool(const QJsonObject &)> &match,
                                       int timeoutMs);
    /// Every message received so far (including the ones waitFor matched).
    const QList<QJsonObject> &received() const { return m_received; }
    /// The `event` objects of the egress messages received so far.
    QList<QJsonObject> events() const;
    void clearReceived() { m_received.clear(); }
    /// Closes our end of the control channel.
    void closeControl();
    /// Waits for exit; the exit code, or -1 on timeout/crash.
    int waitForExit(int timeoutMs);
    QByteArray standardError();

private:
    QProcess m_process;
    int m_fd = -1;
    QByteArray m_buffer;
    QList<QJsonObject> m_received;
};

/// A standard config for the test network: listen on 127.0.0.1:kRedirectPort and
/// GW:53, link GW/30, DNS upstream kDnsUpstream:53, refused ranges without loopback (the test
/// upstreams live there), `trustCaFile` as trust store, `ca` as the sandbox CA, `policy`.
QJsonObject gatewayTestConfig(const QString &caCertPath, const QString &caKeyPath,
                              const QString &trustCaFile, const QJsonObject &policy);

/// A blocking guest connection from GUEST (redirected to the gateway by the namespace's rule).
class GuestConnection
{
public:
    ~GuestConnection();
    /// TCP connect from GUEST to `address`:`port` (redirected to the gateway); with
    /// `asGuest` false from the default source instead (not redirected: "direct").
    bool connectTcp(const QHostAddress &address, quint16 port, bool asGuest = true);
    /// TLS handshake over the connection: SNI `sni` (none if null), trusting only `caPem`,
    /// verifying the name `sni`. False on failure (see alert()).
    bool startTls(const QString &sni, const QByteArray &caPem);
    bool write(const QByteArray &bytes);
    /// Reads one HTTP response (head and Content-Length body); empty on timeout or EOF first.
    QByteArray readResponse(int timeoutMs = 5000);
    /// Reads until EOF (or timeout); true when the peer closed.
    bool readUntilClosed(QByteArray *bytes, int timeoutMs = 5000);
    /// The fatal alert the gateway sent during the handshake (SSL_AD_*), -1 if none.
    int alert() const { return m_alert; }

private:
    qsizetype readSome(QByteArray &into, int timeoutMs); // >0 bytes, 0 EOF, -1 timeout/error

    int m_fd = -1;
    void *m_ctx = nullptr;
    void *m_ssl = nullptr;
    int m_alert = -1;
    QByteArray m_buffer;
};

/// The status code of an HTTP response ("HTTP/1.1 421 ..." → 421), 0 if none.
int responseStatus(const QByteArray &response);
/// The body of an HTTP response (after the blank line).
QByteArray responseBody(const QByteArray &response);

} // namespace airlock::test

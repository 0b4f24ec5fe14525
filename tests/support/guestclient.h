#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

#include <openssl/types.h>

namespace airlock::test {

/// An HTTP/1.1 response as the guest received it.
struct HttpResponse
{
    int status = 0; ///< 0 when nothing parseable arrived
    QByteArray head; ///< status line and headers
    QByteArray body; ///< decoded when chunked
    bool complete = false; ///< head and the whole body (Content-Length or chunked) arrived
    bool chunked = false; ///< Transfer-Encoding: chunked
    qsizetype size = 0; ///< bytes of the response as they arrived: head, blank line, framed body

    /// The first value of header `name` (case-insensitive), empty if absent.
    QByteArray header(const QByteArray &name) const;
};

/// One TCP connection opened from inside the guest namespace (the socket is created there;
/// afterwards it is used from the test's thread), optionally upgraded to TLS with a chosen SNI
/// and verified against the sandbox CA: the raw client for the cases curl cannot express
/// (two Host lines, folded headers, smuggled requests, no SNI, IP-literal SNI, ...).
class GuestConnection final
{
public:
    ~GuestConnection();
    GuestConnection(const GuestConnection &) = delete;
    GuestConnection &operator=(const GuestConnection &) = delete;

    /// Connects from namespace `nsFd` to address:port within timeoutMs; nullptr on failure
    /// (refused, timed out: a drop looks like a timeout).
    static std::unique_ptr<GuestConnection> connect(int nsFd, const QHostAddress &address,
                                                    quint16 port, int timeoutMs = 3000);

    /// TLS handshake (TLS 1.2+, ALPN http/1.1). `sni`: the server_name to send (nullopt: no
    /// extension; any string, even an IP literal, is sent as given). `caPem`: when not empty,
    /// the peer's chain must verify against it and the certificate must match `verifyName`.
    /// False when the handshake fails: lastError() then says how (alert, close, verify).
    bool startTls(const std::optional<QByteArray> &sni, const QByteArray &caPem,
                  const QString &verifyName);
    /// The negotiated ALPN protocol ("http/1.1" or empty).
    QByteArray alpn() const;

    bool send(const QByteArray &bytes);
    /// Reads one HTTP response (head, then Content-Length bytes or a chunked body, which must
    /// parse; without either until close), or what arrived before timeoutMs/close.
    HttpResponse readResponse(int timeoutMs = 5000);
    /// Reads only a response head (for CONNECT's 2xx, which has no body).
    HttpResponse readHead(int timeoutMs = 5000);
    /// Reads everything until the peer closes or timeoutMs passes.
    QByteArray readAll(int timeoutMs = 2000);
    /// True when the peer closed (EOF, reset or TLS close/alert) within timeoutMs; any data
    /// that arrives first is appended to `*data` if given.
    bool closedByPeer(int timeoutMs = 3000, QByteArray *data = nullptr);
    QString lastError() const { return m_error; }
    /// The fatal TLS alert the peer sent during the handshake (SSL_AD_*), -1 if none.
    int alert() const { return m_alert; }

private:
    GuestConnection() = default;
    HttpResponse read(int timeoutMs, bool headOnly);
    /// >0 bytes read, 0 EOF/closed, -1 timeout.
    qint64 readSome(char *buffer, int size, int timeoutMs);

    int m_fd = -1;
    SSL *m_ssl = nullptr;
    SSL_CTX *m_context = nullptr;
    QByteArray m_buffered;
    QString m_error;
    int m_alert = -1;
};

/// A DNS answer seen by the guest.
struct DnsResult
{
    bool answered = false; ///< false: timeout
    int rcode = -1; ///< RFC 1035 RCODE (0 NOERROR, 3 NXDOMAIN, 5 REFUSED)
    QList<QHostAddress> addresses; ///< A and AAAA data in the answer section
};

/// Sends one DNS question (RD set) from namespace `nsFd` to server:port over UDP or TCP and
/// waits for the answer.
DnsResult guestDnsQuery(int nsFd, const QHostAddress &server, const QString &name, quint16 type = 1,
                        bool tcp = false, quint16 port = 53, int timeoutMs = 3000);

/// The result of a program run inside the guest namespace.
struct CommandResult
{
    bool finished = false; ///< false: did not finish within the timeout (killed)
    int exitCode = -1;
    QByteArray standardOutput;
    QByteArray standardError;
};

/// Runs `program` (curl, openssl, ...) inside namespace `nsFd` (setns in the child before
/// exec), optionally feeding `input` on stdin.
CommandResult runInNamespace(int nsFd, const QString &program, const QStringList &arguments,
                             int timeoutMs = 15000, const QByteArray &input = QByteArray());

} // namespace airlock::test

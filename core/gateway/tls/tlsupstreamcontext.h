#pragma once

#include "core/gateway/tls/tlsopenssl.h"
#include "core/gateway/tls/upstreamsessioncache.h"
#include "core/model/error.h"

#include <QString>

#include <memory>

namespace airlock::gateway {

/// Where upstream certificates are anchored. Both empty: the system's default store
/// (OpenSSL's default verify paths, /etc/ssl/certs on Debian). Tests set caFile to a test CA.
struct TlsTrustStore
{
    QString caFile; ///< PEM file with one or more trusted certificates
    QString caDirectory; ///< OpenSSL hashed directory (c_rehash)
};

/// The client SSL_CTX the gateway uses towards upstream servers (docs/tls.md, "Upstream").
/// TLS 1.2+ only; SSL_VERIFY_PEER with full chain verification against the trust store.
/// Sessions are resumed per exact name and port (UpstreamSessionCache): a session is stored
/// only from a handshake whose chain and hostname verified, and offered only to a new
/// connection for the same name and port, whose hostname verification stays on, so a server
/// that declines the session gets a full, fully verified handshake (issue 16: the upstream
/// handshake was 60% of a new connection's cost).
class TlsUpstreamContext final
{
public:
    /// OperationFailed when the trust store cannot be loaded (a missing file is an error, not
    /// a fallback to the system store).
    static Result<TlsUpstreamContext> create(const TlsTrustStore &trust = {});
    TlsUpstreamContext(TlsUpstreamContext &&) noexcept = default;
    TlsUpstreamContext &operator=(TlsUpstreamContext &&) noexcept = default;
    ~TlsUpstreamContext();

    /// A client SSL for canonical `name` (the SNI the guest sent, already checked): SNI set to
    /// the name (RFC 6066 §3), ALPN offering only "http/1.1" (RFC 7301), hostname
    /// verification by SSL_set1_host (RFC 6125/9525: DNS-ID in subjectAltName only, the subject
    /// CN is never consulted, no partial wildcards). The handshake fails unless the chain
    /// verifies and the name matches. InvalidParams when `name` is not canonical. The caller
    /// attaches a BIO. `port` is the upstream port: the SSL offers the session stored for
    /// exactly `name`:`port`, if any, and the sessions the server sends on it are stored for
    /// that key once it verified.
    Result<SslPtr> newConnection(const QString &name, quint16 port = 443) const;
    /// Drops the stored session of `name`:`port` (a handshake with it failed).
    void forgetSession(const QString &name, quint16 port) const;
    /// The sessions stored now (tests, diagnostics).
    const UpstreamSessionCache &sessions() const { return *m_sessions; }

    SSL_CTX *context() const { return m_ctx.get(); }

private:
    TlsUpstreamContext(SslCtxPtr ctx, std::unique_ptr<UpstreamSessionCache> sessions);
    static int onNewSession(SSL *ssl, SSL_SESSION *session);

    SslCtxPtr m_ctx;
    std::unique_ptr<UpstreamSessionCache> m_sessions; ///< on the heap: the SSL_CTX points to it
};

/// After a failed or finished handshake on an upstream SSL: "ok" or OpenSSL's verify error
/// text (e.g. "hostname mismatch", "unable to get local issuer certificate").
QString upstreamVerifyResult(SSL *ssl);

} // namespace airlock::gateway

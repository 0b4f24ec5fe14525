#pragma once

#include "core/gateway/tls/tlsopenssl.h"
#include "core/model/error.h"

#include <QString>

namespace airlock::gateway {

/// Where upstream certificates are anchored. Both empty: the system's default store
/// (OpenSSL's default verify paths, /etc/ssl/certs on Debian). Tests set caFile to a test CA.
struct TlsTrustStore
{
    QString caFile; ///< PEM file with one or more trusted certificates
    QString caDirectory; ///< OpenSSL hashed directory (c_rehash)
};

/// The client SSL_CTX the gateway uses towards upstream servers (docs/tls.md, "Upstream").
/// TLS 1.2+ only; SSL_VERIFY_PEER with full chain verification against the trust store;
/// no session resumption across names (no session cache).
class TlsUpstreamContext final
{
public:
    /// OperationFailed when the trust store cannot be loaded (a missing file is an error, not
    /// a fallback to the system store).
    static Result<TlsUpstreamContext> create(const TlsTrustStore &trust = {});

    /// A client SSL for canonical `name` (the SNI the guest sent, already checked): SNI set to
    /// the name (RFC 6066 §3), ALPN offering only "http/1.1" (RFC 7301), hostname
    /// verification by SSL_set1_host (RFC 6125/9525: DNS-ID in subjectAltName only, the subject
    /// CN is never consulted, no partial wildcards). The handshake fails unless the chain
    /// verifies and the name matches. InvalidParams when `name` is not canonical. The caller
    /// attaches a BIO.
    Result<SslPtr> newConnection(const QString &name) const;

    SSL_CTX *context() const { return m_ctx.get(); }

private:
    explicit TlsUpstreamContext(SslCtxPtr ctx);

    SslCtxPtr m_ctx;
};

/// After a failed or finished handshake on an upstream SSL: "ok" or OpenSSL's verify error
/// text (e.g. "hostname mismatch", "unable to get local issuer certificate").
QString upstreamVerifyResult(SSL *ssl);

} // namespace airlock::gateway

#include "core/gateway/tls/tlsupstreamcontext.h"

#include "core/model/hostname.h"

#include <QFile>

namespace airlock::gateway {

namespace {

constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

} // namespace

TlsUpstreamContext::TlsUpstreamContext(SslCtxPtr ctx) : m_ctx(std::move(ctx)) { }

Result<TlsUpstreamContext> TlsUpstreamContext::create(const TlsTrustStore &trust)
{
    SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
    if (!ctx || SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1)
        return failOpenSsl(QStringLiteral("upstream SSL_CTX"));
    // CLEANSE_PLAINTEXT: an upstream's answer may carry an injected secret back (a reflection
    // the gateway scrubs); OpenSSL would otherwise keep that plaintext in its read buffer after
    // handing it over, where it outlives the secret's deletion (issue 16).
    SSL_CTX_set_options(ctx.get(),
                        SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CLEANSE_PLAINTEXT);
    SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_set_alpn_protos(ctx.get(), kHttp11, sizeof kHttp11) != 0)
        return failOpenSsl(QStringLiteral("upstream ALPN"));

    if (trust.caFile.isEmpty() && trust.caDirectory.isEmpty()) {
        if (SSL_CTX_set_default_verify_paths(ctx.get()) != 1)
            return failOpenSsl(QStringLiteral("system trust store"));
    } else {
        const QByteArray file = QFile::encodeName(trust.caFile);
        const QByteArray directory = QFile::encodeName(trust.caDirectory);
        if (SSL_CTX_load_verify_locations(ctx.get(), file.isEmpty() ? nullptr : file.constData(),
                                          directory.isEmpty() ? nullptr : directory.constData())
            != 1)
            return failOpenSsl(
                QStringLiteral("trust store %1 %2").arg(trust.caFile, trust.caDirectory).trimmed());
    }
    return TlsUpstreamContext(std::move(ctx));
}

Result<SslPtr> TlsUpstreamContext::newConnection(const QString &name) const
{
    const auto canonical = canonicalizeHostname(name);
    if (!canonical)
        return std::unexpected(canonical.error().toError());
    if (*canonical != name)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("upstream name %1 is not canonical").arg(name));
    SslPtr ssl(SSL_new(m_ctx.get()));
    if (!ssl)
        return failOpenSsl(QStringLiteral("SSL_new (upstream)"));
    const QByteArray ascii = name.toLatin1();
    SSL_set_hostflags(ssl.get(),
                      X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
    if (setTlsServerName(ssl.get(), ascii.constData()) != 1
        || SSL_set1_host(ssl.get(), ascii.constData()) != 1)
        return failOpenSsl(QStringLiteral("upstream SNI/host"));
    SSL_set_verify(ssl.get(), SSL_VERIFY_PEER, nullptr);
    return ssl;
}

QString upstreamVerifyResult(SSL *ssl)
{
    const long result = SSL_get_verify_result(ssl);
    if (result == X509_V_OK)
        return QStringLiteral("ok");
    return QString::fromLatin1(X509_verify_cert_error_string(result));
}

} // namespace airlock::gateway

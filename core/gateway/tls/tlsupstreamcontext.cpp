#include "core/gateway/tls/tlsupstreamcontext.h"

#include "core/model/hostname.h"

#include <QFile>

namespace airlock::gateway {

namespace {

constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

/// The key an upstream SSL stores its sessions under (its ex_data, freed with the SSL).
struct SessionKey
{
    QString name;
    quint16 port = 0;
};

void freeSessionKey(void *, void *pointer, CRYPTO_EX_DATA *, int, long, void *)
{
    delete static_cast<SessionKey *>(pointer);
}

int sessionKeyIndex()
{
    static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, freeSessionKey);
    return index;
}

int sessionCacheIndex()
{
    static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
}

} // namespace

TlsUpstreamContext::TlsUpstreamContext(SslCtxPtr ctx,
                                       std::unique_ptr<UpstreamSessionCache> sessions)
    : m_ctx(std::move(ctx)), m_sessions(std::move(sessions))
{
    SSL_CTX_set_ex_data(m_ctx.get(), sessionCacheIndex(), m_sessions.get());
}

TlsUpstreamContext::~TlsUpstreamContext()
{
    // An SSL still alive keeps the SSL_CTX; its callback must not reach the freed cache.
    if (m_ctx)
        SSL_CTX_set_ex_data(m_ctx.get(), sessionCacheIndex(), nullptr);
}

int TlsUpstreamContext::onNewSession(SSL *ssl, SSL_SESSION *session)
{
    auto *cache = static_cast<UpstreamSessionCache *>(
        SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), sessionCacheIndex()));
    const auto *key = static_cast<const SessionKey *>(SSL_get_ex_data(ssl, sessionKeyIndex()));
    // Only a session whose chain and hostname verified (SSL_VERIFY_PEER fails the handshake
    // otherwise; the result is checked again here) is kept, under the name it verified for.
    if (cache && key && SSL_get_verify_result(ssl) == X509_V_OK)
        cache->put(key->name, key->port, session);
    return 0; // the cache took its own reference
}

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
    // Client sessions go to UpstreamSessionCache (keyed by name and port), never to OpenSSL's
    // internal cache (which a client does not look up by name anyway).
    SSL_CTX_set_session_cache_mode(ctx.get(),
                                   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx.get(), &TlsUpstreamContext::onNewSession);
    // Record buffers (about 34 KiB per SSL) are freed whenever they are empty, i.e. between
    // requests of a keep-alive connection (issue 16: resident memory at 512 connections). The
    // read buffer's plaintext is cleansed as it is consumed (CLEANSE_PLAINTEXT above), so it
    // is freed holding none; the write buffer holds ciphertext once a record is sealed.
    SSL_CTX_set_mode(ctx.get(), SSL_MODE_RELEASE_BUFFERS);
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
    return TlsUpstreamContext(std::move(ctx), std::make_unique<UpstreamSessionCache>());
}

Result<SslPtr> TlsUpstreamContext::newConnection(const QString &name, quint16 port) const
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
    auto key = std::make_unique<SessionKey>(SessionKey {name, port});
    if (SSL_set_ex_data(ssl.get(), sessionKeyIndex(), key.get()) != 1)
        return failOpenSsl(QStringLiteral("upstream session key"));
    key.release(); // freed with the SSL (freeSessionKey)
    // Offered only to this name and port; hostname verification above stays set, so a server
    // that declines it is verified in full.
    if (const SslSessionPtr session = m_sessions->find(name, port))
        SSL_set_session(ssl.get(), session.get()); // takes its own reference
    return ssl;
}

void TlsUpstreamContext::forgetSession(const QString &name, quint16 port) const
{
    m_sessions->remove(name, port);
}

QString upstreamVerifyResult(SSL *ssl)
{
    const long result = SSL_get_verify_result(ssl);
    if (result == X509_V_OK)
        return QStringLiteral("ok");
    return QString::fromLatin1(X509_verify_cert_error_string(result));
}

} // namespace airlock::gateway

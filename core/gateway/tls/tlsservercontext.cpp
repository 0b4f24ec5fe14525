#include "core/gateway/tls/tlsservercontext.h"

#include "core/model/hostname.h"
#include "core/model/printabletext.h"

#include <openssl/tls1.h>

namespace airlock::gateway {

namespace {

constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

} // namespace

struct TlsGuestConnection::State
{
    quint16 port = 0;
    TlsRequiredName required;
    QString serverName;
    QString requestedName;
    EgressReason reason = EgressReason::Allowed;
    QString detail;
};

struct TlsServerContext::Impl
{
    SslCtxPtr ctx;
    pki::SandboxCa *ca = nullptr;
    TlsConnectionCheck check;

    static int onClientHello(SSL *ssl, int *alert, void *arg);
    static int onAlpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                      const unsigned char *in, unsigned int inlen, void *arg);
};

TlsSniff sniffTlsClientHello(QByteArrayView firstBytes)
{
    const auto byte = [&](qsizetype i) { return quint8(firstBytes[i]); };
    const qsizetype n = firstBytes.size();
    if (n >= 1 && byte(0) != 22) // ContentType handshake
        return TlsSniff::NotTls;
    if (n >= 2 && byte(1) != 0x03)
        return TlsSniff::NotTls;
    if (n >= 3 && (byte(2) < 0x01 || byte(2) > 0x04))
        return TlsSniff::NotTls;
    if (n >= 4 && byte(3) > 0x40) // length high byte: at most 16384 = 0x4000
        return TlsSniff::NotTls;
    if (n >= 5) {
        const int length = (byte(3) << 8) | byte(4);
        if (length < 1 || length > 16384)
            return TlsSniff::NotTls;
    }
    if (n >= 6)
        return byte(5) == 1 ? TlsSniff::ClientHello : TlsSniff::NotTls; // HandshakeType
    return TlsSniff::NeedMore;
}

std::optional<QByteArray> parseServerNameExtension(QByteArrayView data)
{
    // struct { NameType name_type; opaque HostName<1..2^16-1>; } ServerName;
    // struct { ServerName server_name_list<1..2^16-1>; } ServerNameList;
    if (data.size() < 2)
        return std::nullopt;
    const auto byte = [&](qsizetype i) { return quint8(data[i]); };
    const qsizetype listLength = (byte(0) << 8) | byte(1);
    if (listLength != data.size() - 2 || listLength < 3)
        return std::nullopt;
    if (byte(2) != TLSEXT_NAMETYPE_host_name)
        return std::nullopt;
    const qsizetype nameLength = (byte(3) << 8) | byte(4);
    // Exactly one entry: the name must end the list (RFC 6066 §3 forbids two host_names and
    // defines no other type).
    if (nameLength < 1 || 5 + nameLength != data.size())
        return std::nullopt;
    return data.sliced(5, nameLength).toByteArray();
}

int TlsServerContext::Impl::onClientHello(SSL *ssl, int *alert, void *arg)
{
    auto *impl = static_cast<Impl *>(arg);
    auto *state = static_cast<TlsGuestConnection::State *>(SSL_get_app_data(ssl));
    if (!state) {
        *alert = SSL_AD_INTERNAL_ERROR;
        return SSL_CLIENT_HELLO_ERROR;
    }
    const auto reject = [&](EgressReason reason, const QString &detail, int alertCode) {
        state->reason = reason;
        state->detail = detail;
        state->serverName.clear();
        *alert = alertCode;
        return SSL_CLIENT_HELLO_ERROR;
    };

    const unsigned char *extension = nullptr;
    size_t length = 0;
    if (SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &extension, &length) != 1)
        return reject(EgressReason::NoSni,
                      QStringLiteral("the ClientHello has no server_name extension"),
                      SSL_AD_UNRECOGNIZED_NAME);
    const auto raw = parseServerNameExtension(
        QByteArrayView(reinterpret_cast<const char *>(extension), qsizetype(length)));
    if (!raw)
        return reject(EgressReason::BadSni,
                      QStringLiteral("malformed server_name extension (RFC 6066 §3)"),
                      SSL_AD_DECODE_ERROR);
    // Latin-1 is lossless for bytes; anything above 0x7f is then rejected as non_ascii. The
    // name goes into the refusal's event, escaped: people read it
    // (docs/reviews/2026-12-01-gateway-round3.md#f5).
    state->requestedName = printableText(QString::fromLatin1(*raw).left(255), true);
    const auto name = canonicalizeHostname(QString::fromLatin1(*raw));
    if (!name)
        return reject(EgressReason::BadSni, name.error().toError().message,
                      SSL_AD_UNRECOGNIZED_NAME);

    state->requestedName = *name;
    if (!state->required.name.isEmpty() && *name != state->required.name)
        return reject(state->required.reason,
                      QStringLiteral("the SNI %1 is not %2, the name this connection is for")
                          .arg(*name, state->required.name),
                      SSL_AD_ACCESS_DENIED);

    const policy::Verdict verdict = impl->check(*name, state->port);
    if (!verdict.allowed()) {
        const EgressReason reason = verdict.reason == EgressReason::PortNotAllowed
            ? EgressReason::PortNotAllowed
            : verdict.reason == EgressReason::MalformedHost ? EgressReason::BadSni
                                                            : EgressReason::HostNotAllowed;
        return reject(reason, verdict.detail, SSL_AD_ACCESS_DENIED);
    }

    auto leaf = impl->ca->mintLeaf(*name);
    if (!leaf)
        return reject(EgressReason::LeafUnavailable, leaf.error().message, SSL_AD_INTERNAL_ERROR);
    if (SSL_use_certificate(ssl, (*leaf)->certificate.get()) != 1
        || SSL_use_PrivateKey(ssl, (*leaf)->key.get()) != 1)
        return reject(EgressReason::LeafUnavailable, takeOpenSslErrors(), SSL_AD_INTERNAL_ERROR);
    state->serverName = *name;
    return SSL_CLIENT_HELLO_SUCCESS;
}

int TlsServerContext::Impl::onAlpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                   const unsigned char *in, unsigned int inlen, void *)
{
    unsigned char *selected = nullptr;
    if (SSL_select_next_proto(&selected, outlen, kHttp11, sizeof kHttp11, in, inlen)
        == OPENSSL_NPN_NEGOTIATED) {
        *out = selected;
        return SSL_TLSEXT_ERR_OK;
    }
    if (auto *state = static_cast<TlsGuestConnection::State *>(SSL_get_app_data(ssl))) {
        state->reason = EgressReason::NoHttp11Alpn;
        state->serverName.clear();
        state->detail = QStringLiteral("the client offered ALPN without http/1.1");
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL; // no_application_protocol (RFC 7301 §3.2)
}

TlsGuestConnection::TlsGuestConnection(std::unique_ptr<State> state, SslPtr ssl)
    : m_state(std::move(state)), m_ssl(std::move(ssl))
{ }

TlsGuestConnection::TlsGuestConnection(TlsGuestConnection &&) noexcept = default;
TlsGuestConnection &TlsGuestConnection::operator=(TlsGuestConnection &&other) noexcept
{
    m_ssl = std::move(other.m_ssl); // frees our SSL before the state it points to
    m_state = std::move(other.m_state);
    return *this;
}
TlsGuestConnection::~TlsGuestConnection() = default;

QString TlsGuestConnection::serverName() const
{
    return m_state->serverName;
}

QString TlsGuestConnection::requestedName() const
{
    return m_state->requestedName;
}

quint16 TlsGuestConnection::port() const
{
    return m_state->port;
}

EgressReason TlsGuestConnection::rejectReason() const
{
    return m_state->reason;
}

QString TlsGuestConnection::rejectDetail() const
{
    return m_state->detail;
}

void TlsGuestConnection::reject(EgressReason reason, const QString &detail)
{
    if (m_state->reason != EgressReason::Allowed)
        return; // the first reason found stays
    m_state->reason = reason;
    m_state->detail = detail;
    m_state->serverName.clear();
}

TlsServerContext::TlsServerContext(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) { }

TlsServerContext::TlsServerContext(TlsServerContext &&) noexcept = default;
TlsServerContext &TlsServerContext::operator=(TlsServerContext &&) noexcept = default;
TlsServerContext::~TlsServerContext() = default;

SSL_CTX *TlsServerContext::context() const
{
    return m_impl->ctx.get();
}

Result<TlsServerContext> TlsServerContext::create(pki::SandboxCa *ca, TlsConnectionCheck check)
{
    if (!ca || !check)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("TlsServerContext needs a CA and a policy check"));
    auto impl = std::make_unique<Impl>();
    impl->ca = ca;
    impl->check = std::move(check);
    impl->ctx.reset(SSL_CTX_new(TLS_server_method()));
    SSL_CTX *ctx = impl->ctx.get();
    if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1)
        return failOpenSsl(QStringLiteral("guest SSL_CTX"));
    SSL_CTX_set_options(ctx,
                        SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION
                            | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    // Record buffers freed while empty (idle keep-alive connections hold none; issue 16).
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_set_num_tickets(ctx, 0) != 1)
        return failOpenSsl(QStringLiteral("guest SSL_CTX tickets"));
    SSL_CTX_set_client_hello_cb(ctx, &Impl::onClientHello, impl.get());
    SSL_CTX_set_alpn_select_cb(ctx, &Impl::onAlpn, impl.get());
    return TlsServerContext(std::move(impl));
}

Result<TlsGuestConnection> TlsServerContext::newConnection(quint16 port, TlsRequiredName required)
{
    SslPtr ssl(SSL_new(m_impl->ctx.get()));
    if (!ssl)
        return failOpenSsl(QStringLiteral("SSL_new (guest)"));
    auto state = std::make_unique<TlsGuestConnection::State>();
    state->port = port;
    state->required = std::move(required);
    SSL_set_app_data(ssl.get(), state.get());
    return TlsGuestConnection(std::move(state), std::move(ssl));
}

} // namespace airlock::gateway

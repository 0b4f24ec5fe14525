#pragma once

#include "core/gateway/tls/tlsopenssl.h"
#include "core/model/error.h"
#include "core/pki/sandboxca.h"
#include "core/policy/policymatcher.h"

#include <QByteArrayView>
#include <QString>

#include <functional>
#include <memory>

namespace airlock::gateway {

/// A name a connection's SNI must equal, decided before the ClientHello arrives: the name
/// mapped to the synthetic address the guest dialed, or an explicit proxy's CONNECT host.
/// Empty name: no requirement.
struct TlsRequiredName
{
    QString name; ///< canonical
    EgressReason reason = EgressReason::DestinationMismatch; ///< reported on mismatch
};

/// What the first bytes of a guest connection look like (sniffTlsClientHello).
enum class TlsSniff {
    NeedMore, ///< every byte so far fits a TLS ClientHello record; read more
    ClientHello, ///< a TLS handshake record header (RFC 8446 §5.1) opening a ClientHello
    NotTls, ///< anything else (SSH banners, HTTP, SSLv2-style hellos, ...)
};

/// Decides from the first bytes, before OpenSSL sees them, whether a connection is TLS
/// (docs/redteam-cases.md D3). A ClientHello starts with the record header: content type 22
/// (handshake), legacy_record_version 0x0301..0x0304, a length of 1..16384 (RFC 8446 §5.1, RFC 5246
/// §6.2.1), then handshake type 1 (client_hello). ClientHello once those 6 bytes match;
/// NotTls as soon as one byte does not; NeedMore for a matching prefix shorter than 6 bytes.
TlsSniff sniffTlsClientHello(QByteArrayView firstBytes);

/// Parses the extension_data of a server_name extension (RFC 6066 §3): a ServerNameList
/// holding exactly one entry of type host_name (0) with a non-empty name, and no trailing
/// bytes. Returns the raw name bytes, or std::nullopt when malformed or when there is any
/// other count or type of entry.
std::optional<QByteArray> parseServerNameExtension(QByteArrayView extensionData);

/// The policy question asked for every ClientHello: (canonical SNI, original destination port)
/// → verdict. Normally `[&m](auto h, auto p) { return m.checkConnection(h, p); }`.
using TlsConnectionCheck = std::function<policy::Verdict(const QString &host, quint16 port)>;

/// The guest side of one connection: an SSL in server mode plus what the ClientHello decided.
/// Drive it with SSL_accept/SSL_read/SSL_write on any BIO (a socket fd or a memory BIO pair).
/// Move-only; the SSL is freed with it.
class TlsGuestConnection final
{
public:
    SSL *ssl() const { return m_ssl.get(); }
    /// The canonical SNI once the ClientHello was accepted; empty before and on rejection.
    QString serverName() const;
    /// The name the ClientHello asked for, canonical when it canonicalized, else the raw
    /// server_name as Latin-1 text (for events; may be empty). Kept after a rejection.
    QString requestedName() const;
    /// The original destination port this connection was created for.
    quint16 port() const;
    /// Why the ClientHello (or ALPN) was refused (NoSni, BadSni, HostNotAllowed,
    /// PortNotAllowed, NoHttp11Alpn, LeafUnavailable, DestinationMismatch, ConnectSniMismatch;
    /// docs/tls.md); Allowed while nothing was refused. A failed SSL_accept with Allowed here is
    /// a plain handshake failure (HandshakeFailed).
    EgressReason rejectReason() const;
    /// English detail for the rejection (hostname reason, policy detail, OpenSSL error).
    QString rejectDetail() const;
    /// Marks the connection rejected for a reason found outside OpenSSL (NotTls, or
    /// HandshakeFailed after SSL_accept failed without a ClientHello decision).
    void reject(EgressReason reason, const QString &detail);

    TlsGuestConnection(TlsGuestConnection &&) noexcept;
    TlsGuestConnection &operator=(TlsGuestConnection &&) noexcept;
    ~TlsGuestConnection();

    struct State;

private:
    friend class TlsServerContext;
    TlsGuestConnection(std::unique_ptr<State> state, SslPtr ssl);

    std::unique_ptr<State> m_state; ///< referenced by m_ssl's app data; outlives it
    SslPtr m_ssl;
};

/// The SSL_CTX that terminates the guest's TLS (docs/tls.md, "Guest side").
///
/// TLS 1.2 and 1.3 only; no session resumption (no tickets, no session cache) and no
/// renegotiation, so every connection's name is decided by its own ClientHello. A client_hello
/// callback runs before the handshake proceeds (and again on a HelloRetryRequest's second
/// ClientHello), in this order:
///  1. no server_name extension → NoSni, alert unrecognized_name;
///  2. malformed server_name, or a name canonicalizeHostname rejects (IP literals, '_', ...)
///     → BadSni, alert unrecognized_name;
///  3. a TlsRequiredName given to newConnection() differs from the name → its reason,
///     alert access_denied;
///  4. check(name, port) not allowed → HostNotAllowed / PortNotAllowed (MalformedHost counts
///     as BadSni), alert access_denied;
///  5. the CA's leaf for the name is installed on the connection (SSL_use_certificate);
///     failure → LeafUnavailable, alert internal_error.
/// ALPN (RFC 7301): when the client offers ALPN, "http/1.1" is selected if offered; a list
/// without it (e.g. only "h2") → NoHttp11Alpn, alert no_application_protocol. A client that
/// offers no ALPN proceeds (HTTP/1.1 is implied).
/// Not thread-safe: the callbacks use the (single-threaded) SandboxCa, so drive every
/// connection of one context on one thread.
class TlsServerContext final
{
public:
    /// `ca` must outlive the context and every connection made from it. OperationFailed when
    /// OpenSSL cannot build the context.
    static Result<TlsServerContext> create(pki::SandboxCa *ca, TlsConnectionCheck check);

    /// A new server-mode SSL for a guest connection whose original destination port was
    /// `port`, whose SNI must equal `required.name` when that is not empty. The caller attaches
    /// a BIO (SSL_set_fd / SSL_set_bio).
    Result<TlsGuestConnection> newConnection(quint16 port, TlsRequiredName required = {});

    SSL_CTX *context() const;

    TlsServerContext(TlsServerContext &&) noexcept;
    TlsServerContext &operator=(TlsServerContext &&) noexcept;
    ~TlsServerContext();

    struct Impl;

private:
    explicit TlsServerContext(std::unique_ptr<Impl> impl);

    std::unique_ptr<Impl> m_impl; ///< stable address: the OpenSSL callbacks' argument
};

} // namespace airlock::gateway

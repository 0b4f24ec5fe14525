#pragma once

#include "core/gateway/tls/tlsopenssl.h"

#include <QByteArray>
#include <QByteArrayView>

namespace airlock::gateway {

/// Drives one SSL (server or client side) over a pair of memory BIOs, so the gateway's event
/// loop owns every socket and no OpenSSL call ever blocks: the caller feeds the ciphertext it
/// read from the socket, takes the ciphertext OpenSSL produced and writes it to the socket.
/// Not thread-safe; one per TLS connection.
class TlsMemoryStream final
{
public:
    enum class Status {
        Ok, ///< progress made (handshake finished, or plaintext read/written)
        WantMore, ///< needs more ciphertext from the peer
        Closed, ///< the peer sent close_notify (or the handshake was refused after an alert)
        Failed, ///< fatal TLS error; takeOutput() may still hold an alert to send
    };

    /// Attaches fresh memory BIOs to `ssl` (which must outlive the stream; its owner keeps it,
    /// e.g. a TlsGuestConnection); `server` selects the accept state.
    TlsMemoryStream(SSL *ssl, bool server);
    TlsMemoryStream(const TlsMemoryStream &) = delete;
    TlsMemoryStream &operator=(const TlsMemoryStream &) = delete;

    SSL *ssl() const { return m_ssl; }

    /// Ciphertext received from the peer.
    void feed(QByteArrayView ciphertext);
    /// Advances the handshake: Ok once it is complete.
    Status handshake();
    bool handshakeDone() const { return m_handshakeDone; }
    /// Decrypts up to `capacity` bytes of plaintext into `buffer` (`*got` of them): Ok if any
    /// was read, WantMore when none is available, Closed on close_notify, Failed on an error.
    /// When nothing was fed that OpenSSL has not consumed and it holds no record, WantMore is
    /// answered without calling into OpenSSL (the call that would only say "want read" was, with
    /// its error-queue bookkeeping, a measurable part of every request; issue 16).
    Status read(char *buffer, qsizetype capacity, qsizetype *got);
    /// Encrypts all of `plaintext` (memory BIOs never refuse a write). Failed on error.
    Status write(QByteArrayView plaintext);
    /// Queues a close_notify alert (RFC 8446 §6.1).
    void shutdown();
    /// Ciphertext to send to the peer, moved out.
    QByteArray takeOutput();
    /// Bytes fed and not yet consumed by OpenSSL.
    qsizetype pendingInput() const;
    /// OpenSSL's error text after Failed.
    const QString &errorText() const { return m_error; }

private:
    Status classify(int ret);

    SSL *m_ssl;
    BIO *m_in = nullptr; ///< owned by m_ssl
    BIO *m_out = nullptr; ///< owned by m_ssl
    bool m_handshakeDone = false;
    QString m_error;
};

} // namespace airlock::gateway

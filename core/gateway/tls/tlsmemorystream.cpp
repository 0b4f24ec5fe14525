#include "core/gateway/tls/tlsmemorystream.h"

#include <openssl/err.h>

namespace airlock::gateway {

namespace {

/// ERR_clear_error() before each SSL call (SSL_get_error reads the queue), at the price of a
/// peek when the queue is empty: clearing walks all of the thread's error slots every time
/// (3.9% of the gateway's profile in issue 16).
void clearErrors()
{
    if (ERR_peek_error() != 0)
        ERR_clear_error();
}

} // namespace

TlsMemoryStream::TlsMemoryStream(SSL *ssl, bool server) : m_ssl(ssl)
{
    m_in = BIO_new(BIO_s_mem());
    m_out = BIO_new(BIO_s_mem());
    // An empty input BIO means "retry later", not EOF.
    BIO_set_mem_eof_return(m_in, -1);
    BIO_set_mem_eof_return(m_out, -1);
    SSL_set_bio(m_ssl, m_in, m_out);
    if (server)
        SSL_set_accept_state(m_ssl);
    else
        SSL_set_connect_state(m_ssl);
}

void TlsMemoryStream::feed(QByteArrayView ciphertext)
{
    qsizetype done = 0;
    while (done < ciphertext.size()) {
        const int n = BIO_write(m_in, ciphertext.data() + done,
                                int(qMin<qsizetype>(ciphertext.size() - done, 1 << 30)));
        if (n <= 0)
            break;
        done += n;
    }
}

TlsMemoryStream::Status TlsMemoryStream::classify(int ret)
{
    const int error = SSL_get_error(m_ssl, ret);
    switch (error) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        return Status::WantMore;
    case SSL_ERROR_ZERO_RETURN:
        return Status::Closed;
    default:
        m_error = takeOpenSslErrors();
        return Status::Failed;
    }
}

TlsMemoryStream::Status TlsMemoryStream::handshake()
{
    if (m_handshakeDone)
        return Status::Ok;
    clearErrors();
    const int ret = SSL_do_handshake(m_ssl);
    if (ret == 1) {
        m_handshakeDone = true;
        return Status::Ok;
    }
    return classify(ret);
}

TlsMemoryStream::Status TlsMemoryStream::read(char *buffer, qsizetype capacity, qsizetype *got)
{
    *got = 0;
    if (m_handshakeDone && BIO_ctrl_pending(m_in) == 0 && SSL_has_pending(m_ssl) == 0
        && (SSL_get_shutdown(m_ssl) & SSL_RECEIVED_SHUTDOWN) == 0)
        return Status::WantMore;
    size_t n = 0;
    clearErrors();
    const int ret = SSL_read_ex(m_ssl, buffer, size_t(capacity), &n);
    if (ret != 1)
        return classify(ret);
    *got = qsizetype(n);
    return Status::Ok;
}

TlsMemoryStream::Status TlsMemoryStream::write(QByteArrayView plaintext)
{
    if (plaintext.isEmpty())
        return Status::Ok;
    size_t written = 0;
    clearErrors();
    const int ret = SSL_write_ex(m_ssl, plaintext.data(), size_t(plaintext.size()), &written);
    if (ret != 1 || written != size_t(plaintext.size()))
        return classify(ret) == Status::Closed ? Status::Closed : Status::Failed;
    return Status::Ok;
}

void TlsMemoryStream::shutdown()
{
    ERR_clear_error();
    if (m_handshakeDone)
        SSL_shutdown(m_ssl);
    ERR_clear_error();
}

QByteArray TlsMemoryStream::takeOutput()
{
    const size_t pending = BIO_ctrl_pending(m_out);
    if (pending == 0)
        return {};
    QByteArray bytes(qsizetype(pending), Qt::Uninitialized);
    const int n = BIO_read(m_out, bytes.data(), int(pending));
    bytes.resize(qMax(0, n));
    return bytes;
}

qsizetype TlsMemoryStream::pendingInput() const
{
    return qsizetype(BIO_ctrl_pending(m_in));
}

} // namespace airlock::gateway

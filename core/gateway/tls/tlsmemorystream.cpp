#include "core/gateway/tls/tlsmemorystream.h"

#include <openssl/err.h>

namespace airlock::gateway {

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
    ERR_clear_error();
    const int ret = SSL_do_handshake(m_ssl);
    if (ret == 1) {
        m_handshakeDone = true;
        return Status::Ok;
    }
    return classify(ret);
}

TlsMemoryStream::Status TlsMemoryStream::read(QByteArray &out, qsizetype maxBytes)
{
    qsizetype total = 0;
    constexpr qsizetype kChunk = 64 * 1024;
    while (total < maxBytes) {
        const qsizetype want = qMin(kChunk, maxBytes - total);
        const qsizetype before = out.size();
        out.resize(before + want);
        size_t got = 0;
        ERR_clear_error();
        const int ret = SSL_read_ex(m_ssl, out.data() + before, size_t(want), &got);
        out.resize(before + qsizetype(got));
        if (ret != 1) {
            const Status status = classify(ret);
            if (total > 0 && status == Status::WantMore)
                return Status::Ok;
            return total > 0 && status != Status::Failed ? Status::Ok : status;
        }
        total += qsizetype(got);
    }
    return Status::Ok;
}

TlsMemoryStream::Status TlsMemoryStream::write(QByteArrayView plaintext)
{
    if (plaintext.isEmpty())
        return Status::Ok;
    size_t written = 0;
    ERR_clear_error();
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

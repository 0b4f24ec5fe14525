#pragma once

#include "core/pki/openssl.h"

#include <openssl/ssl.h>

namespace airlock::gateway {

// The TLS layer works with the handles of core/pki (certificates, keys, BIOs) and adds the
// libssl ones; only the gateway links libssl.
using pki::BignumPtr;
using pki::BioPtr;
using pki::certificateFromPem;
using pki::certificateToPem;
using pki::EvpPkeyPtr;
using pki::failOpenSsl;
using pki::OpenSslDeleter;
using pki::takeOpenSslErrors;
using pki::X509Ptr;
using pki::X509StoreCtxPtr;
using pki::X509StorePtr;

using SslCtxPtr = std::unique_ptr<SSL_CTX, OpenSslDeleter<SSL_CTX, SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, OpenSslDeleter<SSL, SSL_free>>;

/// SSL_set_tlsext_host_name as a function: sets the server name (ASCII, NUL-terminated) a
/// client sends in its hello. The macro casts `name` in C style, which -Wold-style-cast
/// refuses where it is used; OpenSSL copies the name and never writes to it. Returns 1 when
/// set, 0 when not (OpenSSL's convention).
inline int setTlsServerName(SSL *ssl, const char *name)
{
    return int(SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                        const_cast<char *>(name)));
}

} // namespace airlock::gateway

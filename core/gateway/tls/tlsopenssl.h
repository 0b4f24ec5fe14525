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

} // namespace airlock::gateway

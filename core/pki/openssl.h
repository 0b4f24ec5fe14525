#pragma once

#include "core/model/error.h"

#include <QString>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace airlock::pki {

/// RAII owners for the OpenSSL 3 objects the sandbox CA and the gateway's TLS code hold. Each frees
/// with the matching *_free function; none of them is ever shared without an explicit *_up_ref.
template<typename T, void (*Free)(T *)>
struct OpenSslDeleter
{
    void operator()(T *p) const { Free(p); }
};

namespace detail {
inline void freeBio(BIO *bio)
{
    BIO_free_all(bio);
}
inline void freeGeneralNames(GENERAL_NAMES *names)
{
    GENERAL_NAMES_free(names);
}
inline void freeExtendedKeyUsage(EXTENDED_KEY_USAGE *eku)
{
    sk_ASN1_OBJECT_pop_free(eku, ASN1_OBJECT_free);
}
} // namespace detail

using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509, X509_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY, EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO, detail::freeBio>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpenSslDeleter<BIGNUM, BN_free>>;
using X509ExtensionPtr =
    std::unique_ptr<X509_EXTENSION, OpenSslDeleter<X509_EXTENSION, X509_EXTENSION_free>>;
using X509StorePtr = std::unique_ptr<X509_STORE, OpenSslDeleter<X509_STORE, X509_STORE_free>>;
using X509StoreCtxPtr =
    std::unique_ptr<X509_STORE_CTX, OpenSslDeleter<X509_STORE_CTX, X509_STORE_CTX_free>>;
using GeneralNamesPtr =
    std::unique_ptr<GENERAL_NAMES, OpenSslDeleter<GENERAL_NAMES, detail::freeGeneralNames>>;
using ExtendedKeyUsagePtr =
    std::unique_ptr<EXTENDED_KEY_USAGE,
                    OpenSslDeleter<EXTENDED_KEY_USAGE, detail::freeExtendedKeyUsage>>;
using BasicConstraintsPtr =
    std::unique_ptr<BASIC_CONSTRAINTS, OpenSslDeleter<BASIC_CONSTRAINTS, BASIC_CONSTRAINTS_free>>;
using NameConstraintsPtr =
    std::unique_ptr<NAME_CONSTRAINTS, OpenSslDeleter<NAME_CONSTRAINTS, NAME_CONSTRAINTS_free>>;

/// Drains OpenSSL's thread-local error queue into one line ("error:...; error:..."), or
/// "no OpenSSL error" when the queue is empty. Never contains key material.
QString takeOpenSslErrors();

/// OperationFailed "<what>: <takeOpenSslErrors()>".
std::unexpected<Error> failOpenSsl(const QString &what);

/// A certificate as PEM text (RFC 7468 "CERTIFICATE"); empty on failure.
QByteArray certificateToPem(X509 *certificate);

/// Parses one PEM certificate; OperationFailed when `pem` holds none.
Result<X509Ptr> certificateFromPem(const QByteArray &pem);

} // namespace airlock::pki

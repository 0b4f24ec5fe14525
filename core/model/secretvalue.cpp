#include "core/model/secretvalue.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace airlock {

namespace {

std::size_t pageRounded(std::size_t bytes)
{
    const auto page = std::size_t(::sysconf(_SC_PAGESIZE));
    return (bytes + page - 1) / page * page;
}

} // namespace

SecretValue::SecretValue(QByteArrayView bytes)
{
    allocateBuffer(bytes.size());
    if (m_data)
        std::memcpy(m_data, bytes.data(), std::size_t(bytes.size()));
}

SecretValue SecretValue::allocate(qsizetype size)
{
    SecretValue value;
    value.allocateBuffer(size);
    return value;
}

void SecretValue::allocateBuffer(qsizetype size)
{
    if (size <= 0)
        return;
    // An anonymous mapping of its own, so locking and MADV_DONTDUMP cover only secret bytes.
    // Fresh anonymous pages are zero-filled.
    m_mapped = pageRounded(std::size_t(size));
    void *memory =
        ::mmap(nullptr, m_mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) {
        m_mapped = 0;
        throw std::bad_alloc();
    }
    m_data = static_cast<char *>(memory);
    m_locked = ::mlock(m_data, m_mapped) == 0;
    ::madvise(m_data, m_mapped, MADV_DONTDUMP);
    m_size = size;
}

SecretValue::SecretValue(SecretValue &&other) noexcept
    : m_data(std::exchange(other.m_data, nullptr))
    , m_size(std::exchange(other.m_size, 0))
    , m_mapped(std::exchange(other.m_mapped, 0))
    , m_locked(std::exchange(other.m_locked, false))
{ }

SecretValue &SecretValue::operator=(SecretValue &&other) noexcept
{
    if (this != &other) {
        release();
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
        m_mapped = std::exchange(other.m_mapped, 0);
        m_locked = std::exchange(other.m_locked, false);
    }
    return *this;
}

SecretValue::~SecretValue()
{
    release();
}

void SecretValue::release()
{
    if (!m_data)
        return;
    OPENSSL_cleanse(m_data, m_mapped);
    if (m_locked)
        ::munlock(m_data, m_mapped);
    ::munmap(m_data, m_mapped);
    m_data = nullptr;
    m_size = 0;
    m_mapped = 0;
    m_locked = false;
}

bool SecretValue::equals(QByteArrayView other) const
{
    if (other.size() != m_size)
        return false;
    return m_size == 0 || CRYPTO_memcmp(m_data, other.data(), std::size_t(m_size)) == 0;
}

QString SecretValue::fingerprint(QByteArrayView key) const
{
    if (m_size == 0 || key.isEmpty())
        return {};
    EVP_MAC *mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    EVP_MAC_CTX *context = mac ? EVP_MAC_CTX_new(mac) : nullptr;
    char digestName[] = "SHA256";
    const OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digestName, 0),
        OSSL_PARAM_construct_end()};
    unsigned char digest[EVP_MAX_MD_SIZE];
    std::size_t length = 0;
    const bool ok = context
        && EVP_MAC_init(context, reinterpret_cast<const unsigned char *>(key.data()),
                        std::size_t(key.size()), params)
            == 1
        && EVP_MAC_update(context, reinterpret_cast<const unsigned char *>(m_data),
                          std::size_t(m_size))
            == 1
        && EVP_MAC_final(context, digest, &length, sizeof digest) == 1 && length >= 8;
    EVP_MAC_CTX_free(context);
    EVP_MAC_free(mac);
    if (!ok)
        return {};
    return QString::fromLatin1(QByteArray(reinterpret_cast<const char *>(digest), 8).toHex());
}

SecretValue SecretValue::fingerprintKey(QByteArrayView vaultKey)
{
    SecretValue key = allocate(32);
    EVP_KDF *kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
    EVP_KDF_CTX *context = kdf ? EVP_KDF_CTX_new(kdf) : nullptr;
    char digestName[] = "SHA256";
    char info[] = "airlock vault fingerprint v1";
    const OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digestName, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char *>(vaultKey.data()),
                                          std::size_t(vaultKey.size())),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, sizeof info - 1),
        OSSL_PARAM_construct_end()};
    const bool ok = context && !vaultKey.isEmpty()
        && EVP_KDF_derive(context, reinterpret_cast<unsigned char *>(key.writableBytes()),
                          std::size_t(key.size()), params)
            == 1;
    EVP_KDF_CTX_free(context);
    EVP_KDF_free(kdf);
    return ok ? std::move(key) : SecretValue();
}

} // namespace airlock

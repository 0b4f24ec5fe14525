#pragma once

#include <QByteArrayView>
#include <QString>

#include <cstddef>

class QDebug;

namespace airlock {

/// The bytes of one secret (an API token, a password). Built so that a value cannot reach a
/// log, an event or a reply by accident (issue 4, docs/redteam-cases.md I4):
///  - no conversion to QString/QByteArray, no QDebug or std::format support (the QDebug
///    operator is deleted, so `qDebug() << secret` does not compile);
///  - move-only: no silent copies that outlive their use;
///  - the buffer is its own allocation, locked in RAM with mlock(2) where the process's
///    RLIMIT_MEMLOCK allows (locked() tells), excluded from core dumps (MADV_DONTDUMP), and
///    zeroed with OPENSSL_cleanse when the value is destroyed or moved from.
/// The only way to the bytes is reveal(), named so that every use stands out in review.
class SecretValue final
{
public:
    /// Longest accepted secret: 64 KiB (tokens, keys and passwords are far shorter).
    static constexpr qsizetype kMaxBytes = 64 * 1024;

    SecretValue() = default;
    /// Copies `bytes` into a new locked buffer. The caller wipes its own copy.
    explicit SecretValue(QByteArrayView bytes);
    /// A zero-filled value of `size` bytes to be filled in place through
    /// writableBytes(), e.g. straight from a socket, so the bytes never pass through an
    /// unlocked buffer on their way in (the gateway's credentials payload, docs/gateway.md).
    static SecretValue allocate(qsizetype size);
    SecretValue(SecretValue &&other) noexcept;
    SecretValue &operator=(SecretValue &&other) noexcept;
    SecretValue(const SecretValue &) = delete;
    SecretValue &operator=(const SecretValue &) = delete;
    ~SecretValue();

    /// The secret bytes; valid while this object lives and is not moved from.
    QByteArrayView reveal() const { return {m_data, m_size}; }
    /// The buffer of a value made by allocate(), for filling it; size() bytes.
    char *writableBytes() { return m_data; }
    qsizetype size() const { return m_size; }
    bool isEmpty() const { return m_size == 0; }
    /// True when the buffer is locked in RAM (mlock succeeded).
    bool locked() const { return m_locked; }
    /// A deliberate copy (into another locked buffer), for handing a value to a second owner.
    SecretValue clone() const { return SecretValue(reveal()); }
    /// Constant-time comparison (CRYPTO_memcmp) with `other`'s bytes.
    bool equals(QByteArrayView other) const;
    /// The first 16 hex digits of HMAC-SHA256(`key`, value) (RFC 2104, OpenSSL EVP_MAC): enough
    /// to tell secrets apart in a list; without the key it allows no offline guessing of a
    /// low-entropy value (docs/reviews/2026-12-01-credentials-redteam.md#f10). SecretVault passes a
    /// key derived from the vault key (fingerprintKey()). Empty for an empty value or key.
    QString fingerprint(QByteArrayView key) const;
    /// HKDF-SHA256 (RFC 5869, OpenSSL EVP_KDF) of `vaultKey` with info
    /// "airlock vault fingerprint v1": the fingerprint key, independent of the encryption key.
    /// Empty when OpenSSL fails.
    static SecretValue fingerprintKey(QByteArrayView vaultKey);

private:
    void allocateBuffer(qsizetype size);
    void release();

    char *m_data = nullptr;
    qsizetype m_size = 0;
    std::size_t m_mapped = 0; ///< bytes mapped (whole pages), 0 when nothing is allocated
    bool m_locked = false;
};

QDebug operator<<(QDebug debug, const SecretValue &value) = delete;

} // namespace airlock

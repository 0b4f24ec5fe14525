#pragma once

#include "core/model/error.h"
#include "core/pki/openssl.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QString>

#include <list>
#include <memory>

namespace airlock::pki {

/// A certificate and its private key, minted by SandboxCa for one canonical name.
struct TlsLeaf
{
    QString name; ///< canonical (canonicalizeHostname); the only SAN dNSName
    X509Ptr certificate;
    EvpPkeyPtr key; ///< EC P-256, generated for this leaf only
    QDateTime notAfter; ///< UTC
};

/// The per-sandbox certificate authority the gateway uses to terminate the guest's TLS
/// (docs/tls.md). Its key never leaves the host: only certificatePem() is exported, for the
/// guest's trust store; save() writes the key to a 0600 file for the helper alone.
///
/// The CA certificate (RFC 5280): X.509 v3, EC P-256 key, ECDSA-SHA256 signature, random
/// positive 128-bit serial, subject and issuer "CN=Airlock sandbox CA <label>, O=Airlock",
/// valid from one hour ago for 365 days; extensions basicConstraints CA:TRUE, pathlen:0
/// (critical), keyUsage keyCertSign|cRLSign (critical), nameConstraints (critical) excluding
/// every IPv4 and IPv6 address (so no certificate it signs is valid for an IP literal,
/// docs/redteam-cases.md A4), subjectKeyIdentifier. DNS names are not constrained: the allowlist
/// changes while the sandbox runs (policy.set) but the CA is fixed at boot; the gateway mints
/// leaves only for names the policy allows at ClientHello time.
///
/// Leaves (mintLeaf): fresh EC P-256 key, subject "O=Airlock sandbox", SAN exactly one dNSName
/// (the canonical name), basicConstraints CA:FALSE (critical), keyUsage digitalSignature
/// (critical), extendedKeyUsage serverAuth, SKI/AKI, validity from one hour ago for at most 7
/// days total and never past the CA's notAfter. Leaves are cached per name in an LRU of
/// leafCacheCapacity() entries; a cached leaf with less than one day left is minted again.
/// Not thread-safe: one gateway event loop owns it.
class SandboxCa final
{
public:
    static constexpr qsizetype kDefaultLeafCacheCapacity = 256;
    static constexpr qint64 kCaValidityDays = 365;
    static constexpr qint64 kLeafValidityDays = 7;
    static constexpr qint64 kBackdateSeconds = 3600;
    static constexpr qint64 kLeafRefreshSeconds = 24 * 3600;

    /// Generates a new CA. `label` (e.g. the sandbox name) goes into the subject CN; 1..40
    /// printable ASCII characters, else InvalidParams. OpenSSL failures are OperationFailed.
    static Result<SandboxCa> generate(const QString &label);

    /// Reads a CA written by save(). Errors: NotFound (a file is missing), PermissionDenied
    /// (the key file is not a regular file, is a symlink, or is readable or writable by group
    /// or others), OperationFailed (not PEM, key does not match the certificate, or the
    /// certificate is not a CA).
    static Result<SandboxCa> load(const QString &certificatePath, const QString &keyPath);

    /// Builds the CA from PEM text as airlockd hands it to the gateway over its control channel
    /// (docs/gateway.md): one certificate and its private key (PKCS#8 or traditional PEM).
    /// OperationFailed when either does not parse, the key does not match, or the certificate
    /// is not a CA. The caller should cleanse `keyPem` afterwards.
    static Result<SandboxCa> fromPem(const QByteArray &certificatePem, const QByteArray &keyPem);

    /// Writes the certificate (PEM, mode 0644) and the private key (PKCS#8 PEM, unencrypted,
    /// mode 0600) atomically (temporary file, fsync, rename). The key file is created 0600
    /// from the start, never widened. OperationFailed on I/O errors.
    Result<void> save(const QString &certificatePath, const QString &keyPath) const;

    /// The CA certificate as PEM: what the guest's trust store receives. No key material.
    QByteArray certificatePem() const;
    /// The CA certificate (owned by this object).
    X509 *certificate() const { return m_certificate.get(); }
    /// SHA-256 fingerprint of the CA certificate's DER, lower-case hex.
    QString fingerprint() const;

    /// A leaf for `name`, from the cache or freshly minted. `name` goes through
    /// canonicalizeHostname first ("Pkg.TEST." and "pkg.test" share one leaf); names it rejects
    /// (IP literals, '*', '_', ...) are InvalidParams "<reason>: <detail>" and nothing is
    /// signed. OpenSSL failures are OperationFailed.
    Result<std::shared_ptr<const TlsLeaf>> mintLeaf(QStringView name);

    qsizetype leafCacheCapacity() const { return m_capacity; }
    /// Sets the LRU bound (at least 1), evicting the least recently used leaves.
    void setLeafCacheCapacity(qsizetype capacity);
    qsizetype cachedLeafCount() const { return m_lru.size(); }

    SandboxCa(SandboxCa &&) noexcept = default;
    SandboxCa &operator=(SandboxCa &&) noexcept = default;

private:
    SandboxCa(X509Ptr certificate, EvpPkeyPtr key);

    Result<std::shared_ptr<const TlsLeaf>> mint(const QString &name) const;
    void evict();

    using Lru = std::list<std::shared_ptr<const TlsLeaf>>;

    X509Ptr m_certificate;
    EvpPkeyPtr m_key;
    qsizetype m_capacity = kDefaultLeafCacheCapacity;
    Lru m_lru; ///< most recently used first
    QHash<QString, Lru::iterator> m_index;
};

} // namespace airlock::pki

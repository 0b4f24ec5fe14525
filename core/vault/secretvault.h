#pragma once

#include "core/model/error.h"
#include "core/model/secretvalue.h"

#include <QDateTime>
#include <QList>
#include <QString>

namespace airlock::vault {

/// What anyone may know about a stored secret: never the value.
struct SecretInfo
{
    QString name; ///< [a-z0-9][a-z0-9-]{0,62}
    QDateTime created; ///< UTC, first set()
    QDateTime updated; ///< UTC, last set()
    /// SecretValue::fingerprint() with the vault's fingerprint key: 16 hex digits of an
    /// HMAC-SHA256, stable for one vault key, meaningless without it.
    QString fingerprint;
    /// Empty for a healthy entry; otherwise why the file cannot be used (tampered, truncated,
    /// wrong key), naming the file. Such entries are listed so a person sees them.
    QString problem;
};

/// The helper's encrypted secret store (issue 4, "Vault"). One file per secret,
/// `<directory>/<name>.secret`, so a damaged file costs one secret and every write is one
/// atomic rename:
///
///     "ALVAULT1" (8 bytes) | nonce (12 bytes) | ciphertext | GCM tag (16 bytes)
///
/// AES-256-GCM (NIST SP 800-38D) through OpenSSL EVP with a fresh random 96-bit nonce per write;
/// the additional authenticated data is the magic and the secret's name, so a file renamed to
/// another secret's name fails authentication. The plaintext is created and updated times
/// (milliseconds since the epoch, big-endian int64 each) followed by the value.
///
/// The 256-bit key lives in its own root-only file (mode 0600, created with RAND_priv_bytes at
/// first open). A missing key while secret files exist is an error, never a silent new key:
/// that would make every stored secret unreadable. A tampered or truncated file, or a wrong key,
/// is an OperationFailed error naming the file; nothing is overwritten (set() refuses to
/// replace a file it cannot authenticate; remove() still deletes it).
///
/// Write-only towards clients: the RPC layer exposes set/remove/list; read() exists for the
/// helper alone, to hand a gateway the values its bindings need. Not thread-safe.
class SecretVault final
{
public:
    static constexpr qsizetype kKeyBytes = 32;
    static constexpr qsizetype kNonceBytes = 12;
    static constexpr qsizetype kTagBytes = 16;
    /// Shortest value accepted: shorter ones are guessable and too likely to occur by chance in
    /// traffic the gateway scans for them (credentialForms).
    static constexpr qsizetype kMinValueBytes = 8;

    /// Opens (creating with mode 0700 if missing) `directory` and loads the key at `keyPath`,
    /// creating it when neither key nor secrets exist. Errors: PermissionDenied (key file mode,
    /// symlink), OperationFailed (wrong key size, I/O, key missing while secrets exist).
    static Result<SecretVault> open(const QString &directory, const QString &keyPath);

    /// Creates or replaces `name` with `value` (kMinValueBytes..SecretValue::kMaxBytes bytes,
    /// no control characters but tab, no space or tab first or last: values go into header
    /// fields, whose optional whitespace servers strip). Errors: InvalidName,
    /// InvalidParams (length, control characters, leading/trailing whitespace), OperationFailed
    /// (I/O, or an existing file that does not authenticate: it is left as it is).
    Result<SecretInfo> set(const QString &name, const SecretValue &value,
                           const QDateTime &now = QDateTime::currentDateTimeUtc());
    /// Deletes `name`. Errors: InvalidName, NotFound, OperationFailed.
    Result<void> remove(const QString &name);
    /// Every secret, sorted by name; damaged files are listed with `problem` set.
    /// Errors: OperationFailed when the directory cannot be read.
    Result<QList<SecretInfo>> list() const;
    /// The metadata of one secret. Errors: InvalidName, NotFound, OperationFailed (damaged).
    Result<SecretInfo> info(const QString &name) const;
    /// Whether `name` has a file, healthy or damaged (what remove() would delete).
    /// Errors: InvalidName.
    Result<bool> contains(const QString &name) const;
    /// The value of `name`, for the helper's own use (gateway configuration). Errors as info().
    Result<SecretValue> read(const QString &name) const;

    /// Path of the file that holds `name` (valid names only).
    QString pathOf(const QString &name) const;
    const QString &directory() const { return m_directory; }

private:
    struct Decoded;
    SecretVault(QString directory, SecretValue key);
    Result<Decoded> decode(const QString &name) const;

    QString m_directory;
    SecretValue m_key;
    SecretValue m_fingerprintKey; ///< SecretValue::fingerprintKey(m_key)
};

} // namespace airlock::vault

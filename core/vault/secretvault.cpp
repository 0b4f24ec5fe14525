#include "core/vault/secretvault.h"

#include "core/io/privatefile.h"
#include "core/model/names.h"

#include <QDir>
#include <QFile>
#include <QtEndian>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::vault {

namespace {

constexpr char kMagic[] = "ALVAULT1";
constexpr qsizetype kMagicBytes = 8;
constexpr qsizetype kTimesBytes = 16;
constexpr QLatin1StringView kSuffix(".secret");
// Header, nonce, two times, at most kMaxBytes of value, tag.
constexpr qint64 kMaxFileBytes = kMagicBytes + SecretVault::kNonceBytes + kTimesBytes
    + SecretValue::kMaxBytes + SecretVault::kTagBytes;

using CipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

// Wipes a QByteArray's bytes when it goes out of scope (plaintexts and key material).
struct Wiper
{
    QByteArray &bytes;
    ~Wiper() { OPENSSL_cleanse(bytes.data(), std::size_t(bytes.size())); }
};

QByteArray associatedData(const QString &name)
{
    return QByteArray(kMagic, kMagicBytes) + name.toUtf8();
}

std::unexpected<Error> damaged(const QString &path, const QString &why)
{
    return fail(ErrorKind::OperationFailed, QStringLiteral("vault file %1 %2").arg(path, why));
}

qint64 readInt64(const char *data)
{
    return qFromBigEndian<qint64>(data);
}

} // namespace

struct SecretVault::Decoded
{
    SecretInfo info;
    SecretValue value;
};

SecretVault::SecretVault(QString directory, SecretValue key)
    : m_directory(std::move(directory))
    , m_key(std::move(key))
    , m_fingerprintKey(SecretValue::fingerprintKey(m_key.reveal()))
{ }

Result<SecretVault> SecretVault::open(const QString &directory, const QString &keyPath)
{
    QDir dir(directory);
    if (!dir.exists() && !QDir().mkpath(directory))
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot create the vault directory %1").arg(directory));
    if (::chmod(QFile::encodeName(directory).constData(), 0700) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot restrict %1 to mode 0700: %2")
                        .arg(directory, QString::fromLocal8Bit(std::strerror(errno))));

    auto keyBytes = io::readPrivateFile(keyPath, kKeyBytes + 1, u"vault key");
    if (!keyBytes && keyBytes.error().kind == ErrorKind::NotFound) {
        const QStringList existing =
            dir.entryList({QStringLiteral("*") + kSuffix}, QDir::Files | QDir::System);
        if (!existing.isEmpty())
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("vault key %1 is missing but %2 holds %3 secret(s); "
                                       "restore the key or delete those files")
                            .arg(keyPath, directory)
                            .arg(existing.size()));
        QByteArray fresh(kKeyBytes, Qt::Uninitialized);
        Wiper wipeFresh {fresh};
        if (RAND_priv_bytes(reinterpret_cast<unsigned char *>(fresh.data()), int(kKeyBytes)) != 1)
            return fail(ErrorKind::OperationFailed,
                        QStringLiteral("the random generator could not make a vault key"));
        AIRLOCK_TRY(io::writeFileAtomically(keyPath, fresh, 0600));
        return SecretVault(directory, SecretValue(fresh));
    }
    AIRLOCK_TRY(keyBytes);
    Wiper wipeKey {*keyBytes};
    if (keyBytes->size() != kKeyBytes)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("vault key %1 must hold exactly %2 bytes, it holds %3")
                        .arg(keyPath)
                        .arg(kKeyBytes)
                        .arg(keyBytes->size()));
    return SecretVault(directory, SecretValue(*keyBytes));
}

QString SecretVault::pathOf(const QString &name) const
{
    return m_directory + u'/' + name + kSuffix;
}

Result<SecretInfo> SecretVault::set(const QString &name, const SecretValue &value,
                                    const QDateTime &now)
{
    AIRLOCK_TRY(validateName(name, u"secret name"));
    if (value.size() < kMinValueBytes || value.size() > SecretValue::kMaxBytes)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("a secret value must hold %1 to %2 bytes")
                        .arg(kMinValueBytes)
                        .arg(SecretValue::kMaxBytes));
    // The gateway writes values into header fields (RFC 9110 §5.5): CR, LF, NUL or another
    // control character there would end the field, or the request, early.
    const QByteArrayView bytes = value.reveal();
    if (std::any_of(bytes.begin(), bytes.end(), [](char c) {
            const auto u = static_cast<unsigned char>(c);
            return (u < 0x20 && u != '\t') || u == 0x7f;
        }))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("a secret value may not contain control characters (CR, LF, "
                                   "NUL, ...): it is sent in an HTTP header field"));
    // Upstreams strip optional whitespace around a field value (RFC 9110 §5.5), so the secret
    // they check would be the trimmed one, which no scrub form matches
    // (docs/reviews/2026-12-01-credentials-redteam.md#f4). Refused rather than trimmed: the user
    // sees what is stored.
    const auto isOws = [](char c) { return c == ' ' || c == '\t'; };
    if (isOws(bytes.front()) || isOws(bytes.back()))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("a secret value may not begin or end with a space or tab: "
                                   "servers strip them from header fields (copied with a "
                                   "trailing space or newline?)"));

    QDateTime created = now.toUTC();
    if (QFile::exists(pathOf(name)) || QFileInfo(pathOf(name)).isSymLink()) {
        auto existing = decode(name);
        if (!existing)
            return std::unexpected(existing.error()); // never overwrite what we cannot read
        created = existing->info.created;
    }

    QByteArray plaintext(kTimesBytes + value.size(), Qt::Uninitialized);
    Wiper wipePlaintext {plaintext};
    qToBigEndian<qint64>(created.toMSecsSinceEpoch(), plaintext.data());
    qToBigEndian<qint64>(now.toMSecsSinceEpoch(), plaintext.data() + 8);
    std::memcpy(plaintext.data() + kTimesBytes, value.reveal().data(), std::size_t(value.size()));

    QByteArray file(kMagicBytes + kNonceBytes + plaintext.size() + kTagBytes, Qt::Uninitialized);
    std::memcpy(file.data(), kMagic, kMagicBytes);
    auto *nonce = reinterpret_cast<unsigned char *>(file.data() + kMagicBytes);
    auto *ciphertext = nonce + kNonceBytes;
    auto *tag = ciphertext + plaintext.size();
    const QByteArray aad = associatedData(name);
    CipherCtxPtr ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
    int length = 0;
    int finalLength = 0;
    if (RAND_bytes(nonce, int(kNonceBytes)) != 1 || !ctx
        || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1
        || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, int(kNonceBytes), nullptr) != 1
        || EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr,
                              reinterpret_cast<const unsigned char *>(m_key.reveal().data()), nonce)
            != 1
        || EVP_EncryptUpdate(ctx.get(), nullptr, &length,
                             reinterpret_cast<const unsigned char *>(aad.constData()),
                             int(aad.size()))
            != 1
        || EVP_EncryptUpdate(ctx.get(), ciphertext, &length,
                             reinterpret_cast<const unsigned char *>(plaintext.constData()),
                             int(plaintext.size()))
            != 1
        || EVP_EncryptFinal_ex(ctx.get(), ciphertext + length, &finalLength) != 1
        || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, int(kTagBytes), tag) != 1)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("AES-256-GCM encryption of secret %1 failed").arg(name));
    AIRLOCK_TRY(io::writeFileAtomically(pathOf(name), file, 0600));
    return SecretInfo {
        name, created, now.toUTC(), value.fingerprint(m_fingerprintKey.reveal()), {}};
}

Result<void> SecretVault::remove(const QString &name)
{
    AIRLOCK_TRY(validateName(name, u"secret name"));
    const QByteArray path = QFile::encodeName(pathOf(name));
    if (::unlink(path.constData()) != 0) {
        if (errno == ENOENT)
            return fail(ErrorKind::NotFound, QStringLiteral("no secret named %1").arg(name));
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot delete %1: %2")
                        .arg(pathOf(name), QString::fromLocal8Bit(std::strerror(errno))));
    }
    return {};
}

Result<SecretVault::Decoded> SecretVault::decode(const QString &name) const
{
    AIRLOCK_TRY(validateName(name, u"secret name"));
    const QString path = pathOf(name);
    auto file = io::readPrivateFile(path, kMaxFileBytes, u"vault file");
    if (!file) {
        if (file.error().kind == ErrorKind::NotFound)
            return fail(ErrorKind::NotFound, QStringLiteral("no secret named %1").arg(name));
        return std::unexpected(file.error());
    }
    const qsizetype minimum = kMagicBytes + kNonceBytes + kTimesBytes + 1 + kTagBytes;
    if (file->size() < minimum)
        return damaged(path, QStringLiteral("is truncated (%1 bytes)").arg(file->size()));
    if (std::memcmp(file->constData(), kMagic, kMagicBytes) != 0)
        return damaged(path, QStringLiteral("is not an Airlock vault file (bad magic)"));

    const auto *nonce = reinterpret_cast<const unsigned char *>(file->constData() + kMagicBytes);
    const auto *ciphertext = nonce + kNonceBytes;
    const qsizetype ciphertextBytes = file->size() - kMagicBytes - kNonceBytes - kTagBytes;
    QByteArray tag = file->right(kTagBytes);
    QByteArray plaintext(ciphertextBytes, Qt::Uninitialized);
    Wiper wipePlaintext {plaintext};
    const QByteArray aad = associatedData(name);
    CipherCtxPtr ctx(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
    int length = 0;
    int finalLength = 0;
    const bool authentic = ctx
        && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1
        && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, int(kNonceBytes), nullptr) == 1
        && EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr,
                              reinterpret_cast<const unsigned char *>(m_key.reveal().data()), nonce)
            == 1
        && EVP_DecryptUpdate(ctx.get(), nullptr, &length,
                             reinterpret_cast<const unsigned char *>(aad.constData()),
                             int(aad.size()))
            == 1
        && EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char *>(plaintext.data()),
                             &length, ciphertext, int(ciphertextBytes))
            == 1
        && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, int(kTagBytes), tag.data()) == 1
        && EVP_DecryptFinal_ex(ctx.get(),
                               reinterpret_cast<unsigned char *>(plaintext.data()) + length,
                               &finalLength)
            == 1;
    if (!authentic)
        return damaged(path,
                       QStringLiteral("does not authenticate: it was changed or truncated, "
                                      "or the vault key is not the one it was written "
                                      "with"));
    Decoded decoded;
    decoded.info.name = name;
    decoded.info.created =
        QDateTime::fromMSecsSinceEpoch(readInt64(plaintext.constData()), Qt::UTC);
    decoded.info.updated =
        QDateTime::fromMSecsSinceEpoch(readInt64(plaintext.constData() + 8), Qt::UTC);
    decoded.value = SecretValue(QByteArrayView(plaintext).sliced(kTimesBytes));
    decoded.info.fingerprint = decoded.value.fingerprint(m_fingerprintKey.reveal());
    return decoded;
}

Result<SecretInfo> SecretVault::info(const QString &name) const
{
    auto decoded = decode(name);
    AIRLOCK_TRY(decoded);
    return std::move(decoded->info);
}

Result<bool> SecretVault::contains(const QString &name) const
{
    AIRLOCK_TRY(validateName(name, u"secret name"));
    struct stat status
    {
    };
    return ::lstat(QFile::encodeName(pathOf(name)).constData(), &status) == 0;
}

Result<SecretValue> SecretVault::read(const QString &name) const
{
    auto decoded = decode(name);
    AIRLOCK_TRY(decoded);
    return std::move(decoded->value);
}

Result<QList<SecretInfo>> SecretVault::list() const
{
    QDir dir(m_directory);
    if (!dir.exists())
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("the vault directory %1 is missing").arg(m_directory));
    QList<SecretInfo> secrets;
    const QStringList files =
        dir.entryList({QStringLiteral("*") + kSuffix}, QDir::Files | QDir::System, QDir::Name);
    for (const QString &file : files) {
        const QString name = file.chopped(kSuffix.size());
        if (!validateName(name, u"secret name"))
            continue; // not ours: never created by set()
        auto decoded = decode(name);
        if (decoded)
            secrets.append(std::move(decoded->info));
        else
            secrets.append(SecretInfo {name, {}, {}, {}, decoded.error().message});
    }
    return secrets;
}

} // namespace airlock::vault

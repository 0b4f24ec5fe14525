#include "core/pki/sandboxca.h"

#include "core/io/privatefile.h"
#include "core/model/hostname.h"

#include <QFile>

#include <algorithm>

#include <openssl/crypto.h>
#include <openssl/pem.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::pki {

namespace {

constexpr qint64 kMaxPemBytes = 64 * 1024;

Result<EvpPkeyPtr> generateP256Key()
{
    EvpPkeyPtr key(EVP_EC_gen("P-256"));
    if (!key)
        return failOpenSsl(QStringLiteral("EC P-256 key generation"));
    return key;
}

// A random positive serial of up to 128 bits (RFC 5280 §4.1.2.2: positive, at most 20 octets).
Result<void> setRandomSerial(X509 *certificate)
{
    BignumPtr serial(BN_new());
    if (!serial)
        return failOpenSsl(QStringLiteral("BN_new"));
    do {
        if (BN_rand(serial.get(), 128, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1)
            return failOpenSsl(QStringLiteral("random serial"));
    } while (BN_is_zero(serial.get()));
    if (!BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate)))
        return failOpenSsl(QStringLiteral("serial encoding"));
    return {};
}

// An empty X.509 v3 certificate with a fresh random serial: the start of every certificate here.
Result<X509Ptr> newCertificate()
{
    X509Ptr certificate(X509_new());
    if (!certificate || X509_set_version(certificate.get(), X509_VERSION_3) != 1)
        return failOpenSsl(QStringLiteral("X509_new"));
    AIRLOCK_TRY(setRandomSerial(certificate.get()));
    return certificate;
}

Result<void> addExtension(X509 *certificate, X509V3_CTX *ctx, int nid, const char *value)
{
    X509ExtensionPtr extension(X509V3_EXT_nconf_nid(nullptr, ctx, nid, value));
    if (!extension || X509_add_ext(certificate, extension.get(), -1) != 1)
        return failOpenSsl(
            QStringLiteral("extension %1").arg(QString::fromLatin1(OBJ_nid2sn(nid))));
    return {};
}

Result<void> addNameEntry(X509_NAME *name, const char *field, const QString &value)
{
    const QByteArray utf8 = value.toUtf8();
    if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char *>(utf8.constData()),
                                   int(utf8.size()), -1, 0)
        != 1)
        return failOpenSsl(QStringLiteral("subject %1").arg(QString::fromLatin1(field)));
    return {};
}

QDateTime asn1TimeToDateTime(const ASN1_TIME *time)
{
    struct tm parts = {};
    if (ASN1_TIME_to_tm(time, &parts) != 1)
        return {};
    return QDateTime(QDate(parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday),
                     QTime(parts.tm_hour, parts.tm_min, parts.tm_sec), Qt::UTC);
}

} // namespace

SandboxCa::SandboxCa(X509Ptr certificate, EvpPkeyPtr key)
    : m_certificate(std::move(certificate)), m_key(std::move(key))
{ }

Result<SandboxCa> SandboxCa::generate(const QString &label)
{
    if (label.isEmpty() || label.size() > 40
        || std::any_of(label.cbegin(), label.cend(),
                       [](QChar c) { return c.unicode() < 0x20 || c.unicode() > 0x7e; }))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("CA label must be 1..40 printable ASCII characters"));
    auto key = generateP256Key();
    AIRLOCK_TRY(key);

    auto created = newCertificate();
    AIRLOCK_TRY(created);
    X509Ptr certificate = std::move(*created);
    X509_NAME *subject = X509_get_subject_name(certificate.get());
    AIRLOCK_TRY(addNameEntry(subject, "O", QStringLiteral("Airlock")));
    AIRLOCK_TRY(addNameEntry(subject, "CN", QStringLiteral("Airlock sandbox CA ") + label));
    if (X509_set_issuer_name(certificate.get(), subject) != 1
        || !X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -kBackdateSeconds)
        || !X509_time_adj_ex(X509_getm_notAfter(certificate.get()), int(kCaValidityDays),
                             -kBackdateSeconds, nullptr)
        || X509_set_pubkey(certificate.get(), key->get()) != 1)
        return failOpenSsl(QStringLiteral("CA certificate fields"));

    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, certificate.get(), certificate.get(), nullptr, nullptr, 0);
    for (const auto &[nid, value] : {
             std::pair {NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
             std::pair {NID_key_usage, "critical,keyCertSign,cRLSign"},
             std::pair {NID_name_constraints,
                        "critical,excluded;IP:0.0.0.0/0.0.0.0,excluded;IP:::/::"},
             std::pair {NID_subject_key_identifier, "hash"},
         }) {
        AIRLOCK_TRY(addExtension(certificate.get(), &ctx, nid, value));
    }
    if (X509_sign(certificate.get(), key->get(), EVP_sha256()) <= 0)
        return failOpenSsl(QStringLiteral("CA self-signature"));
    return SandboxCa(std::move(certificate), std::move(*key));
}

Result<SandboxCa> SandboxCa::load(const QString &certificatePath, const QString &keyPath)
{
    auto certificatePem = io::readSmallFile(certificatePath, kMaxPemBytes, u"CA certificate");
    AIRLOCK_TRY(certificatePem);
    auto certificate = certificateFromPem(*certificatePem);
    AIRLOCK_TRY(certificate);

    auto pem = io::readPrivateFile(keyPath, kMaxPemBytes, u"CA key");
    AIRLOCK_TRY(pem);
    BioPtr bio(BIO_new_mem_buf(pem->constData(), int(pem->size())));
    EvpPkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    OPENSSL_cleanse(pem->data(), size_t(pem->size()));
    if (!key)
        return failOpenSsl(QStringLiteral("no PEM private key in %1").arg(keyPath));
    if (X509_check_private_key(certificate->get(), key.get()) != 1)
        return failOpenSsl(
            QStringLiteral("CA key %1 does not match %2").arg(keyPath, certificatePath));
    if (X509_check_ca(certificate->get()) < 1)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("%1 is not a CA certificate").arg(certificatePath));
    return SandboxCa(std::move(*certificate), std::move(key));
}

Result<SandboxCa> SandboxCa::fromPem(const QByteArray &certificatePem, const QByteArray &keyPem)
{
    auto certificate = certificateFromPem(certificatePem);
    AIRLOCK_TRY(certificate);
    BioPtr bio(BIO_new_mem_buf(keyPem.constData(), int(keyPem.size())));
    EvpPkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!key)
        return failOpenSsl(QStringLiteral("no PEM private key in the CA key text"));
    if (X509_check_private_key(certificate->get(), key.get()) != 1)
        return failOpenSsl(QStringLiteral("the CA key does not match the CA certificate"));
    if (X509_check_ca(certificate->get()) < 1)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("the CA certificate is not a CA certificate"));
    return SandboxCa(std::move(*certificate), std::move(key));
}

Result<void> SandboxCa::save(const QString &certificatePath, const QString &keyPath) const
{
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio
        || PEM_write_bio_PrivateKey(bio.get(), m_key.get(), nullptr, nullptr, 0, nullptr, nullptr)
            != 1)
        return failOpenSsl(QStringLiteral("encoding the CA key"));
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    QByteArray keyPem(data, size);
    OPENSSL_cleanse(data, size_t(size));
    auto keyWritten = io::writeFileAtomically(keyPath, keyPem, 0600);
    OPENSSL_cleanse(keyPem.data(), size_t(keyPem.size()));
    if (!keyWritten)
        return keyWritten;
    return io::writeFileAtomically(certificatePath, certificatePem(), 0644);
}

QByteArray SandboxCa::certificatePem() const
{
    return certificateToPem(m_certificate.get());
}

QString SandboxCa::fingerprint() const
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (X509_digest(m_certificate.get(), EVP_sha256(), digest, &length) != 1)
        return {};
    return QString::fromLatin1(
        QByteArray(reinterpret_cast<const char *>(digest), int(length)).toHex());
}

Result<std::shared_ptr<const TlsLeaf>> SandboxCa::mintLeaf(QStringView name)
{
    auto canonical = canonicalizeHostname(name);
    if (!canonical)
        return std::unexpected(canonical.error().toError());
    const QDateTime now = QDateTime::currentDateTimeUtc();
    if (const auto it = m_index.constFind(*canonical); it != m_index.constEnd()) {
        const Lru::iterator entry = *it;
        if (now.secsTo((*entry)->notAfter) > kLeafRefreshSeconds) {
            m_lru.splice(m_lru.begin(), m_lru, entry);
            return *entry;
        }
        m_lru.erase(entry);
        m_index.remove(*canonical);
    }
    auto leaf = mint(*canonical);
    if (!leaf)
        return leaf;
    m_lru.push_front(*leaf);
    m_index.insert(*canonical, m_lru.begin());
    evict();
    return leaf;
}

void SandboxCa::setLeafCacheCapacity(qsizetype capacity)
{
    m_capacity = std::max<qsizetype>(1, capacity);
    evict();
}

void SandboxCa::evict()
{
    while (qsizetype(m_lru.size()) > m_capacity) {
        m_index.remove(m_lru.back()->name);
        m_lru.pop_back();
    }
}

Result<std::shared_ptr<const TlsLeaf>> SandboxCa::mint(const QString &name) const
{
    auto key = generateP256Key();
    AIRLOCK_TRY(key);
    auto created = newCertificate();
    AIRLOCK_TRY(created);
    X509Ptr certificate = std::move(*created);
    AIRLOCK_TRY(addNameEntry(X509_get_subject_name(certificate.get()), "O",
                             QStringLiteral("Airlock sandbox")));

    // Never valid past the CA: notAfter = min(notBefore + 7 days, CA notAfter).
    const ASN1_TIME *caNotAfter = X509_get0_notAfter(m_certificate.get());
    if (X509_set_issuer_name(certificate.get(), X509_get_subject_name(m_certificate.get())) != 1
        || !X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -kBackdateSeconds)
        || !X509_gmtime_adj(X509_getm_notAfter(certificate.get()),
                            kLeafValidityDays * 24 * 3600 - kBackdateSeconds)
        || X509_set_pubkey(certificate.get(), key->get()) != 1)
        return failOpenSsl(QStringLiteral("leaf certificate fields"));
    if (ASN1_TIME_compare(X509_get0_notAfter(certificate.get()), caNotAfter) > 0
        && X509_set1_notAfter(certificate.get(), caNotAfter) != 1)
        return failOpenSsl(QStringLiteral("leaf notAfter"));

    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, m_certificate.get(), certificate.get(), nullptr, nullptr, 0);
    for (const auto &[nid, value] : {
             std::pair {NID_basic_constraints, "critical,CA:FALSE"},
             std::pair {NID_key_usage, "critical,digitalSignature"},
             std::pair {NID_ext_key_usage, "serverAuth"},
             std::pair {NID_subject_key_identifier, "hash"},
             std::pair {NID_authority_key_identifier, "keyid:always"},
         }) {
        AIRLOCK_TRY(addExtension(certificate.get(), &ctx, nid, value));
    }

    // SAN built structurally (no config-string parsing): exactly one dNSName.
    GeneralNamesPtr names(GENERAL_NAMES_new());
    GENERAL_NAME *entry = GENERAL_NAME_new();
    ASN1_IA5STRING *dns = ASN1_IA5STRING_new();
    const QByteArray ascii = name.toLatin1();
    if (!names || !entry || !dns
        || ASN1_STRING_set(dns, ascii.constData(), int(ascii.size())) != 1) {
        GENERAL_NAME_free(entry);
        ASN1_IA5STRING_free(dns);
        return failOpenSsl(QStringLiteral("subjectAltName"));
    }
    GENERAL_NAME_set0_value(entry, GEN_DNS, dns);
    if (sk_GENERAL_NAME_push(names.get(), entry) <= 0) {
        GENERAL_NAME_free(entry);
        return failOpenSsl(QStringLiteral("subjectAltName"));
    }
    if (X509_add1_ext_i2d(certificate.get(), NID_subject_alt_name, names.get(), 0,
                          X509V3_ADD_DEFAULT)
        != 1)
        return failOpenSsl(QStringLiteral("subjectAltName"));

    if (X509_sign(certificate.get(), m_key.get(), EVP_sha256()) <= 0)
        return failOpenSsl(QStringLiteral("leaf signature"));

    auto leaf = std::make_shared<TlsLeaf>();
    leaf->name = name;
    leaf->notAfter = asn1TimeToDateTime(X509_get0_notAfter(certificate.get()));
    leaf->certificate = std::move(certificate);
    leaf->key = std::move(*key);
    return std::shared_ptr<const TlsLeaf>(std::move(leaf));
}

} // namespace airlock::pki

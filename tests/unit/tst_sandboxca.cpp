// SandboxCa (docs/tls.md "The sandbox CA"): CA and leaf certificate properties (RFC 5280),
// the leaf cache, the key file's mode, reload from disk, and names canonicalizeHostname rejects.
#include "core/pki/sandboxca.h"
#include "resultcheck.h"

#include <QTemporaryDir>
#include <QTest>

#include <openssl/pem.h>

#include <sys/stat.h>

using airlock::ErrorKind;
using airlock::pki::BasicConstraintsPtr;
using airlock::pki::GeneralNamesPtr;
using airlock::pki::NameConstraintsPtr;
using airlock::pki::SandboxCa;
using airlock::pki::TlsLeaf;
using airlock::pki::X509StoreCtxPtr;
using airlock::pki::X509StorePtr;

namespace {

// Seconds between two ASN1_TIMEs (b - a).
qint64 secondsBetween(const ASN1_TIME *a, const ASN1_TIME *b)
{
    int days = 0;
    int seconds = 0;
    if (ASN1_TIME_diff(&days, &seconds, a, b) != 1)
        return -1;
    return qint64(days) * 86400 + seconds;
}

// Verifies `leaf` against `ca` alone as a TLS server certificate for `host` (RFC 6125 DNS-ID).
int verifyLeaf(X509 *ca, X509 *leaf, const QByteArray &host)
{
    X509StorePtr store(X509_STORE_new());
    X509_STORE_add_cert(store.get(), ca);
    X509StoreCtxPtr ctx(X509_STORE_CTX_new());
    X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr);
    X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_SERVER);
    X509_VERIFY_PARAM *param = X509_STORE_CTX_get0_param(ctx.get());
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
    if (!host.isEmpty())
        X509_VERIFY_PARAM_set1_host(param, host.constData(), size_t(host.size()));
    X509_verify_cert(ctx.get());
    return X509_STORE_CTX_get_error(ctx.get());
}

QStringList dnsNames(X509 *certificate)
{
    QStringList names;
    GeneralNamesPtr sans(static_cast<GENERAL_NAMES *>(
        X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)));
    for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans.get()); ++i) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(sans.get(), i);
        if (name->type != GEN_DNS) {
            names << QStringLiteral("<non-dns %1>").arg(name->type);
            continue;
        }
        names << QString::fromLatin1(
            reinterpret_cast<const char *>(ASN1_STRING_get0_data(name->d.dNSName)),
            ASN1_STRING_length(name->d.dNSName));
    }
    return names;
}

bool isCritical(X509 *certificate, int nid)
{
    const int index = X509_get_ext_by_NID(certificate, nid, -1);
    return index >= 0 && X509_EXTENSION_get_critical(X509_get_ext(certificate, index)) == 1;
}

QByteArray serialHex(X509 *certificate)
{
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate), nullptr);
    char *hex = BN_bn2hex(bn);
    const QByteArray result(hex);
    OPENSSL_free(hex);
    BN_free(bn);
    return result;
}

} // namespace

class TestSandboxCa : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void caProperties();
    void serialsAreRandom();
    void leafProperties();
    void leafVerifiesOnlyForItsName();
    void leafCacheHitAndCanonicalSpelling();
    void leafCacheIsBoundedLru();
    void saveWritesKey0600AndReloadGivesSameCa();
    void loadRejectsWideKeyModeAndMismatch();
    void invalidNamesRejected_data();
    void invalidNamesRejected();
    void invalidLabelRejected();
};

void TestSandboxCa::caProperties()
{
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("sb1"));
    QVERIFY_RESULT(ca);
    X509 *cert = ca->certificate();

    QCOMPARE(X509_get_version(cert), long(X509_VERSION_3));
    // Self-signed, EC P-256.
    QCOMPARE(X509_NAME_cmp(X509_get_subject_name(cert), X509_get_issuer_name(cert)), 0);
    EVP_PKEY *key = X509_get0_pubkey(cert);
    QCOMPARE(EVP_PKEY_get_base_id(key), EVP_PKEY_EC);
    char group[64] = {};
    size_t groupLength = 0;
    QVERIFY(EVP_PKEY_get_group_name(key, group, sizeof group, &groupLength) == 1);
    QCOMPARE(QByteArray(group), QByteArray("prime256v1"));
    QCOMPARE(X509_verify(cert, key), 1);

    // basicConstraints CA:TRUE critical; keyUsage keyCertSign|cRLSign critical.
    BasicConstraintsPtr bc(static_cast<BASIC_CONSTRAINTS *>(
        X509_get_ext_d2i(cert, NID_basic_constraints, nullptr, nullptr)));
    QVERIFY(bc && bc->ca);
    QVERIFY(isCritical(cert, NID_basic_constraints));
    QCOMPARE(X509_get_key_usage(cert), quint32(KU_KEY_CERT_SIGN | KU_CRL_SIGN));
    QVERIFY(isCritical(cert, NID_key_usage));
    QVERIFY(X509_check_ca(cert) >= 1);

    // nameConstraints (critical): no permitted subtrees; IPv4 and IPv6 excluded entirely.
    QVERIFY(isCritical(cert, NID_name_constraints));
    NameConstraintsPtr nc(static_cast<NAME_CONSTRAINTS *>(
        X509_get_ext_d2i(cert, NID_name_constraints, nullptr, nullptr)));
    QVERIFY(nc);
    QVERIFY(!nc->permittedSubtrees || sk_GENERAL_SUBTREE_num(nc->permittedSubtrees) == 0);
    QCOMPARE(sk_GENERAL_SUBTREE_num(nc->excludedSubtrees), 2);
    for (int i = 0; i < 2; ++i) {
        const GENERAL_SUBTREE *subtree = sk_GENERAL_SUBTREE_value(nc->excludedSubtrees, i);
        QCOMPARE(subtree->base->type, GEN_IPADD);
        const ASN1_OCTET_STRING *ip = subtree->base->d.iPAddress;
        QVERIFY(ip->length == 8 || ip->length == 32); // address + mask
        for (int b = 0; b < ip->length; ++b)
            QCOMPARE(int(ip->data[b]), 0); // 0.0.0.0/0, ::/0
    }

    // Validity: about one year.
    const qint64 validity = secondsBetween(X509_get0_notBefore(cert), X509_get0_notAfter(cert));
    QCOMPARE(validity, airlock::pki::SandboxCa::kCaValidityDays * 86400);
    QVERIFY(X509_cmp_current_time(X509_get0_notBefore(cert)) < 0);

    // The exported PEM is the certificate only.
    const QByteArray pem = ca->certificatePem();
    QVERIFY(pem.startsWith("-----BEGIN CERTIFICATE-----"));
    QVERIFY(!pem.contains("PRIVATE KEY"));
    QCOMPARE(ca->fingerprint().size(), 64);
}

void TestSandboxCa::serialsAreRandom()
{
    auto a = airlock::pki::SandboxCa::generate(QStringLiteral("a"));
    auto b = airlock::pki::SandboxCa::generate(QStringLiteral("a"));
    QVERIFY(a && b);
    const QByteArray sa = serialHex(a->certificate());
    QVERIFY(sa != serialHex(b->certificate()));
    QVERIFY(!sa.startsWith('-'));
    QVERIFY(sa.size() <= 32); // at most 128 bits
    QVERIFY(sa.size() >= 16); // fails with probability 2^-64
    auto leaf1 = a->mintLeaf(QStringLiteral("one.test"));
    auto leaf2 = a->mintLeaf(QStringLiteral("two.test"));
    QVERIFY(leaf1 && leaf2);
    QVERIFY(serialHex((*leaf1)->certificate.get()) != serialHex((*leaf2)->certificate.get()));
}

void TestSandboxCa::leafProperties()
{
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("sb1"));
    QVERIFY(ca);
    auto leaf = ca->mintLeaf(QStringLiteral("pkg.test"));
    QVERIFY_RESULT(leaf);
    X509 *cert = (*leaf)->certificate.get();
    QCOMPARE((*leaf)->name, QStringLiteral("pkg.test"));

    QCOMPARE(dnsNames(cert), QStringList {QStringLiteral("pkg.test")});
    QCOMPARE(X509_NAME_cmp(X509_get_issuer_name(cert), X509_get_subject_name(ca->certificate())),
             0);
    BasicConstraintsPtr bc(static_cast<BASIC_CONSTRAINTS *>(
        X509_get_ext_d2i(cert, NID_basic_constraints, nullptr, nullptr)));
    QVERIFY(bc && !bc->ca);
    QCOMPARE(X509_check_ca(cert), 0);
    QCOMPARE(X509_get_extended_key_usage(cert), quint32(XKU_SSL_SERVER));
    QCOMPARE(X509_get_key_usage(cert), quint32(KU_DIGITAL_SIGNATURE));
    QCOMPARE(X509_check_private_key(cert, (*leaf)->key.get()), 1);
    QCOMPARE(EVP_PKEY_get_base_id((*leaf)->key.get()), EVP_PKEY_EC);
    QVERIFY(EVP_PKEY_eq((*leaf)->key.get(), X509_get0_pubkey(ca->certificate())) != 1);

    const qint64 validity = secondsBetween(X509_get0_notBefore(cert), X509_get0_notAfter(cert));
    QVERIFY(validity > 0);
    QVERIFY(validity <= airlock::pki::SandboxCa::kLeafValidityDays * 86400);
    QVERIFY(X509_cmp_current_time(X509_get0_notBefore(cert)) < 0);
    QVERIFY(X509_cmp_current_time(X509_get0_notAfter(cert)) > 0);
    QVERIFY((*leaf)->notAfter > QDateTime::currentDateTimeUtc().addDays(6));
    QVERIFY((*leaf)->notAfter <= QDateTime::currentDateTimeUtc().addDays(7));
}

void TestSandboxCa::leafVerifiesOnlyForItsName()
{
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("sb1"));
    auto other = airlock::pki::SandboxCa::generate(QStringLiteral("sb2"));
    QVERIFY(ca && other);
    auto leaf = ca->mintLeaf(QStringLiteral("pkg.test"));
    QVERIFY(leaf);
    X509 *cert = (*leaf)->certificate.get();
    QCOMPARE(verifyLeaf(ca->certificate(), cert, "pkg.test"), int(X509_V_OK));
    QCOMPARE(verifyLeaf(ca->certificate(), cert, "tenant.test"), int(X509_V_ERR_HOSTNAME_MISMATCH));
    QCOMPARE(verifyLeaf(ca->certificate(), cert, "a.pkg.test"), int(X509_V_ERR_HOSTNAME_MISMATCH));
    QVERIFY(verifyLeaf(other->certificate(), cert, "pkg.test") != X509_V_OK);
}

void TestSandboxCa::leafCacheHitAndCanonicalSpelling()
{
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("sb1"));
    QVERIFY(ca);
    auto first = ca->mintLeaf(QStringLiteral("pkg.test"));
    auto second = ca->mintLeaf(QStringLiteral("pkg.test"));
    auto spelled = ca->mintLeaf(QStringLiteral("Pkg.TEST.")); // docs/redteam-cases.md B1, B2
    QVERIFY(first && second && spelled);
    QCOMPARE(first->get(), second->get());
    QCOMPARE(first->get(), spelled->get());
    QCOMPARE(ca->cachedLeafCount(), 1);
    auto other = ca->mintLeaf(QStringLiteral("api.test"));
    QVERIFY(other);
    QVERIFY(other->get() != first->get());
    QCOMPARE(ca->cachedLeafCount(), 2);
}

void TestSandboxCa::leafCacheIsBoundedLru()
{
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("sb1"));
    QVERIFY(ca);
    ca->setLeafCacheCapacity(2);
    auto a = ca->mintLeaf(QStringLiteral("a.test"));
    auto b = ca->mintLeaf(QStringLiteral("b.test"));
    QVERIFY(a && b);
    QCOMPARE(ca->mintLeaf(QStringLiteral("a.test"))->get(), a->get()); // a is now most recent
    auto c = ca->mintLeaf(QStringLiteral("c.test")); // evicts b
    QVERIFY(c);
    QCOMPARE(ca->cachedLeafCount(), 2);
    QCOMPARE(ca->mintLeaf(QStringLiteral("a.test"))->get(), a->get());
    QVERIFY(ca->mintLeaf(QStringLiteral("b.test"))->get() != b->get()); // minted again
    QCOMPARE(ca->cachedLeafCount(), 2);
    // The evicted leaf stays valid for whoever still holds it.
    QCOMPARE(dnsNames((*b)->certificate.get()), QStringList {QStringLiteral("b.test")});
}

void TestSandboxCa::saveWritesKey0600AndReloadGivesSameCa()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString certPath = dir.filePath(QStringLiteral("ca.crt"));
    const QString keyPath = dir.filePath(QStringLiteral("ca.key"));
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("sb1"));
    QVERIFY(ca);
    const mode_t oldMask = ::umask(0);
    auto saved = ca->save(certPath, keyPath);
    ::umask(oldMask);
    QVERIFY_RESULT(saved);

    struct stat st = {};
    QCOMPARE(::stat(QFile::encodeName(keyPath).constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0600));
    QCOMPARE(::stat(QFile::encodeName(certPath).constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0644));
    QFile certFile(certPath);
    QVERIFY(certFile.open(QIODevice::ReadOnly));
    const QByteArray certText = certFile.readAll();
    QVERIFY(!certText.contains("PRIVATE KEY"));
    QCOMPARE(certText, ca->certificatePem());

    auto loaded = airlock::pki::SandboxCa::load(certPath, keyPath);
    QVERIFY_RESULT(loaded);
    QCOMPARE(loaded->fingerprint(), ca->fingerprint());
    QCOMPARE(X509_cmp(loaded->certificate(), ca->certificate()), 0);
    // The reloaded key signs leaves that verify against the original certificate.
    auto leaf = loaded->mintLeaf(QStringLiteral("pkg.test"));
    QVERIFY(leaf);
    QCOMPARE(verifyLeaf(ca->certificate(), (*leaf)->certificate.get(), "pkg.test"), int(X509_V_OK));

    // Saving again over existing files keeps the key at 0600.
    QVERIFY(ca->save(certPath, keyPath));
    QCOMPARE(::stat(QFile::encodeName(keyPath).constData(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0600));
}

void TestSandboxCa::loadRejectsWideKeyModeAndMismatch()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString certPath = dir.filePath(QStringLiteral("ca.crt"));
    const QString keyPath = dir.filePath(QStringLiteral("ca.key"));
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("sb1"));
    auto other = airlock::pki::SandboxCa::generate(QStringLiteral("sb2"));
    QVERIFY(ca && other);
    QVERIFY(ca->save(certPath, keyPath));

    QCOMPARE(::chmod(QFile::encodeName(keyPath).constData(), 0640), 0);
    auto wide = airlock::pki::SandboxCa::load(certPath, keyPath);
    QVERIFY(!wide);
    QCOMPARE(wide.error().kind, ErrorKind::PermissionDenied);
    QCOMPARE(::chmod(QFile::encodeName(keyPath).constData(), 0600), 0);

    const QString linkPath = dir.filePath(QStringLiteral("link.key"));
    QVERIFY(QFile::link(keyPath, linkPath));
    auto linked = airlock::pki::SandboxCa::load(certPath, linkPath);
    QVERIFY(!linked);
    QCOMPARE(linked.error().kind, ErrorKind::PermissionDenied);

    auto missing =
        airlock::pki::SandboxCa::load(certPath, dir.filePath(QStringLiteral("nope.key")));
    QVERIFY(!missing);
    QCOMPARE(missing.error().kind, ErrorKind::NotFound);

    const QString otherCert = dir.filePath(QStringLiteral("other.crt"));
    const QString otherKey = dir.filePath(QStringLiteral("other.key"));
    QVERIFY(other->save(otherCert, otherKey));
    auto mismatch = airlock::pki::SandboxCa::load(certPath, otherKey);
    QVERIFY(!mismatch);
    QCOMPARE(mismatch.error().kind, ErrorKind::OperationFailed);
}

void TestSandboxCa::invalidNamesRejected_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("empty") << QString();
    QTest::newRow("ipv4") << QStringLiteral("127.0.0.1");
    QTest::newRow("ipv4 short") << QStringLiteral("127.1");
    QTest::newRow("ipv6") << QStringLiteral("::1");
    QTest::newRow("ipv6 bracketed") << QStringLiteral("[::1]");
    QTest::newRow("wildcard") << QStringLiteral("*.pkg.test");
    QTest::newRow("underscore") << QStringLiteral("a_b.test");
    QTest::newRow("two trailing dots") << QStringLiteral("pkg.test..");
    QTest::newRow("port") << QStringLiteral("pkg.test:443");
    QTest::newRow("userinfo") << QStringLiteral("u@pkg.test");
    QTest::newRow("non-ascii") << QStringLiteral("p\u00e4kg.test");
    QTest::newRow("nul") << QString(QStringLiteral("pkg.test") + QChar(0) + QStringLiteral("x"));
    QTest::newRow("comma") << QStringLiteral("pkg.test,DNS:evil.test");
}

void TestSandboxCa::invalidNamesRejected()
{
    QFETCH(QString, name);
    auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("sb1"));
    QVERIFY(ca);
    auto leaf = ca->mintLeaf(name);
    QVERIFY(!leaf);
    QCOMPARE(leaf.error().kind, ErrorKind::InvalidParams);
    QCOMPARE(ca->cachedLeafCount(), 0);
}

void TestSandboxCa::invalidLabelRejected()
{
    QVERIFY(!airlock::pki::SandboxCa::generate(QString()));
    QVERIFY(!airlock::pki::SandboxCa::generate(QStringLiteral("a\nb")));
    QVERIFY(!airlock::pki::SandboxCa::generate(QString(41, u'x')));
}

QTEST_APPLESS_MAIN(TestSandboxCa)
#include "tst_sandboxca.moc"

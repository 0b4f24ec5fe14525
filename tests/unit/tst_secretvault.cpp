// SecretVault and SecretValue (issue 4 "Vault"; docs/credentials.md): AES-256-GCM files with a
// fresh nonce per write, the key file's rules, and clear errors for damaged files, wrong keys
// and renamed files, with nothing overwritten.
#include "core/vault/secretvault.h"
#include "resultcheck.h"

#include <QByteArray>
#include <QCryptographicHash>
#include <QDebug>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

#include <type_traits>

using airlock::ErrorKind;
using airlock::SecretValue;
using airlock::vault::SecretVault;

// A secret can never be streamed into a log or turned into a string by accident.
template<typename T>
concept DebugStreamable = requires(QDebug debug, const T &value)
{
    debug << value;
};
static_assert(DebugStreamable<QByteArray>);
static_assert(!DebugStreamable<SecretValue>);
static_assert(!std::is_convertible_v<SecretValue, QByteArray>);
static_assert(!std::is_convertible_v<SecretValue, QString>);
static_assert(!std::is_copy_constructible_v<SecretValue>);
static_assert(!std::is_copy_assignable_v<SecretValue>);

namespace {

const QByteArray kCanary = QByteArrayLiteral("sk-canary-7f3a9c1e5d2b4086");

QByteArray readFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

void writeFile(const QString &path, const QByteArray &data)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(data);
}

// The error text of a failed Result, for QVERIFY2 (which evaluates its message every time).
template<typename T>
QByteArray errorOf(const airlock::Result<T> &result)
{
    return result ? QByteArray() : result.error().message.toLocal8Bit();
}

mode_t modeOf(const QString &path)
{
    struct stat status = {};
    if (::lstat(QFile::encodeName(path).constData(), &status) != 0)
        return 0;
    return status.st_mode & 07777;
}

} // namespace

class TestSecretVault : public QObject
{
    Q_OBJECT

private:
    QString vaultDir() const { return m_dir.path() + QStringLiteral("/vault"); }
    QString keyPath() const { return m_dir.path() + QStringLiteral("/vault.key"); }

    QTemporaryDir m_dir;

private Q_SLOTS:
    void init()
    {
        QDir(vaultDir()).removeRecursively();
        QFile::remove(keyPath());
    }

    void firstOpenCreatesPrivateKeyAndDirectory()
    {
        auto vault = SecretVault::open(vaultDir(), keyPath());
        QVERIFY_RESULT(vault);
        QCOMPARE(modeOf(keyPath()), mode_t(0600));
        QCOMPARE(modeOf(vaultDir()), mode_t(0700));
        QCOMPARE(readFile(keyPath()).size(), SecretVault::kKeyBytes);
        auto reopened = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(reopened);
    }

    void setReadListRoundTrip()
    {
        auto vault = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(vault);
        const QDateTime t1 =
            QDateTime::fromString(QStringLiteral("2026-11-30T07:00:00Z"), Qt::ISODate);
        auto info = vault->set(QStringLiteral("github-token"), SecretValue(kCanary), t1);
        QVERIFY_RESULT(info);
        QCOMPARE(info->created, t1);
        QCOMPARE(info->fingerprint.size(), 16);
        QCOMPARE(modeOf(vault->pathOf(QStringLiteral("github-token"))), mode_t(0600));

        auto value = vault->read(QStringLiteral("github-token"));
        QVERIFY(value);
        QVERIFY(value->equals(kCanary));

        // Replacing keeps the creation time and changes the fingerprint.
        const QDateTime t2 = t1.addSecs(60);
        auto replaced = vault->set(QStringLiteral("github-token"),
                                   SecretValue(QByteArrayLiteral("other-value")), t2);
        QVERIFY(replaced);
        QCOMPARE(replaced->created, t1);
        QCOMPARE(replaced->updated, t2);
        QVERIFY(replaced->fingerprint != info->fingerprint);

        QVERIFY(vault->set(QStringLiteral("a-first"), SecretValue(QByteArrayLiteral("x-value-1"))));
        auto listed = vault->list();
        QVERIFY(listed);
        QCOMPARE(listed->size(), 2);
        QCOMPARE(listed->at(0).name, QStringLiteral("a-first"));
        QCOMPARE(listed->at(1).name, QStringLiteral("github-token"));
        QCOMPARE(listed->at(1).fingerprint, replaced->fingerprint);
        QVERIFY(listed->at(1).problem.isEmpty());

        QVERIFY(vault->remove(QStringLiteral("a-first")));
        QCOMPARE(vault->remove(QStringLiteral("a-first")).error().kind, ErrorKind::NotFound);
        QCOMPARE(vault->read(QStringLiteral("a-first")).error().kind, ErrorKind::NotFound);
    }

    void plaintextNeverOnDiskAndNonceFreshPerWrite()
    {
        auto vault = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(vault);
        const QString path = vault->pathOf(QStringLiteral("token"));
        QVERIFY(vault->set(QStringLiteral("token"), SecretValue(kCanary)));
        const QByteArray first = readFile(path);
        QVERIFY(vault->set(QStringLiteral("token"), SecretValue(kCanary)));
        const QByteArray second = readFile(path);
        for (const QByteArray &file : {first, second}) {
            QVERIFY(!file.contains(kCanary));
            QVERIFY(!file.contains(kCanary.toBase64()));
            QVERIFY(!file.contains(kCanary.toPercentEncoding()));
            QVERIFY(!file.contains(kCanary.toHex()));
        }
        // A fresh 96-bit nonce per write (NIST SP 800-38D §8.2): same value, other bytes.
        QCOMPARE(first.size(), second.size());
        QVERIFY(first.mid(8, SecretVault::kNonceBytes) != second.mid(8, SecretVault::kNonceBytes));
        QVERIFY(first != second);
        QVERIFY(!QFile::exists(path + QStringLiteral(".tmp")));
    }

    void tamperedFileIsAClearErrorAndNeverOverwritten_data()
    {
        QTest::addColumn<int>("offset"); // byte to flip; -1: truncate; -2: bad magic
        QTest::newRow("nonce") << 9;
        QTest::newRow("ciphertext") << 30;
        QTest::newRow("tag") << -3;
        QTest::newRow("truncated") << -1;
        QTest::newRow("magic") << -2;
    }

    void tamperedFileIsAClearErrorAndNeverOverwritten()
    {
        QFETCH(int, offset);
        auto vault = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(vault);
        QVERIFY(vault->set(QStringLiteral("token"), SecretValue(kCanary)));
        const QString path = vault->pathOf(QStringLiteral("token"));
        QByteArray bytes = readFile(path);
        if (offset == -1)
            bytes.chop(20);
        else if (offset == -2)
            bytes[0] = 'X';
        else if (offset == -3)
            bytes[bytes.size() - 1] = char(bytes.at(bytes.size() - 1) ^ 0x01);
        else
            bytes[offset] = char(bytes.at(offset) ^ 0x40);
        writeFile(path, bytes);

        auto read = vault->read(QStringLiteral("token"));
        QVERIFY(!read);
        QCOMPARE(read.error().kind, ErrorKind::OperationFailed);
        QVERIFY2(read.error().message.contains(path), errorOf(read).constData());

        // set() refuses to replace a file it cannot authenticate; the file stays as it was.
        auto set = vault->set(QStringLiteral("token"), SecretValue(QByteArrayLiteral("new-value")));
        QVERIFY(!set);
        QCOMPARE(readFile(path), bytes);

        auto listed = vault->list();
        QVERIFY(listed);
        QCOMPARE(listed->size(), 1);
        QVERIFY(listed->at(0).problem.contains(path));
        QVERIFY(listed->at(0).fingerprint.isEmpty());

        // Deleting a damaged secret is how a person recovers.
        QVERIFY(vault->remove(QStringLiteral("token")));
    }

    void renamedFileDoesNotAuthenticate()
    {
        auto vault = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(vault);
        QVERIFY(vault->set(QStringLiteral("prod"), SecretValue(kCanary)));
        QVERIFY(QFile::rename(vault->pathOf(QStringLiteral("prod")),
                              vault->pathOf(QStringLiteral("dev"))));
        auto read = vault->read(QStringLiteral("dev"));
        QVERIFY(!read);
        QVERIFY(read.error().message.contains(QStringLiteral("does not authenticate")));
    }

    void wrongKeyIsAClearError()
    {
        {
            auto vault = SecretVault::open(vaultDir(), keyPath());
            QVERIFY(vault);
            QVERIFY(vault->set(QStringLiteral("token"), SecretValue(kCanary)));
        }
        QByteArray otherKey(SecretVault::kKeyBytes, 'k');
        writeFile(keyPath(), otherKey);
        auto vault = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(vault);
        auto read = vault->read(QStringLiteral("token"));
        QVERIFY(!read);
        QVERIFY(read.error().message.contains(vault->pathOf(QStringLiteral("token"))));
        QVERIFY(read.error().message.contains(QStringLiteral("vault key")));
    }

    void keyFileRules()
    {
        {
            auto vault = SecretVault::open(vaultDir(), keyPath());
            QVERIFY(vault);
            QVERIFY(vault->set(QStringLiteral("token"), SecretValue(kCanary)));
        }
        const QByteArray key = readFile(keyPath());

        QVERIFY(::chmod(QFile::encodeName(keyPath()).constData(), 0644) == 0);
        auto open = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(!open);
        QCOMPARE(open.error().kind, ErrorKind::PermissionDenied);
        QVERIFY(open.error().message.contains(keyPath()));

        QFile::remove(keyPath());
        const QString elsewhere = m_dir.path() + QStringLiteral("/elsewhere.key");
        writeFile(elsewhere, key);
        QVERIFY(::chmod(QFile::encodeName(elsewhere).constData(), 0600) == 0);
        QVERIFY(QFile::link(elsewhere, keyPath()));
        open = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(!open);
        QCOMPARE(open.error().kind, ErrorKind::PermissionDenied);

        // A lost key is never silently replaced while secrets exist.
        QFile::remove(keyPath());
        open = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(!open);
        QVERIFY(open.error().message.contains(QStringLiteral("missing")));
        QVERIFY(!QFile::exists(keyPath()));

        writeFile(keyPath(), key.left(16));
        QVERIFY(::chmod(QFile::encodeName(keyPath()).constData(), 0600) == 0);
        open = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(!open);
        QVERIFY(open.error().message.contains(QStringLiteral("exactly 32 bytes")));
    }

    void invalidInput()
    {
        auto vault = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(vault);
        QCOMPARE(vault->set(QStringLiteral("../etc"), SecretValue(kCanary)).error().kind,
                 ErrorKind::InvalidName);
        QCOMPARE(vault->set(QStringLiteral("Token"), SecretValue(kCanary)).error().kind,
                 ErrorKind::InvalidName);
        QCOMPARE(vault->set(QStringLiteral("empty"), SecretValue()).error().kind,
                 ErrorKind::InvalidParams);
        QCOMPARE(vault->set(QStringLiteral("short"), SecretValue(QByteArrayLiteral("1234567")))
                     .error()
                     .kind,
                 ErrorKind::InvalidParams);
        // Header injection through a stored value (the gateway puts values in header fields).
        for (const QByteArray &bad :
             {QByteArrayLiteral("token\r\nHost: evil.test"),
              QByteArrayLiteral("token-with\nnewline"), QByteArray("token\0with-nul", 15),
              QByteArrayLiteral("token\x7f"
                                "-delete")}) {
            auto set = vault->set(QStringLiteral("ctl"), SecretValue(bad));
            QVERIFY(!set);
            QCOMPARE(set.error().kind, ErrorKind::InvalidParams);
        }
        QVERIFY(
            vault->set(QStringLiteral("tab"), SecretValue(QByteArrayLiteral("token\twith-tab"))));
        // Leading or trailing SP/HTAB: the upstream would check the trimmed value, which no
        // scrub form matches (docs/reviews/2026-12-01-credentials-redteam.md#f4).
        for (const QByteArray &padded : {QByteArrayLiteral("trail-secret-value-0042\t"),
                                         QByteArrayLiteral(" lead-secret-value"),
                                         QByteArrayLiteral("CanarySecret-Zq9/+x~!\tend ")}) {
            auto set = vault->set(QStringLiteral("ows"), SecretValue(padded));
            QVERIFY(!set);
            QCOMPARE(set.error().kind, ErrorKind::InvalidParams);
            QVERIFY2(set.error().message.contains(QStringLiteral("space or tab")),
                     qPrintable(set.error().message));
        }
        QVERIFY(
            vault->set(QStringLiteral("inner"), SecretValue(QByteArrayLiteral("inner space ok"))));
        QCOMPARE(vault
                     ->set(QStringLiteral("huge"),
                           SecretValue(QByteArray(SecretValue::kMaxBytes + 1, 'x')))
                     .error()
                     .kind,
                 ErrorKind::InvalidParams);
        QCOMPARE(vault->read(QStringLiteral("../vault")).error().kind, ErrorKind::InvalidName);
        QCOMPARE(vault->remove(QStringLiteral("a/b")).error().kind, ErrorKind::InvalidName);
    }

    void secretValueOwnsItsBytes()
    {
        SecretValue value(kCanary);
        QCOMPARE(value.size(), kCanary.size());
        QVERIFY(value.equals(kCanary));
        QVERIFY(!value.equals(QByteArrayLiteral("sk-canary")));
        QVERIFY(value.locked()); // root has no RLIMIT_MEMLOCK problem for one page
        QCOMPARE(value.fingerprint(QByteArrayLiteral("some-key")).size(), 16);

        SecretValue moved(std::move(value));
        QVERIFY(moved.equals(kCanary));
        QVERIFY(value.isEmpty()); // NOLINT(bugprone-use-after-move): the point of the test
        QVERIFY(value.reveal().isEmpty());

        SecretValue copy = moved.clone();
        QVERIFY(copy.equals(kCanary));
        QVERIFY(copy.reveal().data() != moved.reveal().data());
        copy = SecretValue(QByteArrayLiteral("replaced"));
        QVERIFY(copy.equals(QByteArrayLiteral("replaced")));
        QVERIFY(SecretValue().fingerprint(QByteArrayLiteral("some-key")).isEmpty());
        QVERIFY(copy.fingerprint({}).isEmpty());
    }

    // docs/reviews/2026-12-01-credentials-redteam.md#f10: a listed fingerprint must not let anyone
    // confirm a guess offline. It is an HMAC (RFC 4231 test case 2 below) keyed with a key derived
    // from the vault key: stable across reopening, different for another vault, not the plain
    // SHA-256.
    void fingerprintsAreKeyed()
    {
        QCOMPARE(SecretValue(QByteArrayLiteral("what do ya want for nothing?"))
                     .fingerprint(QByteArrayLiteral("Jefe")),
                 QStringLiteral("5bdcc146bf60754e"));
        auto vault = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(vault);
        auto info = vault->set(QStringLiteral("pin"), SecretValue(QByteArrayLiteral("12345678")));
        QVERIFY(info);
        const QString plain = QString::fromLatin1(
            QCryptographicHash::hash("12345678", QCryptographicHash::Sha256).toHex().left(16));
        QVERIFY(info->fingerprint != plain);
        QCOMPARE(info->fingerprint.size(), 16);
        auto reopened = SecretVault::open(vaultDir(), keyPath());
        QVERIFY(reopened);
        QCOMPARE(reopened->list()->first().fingerprint, info->fingerprint);
        // Another vault (another key): the same value has another fingerprint.
        QTemporaryDir other;
        auto second = SecretVault::open(other.path() + QStringLiteral("/vault"),
                                        other.path() + QStringLiteral("/vault.key"));
        QVERIFY(second);
        auto again = second->set(QStringLiteral("pin"), SecretValue(QByteArrayLiteral("12345678")));
        QVERIFY(again);
        QVERIFY(again->fingerprint != info->fingerprint);
        // The fingerprint key is not the vault key.
        QFile keyFile(keyPath());
        QVERIFY(keyFile.open(QIODevice::ReadOnly));
        const QByteArray vaultKey = keyFile.readAll();
        const SecretValue derived = SecretValue::fingerprintKey(vaultKey);
        QCOMPARE(derived.size(), 32);
        QVERIFY(!derived.equals(vaultKey));
    }
};

QTEST_GUILESS_MAIN(TestSecretVault)
#include "tst_secretvault.moc"

// canonicalizeHostname, parseAuthority and canonicalHostPattern: every name spelling from
// docs/redteam-cases.md classes A8, B1-B4, C1-C3 and D1, one row each.
#include "core/model/hostname.h"
#include "resultcheck.h"

#include <QTest>

using airlock::HostnameReason;

class TestHostname : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void canonical_data();
    void canonical();
    void rejected_data();
    void rejected();
    void resultWrapper();
    void reasonNamesAreStable();
    void authority_data();
    void authority();
    void authorityRejected_data();
    void authorityRejected();
    void pattern_data();
    void pattern();
    void patternRejected_data();
    void patternRejected();
};

void TestHostname::canonical_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("expected");
    QTest::newRow("plain") << QStringLiteral("pkg.test") << QStringLiteral("pkg.test");
    QTest::newRow("B1 one trailing dot")
        << QStringLiteral("pkg.test.") << QStringLiteral("pkg.test");
    QTest::newRow("B2 mixed case SNI") << QStringLiteral("Pkg.TEST") << QStringLiteral("pkg.test");
    QTest::newRow("B2 mixed case Host") << QStringLiteral("PKG.test") << QStringLiteral("pkg.test");
    QTest::newRow("B1+B2") << QStringLiteral("PKG.TEST.") << QStringLiteral("pkg.test");
    QTest::newRow("single label") << QStringLiteral("localhost") << QStringLiteral("localhost");
    QTest::newRow("C1 evilpkg.test is its own name")
        << QStringLiteral("evilpkg.test") << QStringLiteral("evilpkg.test");
    QTest::newRow("C3 pkg.test.evil.test is its own name")
        << QStringLiteral("pkg.test.evil.test") << QStringLiteral("pkg.test.evil.test");
    QTest::newRow("digits in labels")
        << QStringLiteral("a1.b2.test") << QStringLiteral("a1.b2.test");
    QTest::newRow("numeric non-final label")
        << QStringLiteral("1.2.3.4.nip.test") << QStringLiteral("1.2.3.4.nip.test");
    QTest::newRow("inner hyphens")
        << QStringLiteral("a--b.x-y.test") << QStringLiteral("a--b.x-y.test");
    QTest::newRow("A-label kept as written")
        << QStringLiteral("xn--bcher-kva.test") << QStringLiteral("xn--bcher-kva.test");
    QTest::newRow("0x label not last")
        << QStringLiteral("0x7f.test") << QStringLiteral("0x7f.test");
    QTest::newRow("hex-like last label with non-hex")
        << QStringLiteral("pkg.0x1g") << QStringLiteral("pkg.0x1g");
    QTest::newRow("63-char label") << QString(63, u'a') + QStringLiteral(".test")
                                   << QString(63, u'a') + QStringLiteral(".test");
    const QString name253 = QString(63, u'a') + u'.' + QString(63, u'b') + u'.' + QString(63, u'c')
        + u'.' + QString(61, u'd');
    QTest::newRow("253 characters") << name253 << name253;
    QTest::newRow("253 characters plus trailing dot") << name253 + u'.' << name253;
}

void TestHostname::canonical()
{
    QFETCH(QString, input);
    QFETCH(QString, expected);
    const auto result = airlock::canonicalizeHostname(input);
    QVERIFY_RESULT(result);
    QCOMPARE(*result, expected);
    // Idempotent: the canonical form canonicalizes to itself.
    QCOMPARE(airlock::canonicalizeHostname(*result).value_or(QString()), expected);
}

void TestHostname::rejected_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<HostnameReason>("reason");
    QTest::newRow("empty") << QString() << HostnameReason::Empty;
    QTest::newRow("root only") << QStringLiteral(".") << HostnameReason::Empty;
    QTest::newRow("B1 two trailing dots")
        << QStringLiteral("pkg.test..") << HostnameReason::TrailingDots;
    QTest::newRow("two dots only") << QStringLiteral("..") << HostnameReason::TrailingDots;
    QTest::newRow("leading dot") << QStringLiteral(".pkg.test") << HostnameReason::EmptyLabel;
    QTest::newRow("inner empty label") << QStringLiteral("pkg..test") << HostnameReason::EmptyLabel;
    QTest::newRow("64-char label")
        << QString(64, u'a') + QStringLiteral(".test") << HostnameReason::LabelTooLong;
    QTest::newRow("254 characters") << QString(63, u'a') + u'.' + QString(63, u'b') + u'.'
            + QString(63, u'c') + u'.'
            + QString(62, u'd') << HostnameReason::TooLong;
    QTest::newRow("leading hyphen") << QStringLiteral("-pkg.test") << HostnameReason::BadHyphen;
    QTest::newRow("trailing hyphen") << QStringLiteral("pkg-.test") << HostnameReason::BadHyphen;
    QTest::newRow("underscore (LDH only)")
        << QStringLiteral("_dmarc.pkg.test") << HostnameReason::BadCharacter;
    QTest::newRow("slash") << QStringLiteral("pkg.test/x") << HostnameReason::BadCharacter;
    QTest::newRow("question mark") << QStringLiteral("pkg.test?x") << HostnameReason::BadCharacter;
    QTest::newRow("hash") << QStringLiteral("pkg.test#x") << HostnameReason::BadCharacter;
    QTest::newRow("A8 comma list no space")
        << QStringLiteral("pkg.test,evil.test") << HostnameReason::BadCharacter;
    QTest::newRow("A8 comma list")
        << QStringLiteral("pkg.test, evil.test") << HostnameReason::ControlCharacter;
    QTest::newRow("A8 folded line")
        << QStringLiteral("pkg.test\r\n evil.test") << HostnameReason::ControlCharacter;
    QTest::newRow("space") << QStringLiteral("pkg .test") << HostnameReason::ControlCharacter;
    QTest::newRow("leading space")
        << QStringLiteral(" pkg.test") << HostnameReason::ControlCharacter;
    QTest::newRow("tab") << QStringLiteral("pkg.test\t") << HostnameReason::ControlCharacter;
    QTest::newRow("NUL") << QStringLiteral("pkg.test") + QChar(0) + QStringLiteral(".evil.test")
                         << HostnameReason::ControlCharacter;
    QTest::newRow("DEL") << QStringLiteral("pkg\x7f.test") << HostnameReason::ControlCharacter;
    QTest::newRow("B4 userinfo") << QStringLiteral("u@pkg.test") << HostnameReason::Userinfo;
    QTest::newRow("B4 pkg.test@evil.test")
        << QStringLiteral("pkg.test@evil.test") << HostnameReason::Userinfo;
    QTest::newRow("percent") << QStringLiteral("pkg%2etest") << HostnameReason::Percent;
    QTest::newRow("backslash") << QStringLiteral("pkg.test\\evil.test")
                               << HostnameReason::Backslash;
    QTest::newRow("B3 port in a bare name")
        << QStringLiteral("pkg.test:443") << HostnameReason::Port;
    QTest::newRow("C2 literal wildcard")
        << QStringLiteral("*.pkg.test") << HostnameReason::Wildcard;
    QTest::newRow("star inside") << QStringLiteral("a*.pkg.test") << HostnameReason::Wildcard;
    QTest::newRow("non-ASCII U-label")
        << QStringLiteral("b\u00fccher.test") << HostnameReason::NonAscii;
    QTest::newRow("fullwidth dot") << QStringLiteral("pkg\uff0etest") << HostnameReason::NonAscii;
    QTest::newRow("Kelvin sign lowers to k")
        << QStringLiteral("p\u212ag.test") << HostnameReason::NonAscii;
    QTest::newRow("dotless i") << QStringLiteral("p\u0131kg.test") << HostnameReason::NonAscii;
    // D1 and every inet_aton spelling of IPv4.
    QTest::newRow("D1 IPv4") << QStringLiteral("192.0.2.7") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 trailing dot") << QStringLiteral("127.0.0.1.") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 short 127.1") << QStringLiteral("127.1") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 three parts") << QStringLiteral("127.0.1") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 hex part") << QStringLiteral("0x7f.1") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 upper hex") << QStringLiteral("0X7F.0.0.1") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 octal") << QStringLiteral("0177.0.0.1") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 decimal integer")
        << QStringLiteral("2130706433") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 hex integer") << QStringLiteral("0x7f000001") << HostnameReason::IpLiteral;
    QTest::newRow("IPv4 bare 0x") << QStringLiteral("a.0x") << HostnameReason::IpLiteral;
    QTest::newRow("metadata address")
        << QStringLiteral("169.254.169.254") << HostnameReason::IpLiteral;
    QTest::newRow("numeric TLD") << QStringLiteral("pkg.123") << HostnameReason::IpLiteral;
    QTest::newRow("D1 IPv6") << QStringLiteral("2001:db8::7") << HostnameReason::IpLiteral;
    QTest::newRow("D1 IPv6 bracketed")
        << QStringLiteral("[2001:db8::7]") << HostnameReason::IpLiteral;
    // Brackets around a name are a malformed name, not an address
    // (docs/reviews/2026-11-30-redteam-pass.md#f8).
    QTest::newRow("name in brackets")
        << QStringLiteral("[pkg.test]") << HostnameReason::BadCharacter;
    QTest::newRow("closing bracket only")
        << QStringLiteral("pkg.test]") << HostnameReason::BadCharacter;
    QTest::newRow("IPv6 loopback") << QStringLiteral("::1") << HostnameReason::IpLiteral;
    QTest::newRow("IPv6 v4-mapped")
        << QStringLiteral("::ffff:127.0.0.1") << HostnameReason::IpLiteral;
    QTest::newRow("IPv6 zone id") << QStringLiteral("fe80::1%eth0") << HostnameReason::IpLiteral;
    QTest::newRow("IPv6 metadata")
        << QStringLiteral("[fd00:ec2::254]") << HostnameReason::IpLiteral;
}

void TestHostname::rejected()
{
    QFETCH(QString, input);
    QFETCH(HostnameReason, reason);
    const auto result = airlock::canonicalizeHostname(input);
    QVERIFY2(!result, qPrintable(result.value_or(QString())));
    QCOMPARE(airlock::hostnameReasonName(result.error().reason),
             airlock::hostnameReasonName(reason));
    QVERIFY(!result.error().message.isEmpty());
}

void TestHostname::resultWrapper()
{
    const auto ok = airlock::canonicalHostname(u"Pkg.Test.");
    QVERIFY(ok);
    QCOMPARE(*ok, QStringLiteral("pkg.test"));
    const auto bad = airlock::canonicalHostname(u"127.1");
    QVERIFY(!bad);
    QCOMPARE(bad.error().kind, airlock::ErrorKind::InvalidParams);
    QVERIFY2(bad.error().message.startsWith(QStringLiteral("ip_literal: ")),
             qPrintable(bad.error().message));
}

void TestHostname::reasonNamesAreStable()
{
    QCOMPARE(airlock::hostnameReasonName(HostnameReason::BadCharacter),
             QStringLiteral("bad_character"));
    QCOMPARE(airlock::hostnameReasonName(HostnameReason::IpLiteral), QStringLiteral("ip_literal"));
    QCOMPARE(airlock::hostnameReasonName(HostnameReason::EmptyLabel),
             QStringLiteral("empty_label"));
    QCOMPARE(airlock::hostnameReasonName(HostnameReason::TooLong), QStringLiteral("too_long"));
    QCOMPARE(airlock::hostnameReasonName(HostnameReason::Userinfo), QStringLiteral("userinfo"));
    QCOMPARE(airlock::hostnameReasonName(HostnameReason::NonAscii), QStringLiteral("non_ascii"));
    QCOMPARE(airlock::hostnameReasonName(HostnameReason::TrailingDots),
             QStringLiteral("trailing_dots"));
    QCOMPARE(airlock::hostnameReasonName(HostnameReason::BadPort), QStringLiteral("bad_port"));
}

void TestHostname::authority_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<int>("defaultPort"); // -1: port required
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    QTest::addColumn<bool>("portGiven");
    QTest::newRow("no port, https default")
        << QStringLiteral("pkg.test") << 443 << QStringLiteral("pkg.test") << 443 << false;
    QTest::newRow("no port, http default")
        << QStringLiteral("pkg.test") << 80 << QStringLiteral("pkg.test") << 80 << false;
    QTest::newRow("B3 :443") << QStringLiteral("pkg.test:443") << 443 << QStringLiteral("pkg.test")
                             << 443 << true;
    QTest::newRow("B3 :8443 parses (mismatch is decided later)")
        << QStringLiteral("pkg.test:8443") << 443 << QStringLiteral("pkg.test") << 8443 << true;
    QTest::newRow("B1 trailing dot with port")
        << QStringLiteral("pkg.test.:443") << 443 << QStringLiteral("pkg.test") << 443 << true;
    QTest::newRow("B2 case with port")
        << QStringLiteral("PKG.test:443") << 443 << QStringLiteral("pkg.test") << 443 << true;
    QTest::newRow("CONNECT authority-form")
        << QStringLiteral("pkg.test:443") << -1 << QStringLiteral("pkg.test") << 443 << true;
    QTest::newRow("port 1") << QStringLiteral("pkg.test:1") << 443 << QStringLiteral("pkg.test")
                            << 1 << true;
    QTest::newRow("port 65535") << QStringLiteral("pkg.test:65535") << 443
                                << QStringLiteral("pkg.test") << 65535 << true;
}

void TestHostname::authority()
{
    QFETCH(QString, input);
    QFETCH(int, defaultPort);
    QFETCH(QString, host);
    QFETCH(int, port);
    QFETCH(bool, portGiven);
    const auto result = airlock::parseAuthority(
        input, defaultPort < 0 ? std::nullopt : std::optional<quint16>(quint16(defaultPort)));
    QVERIFY_RESULT(result);
    QCOMPARE(result->host, host);
    QCOMPARE(int(result->port), port);
    QCOMPARE(result->portGiven, portGiven);
}

void TestHostname::authorityRejected_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<int>("defaultPort");
    QTest::addColumn<HostnameReason>("reason");
    QTest::newRow("empty") << QString() << 443 << HostnameReason::Empty;
    QTest::newRow("B3 leading zero :0443")
        << QStringLiteral("pkg.test:0443") << 443 << HostnameReason::BadPort;
    QTest::newRow("B3 empty port") << QStringLiteral("pkg.test:") << 443 << HostnameReason::BadPort;
    QTest::newRow("port 0") << QStringLiteral("pkg.test:0") << 443 << HostnameReason::BadPort;
    QTest::newRow("port 65536") << QStringLiteral("pkg.test:65536") << 443
                                << HostnameReason::BadPort;
    QTest::newRow("port overflow")
        << QStringLiteral("pkg.test:4294967739") << 443 << HostnameReason::BadPort;
    QTest::newRow("port with sign")
        << QStringLiteral("pkg.test:+443") << 443 << HostnameReason::BadPort;
    QTest::newRow("port with letters")
        << QStringLiteral("pkg.test:https") << 443 << HostnameReason::BadPort;
    QTest::newRow("port with space")
        << QStringLiteral("pkg.test: 443") << 443 << HostnameReason::ControlCharacter;
    QTest::newRow("port then path")
        << QStringLiteral("pkg.test:443/x") << 443 << HostnameReason::BadPort;
    QTest::newRow("CONNECT without port")
        << QStringLiteral("pkg.test") << -1 << HostnameReason::MissingPort;
    QTest::newRow("B1 two trailing dots")
        << QStringLiteral("pkg.test..:443") << 443 << HostnameReason::TrailingDots;
    QTest::newRow("B4 Host u@pkg.test")
        << QStringLiteral("u@pkg.test") << 443 << HostnameReason::Userinfo;
    QTest::newRow("B4 CONNECT pkg.test@evil.test:443")
        << QStringLiteral("pkg.test@evil.test:443") << -1 << HostnameReason::Userinfo;
    QTest::newRow("B4 user:pass@")
        << QStringLiteral("u:p@pkg.test") << 443 << HostnameReason::Userinfo;
    QTest::newRow("D1 CONNECT IPv4")
        << QStringLiteral("192.0.2.7:443") << -1 << HostnameReason::IpLiteral;
    QTest::newRow("D1 CONNECT IPv6")
        << QStringLiteral("[2001:db8::7]:443") << -1 << HostnameReason::IpLiteral;
    QTest::newRow("a name in brackets with a port")
        << QStringLiteral("[pkg.test]:443") << -1 << HostnameReason::BadCharacter;
    QTest::newRow("IPv4 short with port")
        << QStringLiteral("127.1:443") << 443 << HostnameReason::IpLiteral;
    QTest::newRow("IPv6 unbracketed with port")
        << QStringLiteral("::1:443") << 443 << HostnameReason::IpLiteral;
    QTest::newRow("A8 list") << QStringLiteral("pkg.test,evil.test") << 443
                             << HostnameReason::BadCharacter;
    QTest::newRow("C2 literal wildcard")
        << QStringLiteral("*.pkg.test:443") << 443 << HostnameReason::Wildcard;
    QTest::newRow("underscore") << QStringLiteral("a_b.test:443") << 443
                                << HostnameReason::BadCharacter;
    QTest::newRow("empty host") << QStringLiteral(":443") << 443 << HostnameReason::Empty;
}

void TestHostname::authorityRejected()
{
    QFETCH(QString, input);
    QFETCH(int, defaultPort);
    QFETCH(HostnameReason, reason);
    const auto result = airlock::parseAuthority(
        input, defaultPort < 0 ? std::nullopt : std::optional<quint16>(quint16(defaultPort)));
    QVERIFY2(!result, qPrintable(result ? result->host : QString()));
    QCOMPARE(airlock::hostnameReasonName(result.error().reason),
             airlock::hostnameReasonName(reason));
}

void TestHostname::pattern_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("expected");
    QTest::newRow("exact") << QStringLiteral("pkg.test") << QStringLiteral("pkg.test");
    QTest::newRow("exact, case and dot")
        << QStringLiteral("Pkg.Test.") << QStringLiteral("pkg.test");
    QTest::newRow("wildcard") << QStringLiteral("*.pkg.test") << QStringLiteral("*.pkg.test");
    QTest::newRow("wildcard, case and dot")
        << QStringLiteral("*.PKG.test.") << QStringLiteral("*.pkg.test");
    // A registrable domain under a public suffix is fine; the suffix itself is not.
    QTest::newRow("below a public suffix")
        << QStringLiteral("*.example.co.uk") << QStringLiteral("*.example.co.uk");
    QTest::newRow("one tenant of a shared host")
        << QStringLiteral("*.octocat.github.io") << QStringLiteral("*.octocat.github.io");
    QTest::newRow("exact public suffix name")
        << QStringLiteral("github.io") << QStringLiteral("github.io");
}

void TestHostname::pattern()
{
    QFETCH(QString, input);
    QFETCH(QString, expected);
    const auto result = airlock::canonicalHostPattern(input);
    QVERIFY_RESULT(result);
    QCOMPARE(*result, expected);
}

void TestHostname::patternRejected_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<HostnameReason>("reason");
    QTest::newRow("star alone") << QStringLiteral("*") << HostnameReason::BadPattern;
    QTest::newRow("star dot") << QStringLiteral("*.") << HostnameReason::BadPattern;
    QTest::newRow("double star") << QStringLiteral("*.*.pkg.test") << HostnameReason::BadPattern;
    QTest::newRow("star in label") << QStringLiteral("a*.pkg.test") << HostnameReason::BadPattern;
    QTest::newRow("inner star") << QStringLiteral("a.*.test") << HostnameReason::BadPattern;
    QTest::newRow("star without dot") << QStringLiteral("*pkg.test") << HostnameReason::BadPattern;
    QTest::newRow("whole TLD") << QStringLiteral("*.test") << HostnameReason::PatternTooBroad;
    QTest::newRow("whole TLD with dot")
        << QStringLiteral("*.com.") << HostnameReason::PatternTooBroad;
    // docs/reviews/2026-11-30-redteam-pass.md#f6: public suffixes (the Public Suffix List, ICANN
    // and private sections), and suffixes whose children are public suffixes (wildcard rules).
    QTest::newRow("ICANN suffix co.uk")
        << QStringLiteral("*.co.uk") << HostnameReason::PatternTooBroad;
    QTest::newRow("private suffix github.io")
        << QStringLiteral("*.GitHub.io.") << HostnameReason::PatternTooBroad;
    QTest::newRow("wildcard rule compute.amazonaws.com")
        << QStringLiteral("*.compute.amazonaws.com") << HostnameReason::PatternTooBroad;
    QTest::newRow("private suffix s3.amazonaws.com")
        << QStringLiteral("*.s3.amazonaws.com") << HostnameReason::PatternTooBroad;
    QTest::newRow("wildcard over IPv4") << QStringLiteral("*.0.0.1") << HostnameReason::IpLiteral;
    QTest::newRow("wildcard two trailing dots")
        << QStringLiteral("*.pkg.test..") << HostnameReason::TrailingDots;
    QTest::newRow("wildcard empty label")
        << QStringLiteral("*..pkg.test") << HostnameReason::EmptyLabel;
    QTest::newRow("exact IP") << QStringLiteral("10.0.0.1") << HostnameReason::IpLiteral;
    QTest::newRow("exact with port") << QStringLiteral("pkg.test:443") << HostnameReason::Port;
    QTest::newRow("URL instead of name")
        << QStringLiteral("https://pkg.test/") << HostnameReason::Port;
    QTest::newRow("underscore") << QStringLiteral("*.a_b.test") << HostnameReason::BadCharacter;
}

void TestHostname::patternRejected()
{
    QFETCH(QString, input);
    QFETCH(HostnameReason, reason);
    const auto result = airlock::canonicalHostPattern(input);
    QVERIFY2(!result, qPrintable(result.value_or(QString())));
    QCOMPARE(airlock::hostnameReasonName(result.error().reason),
             airlock::hostnameReasonName(reason));
}

QTEST_APPLESS_MAIN(TestHostname)
#include "tst_hostname.moc"

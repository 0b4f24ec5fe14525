// The gateway's credential decisions without sockets (issue 4, docs/redteam-cases.md principle 7,
// I1-I4): value and placeholder forms, streaming replacement across piece boundaries, exact-match
// injection and every near miss.
#include "core/gateway/credentials/credentialinjector.h"
#include "core/gateway/credentials/credentialpatterns.h"
#include "core/gateway/credentials/streamreplacer.h"

#include <QTest>

using airlock::CredentialPlacement;
using airlock::gateway::credentialForms;
using airlock::gateway::CredentialInjector;
using airlock::gateway::GatewayCredential;
using airlock::gateway::StreamReplacer;
using Kind = CredentialInjector::Verdict::Kind;

Q_DECLARE_METATYPE(CredentialInjector::Request)

namespace {

const QByteArray kSecret = QByteArrayLiteral("s3cr3t/Value+with=odd&chars");
const QByteArray kPlaceholder =
    QByteArrayLiteral("airlock-placeholder-0123456789abcdef0123456789abcdef");

GatewayCredential credential(CredentialPlacement::Kind kind = CredentialPlacement::Kind::Header)
{
    GatewayCredential c;
    c.binding = 7;
    c.secret = QStringLiteral("api-token");
    c.host = QStringLiteral("api.test");
    c.pathPrefix = QStringLiteral("/v1");
    c.methods = {QStringLiteral("GET"), QStringLiteral("POST")};
    c.placement.kind = kind;
    c.placement.username = QStringLiteral("bot");
    c.placeholder = kPlaceholder;
    c.value = std::make_shared<const airlock::SecretValue>(kSecret);
    return c;
}

CredentialInjector::Request exact()
{
    return {true,
            443,
            QStringLiteral("api.test"),
            QStringLiteral("api.test"),
            QStringLiteral("GET"),
            QStringLiteral("/v1/items?x=1")};
}

QByteArray head(const QByteArray &authorization, const QByteArray &host = "api.test")
{
    return "GET /v1/items?x=1 HTTP/1.1\r\nHost: " + host
        + "\r\nAccept: */*\r\nAuthorization: " + authorization + "\r\n\r\n";
}

} // namespace

class TestCredentialInjector : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void formsFindEncodedValues_data()
    {
        QTest::addColumn<QByteArray>("carrier");
        QTest::newRow("raw") << ("token=" + kSecret + "&x=1");
        QTest::newRow("percent upper") << ("q=" + kSecret.toPercentEncoding());
        QByteArray lowerHex = kSecret.toPercentEncoding();
        for (qsizetype i = 0; i + 2 < lowerHex.size(); ++i) {
            if (lowerHex.at(i) == '%')
                lowerHex.replace(i + 1, 2, lowerHex.mid(i + 1, 2).toLower());
        }
        QTest::newRow("percent lower") << ("q=" + lowerHex);
        for (int prefix = 0; prefix < 3; ++prefix) {
            const QByteArray json = QByteArray(prefix, 'a') + "{\"t\":\"" + kSecret + "\"}";
            QTest::addRow("base64 in JSON, offset %d", prefix) << json.toBase64();
            QTest::addRow("base64url in JSON, offset %d", prefix)
                << json.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
        }
    }

    void formsFindEncodedValues()
    {
        QFETCH(QByteArray, carrier);
        bool found = false;
        for (const QByteArray &form : credentialForms(kSecret))
            found = found || carrier.contains(form);
        QVERIFY(found);
        // And nothing is found in text that does not hold the value.
        for (const QByteArray &form : credentialForms(kSecret))
            QVERIFY(!QByteArray("harmless body with s3cr3t words").contains(form));
    }

    // What real encoders make of a reflected token
    // (docs/reviews/2026-12-01-credentials-redteam.md#f2; the carriers are the output of Python's
    // json, urllib.parse and html modules, and of the PHP, Go and Java conventions applied by
    // hand).
    void formsOfServerEncoders_data()
    {
        const QByteArray kAws = QByteArrayLiteral("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
        const QByteArray kOdd = QByteArrayLiteral("tok&en<x>\"q\\z\tw y'9~*");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("carrier");
        QTest::newRow("A php json")
            << kAws << QByteArray("[\"wJalrXUtnFEMI\\/K7MDENG+bPxRfiCYEXAMPLEKEY\"]");
        QTest::newRow("A python quote")
            << kAws << QByteArray("[wJalrXUtnFEMI/K7MDENG%2BbPxRfiCYEXAMPLEKEY]");
        QTest::newRow("A python quote lower hex")
            << kAws << QByteArray("[wJalrXUtnFEMI/K7MDENG%2bbPxRfiCYEXAMPLEKEY]");
        QTest::newRow("A json every char \\u")
            << kAws
            << QByteArray("[\\u0077\\u004a\\u0061\\u006c\\u0072\\u0058\\u0055\\u0074\\u006e\\u0046"
                          "\\u0045\\u004d\\u0049\\u002f\\u004b\\u0037\\u004d\\u0044\\u0045\\u004e\\"
                          "u0047\\u002b\\u0062\\u0050\\u0078\\u0052\\u0066\\u0069\\u0043\\u0059\\u0"
                          "045\\u0058\\u0041\\u004d\\u0050\\u004c\\u0045\\u004b\\u0045\\u0059]");
        QTest::newRow("B python json") << kOdd << QByteArray("[\"tok&en<x>\\\"q\\\\z\\tw y'9~*\"]");
        QTest::newRow("B go json")
            << kOdd << QByteArray("[\"tok\\u0026en\\u003cx\\u003e\\\"q\\\\z\\tw y'9~*\"]");
        QTest::newRow("B python quote_plus")
            << kOdd << QByteArray("[tok%26en%3Cx%3E%22q%5Cz%09w+y%279~%2A]");
        QTest::newRow("B python urlencode form")
            << kOdd << QByteArray("[t=tok%26en%3Cx%3E%22q%5Cz%09w+y%279~%2A]");
        QTest::newRow("B java URLEncoder")
            << kOdd << QByteArray("[tok%26en%3Cx%3E%22q%5Cz%09w+y%279%7E*]");
        QTest::newRow("B encodeURIComponent")
            << kOdd << QByteArray("[tok%26en%3Cx%3E%22q%5Cz%09w%20y'9~*]");
        QTest::newRow("B html.escape")
            << kOdd << QByteArray("[tok&amp;en&lt;x&gt;&quot;q\\z\tw y&#x27;9~*]");
    }

    void formsOfServerEncoders()
    {
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, carrier);
        const QList<QByteArray> forms = credentialForms(value);
        QVERIFY2(forms.size() <= 27, QByteArray::number(forms.size()).constData());
        StreamReplacer replacer(StreamReplacer::maskRules(forms));
        QByteArray out = replacer.feed(carrier);
        out += replacer.finish();
        QVERIFY2(replacer.matches() == 1, out.constData());
        QVERIFY2(out.startsWith("[") && out.endsWith("]") && out.count('X') >= value.size() - 4,
                 out.constData());
    }

    // A value stored with surrounding whitespace before the vault refused it: the upstream
    // checks and reflects it trimmed, so the trimmed value is scrubbed too
    // (docs/reviews/2026-12-01-credentials-redteam.md#f4).
    void trimmedValueIsScrubbed()
    {
        GatewayCredential padded = credential();
        padded.value = std::make_shared<const airlock::SecretValue>(
            QByteArrayLiteral("trail-secret-value-0042\t"));
        const CredentialInjector injector({padded});
        StreamReplacer replacer(injector.allScrubRules());
        QByteArray out = replacer.feed("X-Echo: trail-secret-value-0042\r\n");
        out += replacer.finish();
        QCOMPARE(out, "X-Echo: " + kPlaceholder + "\r\n");
    }

    // While responses are scrubbed the upstream must neither compress nor slice them
    // (docs/reviews/2026-12-01-credentials-redteam.md#f1 and #f3): every Accept-Encoding, Range and
    // If-Range goes, in any case, and identity is asked for; everything else stays in order.
    void requestsForScrubbedResponses()
    {
        const QByteArray head = "GET /v1/x HTTP/1.1\r\nHost: api.test\r\naccept-encoding: gzip\r\n"
                                "X-Range-Note: keep\r\nRANGE: bytes=0-9\r\nAccept: */*\r\n"
                                "If-Range: \"e\"\r\nAccept-Encoding: br\r\n\r\n";
        QCOMPARE(CredentialInjector::prepareForScrubbing(head),
                 QByteArray("GET /v1/x HTTP/1.1\r\nHost: api.test\r\nX-Range-Note: keep\r\n"
                            "Accept: */*\r\nAccept-Encoding: identity\r\n\r\n"));
    }

    void shortFormsAreLeftOut()
    {
        for (const QByteArray &form : credentialForms(QByteArrayLiteral("abcdefgh")))
            QVERIFY(form.size() >= airlock::gateway::kMinFormBytes);
        QVERIFY(credentialForms({}).isEmpty());
    }

    void replacerWorksAcrossEverySplit()
    {
        const QByteArray input = "head " + kSecret + " middle " + kSecret.toBase64() + " tail";
        QList<StreamReplacer::Rule> rules;
        for (const QByteArray &form : credentialForms(kSecret))
            rules.append({form, "PH"});
        for (qsizetype split = 0; split <= input.size(); ++split) {
            StreamReplacer replacer(rules);
            QByteArray out = replacer.feed(QByteArrayView(input).first(split));
            QVERIFY(replacer.pending() < rules.first().pattern.size());
            out += replacer.feed(QByteArrayView(input).sliced(split));
            out += replacer.finish();
            QCOMPARE(out, QByteArray("head PH middle PH tail"));
            QCOMPARE(replacer.matches(), 2);
        }
        // Byte by byte, too.
        StreamReplacer replacer(rules);
        QByteArray out;
        for (char c : input)
            out += replacer.feed(QByteArrayView(&c, 1));
        out += replacer.finish();
        QCOMPARE(out, QByteArray("head PH middle PH tail"));
    }

    void maskKeepsLength()
    {
        StreamReplacer replacer(StreamReplacer::maskRules(credentialForms(kSecret)));
        const QByteArray input = "a" + kSecret + "b";
        QByteArray out = replacer.feed(input);
        out += replacer.finish();
        QCOMPARE(out.size(), input.size());
        QVERIFY(!out.contains(kSecret));
        QVERIFY(out.startsWith('a') && out.endsWith('b'));
    }

    void exactMatchInjectsTheValue()
    {
        const CredentialInjector injector({credential()});
        const QByteArray guestHead = head("Bearer " + kPlaceholder);
        const auto verdict = injector.inspect(exact(), guestHead);
        QCOMPARE(verdict.kind, Kind::Inject);
        QCOMPARE(verdict.credential, 0);
        QVERIFY(!verdict.detail.toUtf8().contains(kSecret));
        const QByteArray injected = injector.inject(guestHead, 0);
        QVERIFY(injected.endsWith("Authorization: Bearer " + kSecret + "\r\n\r\n"));
        QVERIFY(!injected.contains(kPlaceholder)); // the guest's Authorization line is gone
        QVERIFY(
            injected.startsWith("GET /v1/items?x=1 HTTP/1.1\r\nHost: api.test\r\nAccept: */*\r\n"));
        QCOMPARE(injected.count("Authorization:"), 1);
    }

    void customHeaderAndBasic()
    {
        GatewayCredential custom = credential();
        custom.placement.header = QStringLiteral("X-Api-Key");
        custom.placement.valueTemplate = QStringLiteral("key={secret};v=2");
        const CredentialInjector headerInjector({custom});
        const QByteArray withKey =
            "GET /v1/a HTTP/1.1\r\nHost: api.test\r\nx-api-key: " + kPlaceholder + "\r\n\r\n";
        QCOMPARE(headerInjector.inspect(exact(), withKey).kind, Kind::Inject);
        QVERIFY(headerInjector.inject(withKey, 0)
                    .endsWith("X-Api-Key: key=" + kSecret + ";v=2\r\n\r\n"));

        const CredentialInjector basic({credential(CredentialPlacement::Kind::Basic)});
        const QByteArray basicHead = head("Basic " + ("bot:" + kPlaceholder).toBase64());
        QCOMPARE(basic.inspect(exact(), basicHead).kind, Kind::Inject);
        QVERIFY(
            basic.inject(basicHead, 0)
                .endsWith("Authorization: Basic " + ("bot:" + kSecret).toBase64() + "\r\n\r\n"));
        // An echo of the injected Basic header is scrubbed back to the placeholder.
        StreamReplacer scrub(basic.scrubRules(0));
        const QByteArray echoed = "authorization: Basic " + ("bot:" + kSecret).toBase64();
        QByteArray out = scrub.feed(echoed);
        out += scrub.finish();
        QVERIFY(!out.contains(("bot:" + kSecret).toBase64()));
        QVERIFY(out.contains(kPlaceholder));
    }

    void nearMissesAreDeniedNeverInjected_data()
    {
        QTest::addColumn<CredentialInjector::Request>("request");
        auto changed = [](auto change) {
            CredentialInjector::Request r = exact();
            change(r);
            return r;
        };
        QTest::newRow("cleartext") << changed([](auto &r) {
            r.tls = false;
            r.port = 80;
        });
        QTest::newRow("port 8443") << changed([](auto &r) { r.port = 8443; });
        QTest::newRow("other host") << changed([](auto &r) {
            r.sni = QStringLiteral("evil.test");
            r.host = QStringLiteral("evil.test");
        });
        QTest::newRow("suffix host") << changed([](auto &r) {
            r.sni = QStringLiteral("api.test.evil.test");
            r.host = QStringLiteral("api.test.evil.test");
        });
        QTest::newRow("Host differs from SNI")
            << changed([](auto &r) { r.host = QStringLiteral("tenant.test"); });
        QTest::newRow("other path") << changed([](auto &r) { r.target = QStringLiteral("/v2/x"); });
        QTest::newRow("prefix without boundary")
            << changed([](auto &r) { r.target = QStringLiteral("/v1x/a"); });
        QTest::newRow("other method")
            << changed([](auto &r) { r.method = QStringLiteral("DELETE"); });
    }

    void nearMissesAreDeniedNeverInjected()
    {
        QFETCH(CredentialInjector::Request, request);
        const CredentialInjector injector({credential()});
        const auto verdict = injector.inspect(request, head("Bearer " + kPlaceholder));
        QCOMPARE(verdict.kind, Kind::Exfiltration);
        QVERIFY(!verdict.detail.toUtf8().contains(kSecret));
        // The placeholder hidden in other forms is caught too.
        QCOMPARE(injector
                     .inspect(request,
                              head("Bearer x", "api.test\r\nX-Data: " + kPlaceholder.toBase64()))
                     .kind,
                 Kind::Exfiltration);
    }

    void valueFromTheGuestIsAlwaysDenied()
    {
        const CredentialInjector injector({credential()});
        QCOMPARE(injector.inspect(exact(), head("Bearer " + kSecret)).kind, Kind::Exfiltration);
        QCOMPARE(injector.inspect(exact(), head("Bearer " + kSecret.toPercentEncoding())).kind,
                 Kind::Exfiltration);
    }

    void requestsWithoutPlaceholderPass()
    {
        const CredentialInjector injector({credential()});
        QCOMPARE(injector.inspect(exact(), head("Bearer something-else")).kind, Kind::Pass);
        CredentialInjector::Request other = exact();
        other.host = other.sni = QStringLiteral("pkg.test");
        QCOMPARE(injector.inspect(other, head("Bearer x", "pkg.test")).kind, Kind::Pass);
        QCOMPARE(CredentialInjector().inspect(exact(), head("x")).kind, Kind::Pass);
    }

    void bodyScannerCatchesSplitPlaceholders()
    {
        const CredentialInjector injector({credential()});
        CredentialInjector::Request other = exact();
        other.host = other.sni = QStringLiteral("pkg.test");
        StreamReplacer scanner = injector.bodyScanner(other);
        const QByteArray body = "{\"token\":\"" + kPlaceholder + "\"}";
        scanner.feed(body.first(20));
        scanner.feed(body.sliced(20));
        scanner.finish();
        QCOMPARE(scanner.matches(), 1);
        // The bound host may receive its placeholder in a body; never the value.
        StreamReplacer own = injector.bodyScanner(exact());
        own.feed(body);
        own.finish();
        QCOMPARE(own.matches(), 0);
        StreamReplacer value = injector.bodyScanner(exact());
        value.feed("x=" + kSecret.toBase64());
        value.finish();
        QCOMPARE(value.matches(), 1);
    }

    // A placeholder is per sandbox and secret: two bindings of one secret share it, and a
    // request exact for either gets the injection; a third host is still exfiltration.
    void bindingsSharingAPlaceholder()
    {
        GatewayCredential uploads = credential();
        uploads.binding = 8;
        uploads.host = QStringLiteral("uploads.test");
        uploads.pathPrefix.clear();
        const CredentialInjector injector({credential(), uploads});
        CredentialInjector::Request second = exact();
        second.host = second.sni = QStringLiteral("uploads.test");
        second.target = QStringLiteral("/anything");
        const QByteArray toUploads = head("Bearer " + kPlaceholder, "uploads.test");
        const auto verdict = injector.inspect(second, toUploads);
        QCOMPARE(verdict.kind, Kind::Inject);
        QCOMPARE(verdict.credential, 1);
        QCOMPARE(verdict.injections, QList<int> {1});
        QCOMPARE(injector.inspect(exact(), head("Bearer " + kPlaceholder)).credential, 0);
        CredentialInjector::Request third = exact();
        third.host = third.sni = QStringLiteral("pkg.test");
        QCOMPARE(injector.inspect(third, head("Bearer " + kPlaceholder, "pkg.test")).kind,
                 Kind::Exfiltration);
        // Its own placeholder in the body of an exact request is fine for either binding.
        StreamReplacer scanner = injector.bodyScanner(second);
        scanner.feed("t=" + kPlaceholder);
        scanner.finish();
        QCOMPARE(scanner.matches(), 0);
    }

    // Two secrets for one host in two fields (a key and its secret): both are injected.
    void twoSecretsInOneRequest()
    {
        GatewayCredential key = credential();
        key.placement.header = QStringLiteral("X-Api-Key");
        key.placement.valueTemplate = QStringLiteral("{secret}");
        GatewayCredential other = credential();
        other.binding = 9;
        other.secret = QStringLiteral("api-secret");
        other.placement.header = QStringLiteral("X-Api-Secret");
        other.placement.valueTemplate = QStringLiteral("{secret}");
        other.placeholder = "airlock-placeholder-ffffffffffffffffffffffffffffffff";
        const QByteArray otherValue = "second-Value/9876";
        other.value = std::make_shared<const airlock::SecretValue>(otherValue);
        const CredentialInjector injector({key, other});
        const QByteArray guestHead = "GET /v1/a HTTP/1.1\r\nHost: api.test\r\nX-Api-Key: "
            + kPlaceholder + "\r\nX-Api-Secret: " + other.placeholder + "\r\n\r\n";
        const auto verdict = injector.inspect(exact(), guestHead);
        QCOMPARE(verdict.kind, Kind::Inject);
        QCOMPARE(verdict.injections, (QList<int> {0, 1}));
        QByteArray injected = guestHead;
        for (int index : verdict.injections)
            injected = injector.inject(injected, index);
        QVERIFY(injected.contains("X-Api-Key: " + kSecret + "\r\n"));
        QVERIFY(injected.contains("X-Api-Secret: " + otherValue + "\r\n"));
        QVERIFY(!injected.contains("airlock-placeholder-"));
    }
};

QTEST_GUILESS_MAIN(TestCredentialInjector)
#include "tst_credentialinjector.moc"

// HttpRequestGuard (core/gateway/http/httprequestguard.h): one row per docs/redteam-cases.md input
// of classes A1, A6-A8, B1-B4, C3, D1, D4 and G1 that the HTTP layer decides, plus variants of each
// class. Every row is also fed split at every byte offset and byte by byte, and must give the same
// result.
#include "core/gateway/http/httprequestguard.h"
#include "core/gateway/http/steeringfields.h"
#include "egressrules.h"

#include <QFile>
#include <QRandomGenerator>
#include <QTest>

using airlock::EgressPolicy;
using airlock::EgressRule;
using airlock::gateway::HttpBody;
using airlock::gateway::HttpConnectionContext;
using airlock::gateway::HttpDeny;
using airlock::gateway::HttpEvent;
using airlock::gateway::HttpForward;
using airlock::gateway::HttpFraming;
using airlock::gateway::HttpRequestEnd;
using airlock::gateway::HttpRequestGuard;
using airlock::gateway::HttpTunnel;
using airlock::policy::PolicyMatcher;

using namespace Qt::StringLiterals;

namespace {

using airlock::test::rule;

// The docs/redteam-cases.md placeholders: pkg.test (443 only), api.test with methods and paths,
// plain.test on port 80 for cleartext cases. tenant.test and evil.test are not allowed.
PolicyMatcher casesMatcher()
{
    EgressPolicy policy;
    policy.rules = {
        rule(QStringLiteral("pkg.test")),
        rule(QStringLiteral("api.test"), {443}, {QStringLiteral("GET"), QStringLiteral("POST")},
             {QStringLiteral("/v1")}),
        rule(QStringLiteral("plain.test"), {80}),
    };
    auto matcher = PolicyMatcher::create(policy);
    Q_ASSERT(matcher);
    return *matcher;
}

// "https:<sni>" (TLS to port 443), "http" (transparent port 80), "proxy" (explicit proxy 3128).
HttpConnectionContext contextFor(const QString &mode)
{
    HttpConnectionContext context;
    if (mode.startsWith(u"https:")) {
        context.tls = true;
        context.sni = mode.sliced(6);
        context.port = 443;
    } else if (mode == u"http") {
        context.tls = false;
        context.port = 80;
    } else {
        context.tls = false;
        context.port = 3128;
        context.explicitProxy = true;
    }
    return context;
}

// Everything the guard produced for one input, flattened for comparison.
struct Outcome
{
    QByteArray forwarded; // heads and body bytes, in order: what the upstream would receive
    QByteArray heads; // the re-serialized heads only
    QByteArray payload; // body data with the guard's own chunk framing removed
    bool chunked = false; // the current request's framing
    QStringList targets;
    int ends = 0;
    int status = 0;
    QString reason;
    QByteArray response;
    bool tunnel = false;
    QByteArray leftover;

    // Chunk sizes depend on how the input was split; everything else must not.
    bool operator==(const Outcome &other) const
    {
        return heads == other.heads && payload == other.payload && targets == other.targets
            && ends == other.ends && status == other.status && reason == other.reason
            && response == other.response && tunnel == other.tunnel && leftover == other.leftover;
    }
};

// Removes the chunk framing the guard wrote: each HttpBody holds whole chunks.
QByteArray dechunk(QByteArray bytes)
{
    QByteArray data;
    while (!bytes.isEmpty()) {
        const qsizetype lineEnd = bytes.indexOf("\r\n");
        bool ok = false;
        const qsizetype size = bytes.first(lineEnd).toLongLong(&ok, 16);
        if (!ok || lineEnd < 0)
            return "<bad chunk framing>";
        if (size == 0)
            return bytes == "0\r\n\r\n" ? data : "<bad last chunk>";
        data += bytes.mid(lineEnd + 2, size);
        if (bytes.mid(lineEnd + 2 + size, 2) != "\r\n")
            return "<bad chunk end>";
        bytes = bytes.sliced(lineEnd + 4 + size);
    }
    return data;
}

void collect(Outcome &outcome, const QList<HttpEvent> &events)
{
    for (const HttpEvent &event : events) {
        if (const auto *forward = std::get_if<HttpForward>(&event)) {
            outcome.forwarded += forward->head;
            outcome.heads += forward->head;
            outcome.chunked = forward->framing == HttpFraming::Chunked;
            outcome.targets.append(forward->target);
        } else if (const auto *body = std::get_if<HttpBody>(&event)) {
            outcome.forwarded += body->bytes;
            outcome.payload += outcome.chunked ? dechunk(body->bytes) : body->bytes;
        } else if (std::holds_alternative<HttpRequestEnd>(event)) {
            ++outcome.ends;
        } else if (const auto *deny = std::get_if<HttpDeny>(&event)) {
            QCOMPARE_EQ(outcome.status, 0); // at most one denial
            outcome.status = deny->status;
            outcome.reason = wireName(deny->reason);
            outcome.response = deny->response;
        } else if (const auto *tunnel = std::get_if<HttpTunnel>(&event)) {
            outcome.tunnel = true;
            outcome.leftover = tunnel->leftover;
        }
    }
}

Outcome run(const QString &mode, const QList<QByteArray> &pieces)
{
    HttpRequestGuard guard(contextFor(mode), casesMatcher());
    Outcome outcome;
    for (const QByteArray &piece : pieces)
        collect(outcome, guard.feed(piece));
    return outcome;
}

Outcome runWhole(const QString &mode, const QByteArray &input)
{
    return run(mode, {input});
}

QByteArray get(const QByteArray &target, const QByteArray &fields)
{
    return "GET " + target + " HTTP/1.1\r\n" + fields + "\r\n";
}

} // namespace

class TestHttpRequestGuard : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void verdicts_data();
    void verdicts();
    void headIsReserialized();
    void chunkedBodyIsRechunked();
    void contentLengthBodyStreams();
    void smuggledRequestInBodyStaysBody();
    void pipelinedRequestsEveryOffset();
    void nothingAfterDenial();
    void connectTunnel();
    void oversizedHead();
    void bodyLimit();
    void denialResponse();
    void mutatedRequests();
    void docsListEverySteeringField();
};

void TestHttpRequestGuard::verdicts_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("status"); // 0: every request forwarded
    QTest::addColumn<QString>("reason");
    QTest::addColumn<int>("forwards"); // requests forwarded before the verdict
    QTest::addColumn<QByteArray>("absent"); // must not appear in forwarded bytes

    const QString pkg = QStringLiteral("https:pkg.test");
    const QString http = QStringLiteral("http");
    const QString proxy = QStringLiteral("proxy");
    const QByteArray none;
    const QByteArray smuggled = "GET / HTTP/1.1\r\nHost: tenant.test\r\n\r\n";

    // A1: domain fronting.
    QTest::newRow("A1 ok") << pkg << get("/", "Host: pkg.test\r\n") << 0 << QString() << 1 << none;
    QTest::newRow("A1 fronting") << pkg << get("/", "Host: tenant.test\r\n") << 421
                                 << "sni_host_mismatch" << 0 << QByteArray("tenant");
    QTest::newRow("A1 upper-case other") << pkg << get("/", "HOST: TENANT.test\r\n") << 421
                                         << "sni_host_mismatch" << 0 << QByteArray("/");
    // A6: every request on a kept-alive connection is checked.
    QTest::newRow("A6 second request other host")
        << pkg << get("/a", "Host: pkg.test\r\n") + get("/b", "Host: tenant.test\r\n") << 421
        << "sni_host_mismatch" << 1 << QByteArray("/b");
    QTest::newRow("A6 third request after denial")
        << pkg
        << get("/a", "Host: pkg.test\r\n") + get("/b", "Host: tenant.test\r\n")
            + get("/c", "Host: pkg.test\r\n")
        << 421 << "sni_host_mismatch" << 1 << QByteArray("/c");
    QTest::newRow("A6 two good requests")
        << pkg << get("/a", "Host: pkg.test\r\n") + get("/b", "Host: PKG.test.\r\n") << 0
        << QString() << 2 << none;
    // A7: absolute-form target against Host and scheme.
    QTest::newRow("A7 https target other host")
        << pkg << get("https://evil.test/", "Host: pkg.test\r\n") << 400 << "authority_mismatch"
        << 0 << QByteArray("evil");
    QTest::newRow("A7 http scheme inside TLS")
        << pkg << get("http://pkg.test/x", "Host: pkg.test\r\n") << 400 << "authority_mismatch" << 0
        << none;
    QTest::newRow("A7 https target agrees")
        << pkg << get("https://pkg.test/x?y=1", "Host: pkg.test\r\n") << 0 << QString() << 1
        << QByteArray("https://");
    QTest::newRow("A7 port 80 target pkg host evil")
        << http << get("http://plain.test/x", "Host: evil.test\r\n") << 400 << "authority_mismatch"
        << 0 << none;
    QTest::newRow("A7 port 80 reverse") << http << get("http://evil.test/x", "Host: plain.test\r\n")
                                        << 400 << "authority_mismatch" << 0 << none;
    QTest::newRow("A7 target port differs")
        << pkg << get("https://pkg.test:8443/", "Host: pkg.test\r\n") << 400 << "authority_mismatch"
        << 0 << none;
    // A8: exactly one Host.
    QTest::newRow("A8 two Host lines") << pkg << get("/", "Host: pkg.test\r\nHost: evil.test\r\n")
                                       << 400 << "malformed_host" << 0 << QByteArray("evil");
    QTest::newRow("A8 two Host lines same value")
        << pkg << get("/", "Host: pkg.test\r\nhost: pkg.test\r\n") << 400 << "malformed_host" << 0
        << none;
    QTest::newRow("A8 comma list")
        << pkg << get("/", "Host: pkg.test, evil.test\r\n") << 400 << "malformed_host" << 0 << none;
    QTest::newRow("A8 folded Host") << pkg << get("/", "Host: pkg.test\r\n evil.test\r\n") << 400
                                    << "malformed_host" << 0 << none;
    QTest::newRow("A8 folded Host tab") << pkg << get("/", "Host: pkg.test\r\n\tevil.test\r\n")
                                        << 400 << "malformed_host" << 0 << none;
    QTest::newRow("A8 folded other field") << pkg << get("/", "Host: pkg.test\r\nX-A: 1\r\n 2\r\n")
                                           << 400 << "malformed_header" << 0 << none;
    QTest::newRow("A8 space before colon")
        << pkg << get("/", "Host : pkg.test\r\n") << 400 << "malformed_host" << 0 << none;
    QTest::newRow("A8 tab before colon")
        << pkg << get("/", "Host\t: pkg.test\r\n") << 400 << "malformed_host" << 0 << none;
    QTest::newRow("A8 space before colon other field")
        << pkg << get("/", "Host: pkg.test\r\nX-A : 1\r\n") << 400 << "malformed_header" << 0
        << none;
    QTest::newRow("A8 NUL in Host")
        << pkg << get("/", QByteArray("Host: pkg.test\0evil.test\r\n", 26)) << 400
        << "malformed_host" << 0 << none;
    QTest::newRow("A8 NUL in other field")
        << pkg << get("/", QByteArray("Host: pkg.test\r\nX-A: a\0b\r\n", 26)) << 400
        << "malformed_header" << 0 << none;
    QTest::newRow("A8 tab OWS is fine")
        << pkg << get("/", "Host:\tpkg.test\t\r\n") << 0 << QString() << 1 << none;
    QTest::newRow("A8 lowercase host")
        << pkg << get("/", "host: pkg.test\r\n") << 0 << QString() << 1 << none;
    QTest::newRow("A8 missing Host")
        << pkg << get("/", "Accept: */*\r\n") << 400 << "missing_host" << 0 << none;
    QTest::newRow("A8 empty Host")
        << pkg << get("/", "Host:\r\n") << 400 << "malformed_host" << 0 << none;
    QTest::newRow("A8 bare LF") << pkg << QByteArray("GET / HTTP/1.1\nHost: pkg.test\n\n") << 400
                                << "malformed_header" << 0 << none;
    QTest::newRow("A8 bare LF in field")
        << pkg << get("/", "Host: pkg.test\r\nX-A: 1\nHost: evil.test\r\n") << 400
        << "malformed_header" << 0 << none;
    QTest::newRow("A8 bare CR") << pkg << get("/", "Host: pkg.test\rX: 1\r\n") << 400
                                << "malformed_header" << 0 << none;
    // B1-B4: spelling of names, ports, userinfo.
    QTest::newRow("B1 trailing dot")
        << pkg << get("/", "Host: pkg.test.\r\n") << 0 << QString() << 1 << none;
    QTest::newRow("B1 two trailing dots")
        << pkg << get("/", "Host: pkg.test..\r\n") << 400 << "malformed_host" << 0 << none;
    QTest::newRow("B2 case") << pkg << get("/", "Host: PKG.test\r\n") << 0 << QString() << 1
                             << QByteArray("PKG");
    QTest::newRow("B3 :443") << pkg << get("/", "Host: pkg.test:443\r\n") << 0 << QString() << 1
                             << QByteArray(":443");
    QTest::newRow("B3 :8443") << pkg << get("/", "Host: pkg.test:8443\r\n") << 421
                              << "port_mismatch" << 0 << none;
    QTest::newRow("B3 :0443") << pkg << get("/", "Host: pkg.test:0443\r\n") << 400
                              << "malformed_host" << 0 << none;
    QTest::newRow("B3 empty port")
        << pkg << get("/", "Host: pkg.test:\r\n") << 400 << "malformed_host" << 0 << none;
    QTest::newRow("B4 userinfo in Host")
        << pkg << get("/", "Host: u@pkg.test\r\n") << 400 << "userinfo" << 0 << none;
    QTest::newRow("B4 userinfo in target")
        << http << get("http://plain.test@evil.test/", "Host: plain.test\r\n") << 400 << "userinfo"
        << 0 << none;
    QTest::newRow("B4 userinfo in CONNECT")
        << proxy << QByteArray("CONNECT pkg.test@evil.test:443 HTTP/1.1\r\n\r\n") << 400
        << "userinfo" << 0 << none;
    // C3: patterns are matched against the canonical name only.
    QTest::newRow("C3 suffix host") << pkg << get("/", "Host: pkg.test.evil.test\r\n") << 421
                                    << "sni_host_mismatch" << 0 << none;
    QTest::newRow("C3 suffix host port 80") << http << get("/", "Host: plain.test.evil.test\r\n")
                                            << 403 << "host_not_allowed" << 0 << none;
    QTest::newRow("C3 name in query")
        << http << get("http://evil.test/?x=.plain.test", "Host: evil.test\r\n") << 403
        << "host_not_allowed" << 0 << none;
    // D1: CONNECT to IP literals; CONNECT only on the explicit proxy.
    QTest::newRow("D1 CONNECT IPv4")
        << proxy << QByteArray("CONNECT 192.0.2.7:443 HTTP/1.1\r\nHost: 192.0.2.7:443\r\n\r\n")
        << 403 << "ip_literal" << 0 << none;
    QTest::newRow("D1 CONNECT IPv6")
        << proxy << QByteArray("CONNECT [2001:db8::7]:443 HTTP/1.1\r\n\r\n") << 403 << "ip_literal"
        << 0 << none;
    QTest::newRow("D1 CONNECT on TLS")
        << pkg << QByteArray("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n") << 403
        << "method_forbidden" << 0 << none;
    QTest::newRow("D1 CONNECT on port 80")
        << http << QByteArray("CONNECT pkg.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n") << 403
        << "method_forbidden" << 0 << none;
    QTest::newRow("D2 CONNECT other port")
        << proxy << QByteArray("CONNECT pkg.test:22 HTTP/1.1\r\nHost: pkg.test:22\r\n\r\n") << 403
        << "port_not_allowed" << 0 << none;
    // HTTP/1.1 requires Host on CONNECT too (RFC 9112 §3.2;
    // docs/reviews/2026-11-30-redteam-pass.md#f8).
    QTest::newRow("CONNECT without Host")
        << proxy << QByteArray("CONNECT pkg.test:443 HTTP/1.1\r\n\r\n") << 400 << "missing_host"
        << 0 << none;
    QTest::newRow("Host in brackets is malformed, not an address")
        << pkg << get("/", "Host: [pkg.test]\r\n") << 400 << "malformed_host" << 0 << none;
    QTest::newRow("Host an IPv6 literal")
        << pkg << get("/", "Host: [2001:db8::7]\r\n") << 403 << "ip_literal" << 0 << none;
    QTest::newRow("D1 CONNECT Host differs")
        << proxy << QByteArray("CONNECT pkg.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n")
        << 400 << "authority_mismatch" << 0 << none;
    // D4: plain HTTP to a denied host, transparent and via the explicit proxy.
    QTest::newRow("D4 port 80") << http << get("/log?d=x", "Host: evil.test\r\n") << 403
                                << "host_not_allowed" << 0 << QByteArray("log");
    QTest::newRow("D4 proxy") << proxy << get("http://evil.test/log?d=x", "Host: evil.test\r\n")
                              << 403 << "host_not_allowed" << 0 << QByteArray("log");
    QTest::newRow("D4 proxy allowed") << proxy << get("http://plain.test/x", "Host: plain.test\r\n")
                                      << 0 << QString() << 1 << QByteArray("http://");
    QTest::newRow("D4 proxy origin-form")
        << proxy << get("/x", "Host: plain.test\r\n") << 400 << "bad_target" << 0 << none;
    QTest::newRow("D2 port 80 to 443-only host")
        << http << get("/", "Host: pkg.test\r\n") << 403 << "port_not_allowed" << 0 << none;
    // Policy axes on the request.
    QTest::newRow("method not allowed")
        << QStringLiteral("https:api.test")
        << QByteArray("DELETE /v1/x HTTP/1.1\r\nHost: api.test\r\n\r\n") << 403
        << "method_not_allowed" << 0 << none;
    QTest::newRow("path not allowed")
        << QStringLiteral("https:api.test") << get("/admin", "Host: api.test\r\n") << 403
        << "path_not_allowed" << 0 << none;
    QTest::newRow("dot segments") << QStringLiteral("https:api.test")
                                  << get("/v1/../admin", "Host: api.test\r\n") << 400
                                  << "malformed_path" << 0 << none;
    QTest::newRow("TRACE") << pkg << QByteArray("TRACE / HTTP/1.1\r\nHost: pkg.test\r\n\r\n") << 403
                           << "method_forbidden" << 0 << none;
    QTest::newRow("trace lower case")
        << pkg << QByteArray("trace / HTTP/1.1\r\nHost: pkg.test\r\n\r\n") << 403
        << "method_forbidden" << 0 << none;
    QTest::newRow("TRACK") << pkg << QByteArray("TRACK / HTTP/1.1\r\nHost: pkg.test\r\n\r\n") << 403
                           << "method_forbidden" << 0 << none;
    QTest::newRow("connect lower case on proxy")
        << proxy << QByteArray("connect pkg.test:443 HTTP/1.1\r\n\r\n") << 403 << "method_forbidden"
        << 0 << none;
    QTest::newRow("Upgrade request keeps no upgrade")
        << pkg << get("/ws", "Host: pkg.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n") << 0
        << QString() << 1 << QByteArray("pgrade");
    QTest::newRow("request line tab")
        << pkg << QByteArray("GET\t/ HTTP/1.1\r\nHost: pkg.test\r\n\r\n") << 400
        << "malformed_request" << 0 << none;
    QTest::newRow("obs-text in target")
        << pkg << QByteArray("GET /\xc3\xa9 HTTP/1.1\r\nHost: pkg.test\r\n\r\n") << 400
        << "malformed_path" << 0 << none;
    // Cleartext through the proxy goes only to port 80 (docs/reviews/2026-11-30-redteam-pass.md#f4;
    // docs/policy.md), whatever ports the rule lists: pkg.test's 443 is for TLS.
    QTest::newRow("proxy explicit port")
        << proxy << get("http://plain.test:8080/", "Host: plain.test:8080\r\n") << 403
        << "plain_http_port" << 0 << none;
    QTest::newRow("proxy plain http to a TLS port")
        << proxy << get("http://pkg.test:443/", "Host: pkg.test:443\r\n") << 403
        << "plain_http_port" << 0 << none;
    QTest::newRow("asterisk-form")
        << pkg << QByteArray("OPTIONS * HTTP/1.1\r\nHost: pkg.test\r\n\r\n") << 400 << "bad_target"
        << 0 << none;
    QTest::newRow("fragment") << pkg << get("/a#b", "Host: pkg.test\r\n") << 400 << "bad_target"
                              << 0 << none;
    QTest::newRow("HTTP/1.2") << pkg << QByteArray("GET / HTTP/1.2\r\nHost: pkg.test\r\n\r\n")
                              << 505 << "unsupported_version" << 0 << none;
    QTest::newRow("HTTP/2.0") << pkg << QByteArray("GET / HTTP/2.0\r\nHost: pkg.test\r\n\r\n")
                              << 505 << "unsupported_version" << 0 << none;
    QTest::newRow("empty line first") << pkg << "\r\n" + get("/", "Host: pkg.test\r\n") << 400
                                      << "malformed_request" << 0 << none;
    QTest::newRow("two spaces in request line")
        << pkg << QByteArray("GET  / HTTP/1.1\r\nHost: pkg.test\r\n\r\n") << 400
        << "malformed_request" << 0 << none;
    QTest::newRow("HTTP/1.0 with Host")
        << pkg << QByteArray("GET / HTTP/1.0\r\nHost: pkg.test\r\n\r\n") << 0 << QString() << 1
        << none;
    // G1: framing.
    QTest::newRow("G1 CL and TE, smuggled GET")
        << pkg
        << "POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 4\r\nTransfer-Encoding: "
           "chunked\r\n\r\n0\r\n\r\n"
            + smuggled
        << 400 << "conflicting_framing" << 0 << QByteArray("tenant");
    QTest::newRow("G1 TE then CL")
        << pkg
        << "POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\nContent-Length: "
           "4\r\n\r\n0\r\n\r\n"
            + smuggled
        << 400 << "conflicting_framing" << 0 << QByteArray("tenant");
    QTest::newRow("G1 two different CL")
        << pkg
        << "POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 4\r\nContent-Length: "
           "40\r\n\r\nabcd"
            + smuggled
        << 400 << "bad_content_length" << 0 << QByteArray("tenant");
    QTest::newRow("G1 two equal CL")
        << pkg
        << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 4\r\n"
                      "Content-Length: 4\r\n\r\nabcd")
        << 400 << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL list")
        << pkg << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 4, 4\r\n\r\n")
        << 400 << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL plus sign")
        << pkg << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: +5\r\n\r\n")
        << 400 << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL negative")
        << pkg << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: -1\r\n\r\n")
        << 400 << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL non-digits")
        << pkg << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 5a\r\n\r\n")
        << 400 << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL hex")
        << pkg << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 0x5\r\n\r\n")
        << 400 << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL leading zeros")
        << pkg << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 005\r\n\r\n")
        << 400 << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL empty")
        << pkg << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length:\r\n\r\n") << 400
        << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL huge") << pkg
                                << QByteArray(
                                       "POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: "
                                       "99999999999999999999999\r\n\r\n")
                                << 400 << "bad_content_length" << 0 << none;
    QTest::newRow("G1 CL zero") << pkg
                                << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-"
                                              "Length: 0\r\n\r\n")
                                << 0 << QString() << 1 << none;
    QTest::newRow("G1 TE chunked, identity")
        << pkg
        << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked, "
                      "identity\r\n\r\n0\r\n\r\n")
        << 400 << "bad_transfer_encoding" << 0 << none;
    QTest::newRow("G1 TE gzip, chunked")
        << pkg
        << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: gzip, "
                      "chunked\r\n\r\n0\r\n\r\n")
        << 400 << "bad_transfer_encoding" << 0 << none;
    QTest::newRow("G1 TE chunked twice")
        << pkg
        << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        << 400 << "bad_transfer_encoding" << 0 << none;
    QTest::newRow("G1 TE xchunked")
        << pkg
        << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: xchunked\r\n\r\n")
        << 400 << "bad_transfer_encoding" << 0 << none;
    QTest::newRow("G1 TE on HTTP/1.0")
        << pkg
        << QByteArray("POST / HTTP/1.0\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "0\r\n\r\n")
        << 400 << "bad_transfer_encoding" << 0 << none;
    QTest::newRow("G1 transfer-encoding: Chunked")
        << pkg
        << QByteArray("POST / HTTP/1.1\r\nHost: pkg.test\r\ntransfer-encoding: Chunked\r\n\r\n"
                      "3\r\nabc\r\n0\r\n\r\n")
        << 0 << QString() << 1 << QByteArray("Chunked");
    QTest::newRow("G1 chunked then smuggled")
        << pkg
        << "POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\n"
           "5\r\nhello\r\n0\r\n\r\n"
            + smuggled
        << 421 << "sni_host_mismatch" << 1 << QByteArray("tenant");
    QTest::newRow("G1 bad chunk size")
        << pkg
        << "POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
            + smuggled
        << 400 << "bad_chunk" << 1 << QByteArray("tenant");
    QTest::newRow("G1 chunk longer than its size")
        << pkg
        << "POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\n"
           "3\r\nabcdef\r\n0\r\n\r\n"
            + smuggled
        << 400 << "bad_chunk" << 1 << QByteArray("tenant");
    QTest::newRow("G1 chunk size overflow")
        << pkg
        << "POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\n"
           "10000000000000000\r\nx\r\n"
            + smuggled
        << 400 << "bad_chunk" << 1 << QByteArray("tenant");

    // docs/reviews/2026-12-01-gateway-round3.md#f4: a field name with a byte other than letters,
    // digits and '-' is what CGI-style upstreams fold onto the dashed name ('_' and, lighttpd, any
    // other byte become '_'). Folded onto a field the guard strips, rewrites or refuses: refused,
    // in every spelling; anything else: dropped.
    const QByteArrayList guarded {
        "Keep-Alive",         "Proxy-Connection",       "Proxy-Authorization",
        "Proxy-Authenticate", "Content-Length",         "Transfer-Encoding",
        "X-Forwarded-For",    "X-Forwarded-Host",       "X-Forwarded-Proto",
        "X-Real-IP",          "True-Client-IP",         "X-Client-IP",
        "CF-Connecting-IP",   "X-HTTP-Method-Override", "X-HTTP-Method",
        "X-Method-Override",  "X-Original-URL",         "X-Rewrite-URL"};
    for (const QByteArray &name : guarded) {
        QByteArray underscores = name;
        underscores.replace('-', '_');
        QByteArray mixed = name;
        mixed[mixed.indexOf('-')] = '_';
        QByteArray dots = name;
        dots.replace('-', '.');
        QByteArrayList spellings {underscores, underscores.toLower(), underscores.toUpper(), dots};
        if (mixed != underscores)
            spellings.append(mixed);
        for (const QByteArray &spelling : std::as_const(spellings)) {
            QTest::addRow("F4 %s", spelling.constData())
                << pkg << get("/", "Host: pkg.test\r\n" + spelling + ": 1\r\n") << 400
                << "ambiguous_field_name" << 0 << none;
        }
    }
    QTest::newRow("F4 Transfer_Encoding beside Content-Length")
        << pkg
        << "POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer_Encoding: chunked\r\n"
           "Content-Length: 5\r\n\r\n0\r\n\r\n"_ba
        << 400 << "ambiguous_field_name" << 0 << none;
    QTest::newRow("F4 other underscore name dropped")
        << pkg << get("/", "Host: pkg.test\r\nX_Custom: 1\r\nAccept_Language: de\r\n") << 0
        << QString() << 1 << QByteArray("_");
    QTest::newRow("F4 other dotted name dropped")
        << pkg << get("/", "Host: pkg.test\r\nX.Trace: 1\r\n") << 0 << QString() << 1
        << QByteArray("Trace");
    QTest::newRow("F4 other symbols dropped")
        << pkg << get("/", "Host: pkg.test\r\nX~Y: 1\r\nX+Forwarded: 1\r\n") << 0 << QString() << 1
        << QByteArray(": 1");

    // docs/reviews/2026-12-01-gateway-round3.md#f6: fields that override the method or target are
    // refused, in any letter case and with any value, on every rule; client-address fields are
    // stripped.
    const QString api = QStringLiteral("https:api.test");
    for (const QByteArray &field :
         {"X-HTTP-Method-Override: DELETE"_ba, "x-http-method-override: GET"_ba,
          "X-HTTP-Method: PUT"_ba, "X-METHOD-OVERRIDE: DELETE"_ba, "X-Original-URL: /v2/admin"_ba,
          "x-rewrite-url: /v1/x"_ba}) {
        QTest::addRow("F6 %s", field.constData())
            << api << get("/v1/x", "Host: api.test\r\n" + field + "\r\n") << 403
            << "request_override" << 0 << none;
        QTest::addRow("F6 %s, rule without methods", field.constData())
            << pkg << get("/", "Host: pkg.test\r\n" + field + "\r\n") << 403 << "request_override"
            << 0 << none;
    }
    QTest::newRow("F6 override in a second request")
        << api
        << get("/v1/a", "Host: api.test\r\n")
            + get("/v1/b", "Host: api.test\r\nX-HTTP-Method-Override: DELETE\r\n")
        << 403 << "request_override" << 1 << QByteArray("/v1/b");
    for (const QByteArray &target :
         {"/v1/x?_method=DELETE"_ba, "/v1/x?a=1&_method=DELETE"_ba, "/v1/x?a=1;_method=put"_ba,
          "/v1/x?%5Fmethod=DELETE"_ba, "/v1/x?%5fMETHOD=DELETE"_ba, "/v1/x?_method"_ba,
          "/v1/x?_method=&a=1"_ba, "/v1/x?_method+=DELETE"_ba}) {
        QTest::addRow("F6 query %s", target.constData())
            << api << get(target, "Host: api.test\r\n") << 403 << "request_override" << 0 << none;
    }
    for (const QByteArray &target : {"/v1/x?x_method=DELETE"_ba, "/v1/x?method=DELETE"_ba,
                                     "/v1/x?a=_method"_ba, "/v1/_method?a=1"_ba}) {
        QTest::addRow("F6 query %s forwarded", target.constData())
            << api << get(target, "Host: api.test\r\n") << 0 << QString() << 1 << none;
    }
    for (const QByteArray &name : {"X-Real-IP"_ba, "True-Client-IP"_ba, "X-Client-IP"_ba,
                                   "CF-Connecting-IP"_ba, "x-real-ip"_ba}) {
        QTest::addRow("F6 %s stripped", name.constData())
            << pkg << get("/", "Host: pkg.test\r\n" + name + ": 127.0.0.1\r\n") << 0 << QString()
            << 1 << QByteArray("127.0.0.1");
    }

    // Fields that steer a shared upstream to another host, URL or proxy than the Host and the
    // request line the policy checked: refused; the ones each proxy sets for itself (scheme,
    // client address, X-Forwarded-*): stripped. Known examples by name, then every entry
    // of the table (steeringfields.h), so an entry the guard ignored would fail here.
    for (const QByteArray &field :
         {"X-Host: tenant-b.test"_ba, "X-Original-Host: tenant-b.test"_ba,
          "X-HTTP-Host-Override: tenant-b.test"_ba, "x-envoy-original-dst-host: 10.0.0.9:443"_ba,
          "Proxy: http://10.0.0.9:3128"_ba, "X-Original-URI: /admin"_ba,
          "X-Envoy-Original-Path: /admin"_ba}) {
        QTest::addRow("steering %s", field.constData())
            << pkg << get("/", "Host: pkg.test\r\n" + field + "\r\n") << 403 << "request_override"
            << 0 << none;
    }
    for (const QByteArray &field :
         {"X-Forwarded-Server: tenant-b.test"_ba, "Front-End-Https: tenant-b-on"_ba,
          "CF-Visitor: tenant-b-scheme"_ba, "CloudFront-Forwarded-Proto: tenant-b-proto"_ba,
          "X-Scheme: tenant-b-scheme"_ba, "Fastly-Client-IP: tenant-b-ip"_ba,
          "Client-IP: tenant-b-ip"_ba}) {
        QTest::addRow("steering %s stripped", field.constData())
            << pkg << get("/", "Host: pkg.test\r\n" + field + "\r\n") << 0 << QString() << 1
            << QByteArray("tenant-b");
    }
    for (const airlock::SteeringField &entry : airlock::steeringFields()) {
        QByteArray name(entry.name.data(), qsizetype(entry.name.size()));
        if (name.endsWith('-'))
            name += "server";
        const bool refused = entry.action == airlock::SteeringAction::Refuse;
        QTest::addRow("table %s", name.constData())
            << pkg << get("/", "Host: pkg.test\r\n" + name.toUpper() + ": steered.test\r\n")
            << (refused ? 403 : 0) << (refused ? QStringLiteral("request_override") : QString())
            << (refused ? 0 : 1) << (refused ? none : QByteArray("steered.test"));
    }
}

void TestHttpRequestGuard::verdicts()
{
    QFETCH(QString, mode);
    QFETCH(QByteArray, input);
    QFETCH(int, status);
    QFETCH(QString, reason);
    QFETCH(int, forwards);
    QFETCH(QByteArray, absent);

    const Outcome whole = runWhole(mode, input);
    QCOMPARE(whole.status, status);
    QCOMPARE(whole.reason, reason);
    QCOMPARE(whole.targets.size(), forwards);
    // A denial in the middle of a body leaves that request unfinished (the caller aborts it).
    QCOMPARE(whole.ends, forwards - (status != 0 && whole.ends < forwards ? 1 : 0));
    if (!absent.isEmpty())
        QVERIFY2(!whole.forwarded.contains(absent), whole.forwarded.constData());
    if (status != 0) {
        QVERIFY(whole.response.startsWith("HTTP/1.1 " + QByteArray::number(status) + ' '));
        QVERIFY(whole.response.endsWith("{\"error\":\"" + reason.toLatin1() + "\"}"));
    }

    // What the upstream receives parses, by the same strict rules, as exactly the requests that
    // were forwarded (origin-form, so not on the explicit proxy): nothing unparsed rode along.
    if (mode != u"proxy" && whole.ends == forwards) {
        const Outcome again = runWhole(mode, whole.forwarded);
        QCOMPARE(again.status, 0);
        QCOMPARE(again.targets, whole.targets);
        QCOMPARE(again.heads, whole.heads);
        QCOMPARE(again.payload, whole.payload);
    }

    // The same verdict and the same forwarded bytes however the input is split.
    QList<QByteArray> bytes;
    for (char c : input)
        bytes.append(QByteArray(1, c));
    QCOMPARE(run(mode, bytes), whole);
    for (qsizetype i = 1; i < input.size(); ++i)
        QCOMPARE(run(mode, {input.first(i), input.sliced(i)}), whole);
}

// Hop-by-hop and routing fields are stripped, fields named in Connection too; Host is
// canonical; the target is origin-form (RFC 9110 §7.6.1, §7.6.3; RFC 9112 §3.2.2).
void TestHttpRequestGuard::headIsReserialized()
{
    const QByteArray input = get("https://PKG.test./x?y=1",
                                 "Host: PKG.test.:443\r\nConnection: keep-alive, X-Secret\r\n"
                                 "X-Secret: 1\r\nKeep-Alive: timeout=5\r\nProxy-Connection: "
                                 "keep-alive\r\nProxy-Authorization: Basic eA==\r\nTE: "
                                 "trailers\r\nTrailer: X-T\r\nUpgrade: h2c\r\nForwarded: "
                                 "for=192.0.2.1\r\nX-Forwarded-For: 192.0.2.1\r\n"
                                 "x-forwarded-host: evil.test\r\nVia: 1.1 x\r\nAccept: */*\r\n"
                                 "User-Agent: curl/8\r\n");
    HttpRequestGuard guard(contextFor(QStringLiteral("https:pkg.test")), casesMatcher());
    const auto events = guard.feed(input);
    QCOMPARE(events.size(), 2);
    const auto *forward = std::get_if<HttpForward>(&events[0]);
    QVERIFY(forward);
    QCOMPARE(forward->method, QStringLiteral("GET"));
    QCOMPARE(forward->target, QStringLiteral("/x?y=1"));
    QCOMPARE(forward->authority.host, QStringLiteral("pkg.test"));
    QCOMPARE(forward->authority.port, quint16(443));
    QCOMPARE(forward->policyRule, 0);
    QCOMPARE(forward->framing, HttpFraming::None);
    QVERIFY(forward->keepAlive);
    QCOMPARE(forward->head,
             QByteArray("GET /x?y=1 HTTP/1.1\r\nHost: pkg.test\r\nAccept: */*\r\n"
                        "User-Agent: curl/8\r\n\r\n"));
    QVERIFY(std::holds_alternative<HttpRequestEnd>(events[1]));
    QVERIFY(guard.atMessageBoundary());
    QVERIFY(!guard.finished());

    // Connection: close is reported, and the gateway's own close goes upstream (RFC 9112
    // §9.6), never the guest's field with the options it names.
    HttpRequestGuard closing(contextFor(QStringLiteral("https:pkg.test")), casesMatcher());
    const auto closed =
        closing.feed(get("/", "Host: pkg.test\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\n"));
    QVERIFY(!std::get<HttpForward>(closed[0]).keepAlive);
    QCOMPARE(std::get<HttpForward>(closed[0]).head,
             QByteArray("GET / HTTP/1.1\r\nHost: pkg.test\r\nConnection: close\r\n\r\n"));
}

// Principle 5: a chunked body is forwarded as chunks the guard wrote around data it parsed;
// extensions and trailers never reach the upstream.
void TestHttpRequestGuard::chunkedBodyIsRechunked()
{
    const QByteArray input = "POST /up HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n"
                             "\r\n5;ext=\"GET / HTTP/1.1\"\r\nhello\r\n6\r\n world\r\n0\r\n"
                             "X-Trailer: GET /smuggled\r\n\r\n";
    for (qsizetype step : {qsizetype(1), qsizetype(3), qsizetype(7), input.size()}) {
        QList<QByteArray> pieces;
        for (qsizetype i = 0; i < input.size(); i += step)
            pieces.append(input.mid(i, step));
        const Outcome outcome = run(QStringLiteral("https:pkg.test"), pieces);
        QCOMPARE(outcome.status, 0);
        QCOMPARE(outcome.ends, 1);
        const qsizetype headEnd = outcome.forwarded.indexOf("\r\n\r\n") + 4;
        QVERIFY(outcome.forwarded.first(headEnd).endsWith("Transfer-Encoding: chunked\r\n\r\n"));
        // Re-chunked: the data is "hello world" in chunks of whatever size arrived.
        QByteArray body = outcome.forwarded.sliced(headEnd);
        QVERIFY(body.endsWith("0\r\n\r\n"));
        QVERIFY(!body.contains("ext"));
        QVERIFY(!body.contains("smuggled"));
        QByteArray data;
        while (true) {
            const qsizetype lineEnd = body.indexOf("\r\n");
            bool ok = false;
            const qsizetype size = body.first(lineEnd).toLongLong(&ok, 16);
            QVERIFY(ok);
            if (size == 0)
                break;
            data += body.mid(lineEnd + 2, size);
            QCOMPARE(body.mid(lineEnd + 2 + size, 2), QByteArray("\r\n"));
            body = body.sliced(lineEnd + 4 + size);
        }
        QCOMPARE(data, QByteArray("hello world"));
    }
}

void TestHttpRequestGuard::contentLengthBodyStreams()
{
    HttpRequestGuard guard(contextFor(QStringLiteral("https:pkg.test")), casesMatcher());
    auto events =
        guard.feed("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 10\r\n\r\n01234");
    QCOMPARE(events.size(), 2);
    QCOMPARE(std::get<HttpForward>(events[0]).framing, HttpFraming::ContentLength);
    QCOMPARE(std::get<HttpForward>(events[0]).contentLength, quint64(10));
    QVERIFY(std::get<HttpForward>(events[0]).head.endsWith("Content-Length: 10\r\n\r\n"));
    QCOMPARE(std::get<HttpBody>(events[1]).bytes, QByteArray("01234"));
    QVERIFY(!guard.atMessageBoundary());
    events = guard.feed("56789GET");
    QCOMPARE(events.size(), 2);
    QCOMPARE(std::get<HttpBody>(events[0]).bytes, QByteArray("56789"));
    QVERIFY(std::holds_alternative<HttpRequestEnd>(events[1]));
    QVERIFY(!guard.atMessageBoundary()); // "GET" waits for the rest of its head

    // A body larger than the guard's scratch buffer arrives in several HttpBody events.
    HttpRequestGuard big(contextFor(QStringLiteral("https:pkg.test")), casesMatcher());
    const QByteArray payload(200 * 1024, 'x');
    const Outcome outcome = [&] {
        Outcome o;
        collect(o,
                big.feed("PUT / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: "
                         + QByteArray::number(payload.size()) + "\r\n\r\n" + payload));
        return o;
    }();
    QCOMPARE(outcome.ends, 1);
    QVERIFY(outcome.forwarded.endsWith("\r\n\r\n" + payload));
}

// A request inside a Content-Length body is body data: one request reaches the upstream, and
// the bytes after the body are parsed (and checked) as the next request.
void TestHttpRequestGuard::smuggledRequestInBodyStaysBody()
{
    const QByteArray smuggled = "GET / HTTP/1.1\r\nHost: tenant.test\r\n\r\n";
    const QByteArray input = "POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: "
        + QByteArray::number(smuggled.size()) + "\r\n\r\n" + smuggled + smuggled;
    const Outcome outcome = runWhole(QStringLiteral("https:pkg.test"), input);
    QCOMPARE(outcome.targets, QStringList {QStringLiteral("/")});
    QCOMPARE(outcome.ends, 1);
    QCOMPARE(outcome.reason, QStringLiteral("sni_host_mismatch"));
    QCOMPARE(outcome.forwarded.count("tenant.test"), 1); // only as the first body
}

void TestHttpRequestGuard::pipelinedRequestsEveryOffset()
{
    const QByteArray input = get("/a", "Host: pkg.test\r\n")
        + "POST /b HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 3\r\n\r\nabc"
        + "POST /c HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\n"
          "2\r\nde\r\n0\r\n\r\n"
        + get("/d", "Host: pkg.test\r\n");
    const QString mode = QStringLiteral("https:pkg.test");
    const Outcome whole = runWhole(mode, input);
    QCOMPARE(whole.targets,
             (QStringList {QStringLiteral("/a"), QStringLiteral("/b"), QStringLiteral("/c"),
                           QStringLiteral("/d")}));
    QCOMPARE(whole.ends, 4);
    QCOMPARE(whole.status, 0);
    for (qsizetype i = 1; i < input.size(); ++i) {
        for (qsizetype j = i + 1; j < input.size(); j += 13)
            QCOMPARE(run(mode, {input.first(i), input.sliced(i, j - i), input.sliced(j)}), whole);
    }
}

void TestHttpRequestGuard::nothingAfterDenial()
{
    HttpRequestGuard guard(contextFor(QStringLiteral("https:pkg.test")), casesMatcher());
    auto events = guard.feed(get("/", "Host: evil.test\r\n"));
    QCOMPARE(events.size(), 1);
    QVERIFY(std::holds_alternative<HttpDeny>(events[0]));
    QVERIFY(guard.finished());
    QVERIFY(guard.feed(get("/", "Host: pkg.test\r\n")).isEmpty());
}

void TestHttpRequestGuard::connectTunnel()
{
    HttpRequestGuard guard(contextFor(QStringLiteral("proxy")), casesMatcher());
    const auto events =
        guard.feed("CONNECT PKG.test:443 HTTP/1.1\r\nHost: pkg.test:443\r\n\r\n\x16\x03\x01");
    QCOMPARE(events.size(), 1);
    const auto *tunnel = std::get_if<HttpTunnel>(&events[0]);
    QVERIFY(tunnel);
    QCOMPARE(tunnel->authority.host, QStringLiteral("pkg.test"));
    QCOMPARE(tunnel->authority.port, quint16(443));
    QCOMPARE(tunnel->leftover, QByteArray("\x16\x03\x01"));
    QVERIFY(guard.finished());
    QVERIFY(HttpRequestGuard::connectEstablishedResponse().startsWith("HTTP/1.1 200 "));

    const Outcome withBody = runWhole(
        QStringLiteral("proxy"), "CONNECT pkg.test:443 HTTP/1.1\r\nContent-Length: 1\r\n\r\nx");
    QCOMPARE(withBody.reason, QStringLiteral("conflicting_framing"));
}

void TestHttpRequestGuard::oversizedHead()
{
    const QString mode = QStringLiteral("https:pkg.test");
    const QByteArray big(70 * 1024, 'a');
    Outcome outcome = runWhole(mode, get("/", "Host: pkg.test\r\nX-Big: " + big + "\r\n"));
    QCOMPARE(outcome.status, 431);
    QCOMPARE(outcome.reason, QStringLiteral("header_too_large"));
    // Without an end of head: refused as soon as the limit is passed, fed in small pieces.
    HttpRequestGuard guard(contextFor(mode), casesMatcher());
    Outcome trickled;
    collect(trickled, guard.feed("GET / HTTP/1.1\r\nX-Big: "));
    for (int i = 0; i < 70 && !guard.finished(); ++i)
        collect(trickled, guard.feed(QByteArray(1024, 'a')));
    QCOMPARE(trickled.status, 431);
    QVERIFY(trickled.forwarded.isEmpty());
}

void TestHttpRequestGuard::bodyLimit()
{
    HttpConnectionContext context = contextFor(QStringLiteral("https:pkg.test"));
    context.maxBodyBytes = 4;
    HttpRequestGuard guard(context, casesMatcher());
    Outcome outcome;
    collect(outcome,
            guard.feed("POST / HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 5\r\n\r\nabcde"));
    QCOMPARE(outcome.status, 413);
    QCOMPARE(outcome.reason, QStringLiteral("body_too_large"));
    QVERIFY(outcome.forwarded.isEmpty());

    HttpRequestGuard chunked(context, casesMatcher());
    Outcome chunkedOutcome;
    collect(chunkedOutcome,
            chunked.feed("POST / HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                         "3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n"));
    QCOMPARE(chunkedOutcome.reason, QStringLiteral("body_too_large"));
    QVERIFY(!chunkedOutcome.forwarded.contains("def"));
}

void TestHttpRequestGuard::denialResponse()
{
    const QByteArray response =
        HttpRequestGuard::denialResponse(421, airlock::EgressReason::SniHostMismatch);
    QCOMPARE(response,
             QByteArray("HTTP/1.1 421 Misdirected Request\r\n"
                        "Content-Type: application/json\r\nContent-Length: 29\r\n"
                        "Connection: close\r\n\r\n{\"error\":\"sni_host_mismatch\"}"));
}

// Random byte mutations of valid requests (a seeded, short stand-in for the fuzz target): the
// verdict never depends on how the input is split, and whatever is forwarded re-parses as the
// same requests, so no byte the guard did not parse reaches the upstream (principle 5).
void TestHttpRequestGuard::mutatedRequests()
{
    const QList<QByteArray> seeds = {
        get("/a", "Host: pkg.test\r\nAccept: */*\r\n") + get("/b", "Host: pkg.test\r\n"),
        "POST /p HTTP/1.1\r\nHost: pkg.test\r\nContent-Length: 5\r\n\r\nhello"
            + get("/n", "Host: pkg.test\r\n"),
        "POST /c HTTP/1.1\r\nHost: pkg.test\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n"
            + get("/m", "Host: pkg.test\r\n"),
    };
    const QByteArray alphabet("\r\n\t :,;@/\\.%0159aAfF\x00\x7f\x80-", 24);
    QRandomGenerator random(20261130);
    const QString mode = QStringLiteral("https:pkg.test");
    for (int round = 0; round < 3000; ++round) {
        QByteArray input = seeds[random.bounded(int(seeds.size()))];
        const int edits = 1 + random.bounded(3);
        for (int e = 0; e < edits; ++e) {
            const int at = random.bounded(int(input.size()));
            const char c = alphabet[random.bounded(int(alphabet.size()))];
            switch (random.bounded(3)) {
            case 0:
                input[at] = c;
                break;
            case 1:
                input.insert(at, c);
                break;
            default:
                input.remove(at, 1);
                break;
            }
        }
        const Outcome whole = runWhole(mode, input);
        const int cut = 1 + random.bounded(int(input.size()));
        QVERIFY2(run(mode, {input.first(cut - 1), input.sliced(cut - 1)}) == whole,
                 input.toPercentEncoding().constData());
        const Outcome again = runWhole(mode, whole.forwarded);
        QCOMPARE(again.targets.size(), whole.targets.size());
        QCOMPARE(again.heads, whole.heads);
        if (whole.ends == whole.targets.size()) {
            QCOMPARE(again.status, 0);
            QCOMPARE(again.payload, whole.payload);
        }
    }
}

// Every steering field the guard acts on is in docs/http.md's table, so the table a person
// reads is the one the gateway applies.
void TestHttpRequestGuard::docsListEverySteeringField()
{
    QFile file(QStringLiteral(AIRLOCK_SOURCE_DIR "/docs/http.md"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray docs = file.readAll().toLower();
    for (const airlock::SteeringField &entry : airlock::steeringFields()) {
        const QByteArray name(entry.name.data(), qsizetype(entry.name.size()));
        QVERIFY2(docs.contains("| `" + name + (name.endsWith('-') ? "*`" : "`")), name.constData());
    }
}

QTEST_APPLESS_MAIN(TestHttpRequestGuard)
#include "tst_httprequestguard.moc"

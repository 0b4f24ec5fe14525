// HttpResponseTracker's rewrite mode (docs/credentials.md, "Responses"; docs/redteam-cases.md I3):
// every form of a secret in a response becomes the placeholder, in the head and over the whole
// body, and the rewritten response still frames correctly (chunked for HTTP/1.1, close-delimited
// for HTTP/1.0, bodiless responses untouched), whatever the split of the upstream's bytes. The
// output is parsed again by Boost.Beast here, so a framing mistake fails the test.
#include "core/gateway/credentials/credentialpatterns.h"
#include "core/gateway/http/httpresponsetracker.h"
#include "zlibcompressed.h"

#include <QTest>

#include <zlib.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

using namespace airlock::gateway;
namespace http = boost::beast::http;
using namespace Qt::StringLiterals;

namespace {

const QByteArray kSecret = "tok/Secret+value=42~!";
const QByteArray kPlaceholder = "airlock-placeholder-00112233445566778899aabbccddeeff";

QList<StreamReplacer::Rule> rules()
{
    QList<StreamReplacer::Rule> out;
    for (const QByteArray &form : credentialForms(kSecret))
        out.append({form, kPlaceholder});
    return out;
}

struct Rewritten
{
    QByteArray output; ///< what the guest would receive
    bool finished = false;
    bool keepAlive = true;
    bool error = false;
    bool refused = false;
    qsizetype replacements = 0;
};

// Feeds `bytes` in pieces of `step` (0: at once) with scrubbing on; `eof` ends the stream.
Rewritten rewrite(const QByteArray &bytes, qsizetype step, bool http10 = false, bool head = false,
                  bool eof = false)
{
    HttpResponseTracker tracker;
    tracker.expect(head, HttpResponseTracker::Rewrite {rules(), http10});
    Rewritten result;
    qsizetype offset = 0;
    while (offset < bytes.size() && !result.finished && !result.error) {
        const qsizetype size =
            step == 0 ? bytes.size() - offset : qMin(step, bytes.size() - offset);
        QByteArrayView piece = QByteArrayView(bytes).sliced(offset, size);
        while (!piece.isEmpty()) {
            const auto progress = tracker.feed(piece);
            result.output += progress.output;
            result.replacements += progress.replacements;
            if (progress.refused) {
                result.refused = true;
                result.error = true;
                break;
            }
            if (progress.error) {
                result.error = true;
                break;
            }
            if (progress.finished) {
                result.finished = true;
                result.keepAlive = progress.keepAlive;
                break;
            }
            piece = piece.sliced(progress.consumed);
            if (progress.consumed == 0)
                break;
        }
        offset += size;
    }
    if (eof && !result.finished && !result.error) {
        QByteArray tail;
        result.finished = tracker.finishOnEof(&tail);
        result.output += tail;
        result.keepAlive = false;
    }
    return result;
}

struct Parsed
{
    bool ok = false;
    int status = 0;
    QByteArray body;
    QByteArray head;
    bool chunked = false;
    bool hasContentLength = false;
};

// Parses what the guest got with Beast, as a client would (`eof`: the connection ended).
Parsed parse(const QByteArray &bytes, bool head = false)
{
    Parsed parsed;
    http::response_parser<http::string_body> parser;
    parser.skip(head);
    parser.body_limit(16 * 1024 * 1024);
    boost::system::error_code ec;
    std::size_t used = parser.put(boost::asio::buffer(bytes.constData(), bytes.size()), ec);
    while (!ec && !parser.is_done() && used < std::size_t(bytes.size())) {
        const std::size_t more =
            parser.put(boost::asio::buffer(bytes.constData() + used, bytes.size() - used), ec);
        if (more == 0)
            break;
        used += more;
    }
    if (ec == http::error::need_more || (!ec && !parser.is_done())) {
        ec = {};
        parser.put_eof(ec);
    }
    if (ec || !parser.is_done() || used != std::size_t(bytes.size()))
        return parsed;
    parsed.ok = true;
    parsed.status = int(parser.get().result_int());
    const auto &body = parser.get().body();
    parsed.body = QByteArray(body.data(), qsizetype(body.size()));
    parsed.chunked = parser.chunked();
    parsed.hasContentLength = parser.get().count(http::field::content_length) > 0;
    parsed.head = bytes.left(bytes.indexOf("\r\n\r\n") + 4);
    return parsed;
}

QByteArray withLength(const QByteArray &status, const QByteArray &fields, const QByteArray &body)
{
    return "HTTP/1.1 " + status + "\r\n" + fields
        + "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

QByteArray chunked(const QByteArray &body, qsizetype chunk)
{
    QByteArray out = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (qsizetype at = 0; at < body.size(); at += chunk) {
        const QByteArray piece = body.mid(at, chunk);
        out += QByteArray::number(piece.size(), 16) + ";ext=1\r\n" + piece + "\r\n";
    }
    return out + "0\r\nX-Trailer: " + kSecret + "\r\n\r\n";
}

bool leaks(const QByteArray &bytes)
{
    for (const QByteArray &form : credentialForms(kSecret)) {
        if (bytes.contains(form))
            return true;
    }
    return false;
}

} // namespace

class TestResponseScrubbing : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void contentLengthBecomesChunked_data();
    void contentLengthBecomesChunked();
    void chunkedIsRechunkedAndTrailersDropped();
    void http10IsCloseDelimited();
    void bodilessResponsesKeepTheirFields_data();
    void bodilessResponsesKeepTheirFields();
    void interimResponseIsScrubbedToo();
    void closeDelimitedBodyEndsAtEof();
    void withoutRulesNothingChanges();
    void oversizedHeadIsAnError();
    void codedBodiesAreDecodedThenScrubbed_data();
    void codedBodiesAreDecodedThenScrubbed();
    void unscrubbableResponsesAreRefused_data();
    void unscrubbableResponsesAreRefused();
    void decompressionBombIsCut();
};

void TestResponseScrubbing::contentLengthBecomesChunked_data()
{
    QTest::addColumn<QByteArray>("response");
    QTest::addColumn<QByteArray>("expectedBody");
    QTest::newRow("401 reflecting the token")
        << withLength("401 Unauthorized", "WWW-Authenticate: Bearer token=\"" + kSecret + "\"\r\n",
                      "invalid token " + kSecret + "\n")
        << "invalid token " + kPlaceholder + "\n";
    QTest::newRow("percent-encoded and base64") << withLength(
        "200 OK", QByteArray(), "u=" + kSecret.toPercentEncoding() + "&b=" + kSecret.toBase64())
                                                << "u=" + kPlaceholder + "&b=" + kPlaceholder;
    const QByteArray big = QByteArray(300 * 1024, 'x') + kSecret + QByteArray(1000, 'y');
    QTest::newRow("far into a large body")
        << withLength("200 OK", QByteArray(), big)
        << QByteArray(300 * 1024, 'x') + kPlaceholder + QByteArray(1000, 'y');
    QTest::newRow("nothing to scrub")
        << withLength("200 OK", "X-A: 1\r\n", "plain") << QByteArray("plain");
}

void TestResponseScrubbing::contentLengthBecomesChunked()
{
    QFETCH(QByteArray, response);
    QFETCH(QByteArray, expectedBody);
    for (qsizetype step : {qsizetype(0), qsizetype(1), qsizetype(7), qsizetype(4096)}) {
        if (step == 1 && response.size() > 4096)
            continue; // byte by byte through 300 KiB only costs time
        const Rewritten result = rewrite(response, step);
        QVERIFY2(result.finished && !result.error, qPrintable(QString::number(step)));
        QVERIFY(result.keepAlive);
        QVERIFY2(!leaks(result.output), result.output.left(400).constData());
        const Parsed parsed = parse(result.output);
        QVERIFY2(parsed.ok, result.output.left(400).constData());
        QVERIFY(parsed.chunked);
        QVERIFY(!parsed.hasContentLength);
        QCOMPARE(parsed.body, expectedBody);
        if (response.contains("WWW-Authenticate"))
            QVERIFY(parsed.head.contains("token=\"" + kPlaceholder + "\""));
        QCOMPARE(result.replacements > 0, expectedBody != "plain");
    }
}

void TestResponseScrubbing::chunkedIsRechunkedAndTrailersDropped()
{
    const QByteArray body = "a=" + kSecret + " b=" + kSecret.toBase64() + " end";
    const QByteArray response = chunked(body, 3); // the secret split over many chunks
    for (qsizetype step : {qsizetype(0), qsizetype(1), qsizetype(5)}) {
        const Rewritten result = rewrite(response, step);
        QVERIFY(result.finished);
        QVERIFY2(!leaks(result.output), result.output.constData());
        const Parsed parsed = parse(result.output);
        QVERIFY2(parsed.ok, result.output.constData());
        QCOMPARE(parsed.body, "a=" + kPlaceholder + " b=" + kPlaceholder + " end");
        QVERIFY(!result.output.contains("X-Trailer"));
    }
}

void TestResponseScrubbing::http10IsCloseDelimited()
{
    const QByteArray response =
        withLength("401 Unauthorized", "Connection: keep-alive\r\n", "bad " + kSecret);
    const Rewritten result = rewrite(response, 3, true);
    QVERIFY(result.finished);
    QVERIFY2(!result.keepAlive, "the connection must end the close-delimited body");
    QVERIFY(!leaks(result.output));
    QVERIFY(result.output.contains("Connection: close\r\n"));
    QVERIFY(!result.output.contains("keep-alive"));
    QVERIFY(!result.output.contains("Content-Length"));
    QVERIFY(!result.output.contains("Transfer-Encoding"));
    const Parsed parsed = parse(result.output);
    QVERIFY(parsed.ok);
    QCOMPARE(parsed.body, "bad " + kPlaceholder);
}

void TestResponseScrubbing::bodilessResponsesKeepTheirFields_data()
{
    QTest::addColumn<QByteArray>("response");
    QTest::addColumn<bool>("head");
    QTest::newRow("204") << "HTTP/1.1 204 No Content\r\nX-T: "_ba + kSecret + "\r\n\r\n" << false;
    QTest::newRow("304") << "HTTP/1.1 304 Not Modified\r\nETag: \"1\"\r\n\r\n"_ba << false;
    QTest::newRow("HEAD with Content-Length")
        << "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\nX-T: "_ba + kSecret + "\r\n\r\n"
        << true;
    QTest::newRow("Content-Length 0") << "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"_ba << false;
}

void TestResponseScrubbing::bodilessResponsesKeepTheirFields()
{
    QFETCH(QByteArray, response);
    QFETCH(bool, head);
    const Rewritten result = rewrite(response, 0, false, head);
    QVERIFY(result.finished);
    QVERIFY(!leaks(result.output));
    QVERIFY(!result.output.contains("Transfer-Encoding"));
    if (response.contains("Content-Length"))
        QVERIFY(result.output.contains("Content-Length"));
    const Parsed parsed = parse(result.output, head);
    QVERIFY(parsed.ok);
    QVERIFY(parsed.body.isEmpty());
}

void TestResponseScrubbing::interimResponseIsScrubbedToo()
{
    const QByteArray response = "HTTP/1.1 103 Early Hints\r\nLink: </"_ba + kSecret + ">\r\n\r\n"
        + withLength("200 OK", QByteArray(), "ok");
    const Rewritten result = rewrite(response, 2);
    QVERIFY(result.finished);
    QVERIFY(!leaks(result.output));
    QVERIFY(result.output.startsWith("HTTP/1.1 103 Early Hints\r\nLink: </" + kPlaceholder));
    QVERIFY(parse(result.output.mid(result.output.indexOf("\r\n\r\n") + 4)).ok);
}

void TestResponseScrubbing::closeDelimitedBodyEndsAtEof()
{
    const QByteArray response = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nx=" + kSecret;
    const Rewritten result = rewrite(response, 4, false, false, true);
    QVERIFY(result.finished);
    QVERIFY(!leaks(result.output));
    QVERIFY2(result.output.endsWith("x=" + kPlaceholder), result.output.constData());
}

void TestResponseScrubbing::withoutRulesNothingChanges()
{
    const QByteArray response = withLength("200 OK", "X-A: " + kSecret + "\r\n", kSecret);
    HttpResponseTracker tracker;
    tracker.expect(false);
    QVERIFY(!tracker.rewriting());
    const auto progress = tracker.feed(response);
    QVERIFY(progress.finished);
    QCOMPARE(progress.consumed, response.size());
    QVERIFY(progress.output.isEmpty()); // the caller forwards the input itself
}

void TestResponseScrubbing::oversizedHeadIsAnError()
{
    const QByteArray response =
        "HTTP/1.1 200 OK\r\nX-Big: " + QByteArray(300 * 1024, 'a') + "\r\n\r\n";
    const Rewritten result = rewrite(response, 8192);
    QVERIFY(result.error);
    QVERIFY(!leaks(result.output));
}

// docs/reviews/2026-12-01-credentials-redteam.md#f1: a body in gzip or deflate (content- or
// transfer-coding) is decoded, scrubbed and sent without its coding, whatever the split of the
// upstream's bytes.
void TestResponseScrubbing::codedBodiesAreDecodedThenScrubbed_data()
{
    QTest::addColumn<QByteArray>("response");
    QTest::addColumn<qsizetype>("step");
    const QByteArray plain =
        "{\"echo\":\"Bearer " + kSecret + "\",\"pad\":\"" + QByteArray(3000, 'p') + "\"}\n";
    const QByteArray gz = airlock::test::zlibCompressed(plain, 31);
    const struct
    {
        const char *name;
        QByteArray response;
    } cases[] = {
        {"gzip", withLength("200 OK", "Content-Encoding: gzip\r\n", gz)},
        {"x-gzip", withLength("200 OK", "Content-Encoding: x-gzip\r\n", gz)},
        {"deflate (zlib)",
         withLength("200 OK", "Content-Encoding: deflate\r\n",
                    airlock::test::zlibCompressed(plain, 15))},
        {"deflate (raw)",
         withLength("200 OK", "Content-Encoding: deflate\r\n",
                    airlock::test::zlibCompressed(plain, -15))},
        {"two gzip members",
         withLength("200 OK", "Content-Encoding: gzip\r\n",
                    airlock::test::zlibCompressed(plain.left(1000), 31)
                        + airlock::test::zlibCompressed(plain.mid(1000), 31))},
        {"gzip twice",
         withLength("200 OK", "Content-Encoding: gzip, gzip\r\n",
                    airlock::test::zlibCompressed(gz, 31))},
        {"transfer-coding gzip, chunked",
         "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
             + QByteArray::number(gz.size(), 16) + "\r\n" + gz + "\r\n0\r\n\r\n"},
    };
    for (const auto &c : cases) {
        for (const qsizetype step : {qsizetype(0), qsizetype(1), qsizetype(7), qsizetype(1000)})
            QTest::addRow("%s, step %lld", c.name, qlonglong(step)) << c.response << step;
    }
}

void TestResponseScrubbing::codedBodiesAreDecodedThenScrubbed()
{
    QFETCH(QByteArray, response);
    QFETCH(qsizetype, step);
    const Rewritten result = rewrite(response, step);
    QVERIFY(result.finished && !result.error);
    const Parsed parsed = parse(result.output);
    QVERIFY2(parsed.ok, result.output.left(300).constData());
    QVERIFY(!parsed.head.toLower().contains("content-encoding"));
    QVERIFY(parsed.chunked);
    QVERIFY2(parsed.body.startsWith("{\"echo\":\"Bearer " + kPlaceholder + "\""),
             parsed.body.left(200).constData());
    QVERIFY(parsed.body.endsWith("\"}\n"));
    QCOMPARE(result.replacements, 1);
    QVERIFY(!leaks(result.output));
}

// Codings zlib does not undo, chunked before another coding, and partial content: refused
// before a byte of them is output (docs/reviews/2026-12-01-credentials-redteam.md#f1 and #f3); the
// caller answers 502.
void TestResponseScrubbing::unscrubbableResponsesAreRefused_data()
{
    QTest::addColumn<QByteArray>("response");
    const QByteArray body = "Bearer " + kSecret;
    QTest::newRow("br") << withLength("200 OK", "Content-Encoding: br\r\n", body);
    QTest::newRow("zstd") << withLength("200 OK", "Content-Encoding: zstd\r\n", body);
    QTest::newRow("unknown after gzip")
        << withLength("200 OK", "Content-Encoding: gzip, x-custom\r\n", body);
    QTest::newRow("three layers") << withLength("200 OK", "Content-Encoding: gzip, gzip, gzip\r\n",
                                                body);
    QTest::newRow("206") << withLength("206 Partial Content", "Content-Range: bytes 0-9/100\r\n",
                                       body.left(10));
    QTest::newRow("transfer-coding br under chunked")
        << "HTTP/1.1 200 OK\r\nTransfer-Encoding: br, chunked\r\n\r\n5\r\nBeare\r\n0\r\n\r\n"_ba;
}

void TestResponseScrubbing::unscrubbableResponsesAreRefused()
{
    QFETCH(QByteArray, response);
    for (const qsizetype step : {qsizetype(0), qsizetype(3)}) {
        const Rewritten result = rewrite(response, step);
        QVERIFY(result.refused);
        QVERIFY2(result.output.isEmpty(), result.output.constData());
    }
    // Without credentials nothing is refused: the response passes as it is.
    HttpResponseTracker tracker;
    tracker.expect(false);
    const auto progress = tracker.feed(response);
    QVERIFY(!progress.refused && !progress.error && progress.finished);
}

// 64 MiB of zeros in about 64 KiB of gzip: cut once the output passes 64 times the input
// (plus 1 MiB), never decoded whole into memory.
void TestResponseScrubbing::decompressionBombIsCut()
{
    const QByteArray bomb = airlock::test::zlibCompressed(QByteArray(64 * 1024 * 1024, '\0'), 31);
    const Rewritten result =
        rewrite(withLength("200 OK", "Content-Encoding: gzip\r\n", bomb), 64 * 1024);
    QVERIFY(result.error && !result.refused);
    QVERIFY2(result.output.size() < 1024 * 1024 + 64 * bomb.size() + 256 * 1024,
             qPrintable(QString::number(result.output.size())));
}

QTEST_APPLESS_MAIN(TestResponseScrubbing)
#include "tst_responsescrubbing.moc"

// The pieces of airlock-e2b that need no helper: Connect envelopes, multipart/form-data bodies
// as undici's FormData writes them, the API key file, HTTP framing through Beast (keep-alive,
// 413 for a chunked body over its limit), and a process stream's bound for a client that
// stops reading (on a scripted helper: exec.start answered, exec.output fed in).

#include "core/client/helperclient.h"
#include "core/client/transport.h"
#include "core/e2b/apikeystore.h"
#include "core/e2b/connectenvelope.h"
#include "core/e2b/controlapi.h"
#include "core/e2b/httpconnection.h"
#include "core/e2b/multipartform.h"
#include "core/e2b/processstream.h"
#include "core/protocol/message.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <sys/stat.h>

using namespace airlock::e2b;

namespace {

/// A helper of fixed answers (each request's method → result), delivered through the event
/// loop as from a socket; it records what was asked.
class ScriptedTransport final : public airlock::Transport
{
public:
    QHash<QString, QJsonValue> answers;
    QStringList requests;

    void open() override
    {
        m_open = true;
        QTimer::singleShot(0, this, [this] { Q_EMIT connected(); });
    }
    void close() override
    {
        if (std::exchange(m_open, false))
            Q_EMIT disconnected(QStringLiteral("closed"));
    }
    void write(const QByteArray &bytes) override
    {
        m_pending += bytes;
        qsizetype end;
        while ((end = m_pending.indexOf('\n')) >= 0) {
            const auto message = airlock::protocol::parseMessage(m_pending.left(end));
            m_pending.remove(0, end + 1);
            if (!message || message->type != airlock::protocol::Message::Type::Request)
                continue;
            requests << message->method;
            const QByteArray reply = airlock::protocol::encodeResult(
                message->id, answers.value(message->method, QJsonObject()));
            QTimer::singleShot(0, this, [this, reply] {
                if (m_open)
                    Q_EMIT bytesReceived(reply);
            });
        }
    }
    bool isOpen() const override { return m_open; }
    QString description() const override { return QStringLiteral("scripted helper"); }

private:
    QByteArray m_pending;
    bool m_open = false;
};

} // namespace

class TestE2bWire : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void envelopesRoundTrip();
    void envelopesRefuseWhatIsNotFramed();
    void multipartAsUndiciWritesIt();
    void multipartRefusesAnUnclosedBody();
    void apiKeyIsMadeOnceAndPrivate();
    void apiKeyFileReadableByOthersIsRefused();
    void keepAliveAndChunkedLimit();
    void allowOutBecomesPolicyRules();
    void networkFieldsAirlockDoesOtherwiseAreRefused_data();
    void networkFieldsAirlockDoesOtherwiseAreRefused();
    void slowClientKeepsTheStreamBounded();
};

void TestE2bWire::envelopesRoundTrip()
{
    const QByteArray body = connectenvelope::encode("{\"a\":1}") + connectenvelope::encode("{}");
    QCOMPARE(body.left(5), QByteArray("\x00\x00\x00\x00\x07", 5));
    const auto messages = connectenvelope::decodeAll(body);
    QVERIFY(messages);
    QCOMPARE(*messages, (QList<QByteArray> {"{\"a\":1}", "{}"}));
    const QByteArray end =
        connectenvelope::endStream(QStringLiteral("not_found"), QStringLiteral("gone"));
    QCOMPARE(quint8(end[0]), connectenvelope::kEndStream);
    QCOMPARE(end.mid(5), QByteArray(R"({"error":{"code":"not_found","message":"gone"}})"));
    QCOMPARE(connectenvelope::endStream().mid(5), QByteArray("{}"));
}

void TestE2bWire::envelopesRefuseWhatIsNotFramed()
{
    QVERIFY(!connectenvelope::decodeAll(QByteArray("\x00\x00\x00", 3)));
    QVERIFY(!connectenvelope::decodeAll(QByteArray("\x00\x00\x00\x00\x09{}", 7)));
    QVERIFY(
        !connectenvelope::decodeAll(connectenvelope::encode("{}", connectenvelope::kCompressed)));
    QVERIFY(!connectenvelope::decodeAll(QByteArray("\x00\x7f\xff\xff\xff", 5)));
}

void TestE2bWire::multipartAsUndiciWritesIt()
{
    const QByteArray type = "multipart/form-data; boundary=----formdata-undici-0123456789";
    const QByteArray binary("\r\n--\x00\xff tail", 11);
    const QByteArray body =
        "------formdata-undici-0123456789\r\n"
        "Content-Disposition: form-data; name=\"file\"; filename=\"/tmp/a.txt\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
        "hello\r\n"
        "------formdata-undici-0123456789\r\n"
        "Content-Disposition: form-data; name=\"file\"; filename=\"b%22.bin\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n"
        + binary + "\r\n------formdata-undici-0123456789--\r\n";
    const auto files = parseMultipartForm(type, body);
    QVERIFY2(files, files ? "" : qPrintable(files.error().message));
    QCOMPARE(files->size(), 2);
    QCOMPARE(files->at(0).fieldName, QStringLiteral("file"));
    QCOMPARE(files->at(0).fileName, QStringLiteral("/tmp/a.txt"));
    QCOMPARE(files->at(0).content, QByteArray("hello"));
    QCOMPARE(files->at(1).fileName, QStringLiteral("b\".bin"));
    QCOMPARE(files->at(1).content, binary);
}

void TestE2bWire::multipartRefusesAnUnclosedBody()
{
    const QByteArray type = "multipart/form-data; boundary=XYZ";
    QVERIFY(!parseMultipartForm(type,
                                "--XYZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nabc"));
    QVERIFY(!parseMultipartForm("text/plain", "--XYZ\r\n"));
    QVERIFY(!parseMultipartForm(type, "--XYZ\r\nContent-Type: x\r\n\r\nabc\r\n--XYZ--"));
}

void TestE2bWire::apiKeyIsMadeOnceAndPrivate()
{
    QTemporaryDir dir;
    const QString folder = dir.path() + QStringLiteral("/airlock");
    const auto first = ApiKeyStore::loadOrCreate(folder);
    QVERIFY2(first, first ? "" : qPrintable(first.error().message));
    QVERIFY(first->startsWith("e2b_"));
    QCOMPARE(first->size(), 44);
    struct stat st
    {
    };
    QCOMPARE(::stat(QFile::encodeName(folder + QStringLiteral("/e2b-api-key")).constData(), &st),
             0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));
    const auto second = ApiKeyStore::loadOrCreate(folder);
    QVERIFY(second);
    QCOMPARE(*second, *first);
    QVERIFY(ApiKeyStore::equalKeys(*first, *second));
    QVERIFY(!ApiKeyStore::equalKeys(*first, first->left(43) + 'x'));
    QVERIFY(ApiKeyStore::randomToken("t_") != ApiKeyStore::randomToken("t_"));
}

void TestE2bWire::apiKeyFileReadableByOthersIsRefused()
{
    QTemporaryDir dir;
    const QString path = dir.path() + QStringLiteral("/e2b-api-key");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("e2b_0123456789012345678901234567890123456789\n");
    file.close();
    QCOMPARE(::chmod(QFile::encodeName(path).constData(), 0644), 0);
    const auto key = ApiKeyStore::loadOrCreate(dir.path());
    QVERIFY(!key);
    QVERIFY(key.error().message.contains(QStringLiteral("0600")));
}

void TestE2bWire::keepAliveAndChunkedLimit()
{
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    QList<HttpRequest> seen;
    connect(&server, &QTcpServer::newConnection, this, [&] {
        auto *connection = new HttpConnection(
            server.nextPendingConnection(), [](const HttpRequest &) { return qint64(10); }, this);
        connect(connection, &HttpConnection::requestReceived, this,
                [&seen, connection](const HttpRequest &request) {
                    seen.append(request);
                    HttpResponse response;
                    response.body = request.body;
                    connection->respond(response);
                });
    });
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, server.serverPort());
    QVERIFY(client.waitForConnected(5000));
    // Two requests on one connection, the second chunked: both answered in order.
    client.write("POST /a?path=%2Ftmp%2Fx&b=1 HTTP/1.1\r\nHost: h\r\nX-Thing: One\r\n"
                 "Content-Length: 3\r\n\r\nabc"
                 "POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "2\r\nde\r\n0\r\n\r\n");
    QByteArray answers;
    QTRY_VERIFY_WITH_TIMEOUT((answers += client.readAll()).count("HTTP/1.1 200") == 2, 5000);
    QCOMPARE(seen.size(), 2);
    QCOMPARE(seen[0].path, QStringLiteral("/a"));
    QCOMPARE(seen[0].query.queryItemValue(QStringLiteral("path"), QUrl::FullyDecoded),
             QStringLiteral("/tmp/x"));
    QCOMPARE(seen[0].header("x-thing"), QByteArray("One"));
    QCOMPARE(seen[1].body, QByteArray("de"));
    QVERIFY(answers.contains("abc") && answers.endsWith("de"));
    // A chunked body that grows past the route's limit: 413, and the connection closes.
    client.write("POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n");
    QByteArray refused;
    QTRY_VERIFY_WITH_TIMEOUT((refused += client.readAll()).contains("\"code\":413"), 5000);
    QVERIFY(refused.startsWith("HTTP/1.1 413"));
    QTRY_COMPARE_WITH_TIMEOUT(client.state(), QAbstractSocket::UnconnectedState, 5000);
    QCOMPARE(seen.size(), 2);
}

void TestE2bWire::allowOutBecomesPolicyRules()
{
    QStringList hosts;
    const auto policy = ControlApi::policyFromNetwork(
        QJsonDocument::fromJson(R"({"network": {"allowOut": ["pkg.test", "*.example.test"],
                                                "denyOut": ["0.0.0.0/0"]}})")
            .object(),
        &hosts);
    QVERIFY(policy);
    QCOMPARE(hosts, (QStringList {QStringLiteral("pkg.test"), QStringLiteral("*.example.test")}));
    const QJsonArray rules = policy->value(QStringLiteral("rules")).toArray();
    QCOMPARE(rules.size(), 2);
    QCOMPARE(rules[1].toObject().value(QStringLiteral("host")).toString(),
             QStringLiteral("*.example.test"));
    QCOMPARE(rules[0].toObject().value(QStringLiteral("ports")).toArray(), (QJsonArray {80, 443}));
    // No allowOut: no policy to set, the sandbox keeps deny-all.
    QStringList none;
    const auto empty = ControlApi::policyFromNetwork(QJsonObject(), &none);
    QVERIFY(empty);
    QVERIFY(empty->isEmpty());
}

void TestE2bWire::networkFieldsAirlockDoesOtherwiseAreRefused_data()
{
    QTest::addColumn<QByteArray>("network");
    QTest::addColumn<QString>("named");
    QTest::newRow("cidr") << QByteArray(R"({"allowOut": ["10.0.0.0/8"]})") << "CIDR";
    QTest::newRow("ip") << QByteArray(R"({"allowOut": ["1.2.3.4"]})") << "CIDR";
    QTest::newRow("ipv6") << QByteArray(R"({"allowOut": ["::1"]})") << "CIDR";
    QTest::newRow("denyOut") << QByteArray(R"({"denyOut": ["evil.test"]})") << "allowlist";
    QTest::newRow("rules") << QByteArray(R"({"rules": {"api.test": [{"transform": {}}]}})")
                           << "airlockctl secret set";
    QTest::newRow("egressProxy") << QByteArray(R"({"egressProxy": {"address": "p:1"}})")
                                 << "gateway";
}

void TestE2bWire::networkFieldsAirlockDoesOtherwiseAreRefused()
{
    QFETCH(QByteArray, network);
    QFETCH(QString, named);
    QStringList hosts;
    const auto policy = ControlApi::policyFromNetwork(
        QJsonObject {{QStringLiteral("network"), QJsonDocument::fromJson(network).object()}},
        &hosts);
    QVERIFY(!policy);
    QCOMPARE(policy.error().kind, airlock::ErrorKind::InvalidParams);
    QVERIFY2(policy.error().message.contains(named), qPrintable(policy.error().message));
}

void TestE2bWire::slowClientKeepsTheStreamBounded()
{
    // The helper: hello, exec.start → pid 7, exec.detach.
    auto *transport = new ScriptedTransport;
    transport->answers.insert(QStringLiteral("hello"),
                              QJsonObject {{QStringLiteral("protocol"), 1},
                                           {QStringLiteral("helper"), QStringLiteral("airlockd")}});
    transport->answers.insert(QStringLiteral("exec.start"),
                              QJsonObject {{QStringLiteral("pid"), 7}});
    airlock::HelperClient helper(std::unique_ptr<airlock::Transport>(transport),
                                 QStringLiteral("tst_e2bwire"));
    helper.connectToHelper();
    QTRY_COMPARE(helper.state(), airlock::HelperClient::State::Ready);

    // An HTTP client that sends its request and then reads nothing: its kernel buffers fill,
    // then the server socket's own buffer would grow without the stream's bound.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost));
    QTcpSocket client;
    client.setReadBufferSize(4096);
    client.connectToHost(server.serverAddress(), server.serverPort());
    QVERIFY(server.waitForNewConnection(5000));
    auto *connection = new HttpConnection(server.nextPendingConnection(),
                                          [](const HttpRequest &) { return qint64(1 << 20); });
    QSignalSpy received(connection, &HttpConnection::requestReceived);
    const QByteArray request = connectenvelope::encode("{}");
    client.write("POST /process.Process/Start HTTP/1.1\r\nHost: x\r\n"
                 "Content-Type: application/connect+json\r\nContent-Length: "
                 + QByteArray::number(request.size()) + "\r\n\r\n" + request);
    QTRY_COMPARE(received.count(), 1);

    ProcessStream::resetStats();
    E2bContext context;
    context.helper = &helper;
    auto *stream = new ProcessStream(context, connection, QStringLiteral("sb"));
    QSignalSpy bound(stream, &ProcessStream::bound);
    QSignalSpy finished(stream, &ProcessStream::finished);
    stream->start(QJsonObject {{QStringLiteral("name"), QStringLiteral("sb")}}, false);
    QTRY_COMPARE(bound.count(), 1);

    // Up to 64 MiB of output from the helper in 48 KiB notifications, the event loop turning so
    // the socket sends what the kernel takes; the client reads none of it.
    const QString chunk = QString::fromLatin1(QByteArray(48 * 1024, 'x').toBase64());
    int delivered = 0;
    while (finished.isEmpty() && delivered < 64 * 1024 / 48) {
        stream->deliver(QStringLiteral("exec.output"),
                        {{QStringLiteral("stream"), QStringLiteral("stdout")},
                         {QStringLiteral("data"), chunk}});
        ++delivered;
        QCoreApplication::processEvents();
    }
    QCOMPARE(finished.count(), 1);
    qInfo("%d notifications (48 KiB each) until the end; at most %lld bytes waited unsent",
          delivered, ProcessStream::stats().peakPendingBytes);
    QCOMPARE(ProcessStream::stats().overruns, 1);
    QVERIFY2(ProcessStream::stats().peakPendingBytes <= ProcessStream::kMaxPendingBytes,
             qPrintable(QString::number(ProcessStream::stats().peakPendingBytes)));
    QVERIFY(ProcessStream::stats().peakPendingBytes > ProcessStream::kMaxPendingBytes / 2);
    // The process was let go in the guest, not left to fill airlock-e2b.
    QTRY_VERIFY(transport->requests.contains(QStringLiteral("exec.detach")));

    // Once the client reads, it gets the output that was queued and then the clear end.
    client.setReadBufferSize(0);
    QByteArray got;
    const auto readUntilTheEnd = [&] {
        got += client.readAll();
        return got.contains("resource_exhausted");
    };
    QTRY_VERIFY_WITH_TIMEOUT(readUntilTheEnd(), 30000);
    QVERIFY(got.contains("the client read too slowly"));
    QVERIFY(got.contains("\"stdout\""));
}

QTEST_GUILESS_MAIN(TestE2bWire)
#include "tst_e2bwire.moc"

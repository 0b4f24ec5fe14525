#include "core/protocol/message.h"
#include "resultcheck.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using airlock::ErrorKind;
using airlock::protocol::Message;

Q_DECLARE_METATYPE(Message::Type)
Q_DECLARE_METATYPE(airlock::ErrorKind)

class TestMessage : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parseValid_data();
    void parseValid();
    void parseInvalid_data();
    void parseInvalid();
    void encodeRoundTrip_data();
    void encodeRoundTrip();
    void errorEncoding();
};

void TestMessage::parseValid_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<Message::Type>("type");
    QTest::addColumn<QJsonValue>("id");
    QTest::addColumn<QString>("method");

    QTest::newRow("request, numeric id")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":1}})")
        << Message::Type::Request << QJsonValue(1) << QStringLiteral("hello");
    QTest::newRow("request, string id, no params")
        << QByteArray(R"({"jsonrpc":"2.0","id":"a","method":"sandbox.list"})")
        << Message::Type::Request << QJsonValue(QStringLiteral("a"))
        << QStringLiteral("sandbox.list");
    QTest::newRow("notification") << QByteArray(
        R"({"jsonrpc":"2.0","method":"console.output","params":{"seq":3}})")
                                  << Message::Type::Notification
                                  << QJsonValue(QJsonValue::Undefined)
                                  << QStringLiteral("console.output");
    QTest::newRow("result") << QByteArray(R"({"jsonrpc":"2.0","id":7,"result":{"x":1}})")
                            << Message::Type::Result << QJsonValue(7) << QString();
    QTest::newRow("result null") << QByteArray(R"({"jsonrpc":"2.0","id":7,"result":null})")
                                 << Message::Type::Result << QJsonValue(7) << QString();
    QTest::newRow("error with null id")
        << QByteArray(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})")
        << Message::Type::Error << QJsonValue(QJsonValue::Null) << QString();
    QTest::newRow("whitespace around")
        << QByteArray(R"(  {"jsonrpc" : "2.0", "id" : 2, "method" : "m"}  )")
        << Message::Type::Request << QJsonValue(2) << QStringLiteral("m");
}

void TestMessage::parseValid()
{
    QFETCH(QByteArray, line);
    QFETCH(Message::Type, type);
    QFETCH(QJsonValue, id);
    QFETCH(QString, method);
    const auto message = airlock::protocol::parseMessage(line);
    QVERIFY_RESULT(message);
    QCOMPARE(message->type, type);
    if (!id.isUndefined())
        QCOMPARE(message->id, id);
    QCOMPARE(message->method, method);
}

void TestMessage::parseInvalid_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<airlock::ErrorKind>("kind");

    QTest::newRow("not JSON") << QByteArray("{hello") << ErrorKind::ParseError;
    QTest::newRow("empty") << QByteArray("") << ErrorKind::ParseError;
    QTest::newRow("invalid UTF-8")
        << QByteArray("{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}") << ErrorKind::ParseError;
    QTest::newRow("trailing garbage")
        << QByteArray(R"({"jsonrpc":"2.0","method":"m"} x)") << ErrorKind::ParseError;
    QTest::newRow("batch") << QByteArray(R"([{"jsonrpc":"2.0","id":1,"method":"m"}])")
                           << ErrorKind::InvalidRequest;
    // QJsonDocument only parses an object or array at the top level, so a bare JSON scalar is
    // reported as a parse error.
    QTest::newRow("bare string") << QByteArray(R"("hello")") << ErrorKind::ParseError;
    QTest::newRow("number") << QByteArray("42") << ErrorKind::ParseError;
    QTest::newRow("no jsonrpc") << QByteArray(R"({"id":1,"method":"m"})")
                                << ErrorKind::InvalidRequest;
    QTest::newRow("jsonrpc 1.0") << QByteArray(R"({"jsonrpc":"1.0","id":1,"method":"m"})")
                                 << ErrorKind::InvalidRequest;
    QTest::newRow("method not a string")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":5})") << ErrorKind::InvalidRequest;
    QTest::newRow("empty method") << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":""})")
                                  << ErrorKind::InvalidRequest;
    QTest::newRow("params an array")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1]})")
        << ErrorKind::InvalidRequest;
    QTest::newRow("id an object") << QByteArray(R"({"jsonrpc":"2.0","id":{},"method":"m"})")
                                  << ErrorKind::InvalidRequest;
    QTest::newRow("id bool") << QByteArray(R"({"jsonrpc":"2.0","id":true,"method":"m"})")
                             << ErrorKind::InvalidRequest;
    QTest::newRow("nothing useful")
        << QByteArray(R"({"jsonrpc":"2.0","id":1})") << ErrorKind::InvalidRequest;
}

void TestMessage::parseInvalid()
{
    QFETCH(QByteArray, line);
    QFETCH(airlock::ErrorKind, kind);
    const auto message = airlock::protocol::parseMessage(line);
    QVERIFY(!message);
    QCOMPARE(int(message.error().kind), int(kind));
    QVERIFY(!message.error().message.isEmpty());
}

void TestMessage::encodeRoundTrip_data()
{
    QTest::addColumn<QByteArray>("encoded");
    QTest::addColumn<Message::Type>("type");

    const QJsonObject params {{QStringLiteral("name"), QStringLiteral("demo")},
                              {QStringLiteral("text"), QStringLiteral("line\nbreak \u00e9")}};
    QTest::newRow("request") << airlock::protocol::encodeRequest(
        QJsonValue(41), QStringLiteral("sandbox.get"), params)
                             << Message::Type::Request;
    QTest::newRow("notification") << airlock::protocol::encodeNotification(
        QStringLiteral("sandbox.changed"), params)
                                  << Message::Type::Notification;
    QTest::newRow("result") << airlock::protocol::encodeResult(QJsonValue(QStringLiteral("x")),
                                                               params)
                            << Message::Type::Result;
    QTest::newRow("error") << airlock::protocol::encodeError(
        QJsonValue(3), airlock::Error {ErrorKind::Busy, QStringLiteral("running")})
                           << Message::Type::Error;
}

void TestMessage::encodeRoundTrip()
{
    QFETCH(QByteArray, encoded);
    QFETCH(Message::Type, type);
    // One line: the only newline is the terminator.
    QVERIFY(encoded.endsWith('\n'));
    QCOMPARE(encoded.count('\n'), qsizetype(1));
    const auto message = airlock::protocol::parseMessage(encoded.chopped(1));
    QVERIFY(message);
    QCOMPARE(message->type, type);
    switch (type) {
    case Message::Type::Request:
        QCOMPARE(message->id, QJsonValue(41));
        QCOMPARE(message->method, QStringLiteral("sandbox.get"));
        QCOMPARE(message->params.value(QStringLiteral("text")).toString(),
                 QStringLiteral("line\nbreak \u00e9"));
        break;
    case Message::Type::Notification:
        QCOMPARE(message->method, QStringLiteral("sandbox.changed"));
        QCOMPARE(message->params.value(QStringLiteral("name")).toString(), QStringLiteral("demo"));
        break;
    case Message::Type::Result:
        QCOMPARE(message->id, QJsonValue(QStringLiteral("x")));
        QCOMPARE(message->result.toObject().value(QStringLiteral("name")).toString(),
                 QStringLiteral("demo"));
        break;
    case Message::Type::Error:
        QCOMPARE(int(message->error.kind), int(ErrorKind::Busy));
        QCOMPARE(message->error.message, QStringLiteral("running"));
        break;
    }
}

void TestMessage::errorEncoding()
{
    const QByteArray encoded = airlock::protocol::encodeError(
        QJsonValue(QJsonValue::Undefined),
        airlock::Error {ErrorKind::InvalidName, QStringLiteral("bad")});
    const QJsonObject object = QJsonDocument::fromJson(encoded).object();
    QVERIFY(object.value(QStringLiteral("id")).isNull());
    const QJsonObject error = object.value(QStringLiteral("error")).toObject();
    QCOMPARE(error.value(QStringLiteral("code")).toInt(), -32001);
    QCOMPARE(
        error.value(QStringLiteral("data")).toObject().value(QStringLiteral("kind")).toString(),
        QStringLiteral("invalid_name"));
    // An unknown kind name falls back to the code.
    const auto parsed = airlock::protocol::parseMessage(
        R"({"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"m","data":{"kind":"zzz"}}})");
    QVERIFY(parsed);
    QCOMPARE(int(parsed->error.kind), int(ErrorKind::Busy));
}

QTEST_APPLESS_MAIN(TestMessage)
#include "tst_message.moc"

// How a gateway receives its credentials (docs/gateway.md, "credentials"; docs/credentials.md):
// the control channel reads the raw payload after its line into locked memory, wherever the
// stream splits; the message is validated like binding.add; the injector keeps the value forms
// in locked memory and treats a value with control bytes as unavailable.
#include "core/gateway/controlchannel.h"
#include "core/gateway/credentials/credentialinjector.h"
#include "core/gateway/credentials/gatewaycredentials.h"
#include "core/model/secretvalue.h"
#include "core/protocol/lineframer.h"
#include "resultcheck.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

#include <sys/socket.h>
#include <unistd.h>

using airlock::SecretValue;
using airlock::gateway::ControlChannel;
using airlock::gateway::CredentialInjector;
using airlock::gateway::credentialsFromMessage;
using airlock::gateway::GatewayCredential;
using namespace Qt::StringLiterals;

namespace {

const QByteArray kValue = "value-0123456789/+=";
const QString kPlaceholder = u"airlock-placeholder-0123456789abcdef0123456789abcdef"_s;

QJsonObject entry(qint64 valueBytes, QJsonObject extra = {})
{
    QJsonObject object {
        {u"binding"_s, 4},
        {u"secret"_s, u"tok"_s},
        {u"host"_s, u"API.test."_s},
        {u"pathPrefix"_s, u"/v1"_s},
        {u"methods"_s, QJsonArray {u"GET"_s}},
        {u"placement"_s,
         QJsonObject {{u"type"_s, u"header"_s},
                      {u"header"_s, u"X-Api-Key"_s},
                      {u"template"_s, u"{secret}"_s}}},
        {u"placeholder"_s, kPlaceholder},
        {u"valueBytes"_s, valueBytes},
    };
    for (auto it = extra.begin(); it != extra.end(); ++it)
        object.insert(it.key(), it.value());
    return object;
}

QJsonObject message(const QJsonArray &entries)
{
    return {{u"type"_s, u"credentials"_s}, {u"credentials"_s, entries}};
}

} // namespace

class TestGatewayCredentials : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void secretValueAllocateIsZeroedAndWritable()
    {
        SecretValue value = SecretValue::allocate(40);
        QCOMPARE(value.size(), 40);
        QCOMPARE(value.reveal().toByteArray(), QByteArray(40, '\0'));
        std::memcpy(value.writableBytes(), "abc", 3);
        QVERIFY(value.reveal().startsWith("abc"));
        QVERIFY(SecretValue::allocate(0).isEmpty());
    }

    void framerTakeRawMovesAndWipes()
    {
        airlock::protocol::LineFramer framer(64);
        framer.append("{\"a\":1}\nRAWBYTES{\"b\":2}\n");
        QCOMPARE(**framer.next(), QByteArray("{\"a\":1}"));
        char out[8];
        QCOMPARE(framer.takeRaw(out, 8), 8);
        QCOMPARE(QByteArray(out, 8), QByteArray("RAWBYTES"));
        QCOMPARE(**framer.next(), QByteArray("{\"b\":2}"));
        QCOMPARE(framer.takeRaw(out, 8), 0);
    }

    void messageIsReadLikeABinding()
    {
        const SecretValue payload(kValue);
        auto credentials =
            credentialsFromMessage(message({entry(kValue.size())}), u"demo"_s, payload);
        QVERIFY_RESULT(credentials);
        QCOMPARE(credentials->size(), 1);
        const GatewayCredential &c = credentials->first();
        QCOMPARE(c.binding, 4);
        QCOMPARE(c.host, u"api.test"_s); // canonicalized
        QCOMPARE(c.pathPrefix, u"/v1"_s);
        QCOMPARE(c.methods, QStringList {u"GET"_s});
        QCOMPARE(c.placement.header, u"X-Api-Key"_s);
        QCOMPARE(c.placeholder, kPlaceholder.toLatin1());
        QVERIFY(c.value && c.value->equals(kValue));
        // No value: the binding is still known (its placeholder is guarded).
        auto without = credentialsFromMessage(message({entry(0)}), u"demo"_s, SecretValue());
        QVERIFY(without);
        QVERIFY(!without->first().value);
    }

    void badMessagesAreRefused_data()
    {
        QTest::addColumn<QJsonObject>("message");
        QTest::addColumn<QByteArray>("payload");
        QTest::addColumn<QString>("error");
        const qint64 n = kValue.size();
        QTest::newRow("unknown key in an entry")
            << message({entry(n, {{u"value"_s, u"x"_s}})}) << kValue << u"value: unknown key"_s;
        QTest::newRow("unknown top-level key") << QJsonObject {{u"type"_s, u"credentials"_s},
                                                               {u"credentials"_s, QJsonArray()},
                                                               {u"extra"_s, 1}}
                                               << QByteArray() << u"'extra': unknown key"_s;
        QTest::newRow("wildcard host")
            << message({entry(n, {{u"host"_s, u"*.api.test"_s}})}) << kValue << u"host"_s;
        QTest::newRow("framing header")
            << message({entry(n,
                              {{u"placement"_s,
                                QJsonObject {{u"type"_s, u"header"_s},
                                             {u"header"_s, u"Host"_s},
                                             {u"template"_s, u"{secret}"_s}}}})})
            << kValue << u"placement.header"_s;
        QTest::newRow("placeholder not ours")
            << message({entry(n, {{u"placeholder"_s, u"hello"_s}})}) << kValue << u"placeholder"_s;
        QTest::newRow("payload shorter than announced")
            << message({entry(n)}) << kValue.left(n - 1) << u"beyond the end"_s;
        QTest::newRow("payload longer than the values")
            << message({entry(n)}) << kValue + "x" << u"payloadBytes"_s;
        QTest::newRow("value too short") << message({entry(3)}) << "abc"_ba << u"at least 8"_s;
        QTest::newRow("CRLF in the value")
            << message({entry(12)}) << "abc\r\nX-Evil: 1"_ba.left(12) << u"control character"_s;
        QTest::newRow("binding id 0")
            << message({entry(n, {{u"binding"_s, 0}})}) << kValue << u"binding"_s;
    }

    void badMessagesAreRefused()
    {
        QFETCH(QJsonObject, message);
        QFETCH(QByteArray, payload);
        QFETCH(QString, error);
        const SecretValue value(payload);
        auto credentials = credentialsFromMessage(message, u"demo"_s, value);
        QVERIFY(!credentials);
        QVERIFY2(credentials.error().message.contains(error),
                 qPrintable(credentials.error().message));
        // An error never quotes a value.
        if (!payload.isEmpty())
            QVERIFY(!credentials.error().message.toLatin1().contains(payload));
    }

    void channelReadsThePayloadWhereverTheStreamSplits_data()
    {
        QTest::addColumn<int>("step");
        for (int step : {0, 1, 5, 17})
            QTest::addRow("pieces of %d", step) << step;
    }

    void channelReadsThePayloadWhereverTheStreamSplits()
    {
        QFETCH(int, step);
        int fds[2];
        QCOMPARE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        ControlChannel channel(fds[0]);
        QList<QJsonObject> messages;
        QList<QByteArray> payloads;
        connect(&channel, &ControlChannel::messageReceived, this, [&](const QJsonObject &m) {
            messages.append(m);
            const SecretValue payload = channel.takePayload();
            payloads.append(payload.reveal().toByteArray());
        });
        QJsonObject withPayload = message({entry(kValue.size())});
        withPayload.insert(u"payloadBytes"_s, kValue.size());
        const QByteArray stream = QJsonDocument(withPayload).toJson(QJsonDocument::Compact) + '\n'
            + kValue + "{\"type\":\"policy\"}\n";
        for (qsizetype at = 0; at < stream.size();) {
            const qsizetype size =
                step == 0 ? stream.size() : qMin<qsizetype>(step, stream.size() - at);
            QCOMPARE(::write(fds[1], stream.constData() + at, size_t(size)), ssize_t(size));
            at += size;
            QCoreApplication::processEvents();
        }
        QTRY_COMPARE(messages.size(), 2);
        QCOMPARE(messages.at(0).value(u"type"_s).toString(), u"credentials"_s);
        QCOMPARE(payloads.at(0), kValue);
        QCOMPARE(messages.at(1).value(u"type"_s).toString(), u"policy"_s);
        QVERIFY(payloads.at(1).isEmpty());
        ::close(fds[1]);
    }

    void channelRefusesAnOversizedPayload()
    {
        int fds[2];
        QCOMPARE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        ControlChannel channel(fds[0]);
        QSignalSpy errors(&channel, &ControlChannel::protocolError);
        const QByteArray line = "{\"type\":\"credentials\",\"payloadBytes\":"
            + QByteArray::number(ControlChannel::kMaxPayloadBytes + 1) + "}\n";
        QCOMPARE(::write(fds[1], line.constData(), size_t(line.size())), ssize_t(line.size()));
        QTRY_COMPARE(errors.size(), 1);
        QVERIFY(errors.first().first().toString().contains(u"payloadBytes"_s));
        ::close(fds[1]);
    }

    void injectorTreatsControlBytesAsUnavailable()
    {
        GatewayCredential c;
        c.binding = 1;
        c.secret = u"tok"_s;
        c.host = u"api.test"_s;
        c.placeholder = kPlaceholder.toLatin1();
        c.value = std::make_shared<const SecretValue>("abc\r\nX-Evil: 1"_ba);
        GatewayCredential good = c;
        good.binding = 2;
        good.value = std::make_shared<const SecretValue>(kValue);
        const CredentialInjector injector({c, good});
        QVERIFY(!injector.hasValue(0));
        QVERIFY(injector.hasValue(1));
        QVERIFY(injector.hasValues());
        QVERIFY(injector.scrubRules(0).isEmpty());
        QVERIFY(!injector.allScrubRules().isEmpty());
        // The forms are views of the injector's own (locked) buffer, not of the value.
        const QByteArray form = injector.valuePatterns(1).value(0);
        QVERIFY(!form.isEmpty());
        QVERIFY(form.constData() != good.value->reveal().constData());
    }
};

QTEST_GUILESS_MAIN(TestGatewayCredentials)
#include "tst_gatewaycredentials.moc"

// EgressEvent JSON (docs/gateway.md, "Events"): round trip, absent fields, query redaction.
#include "core/model/egressevent.h"
#include "resultcheck.h"

#include <QJsonDocument>
#include <QTest>

using namespace airlock;
using namespace Qt::StringLiterals;

class TestEgressEvent : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roundTrip();
    void absentFieldsLeftOut();
    void redactPath_data();
    void redactPath();
    void rejects_data();
    void rejects();
    void guestTextIsPrintable_data();
    void guestTextIsPrintable();
};

void TestEgressEvent::guestTextIsPrintable_data()
{
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("received");
    QTest::addColumn<QString>("shown");
    QTest::newRow("SNI with a terminal escape and line ends")
        << u"sni"_s << u"x\x1b[2K\r2026 tls allowed evil.test\nq"_s
        << u"x\\027[2K\\0132026 tls allowed evil.test\\010q"_s;
    QTest::newRow("name with DEL and C1") << u"name"_s << u"a\x7f\u0085b"_s << u"a\\127\\133b"_s;
    QTest::newRow("host with a right-to-left override")
        << u"host"_s << u"evil\u202Etset.gkp"_s << u"evil\\u{202e}tset.gkp"_s;
    QTest::newRow("non-ASCII host")
        << u"host"_s << u"b\u00FCcher.test"_s << u"b\\u{00fc}cher.test"_s;
    QTest::newRow("detail keeps non-ASCII letters but not controls")
        << u"detail"_s << u"b\u00FCcher\tx\u2028y"_s << u"b\u00FCcher\\009x\\u{2028}y"_s;
    QTest::newRow("astral character in a host is one escape")
        << u"host"_s << QString::fromUcs4(U"a\U0001F600b") << u"a\\u{1f600}b"_s;
    QTest::newRow("astral character in a detail stays")
        << u"detail"_s << QString::fromUcs4(U"ok \U0001F600")
        << QString::fromUcs4(U"ok \U0001F600");
    QTest::newRow("plain text is unchanged") << u"detail"_s << u"forwarded to pkg.test port 443"_s
                                             << u"forwarded to pkg.test port 443"_s;
    QTest::newRow("DNS presentation escapes stay")
        << u"name"_s << u"a\\.b\\000.test"_s << u"a\\.b\\000.test"_s;
}

// A guest chooses the bytes of a refused name; what reaches people (window, airlockctl, logs)
// has no control, separator or bidi characters (docs/reviews/2026-12-01-gateway-round3.md#f5).
void TestEgressEvent::guestTextIsPrintable()
{
    QFETCH(QString, field);
    QFETCH(QString, received);
    QFETCH(QString, shown);
    QJsonObject json {{u"time"_s, u"2026-11-30T07:00:00.123Z"_s},
                      {u"layer"_s, u"tls"_s},
                      {u"verdict"_s, u"denied"_s},
                      {u"reason"_s, u"bad_sni"_s}};
    json.insert(field, received);
    const auto event = EgressEvent::fromJson(json);
    QVERIFY(event);
    QCOMPARE(event->toJson().value(field).toString(), shown);
}

void TestEgressEvent::roundTrip()
{
    EgressEvent event;
    event.time = QDateTime(QDate(2026, 11, 30), QTime(7, 0, 0, 123), Qt::UTC);
    event.sandbox = u"demo"_s;
    event.layer = EgressLayer::Http;
    event.allowed = true;
    event.reason = u"allowed"_s;
    event.detail = u"forwarded"_s;
    event.name = u"pkg.test"_s;
    event.sni = u"pkg.test"_s;
    event.host = u"pkg.test"_s;
    event.port = 443;
    event.destination = u"100.112.0.1"_s;
    event.method = u"GET"_s;
    event.path = u"/simple/"_s;
    event.status = 200;
    event.bytesUp = 123;
    event.bytesDown = 4567;
    event.binding = 3;
    event.scrubbed = 2;
    event.count = 40;
    event.alert = true;
    const QJsonObject json = event.toJson();
    QCOMPARE(json.value(u"count"_s).toInteger(), 40);
    QCOMPARE(json.value(u"binding"_s).toInteger(), 3);
    QCOMPARE(json.value(u"scrubbed"_s).toInteger(), 2);
    QCOMPARE(json.value(u"alert"_s).toBool(), true);
    QCOMPARE(json.value(u"time"_s).toString(), u"2026-11-30T07:00:00.123Z"_s);
    QCOMPARE(json.value(u"verdict"_s).toString(), u"allowed"_s);
    QCOMPARE(json.value(u"layer"_s).toString(), u"http"_s);
    const auto back = EgressEvent::fromJson(json);
    QVERIFY_RESULT(back);
    QCOMPARE(*back, event);
}

void TestEgressEvent::absentFieldsLeftOut()
{
    EgressEvent event;
    event.time = QDateTime::currentDateTimeUtc();
    event.layer = EgressLayer::Dns;
    event.reason = u"host_not_allowed"_s;
    event.name = u"evil.test"_s;
    event.dnsType = u"A"_s;
    const QJsonObject json = event.toJson();
    for (const auto *key : {u"port", u"status", u"bytesUp", u"bytesDown", u"sni", u"path",
                            u"binding", u"scrubbed", u"count", u"alert"})
        QVERIFY2(!json.contains(QString::fromUtf16(key)), qPrintable(QString::fromUtf16(key)));
    QCOMPARE(json.value(u"verdict"_s).toString(), u"denied"_s);
    const auto back = EgressEvent::fromJson(json);
    QVERIFY(back);
    QVERIFY(!back->port && !back->status && !back->bytesUp);
}

void TestEgressEvent::redactPath_data()
{
    QTest::addColumn<QString>("target");
    QTest::addColumn<QString>("path");
    QTest::newRow("no query") << u"/a/b"_s << u"/a/b"_s;
    QTest::newRow("query") << u"/a?token=x"_s << u"/a"_s;
    QTest::newRow("empty query") << u"/a?"_s << u"/a"_s;
    QTest::newRow("fragment") << u"/a#x?y"_s << u"/a"_s;
    QTest::newRow("absolute") << u"http://h/a?x=1"_s << u"http://h/a"_s;
    QTest::newRow("query only") << u"?x"_s << QString();
}

void TestEgressEvent::redactPath()
{
    QFETCH(QString, target);
    QFETCH(QString, path);
    QCOMPARE(EgressEvent::redactPath(target), path);
    EgressEvent event;
    event.time = QDateTime::currentDateTimeUtc();
    event.reason = u"allowed"_s;
    event.path = target; // toJson redacts even a hand-built event
    QVERIFY(!QJsonDocument(event.toJson()).toJson().contains('?'));
}

void TestEgressEvent::rejects_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("field");
    const QByteArray base = R"("time":"2026-11-30T07:00:00.123Z","layer":"tls","reason":"no_sni")";
    QTest::newRow("no verdict") << "{" + base + "}" << u"verdict"_s;
    QTest::newRow("bad verdict") << "{" + base + R"(,"verdict":"maybe"})" << u"verdict"_s;
    QTest::newRow("bad layer") << QByteArray(R"({"time":"2026-11-30T07:00:00Z","layer":"udp",)"
                                             R"("verdict":"denied","reason":"x"})")
                               << u"layer"_s;
    QTest::newRow("bad time") << QByteArray(R"({"time":"yesterday","layer":"tls",)"
                                            R"("verdict":"denied","reason":"x"})")
                              << u"time"_s;
    QTest::newRow("query in path")
        << "{" + base + R"(,"verdict":"denied","path":"/a?x"})" << u"path"_s;
    QTest::newRow("port 0") << "{" + base + R"(,"verdict":"denied","port":0})" << u"port"_s;
    QTest::newRow("status string")
        << "{" + base + R"(,"verdict":"denied","status":"200"})" << u"status"_s;
    QTest::newRow("binding 0") << "{" + base + R"(,"verdict":"denied","binding":0})"
                               << u"binding"_s;
    QTest::newRow("alert not a boolean")
        << "{" + base + R"(,"verdict":"denied","alert":"yes"})" << u"alert"_s;
}

void TestEgressEvent::rejects()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, field);
    const auto event = EgressEvent::fromJson(QJsonDocument::fromJson(json).object());
    QVERIFY(!event);
    QCOMPARE(event.error().kind, ErrorKind::InvalidParams);
    QVERIFY2(event.error().message.contains(field), qPrintable(event.error().message));
}

QTEST_APPLESS_MAIN(TestEgressEvent)
#include "tst_egressevent.moc"

// Review round 3 (2026-12-01): attacks not covered by the other red-team binaries, each run
// from the guest namespace through the real table and the real gateway (docs/redteam.md).
// Every function here failed against the gateway it was written for; see
// docs/reviews/2026-12-01-gateway-round3.md.
#include "netns.h"
#include "rawpackets.h"
#include "redteamtestbase.h"
#include "sanitizer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTest>

using namespace airlock::redteam;
using namespace Qt::StringLiterals;

namespace {

qint64 gatewayRssKiB(const GatewayProcess &gateway)
{
    QFile status(u"/proc/%1/status"_s.arg(gateway.pid()));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

/// One DNS query over TCP (two-byte length prefix), RD set, for `name` (dotted, no escapes).
QByteArray tcpDnsQuery(quint16 id, const QByteArray &name, quint16 type)
{
    QByteArray msg;
    msg += char(id >> 8);
    msg += char(id & 0xff);
    msg += "\x01\x00"_ba; // RD
    msg += "\x00\x01\x00\x00\x00\x00\x00\x00"_ba; // QDCOUNT 1
    for (const QByteArray &label : name.split('.')) {
        msg += char(label.size());
        msg += label;
    }
    msg += char(0);
    msg += char(type >> 8);
    msg += char(type & 0xff);
    msg += "\x00\x01"_ba; // IN
    QByteArray frame;
    frame += char(msg.size() >> 8);
    frame += char(msg.size() & 0xff);
    return frame + msg;
}

} // namespace

class TestRedteamEvasion : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void dnsTcpPipelineNeverReadStaysBounded();
    void E6_hostOwnAddress_data();
    void E6_hostOwnAddress();
    void dnsTcpRefusalsHaveEvents_data();
    void dnsTcpRefusalsHaveEvents();
    void strippedFieldsUnderscoreSpelling_data();
    void strippedFieldsUnderscoreSpelling();
    void badSniEventHasNoControlBytes();
    void overrideFieldsDefeatMethodAndPathRules_data();
    void overrideFieldsDefeatMethodAndPathRules();
    void vlanTaggedFrames_data();
    void vlanTaggedFrames();
};

// Finding: the HTTP side stops reading a guest that pipelines and never reads
// (docs/reviews/2026-12-01-credentials-redteam.md#f5), the DNS-over-TCP side does not:
// DnsServer::onTcpReadyRead answers every framed query with QTcpSocket::write, whose buffer has no
// bound, and keeps reading. A guest that streams queries (REFUSED at once, nothing upstream) into
// GW:53/TCP and never reads makes the gateway hold every answer in memory, up to RLIMIT_DATA: the
// gateway dies, and with it every connection and DNS answer of the sandbox.
void TestRedteamEvasion::dnsTcpPipelineNeverReadStaysBounded()
{
    AIRLOCK_SKIP_WHEN_SANITIZED("memory figures are AddressSanitizer's in this build");
    const qint64 before = gatewayRssKiB(m_topo.gateway());
    QVERIFY(before > 0);
    auto connection = m_topo.connect(topo::Gateway, 53);
    QVERIFY2(connection, "no TCP connection to GW:53");
    // A long denied name: ~250-byte queries, each answered REFUSED with the question echoed.
    QByteArray label(60, 'a');
    const QByteArray name =
        label + '.' + label + '.' + label + '.' + QByteArray(40, 'b') + ".x.evil.test";
    QByteArray batch;
    for (int i = 0; i < 1000; ++i)
        batch += tcpDnsQuery(quint16(i), name, 1);
    int sentBatches = 0;
    // 300k queries (~80 MB): far more than the socket buffers on the way hold.
    // A send that stalls (3 s without room) means the gateway stopped reading: what it holds
    // now is all it will hold. One that never stalls fails the second check below.
    while (sentBatches < 300 && connection->send(batch))
        ++sentBatches;
    const qint64 after = gatewayRssKiB(m_topo.gateway());
    qInfo("sent %d000 DNS queries (%lld bytes each) without reading; gateway RSS %lld -> %lld KiB",
          sentBatches, qlonglong(batch.size() / 1000), qlonglong(before), qlonglong(after));
    connection.reset();
    QVERIFY2(
        after - before < 24 * 1024,
        qPrintable(u"the gateway's memory grew by %1 KiB with answers the guest never read"_s.arg(
            after - before)));
    QVERIFY2(sentBatches < 300, "the gateway kept reading a DNS client that never reads");
}

// Finding: RefusedRanges (dns.md) holds special-purpose ranges and the sandbox link, but not
// the addresses of the host the gateway runs on. airlockd passes no refusedRanges, so an
// allowed wildcard name whose authority answers the host's own (public) address makes the
// gateway dial the host itself: a host service on a rule's port (here the trap on the host's
// uplink address, 198.51.100.1:443) gets the connection that F4 drops when the guest tries it
// directly. With a port-80 rule the request itself arrives; with TLS the 502's reason tells
// open from closed host ports.
void TestRedteamEvasion::E6_hostOwnAddress_data()
{
    QTest::addColumn<bool>("plainHttp");
    QTest::newRow("TLS, rule *.wild.test:443") << false;
    QTest::newRow("plain HTTP, rule *.wild.test:80") << true;
}

void TestRedteamEvasion::E6_hostOwnAddress()
{
    QFETCH(bool, plainHttp);
    const QString name = u"host.wild.test"_s;
    m_topo.dns().setRecords(name, {u"A "_s + topo::HostUplink.toString()});
    if (plainHttp) {
        QJsonObject policy = GatewayTopology::redteamPolicy();
        QJsonArray rules = policy.value(u"rules"_s).toArray();
        rules.append(QJsonObject {{u"host"_s, u"*.wild.test"_s}, {u"ports"_s, QJsonArray {80}}});
        policy.insert(u"rules"_s, rules);
        QVERIFY(m_topo.applyPolicy(policy));
    }
    const auto restore = qScopeGuard([&] {
        if (plainHttp)
            m_topo.applyPolicy(GatewayTopology::redteamPolicy());
    });
    const DnsResult result = m_topo.resolve(name);
    QVERIFY2(result.answered, "no DNS answer");
    HttpResponse response;
    const QByteArray request = "GET /admin HTTP/1.1\r\nHost: " + name.toLatin1() + "\r\n\r\n";
    if (plainHttp) {
        auto connection = m_topo.connect(topo::EvilServer, 80);
        QVERIFY(connection);
        QVERIFY(connection->send(request));
        response = connection->readResponse(3000);
    } else {
        bool handshake = true;
        auto connection = openTls(topo::EvilServer, name.toLatin1(), &handshake);
        QVERIFY(connection);
        if (handshake) {
            connection->send(request);
            response = connection->readResponse(3000);
        }
    }
    qInfo("DNS rcode %d, %lld addresses; status %d %s", result.rcode,
          qlonglong(result.addresses.size()), response.status, response.body.constData());
    REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
    QVERIFY2(result.rcode != 0 && result.addresses.isEmpty(),
             "the host's own address was handed out as an upstream for an allowed name");
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {u"private_destination"_s}));
}

// Finding: two refusals of the DNS TCP listener make no egress event (docs/redteam-cases.md: every
// denial produces an egress.event with a typed reason): a frame length under 12 or over 4096 aborts
// the connection silently, and so does a connection beyond the 32 DNS TCP connections.
void TestRedteamEvasion::dnsTcpRefusalsHaveEvents_data()
{
    QTest::addColumn<int>("mode");
    QTest::newRow("frame over 4096 bytes") << 0;
    QTest::newRow("frame under 12 bytes") << 1;
    QTest::newRow("33rd TCP connection") << 2;
}

void TestRedteamEvasion::dnsTcpRefusalsHaveEvents()
{
    QFETCH(int, mode);
    std::vector<std::unique_ptr<GuestConnection>> held;
    std::unique_ptr<GuestConnection> connection;
    if (mode == 2) {
        for (int i = 0; i < 32; ++i) {
            auto c = m_topo.connect(topo::Gateway, 53);
            QVERIFY(c);
            held.push_back(std::move(c));
        }
        // All 32 accepted by the gateway (none left in the kernel's queue) before the 33rd.
        QTRY_COMPARE(m_topo.pendingAccepts(topo::GatewayDnsPort), 0);
        connection = m_topo.connect(topo::Gateway, 53);
        QVERIFY(connection);
        connection->send(tcpDnsQuery(7, "pkg.test", 28));
    } else {
        connection = m_topo.connect(topo::Gateway, 53);
        QVERIFY(connection);
        connection->send(mode == 0 ? "\x20\x00"_ba + QByteArray(64, 'x') : "\x00\x05hello"_ba);
    }
    QByteArray got;
    QVERIFY2(connection->closedByPeer(3000, &got), "the DNS listener kept the connection");
    QVERIFY2(got.isEmpty(), "an answer came back");
    REDTEAM_CHECK(expectEgress(m_topo.gateway(), u"denied"_s, {}, 2000));
}

// Finding: the guard strips hop-by-hop, routing and framing fields by exact name
// (httprequestguard.cpp isStrippedField), but CGI/WSGI/Rack-style upstreams (and proxies that
// normalize names the same way) read `X_Forwarded_For`, `X_Forwarded_Host` or
// `Transfer_Encoding` as HTTP_X_FORWARDED_FOR / HTTP_X_FORWARDED_HOST / HTTP_TRANSFER_ENCODING,
// the very fields the guard removes so that "the guest must not speak for the gateway"
// (http.md, "The forwarded head"). The underscore spelling reaches the upstream unchanged,
// beside the gateway's own Content-Length: a second framing for such an upstream.
void TestRedteamEvasion::strippedFieldsUnderscoreSpelling_data()
{
    QTest::addColumn<QByteArray>("field");
    QTest::newRow("X_Forwarded_For") << "X_Forwarded_For: 127.0.0.1"_ba;
    QTest::newRow("X_Forwarded_Host") << "X_Forwarded_Host: tenant.test"_ba;
    QTest::newRow("Transfer_Encoding beside the gateway's Content-Length")
        << "Transfer_Encoding: chunked"_ba;
    QTest::newRow("Proxy_Authorization") << "Proxy_Authorization: Basic Zm9vOmJhcg=="_ba;
}

void TestRedteamEvasion::strippedFieldsUnderscoreSpelling()
{
    QFETCH(QByteArray, field);
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!pkg.isNull());
    bool handshake = false;
    auto connection = openTls(pkg, "pkg.test"_ba, &handshake);
    QVERIFY(connection && handshake);
    QVERIFY(connection->send("POST /upload HTTP/1.1\r\nHost: pkg.test\r\n" + field
                             + "\r\nContent-Length: 5\r\n\r\n0\r\n\r\n"));
    const HttpResponse response = connection->readResponse();
    QVERIFY(m_topo.settle());
    const auto pkgConnections = m_topo.upstream().connections(u"pkg"_s);
    QStringList leaked;
    for (const auto &c : pkgConnections) {
        for (const auto &request : c.requests) {
            for (const auto &[name, value] : request.headers) {
                if (name.contains('_'))
                    leaked << QString::fromLatin1(name + ": " + value);
            }
        }
    }
    qInfo("status %d; upstream requests on %lld connections", response.status,
          qlonglong(pkgConnections.size()));
    QVERIFY2(leaked.isEmpty(), qPrintable(u"the upstream received: "_s + leaked.join(u"; "_s)));
}

// Finding: a refused SNI goes into the egress event's `sni` and `name` as raw Latin-1
// (tlsservercontext.cpp onClientHello: requestedName = fromLatin1(raw)), control bytes
// included, while DNS names are escaped (dns.md). `airlockctl events` prints `name` as is
// (sandboxformat.cpp formatEgressRow): the guest writes escape sequences and whole fake rows
// ("... tls allowed allowed pkg.test:443") into the operator's terminal and logs.
void TestRedteamEvasion::badSniEventHasNoControlBytes()
{
    const QByteArray sni = "x\x1b[2K\r2026-12-01 11:00:00.000 tls    allowed allowed "
                           "evil.test:443\nq"_ba;
    bool handshake = true;
    auto connection = openTls(topo::EvilServer, sni, &handshake);
    QVERIFY(connection);
    QVERIFY(!handshake);
    const auto event = m_topo.gateway().waitForEvent(
        [](const QJsonObject &e) { return e.value(u"layer"_s) == u"tls"_s; }, 3000);
    QVERIFY2(event, qPrintable(eventsText(m_topo.gateway())));
    for (const QString &key : {u"name"_s, u"sni"_s, u"detail"_s}) {
        const QString value = event->value(key).toString();
        for (const QChar c : value)
            QVERIFY2(c.unicode() >= 0x20 && c.unicode() != 0x7f,
                     qPrintable(u"event field %1 holds control byte 0x%2: %3"_s.arg(key)
                                    .arg(c.unicode(), 2, 16, QLatin1Char('0'))
                                    .arg(QString::fromLatin1(
                                        QJsonDocument(*event).toJson(QJsonDocument::Compact)))));
    }
    REDTEAM_CHECK(recordedTraffic(m_topo.upstream(), u"evil"_s));
}

// Finding: a rule's `methods` and `pathPrefixes` (and a binding's methods / path prefix) are
// checked on the request line only; fields that widely used stacks honour as the "real" method
// or path are forwarded untouched: X-HTTP-Method-Override / X-HTTP-Method / X-Method-Override
// (Google APIs, Symfony, Laravel, ASP.NET, Express method-override, ...) and X-Original-URL /
// X-Rewrite-URL (Symfony's IIS support, IIS URL Rewrite). With a rule `pkg.test` GET only,
// `/public` only, `GET /public` + `X-HTTP-Method-Override: DELETE` or `X-Original-URL: /admin`
// passes and reaches the upstream as is.
void TestRedteamEvasion::overrideFieldsDefeatMethodAndPathRules_data()
{
    QTest::addColumn<QByteArray>("field");
    QTest::newRow("X-HTTP-Method-Override: DELETE") << "X-HTTP-Method-Override: DELETE"_ba;
    QTest::newRow("X-HTTP-Method: PUT") << "X-HTTP-Method: PUT"_ba;
    QTest::newRow("X-Method-Override: DELETE") << "X-Method-Override: DELETE"_ba;
    QTest::newRow("X-Original-URL: /admin") << "X-Original-URL: /admin/delete-all"_ba;
    QTest::newRow("X-Rewrite-URL: /admin") << "X-Rewrite-URL: /admin/delete-all"_ba;
    // The same class for the host and the next hop (docs/http.md, "Fields that steer a shared
    // upstream"): a shared upstream honouring one serves another tenant than pkg.test.
    QTest::newRow("X-Host: evil.test") << "X-Host: evil.test"_ba;
    QTest::newRow("X-Original-Host: evil.test") << "X-Original-Host: evil.test"_ba;
    QTest::newRow("X-HTTP-Host-Override: evil.test") << "X-HTTP-Host-Override: evil.test"_ba;
    QTest::newRow("X-Envoy-Original-Dst-Host") << "X-Envoy-Original-Dst-Host: 10.0.0.9:443"_ba;
    QTest::newRow("Proxy: httpoxy") << "Proxy: http://10.0.0.9:3128"_ba;
}

void TestRedteamEvasion::overrideFieldsDefeatMethodAndPathRules()
{
    QFETCH(QByteArray, field);
    QJsonObject policy = GatewayTopology::redteamPolicy();
    QJsonArray rules;
    for (const QJsonValue &rule : policy.value(u"rules"_s).toArray()) {
        if (rule.toObject().value(u"host"_s) != u"pkg.test"_s)
            rules.append(rule);
    }
    rules.append(QJsonObject {{u"host"_s, u"pkg.test"_s},
                              {u"ports"_s, QJsonArray {443}},
                              {u"methods"_s, QJsonArray {u"GET"_s}},
                              {u"pathPrefixes"_s, QJsonArray {u"/public"_s}}});
    policy.insert(u"rules"_s, rules);
    QVERIFY(m_topo.applyPolicy(policy));
    const auto restore = qScopeGuard([&] { m_topo.applyPolicy(GatewayTopology::redteamPolicy()); });
    const QHostAddress pkg = m_topo.resolveAddress(u"pkg.test"_s);
    QVERIFY(!pkg.isNull());
    // The rule holds for the request line itself.
    {
        bool handshake = false;
        auto direct = openTls(pkg, "pkg.test"_ba, &handshake);
        QVERIFY(direct && handshake);
        QVERIFY(direct->send("DELETE /admin/delete-all HTTP/1.1\r\nHost: pkg.test\r\n\r\n"));
        const HttpResponse denied = direct->readResponse();
        QCOMPARE(denied.status, 403);
    }
    m_topo.resetObservations();
    bool handshake = false;
    auto connection = openTls(pkg, "pkg.test"_ba, &handshake);
    QVERIFY(connection && handshake);
    QVERIFY(connection->send("GET /public HTTP/1.1\r\nHost: pkg.test\r\n" + field + "\r\n\r\n"));
    const HttpResponse response = connection->readResponse();
    QVERIFY(m_topo.settle());
    QStringList forwarded;
    const QByteArray name = field.left(field.indexOf(':'));
    for (const auto &c : m_topo.upstream().connections(u"pkg"_s)) {
        for (const auto &request : c.requests) {
            for (const QByteArray &value : request.values(name))
                forwarded << QString::fromLatin1(request.method + ' ' + request.target + " with "
                                                 + name + ": " + value);
        }
    }
    qInfo("status %d", response.status);
    QVERIFY2(forwarded.isEmpty(),
             qPrintable(u"a GET-/public-only rule let through: "_s + forwarded.join(u"; "_s)));
}

// Probe (held when it passes): 802.1Q / 802.1ad tagged frames, priority-tagged (VID 0, which
// the kernel handles as untagged) and with a VID, carrying IPv4 from a spoofed source and from
// the guest to a host service; must be dropped (nothing reaches the host traps).
void TestRedteamEvasion::vlanTaggedFrames_data()
{
    QTest::addColumn<quint16>("tpid");
    QTest::addColumn<quint16>("vid");
    QTest::addColumn<QString>("source");
    const QString gw = topo::Gateway.toString();
    const QString guest = topo::Guest.toString();
    QTest::newRow("802.1Q VID 0, source GW") << quint16(0x8100) << quint16(0) << gw;
    QTest::newRow("802.1Q VID 0, source guest") << quint16(0x8100) << quint16(0) << guest;
    QTest::newRow("802.1Q VID 5, source guest") << quint16(0x8100) << quint16(5) << guest;
    QTest::newRow("802.1ad VID 0, source GW") << quint16(0x88a8) << quint16(0) << gw;
}

void TestRedteamEvasion::vlanTaggedFrames()
{
    QFETCH(quint16, tpid);
    QFETCH(quint16, vid);
    QFETCH(QString, source);
    const QByteArray guestMac = airlock::test::macBytes(topo::GuestMac);
    QByteArray frame = m_topo.hostMac() + guestMac;
    frame += char(tpid >> 8);
    frame += char(tpid & 0xff);
    frame += char(vid >> 8);
    frame += char(vid & 0xff);
    frame += "\x08\x00"_ba;
    frame +=
        airlock::test::udpPacket(source, topo::HostUplink.toString(), 40000, 5353, "vlan-probe");
    QByteArray syn = m_topo.hostMac() + guestMac;
    syn += char(tpid >> 8);
    syn += char(tpid & 0xff);
    syn += char(vid >> 8);
    syn += char(vid & 0xff);
    syn += "\x08\x00"_ba;
    syn += airlock::test::tcpSynPacket(source, topo::Gateway.toString(), 40001, 22);
    const quint64 before = m_topo.counter(u"drop_ethertype"_s);
    QVERIFY(airlock::test::sendFrames(m_topo.guestNs(), topo::GuestIf, {frame, syn}));
    QTRY_VERIFY_WITH_TIMEOUT(m_topo.counter(u"drop_ethertype"_s) >= before + 2, 3000);
    REDTEAM_CHECK(recordedTraffic(m_topo.hostTraps()));
}

QTEST_GUILESS_MAIN(TestRedteamEvasion)
#include "tst_redteam_evasion.moc"

// Breaker round 3 (2026-12-01): attacks not covered by the other red-team binaries, each run
// from the guest namespace through the real table and the real gateway (docs/redteam.md).
// Every function here failed against the gateway it was written for; see findings-break3.md.
#include "redteamtestbase.h"

#include <QFile>
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

class TestRedteamBreak : public RedteamTestBase
{
    Q_OBJECT
private Q_SLOTS:
    void dnsTcpPipelineNeverReadStaysBounded();
};

// Finding: the HTTP side stops reading a guest that pipelines and never reads (2026-12-01
// finding 5), the DNS-over-TCP side does not: DnsServer::onTcpReadyRead answers every framed
// query with QTcpSocket::write, whose buffer has no bound, and keeps reading. A guest that
// streams queries (REFUSED at once, nothing upstream) into GW:53/TCP and never reads makes the
// gateway hold every answer in memory, up to RLIMIT_DATA: the gateway dies, and with it every
// connection and DNS answer of the sandbox.
void TestRedteamBreak::dnsTcpPipelineNeverReadStaysBounded()
{
    const qint64 before = gatewayRssKiB(m_topo.gateway());
    QVERIFY(before > 0);
    auto connection = m_topo.connect(topo::Gateway, 53);
    QVERIFY2(connection, "no TCP connection to GW:53");
    // A long denied name: ~250-byte queries, each answered REFUSED with the question echoed.
    QByteArray label(60, 'a');
    const QByteArray name = label + '.' + label + '.' + label + '.' + QByteArray(40, 'b')
        + ".x.evil.test";
    QByteArray batch;
    for (int i = 0; i < 1000; ++i)
        batch += tcpDnsQuery(quint16(i), name, 1);
    int sentBatches = 0;
    // 300k queries (~80 MB): far more than the socket buffers on the way hold.
    while (sentBatches < 300 && connection->send(batch))
        ++sentBatches;
    QTest::qWait(500);
    const qint64 after = gatewayRssKiB(m_topo.gateway());
    qInfo("sent %d000 DNS queries (%lld bytes each) without reading; gateway RSS %lld -> %lld KiB",
          sentBatches, qlonglong(batch.size() / 1000), qlonglong(before), qlonglong(after));
    connection.reset();
    QVERIFY2(after - before < 24 * 1024,
             qPrintable(u"the gateway's memory grew by %1 KiB with answers the guest never read"_s
                            .arg(after - before)));
    QVERIFY2(sentBatches < 300, "the gateway kept reading a DNS client that never reads");
}

QTEST_GUILESS_MAIN(TestRedteamBreak)
#include "tst_redteam_break.moc"

#include "redteamtestbase.h"

#include <QJsonDocument>
#include <QTest>

namespace airlock::redteam {

void RedteamTestBase::initTestCase()
{
    QVERIFY2(m_topo.start(), qPrintable(m_topo.lastError()));
}

void RedteamTestBase::cleanupTestCase()
{
    m_topo.tearDown();
}

void RedteamTestBase::init()
{
    QVERIFY2(
        m_topo.gateway().isRunning(),
        qPrintable(QStringLiteral("the gateway is not running:\n") + m_topo.gateway().logTail()));
    m_topo.resetObservations();
}

void RedteamTestBase::cleanup()
{
    if (QTest::currentTestFailed())
        qWarning("events of this test:\n%s\ngateway log tail:\n%s",
                 qPrintable(eventsText(m_topo.gateway())),
                 qPrintable(m_topo.gateway().logTail(20)));
}

QString recordedTraffic(RecordingServer &server, const QString &label)
{
    if (!server.settle())
        return QStringLiteral("the recording server did not settle (its barrier timed out)");
    QStringList lines;
    for (const ConnectionRecord &record : server.connections(label)) {
        lines << QStringLiteral("%1 port %2 from %3 sni '%4': %5 bytes: %6")
                     .arg(record.label)
                     .arg(record.port)
                     .arg(record.peer.toString(), record.sni)
                     .arg(record.received.size())
                     .arg(
                         QString::fromLatin1(record.received.left(200).toPercentEncoding(" /:.=")));
    }
    return lines.isEmpty() ? QString() : QStringLiteral("recorded traffic:\n") + lines.join(u'\n');
}

QString eventsText(const GatewayProcess &gateway)
{
    QStringList lines;
    for (const QJsonObject &event : gateway.eventsSinceMark())
        lines << QString::fromUtf8(QJsonDocument(event).toJson(QJsonDocument::Compact));
    return lines.isEmpty() ? QStringLiteral("(no events)") : lines.join(u'\n');
}

QString expectEgress(GatewayProcess &gateway, const QString &verdict, const QStringList &reasons,
                     int timeoutMs)
{
    const auto found = gateway.waitForEvent(
        [&](const QJsonObject &event) {
            return event.value(QStringLiteral("verdict")).toString() == verdict
                && (reasons.isEmpty()
                    || reasons.contains(event.value(QStringLiteral("reason")).toString()));
        },
        timeoutMs);
    if (found)
        return QString();
    return QStringLiteral("no egress event with verdict '%1' and reason in [%2]; events:\n%3")
        .arg(verdict, reasons.join(QStringLiteral(", ")), eventsText(gateway));
}

QString expectDenyHttp(const HttpResponse &response, const QList<int> &statuses,
                       const QStringList &reasons)
{
    const bool named = std::any_of(reasons.begin(), reasons.end(), [&](const QString &reason) {
        return response.body.contains(reason.toLatin1());
    });
    if (!statuses.contains(response.status) || !named) {
        QStringList wanted;
        for (int status : statuses)
            wanted << QString::number(status);
        return QStringLiteral("expected status %1 with '%2' in the body, got:\n%3\n%4")
            .arg(wanted.join(u'/'), reasons.join(u'|'), QString::fromLatin1(response.head),
                 QString::fromLatin1(response.body.left(500)));
    }
    return QString();
}

QString canonicalForVerify(const QByteArray &name)
{
    QString result = QString::fromLatin1(name).toLower();
    if (result.endsWith(u'.'))
        result.chop(1);
    return result;
}

int curlStatus(const CommandResult &result)
{
    const QList<QByteArray> lines = result.standardOutput.trimmed().split('\n');
    return lines.isEmpty() ? 0 : lines.last().trimmed().toInt();
}

std::unique_ptr<GuestConnection> RedteamTestBase::openTls(const QHostAddress &address,
                                                          const std::optional<QByteArray> &sni,
                                                          bool *handshake, quint16 port)
{
    return m_topo.tls(address, port, sni, handshake,
                      sni ? canonicalForVerify(*sni) : QStringLiteral("pkg.test"));
}

std::unique_ptr<GuestConnection> RedteamTestBase::openProxy()
{
    return m_topo.connect(topo::Gateway, topo::ExplicitProxyPort);
}

HttpResponse RedteamTestBase::requestVia(const QString &mode, const QByteArray &request,
                                         QString *problem)
{
    std::unique_ptr<GuestConnection> connection;
    if (mode.startsWith(u"tls:")) {
        const QHostAddress pkg = m_topo.resolveAddress(QStringLiteral("pkg.test"));
        bool handshake = false;
        connection = openTls(pkg, mode.mid(4).toLatin1(), &handshake);
        if (!connection || !handshake) {
            *problem = QStringLiteral("TLS to pkg.test's address (%1) failed: %2")
                           .arg(pkg.toString(), connection ? connection->lastError() : QString());
            return {};
        }
    } else if (mode == u"proxy") {
        connection = openProxy();
        if (!connection) {
            *problem = QStringLiteral("cannot connect to the explicit proxy GW:3128");
            return {};
        }
    } else if (mode.startsWith(u"http:")) {
        QHostAddress address = m_topo.resolveAddress(mode.mid(5));
        if (address.isNull())
            address = topo::EvilServer;
        connection = m_topo.connect(address, 80);
        if (!connection) {
            *problem = QStringLiteral("cannot connect to %1:80").arg(address.toString());
            return {};
        }
    }
    if (!connection->send(request)) {
        *problem = QStringLiteral("send failed: ") + connection->lastError();
        return {};
    }
    return connection->readResponse();
}

} // namespace airlock::redteam

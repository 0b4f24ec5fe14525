// E2B's network.allowOut as the sandbox's Airlock policy, end to end (docs/e2b.md): the e2b SDK
// through airlock-e2b creates a sandbox with allowOut ['pkg.test'] behind the real gateway;
// curl in the guest reaches https://pkg.test/ (a local HTTPS server in an upstream namespace)
// and not https://evil.test/, which the gateway denies and which no connection reaches; both
// decisions are in the sandbox's egress history, as for any sandbox (GatewayTopology: nothing
// leaves the machine).

#include "e2bendpoint.h"
#include "gatewaytopology.h"
#include "rpctestclient.h"
#include "testuser.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

#include <algorithm>
#include <memory>

#include <unistd.h>

using airlock::test::E2bEndpoint;
using airlock::test::GatewayTopology;
using airlock::test::RpcTestClient;
using airlock::test::ServerEndpoint;
using airlock::test::TestUser;
namespace topo = airlock::test::topo;

class TestE2bPolicy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void allowOutLetsPkgThroughAndNothingElse();

private:
    int node(const QStringList &arguments, QByteArray *out = nullptr);

    std::unique_ptr<GatewayTopology> m_net;
    std::unique_ptr<TestUser> m_user;
    std::unique_ptr<E2bEndpoint> m_e2b;
};

void TestE2bPolicy::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("needs root (network namespaces, taps, nftables)");
    QVERIFY2(!qEnvironmentVariable("AIRLOCK_GATEWAY").isEmpty(),
             "AIRLOCK_GATEWAY is not set (run through ctest)");
    if (const QString why = E2bEndpoint::sdkSkipReason(QStringLiteral(AIRLOCK_E2B_TEST_DIR));
        !why.isEmpty())
        QSKIP(qPrintable(why));
    QVERIFY2(E2bEndpoint::sdkInstalled(QStringLiteral(AIRLOCK_E2B_TEST_DIR)),
             "the e2b SDK is not installed (the e2b_sdk_install test does it)");
    m_net = std::make_unique<GatewayTopology>(GatewayTopology::Options {
        .tag = QStringLiteral("e"),
        .side = GatewayTopology::Side::Helper,
        .hosts = {{QStringLiteral("pkg.test"), topo::PkgServer},
                  {QStringLiteral("evil.test"), topo::EvilServer}},
        .servers = {{QStringLiteral("pkg"), topo::PkgServer, 443, ServerEndpoint::Kind::Https,
                     QStringLiteral("pkg.test"), ServerEndpoint::Answer::Hello},
                    {QStringLiteral("evil"), topo::EvilServer, 443, ServerEndpoint::Kind::Https,
                     QStringLiteral("evil.test"), ServerEndpoint::Answer::Hello}}});
    QVERIFY2(m_net->start(), qPrintable(m_net->lastError()));
    m_user = std::make_unique<TestUser>();
    QVERIFY2(m_user->isValid(), qPrintable(m_user->lastError()));
    m_e2b = std::make_unique<E2bEndpoint>(m_net->helper(), *m_user);
    QVERIFY2(m_e2b->start(), qPrintable(m_e2b->lastError()));
}

void TestE2bPolicy::cleanupTestCase()
{
    m_e2b.reset();
    m_user.reset();
    m_net.reset(); // airlockd and its guests, the servers, the upstream namespace
}

int TestE2bPolicy::node(const QStringList &arguments, QByteArray *out)
{
    QProcess node;
    node.setProcessEnvironment(m_e2b->clientEnvironment());
    node.setWorkingDirectory(QStringLiteral(AIRLOCK_E2B_TEST_DIR));
    node.setProcessChannelMode(out ? QProcess::ForwardedErrorChannel : QProcess::ForwardedChannels);
    node.start(QStringLiteral("node"), arguments);
    if (!node.waitForFinished(600000) || node.exitStatus() != QProcess::NormalExit)
        return -1;
    if (out)
        *out = node.readAllStandardOutput();
    return node.exitCode();
}

void TestE2bPolicy::allowOutLetsPkgThroughAndNothingElse()
{
    QByteArray said;
    QCOMPARE(node({QStringLiteral("policy.mjs"), QStringLiteral("run")}, &said), 0);
    const QString id = QJsonDocument::fromJson(said.trimmed())
                           .object()
                           .value(QStringLiteral("sandbox"))
                           .toString();
    QVERIFY2(!id.isEmpty(), said.constData());

    QVERIFY(m_net->settle());
    const auto pkg = m_net->upstream().connections(QStringLiteral("pkg"));
    QVERIFY(std::any_of(pkg.cbegin(), pkg.cend(), [](const airlock::test::ConnectionRecord &c) {
        return c.sni == u"pkg.test";
    }));
    QCOMPARE(m_net->upstream().connections(QStringLiteral("evil")).size(), 0);

    // The decisions are the sandbox's, as `airlockctl egress` and the window show them.
    RpcTestClient client(m_net->helper().socketPath());
    const QJsonObject history = RpcTestClient::result(client.call(
        QStringLiteral("egress.history"),
        {{QStringLiteral("name"), QStringLiteral("e2b-") + id}, {QStringLiteral("limit"), 1000}}));
    bool pkgAllowed = false;
    bool evilDenied = false;
    for (const QJsonValue &value : history.value(QStringLiteral("events")).toArray()) {
        const QJsonObject event = value.toObject().value(QStringLiteral("event")).toObject();
        const QString verdict = event.value(QStringLiteral("verdict")).toString();
        const QString name = event.value(QStringLiteral("name")).toString()
            + event.value(QStringLiteral("host")).toString()
            + event.value(QStringLiteral("sni")).toString();
        pkgAllowed =
            pkgAllowed || (name.contains(QStringLiteral("pkg.test")) && verdict == u"allowed");
        evilDenied =
            evilDenied || (name.contains(QStringLiteral("evil.test")) && verdict == u"denied");
    }
    QVERIFY2(pkgAllowed && evilDenied, QJsonDocument(history).toJson().constData());

    QCOMPARE(node({QStringLiteral("policy.mjs"), QStringLiteral("kill"), id}), 0);
}

QTEST_GUILESS_MAIN(TestE2bPolicy)
#include "tst_e2bpolicy.moc"

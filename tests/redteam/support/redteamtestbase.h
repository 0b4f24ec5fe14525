#pragma once

#include "gatewaytopology.h"

#include <QObject>
#include <QStringList>

namespace airlock::redteam {

using namespace airlock::test;

/// Base of every red-team test class: one GatewayTopology per test binary, built in
/// initTestCase and torn down in cleanupTestCase (and by the destructor when a test aborts);
/// init() opens a fresh observation window for each test function (and each data row).
/// Derived classes declare their cases as private slots named after their case id
/// (docs/redteam-cases.md).
class RedteamTestBase : public QObject
{
    Q_OBJECT
protected Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();

protected:
    /// TLS from the guest to `address`:port with `sni` (nullopt: none), verified against the
    /// sandbox CA for the canonical form of the SNI; `*handshake` tells whether TLS completed.
    std::unique_ptr<GuestConnection> openTls(const QHostAddress &address,
                                             const std::optional<QByteArray> &sni, bool *handshake,
                                             quint16 port = 443);
    /// A connection to the explicit proxy (GW:3128).
    std::unique_ptr<GuestConnection> openProxy();
    /// One request on a fresh connection: "tls:<sni>" (TLS to pkg.test's address), "proxy"
    /// (GW:3128) or "http:<name>" (port 80 to the address `name` resolves to, or to evil.test's
    /// real address when it does not resolve). Empty response when the connection failed.
    HttpResponse requestVia(const QString &mode, const QByteArray &request, QString *problem);

    GatewayTopology m_topo;
};

// Checks used by the cases. Each returns an empty string when the expectation holds, else a
// description of what was seen instead (for QVERIFY2).

/// Describes every record of `server` (only `label` when given) once the server settled
/// (RecordingServer::settle(): whatever was sent to it before is recorded): "nothing upstream"
/// is an empty result.
QString recordedTraffic(RecordingServer &server, const QString &label = QString());
/// Waits for an `egress` event (after the mark) with `verdict` ("allowed"/"denied") and a
/// reason in `reasons` (any reason when empty); the message lists the events seen otherwise.
QString expectEgress(test::GatewayProcess &gateway, const QString &verdict,
                     const QStringList &reasons, int timeoutMs = 3000);
/// deny-http: the gateway's own answer with a status in `statuses` and `reason` in the body
/// (machine-readable reason, docs/redteam-cases.md verdict words); any of `reasons` will do.
QString expectDenyHttp(const HttpResponse &response, const QList<int> &statuses,
                       const QStringList &reasons);
/// One line per event since the mark, for failure messages.
QString eventsText(const test::GatewayProcess &gateway);
/// Canonical spelling for certificate checks: lower case, one trailing dot removed.
QString canonicalForVerify(const QByteArray &name);
/// curl's status when run with -w '\n%{http_code}' as the last argument pair.
int curlStatus(const CommandResult &result);

} // namespace airlock::redteam

/// QVERIFY2 on one of the checks above: passes when it returned an empty string.
#define REDTEAM_CHECK(expression)                                                                  \
    do {                                                                                           \
        const QString redteamProblem_ = (expression);                                              \
        QVERIFY2(redteamProblem_.isEmpty(), qPrintable(redteamProblem_));                          \
    } while (false)

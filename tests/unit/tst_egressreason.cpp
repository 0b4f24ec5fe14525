// The one table of egress reasons (core/model/egressreason.h): unique wire names that round-trip,
// and exactly the names the gateway and the helper emitted before the table existed.
#include "core/model/egressreason.h"

#include <QSet>
#include <QTest>

using namespace airlock;
using namespace Qt::StringLiterals;

class TestEgressReason : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void wireNamesAreUnique();
    void roundTrip();
    void unknownNames();
    void namesAreTheEmittedOnes();
    void tableFacts();
};

void TestEgressReason::wireNamesAreUnique()
{
    QSet<QString> names;
    for (int i = 0; i < kEgressReasonCount; ++i) {
        const QString name = wireName(EgressReason(i));
        QVERIFY2(!name.isEmpty(), qPrintable(QString::number(i)));
        QVERIFY2(!names.contains(name), qPrintable(name));
        names.insert(name);
    }
    QCOMPARE(names.size(), kEgressReasonCount);
    QCOMPARE(qsizetype(egressReasons().size()), qsizetype(kEgressReasonCount));
}

void TestEgressReason::roundTrip()
{
    for (const EgressReasonInfo &row : egressReasons()) {
        QCOMPARE(&egressReasonInfo(row.reason), &row);
        const QString name = wireName(row.reason);
        QCOMPARE(name, QString::fromLatin1(row.wireName.data(), qsizetype(row.wireName.size())));
        const std::optional<EgressReason> back = fromWireName(name);
        QVERIFY2(back.has_value(), qPrintable(name));
        QCOMPARE(int(*back), int(row.reason));
    }
}

void TestEgressReason::unknownNames()
{
    for (const char *name : {"", "none", "ok", "Allowed", "HOST_NOT_ALLOWED", "host not allowed",
                             " allowed", "allowed ", "a_newer_gateways_reason"})
        QVERIFY2(!fromWireName(QString::fromLatin1(name)).has_value(), name);
}

// Listed from the code before the table: policy::egressReasonName, dnsReasonName,
// tlsRejectReasonName (without the never-emitted "none"), httpReasonName, authorityReasonName
// (without "ok"), the names GatewayConnection and EgressGateway wrote directly, and the
// helper's (SandboxService). Every event keeps its reason byte for byte.
void TestEgressReason::namesAreTheEmittedOnes()
{
    const QStringList emitted {
        // policy::egressReasonName
        u"allowed"_s, u"host_not_allowed"_s, u"port_not_allowed"_s, u"method_not_allowed"_s,
        u"path_not_allowed"_s, u"malformed_host"_s, u"malformed_method"_s, u"malformed_path"_s,
        // dnsReasonName (besides allowed, host_not_allowed, malformed_host)
        u"type_not_allowed"_s, u"class_not_allowed"_s, u"opcode_not_implemented"_s,
        u"malformed_query"_s, u"not_a_query"_s, u"private_destination"_s, u"upstream_nxdomain"_s,
        u"no_address"_s, u"upstream_failure"_s, u"upstream_timeout"_s, u"mapping_exhausted"_s,
        u"overloaded"_s, u"too_many_connections"_s,
        // tlsRejectReasonName (besides host_not_allowed, port_not_allowed)
        u"not_tls"_s, u"no_sni"_s, u"bad_sni"_s, u"no_http11_alpn"_s, u"leaf_unavailable"_s,
        u"handshake_failed"_s, u"destination_mismatch"_s, u"sni_connect_mismatch"_s,
        // httpReasonName (besides malformed_host)
        u"malformed_request"_s, u"malformed_header"_s, u"header_too_large"_s,
        u"unsupported_version"_s, u"conflicting_framing"_s, u"bad_content_length"_s,
        u"bad_transfer_encoding"_s, u"bad_chunk"_s, u"body_too_large"_s, u"bad_target"_s,
        u"method_forbidden"_s, u"plain_http_port"_s, u"ambiguous_field_name"_s,
        u"request_override"_s,
        // authorityReasonName (besides malformed_host, bad_sni)
        u"missing_host"_s, u"userinfo"_s, u"ip_literal"_s, u"authority_mismatch"_s,
        u"sni_host_mismatch"_s, u"port_mismatch"_s,
        // GatewayConnection and EgressGateway, by name
        u"idle_timeout"_s, u"closed_before_decision"_s, u"host_mismatch"_s,
        u"upstream_unreachable"_s, u"upstream_tls_failed"_s, u"credential_exfil"_s,
        u"credential_unavailable"_s, u"unscrubbable_response"_s, u"policy_revoked"_s,
        // SandboxService
        u"gateway_restarted"_s, u"firewall_restored"_s, u"firewall_lost"_s};
    QCOMPARE(emitted.size(), 61);
    QCOMPARE(kEgressReasonCount, 61);
    QStringList expected = emitted;
    expected.sort();
    QStringList table;
    for (const EgressReasonInfo &row : egressReasons())
        table.append(wireName(row.reason));
    table.sort();
    QCOMPARE(table, expected);
}

// The statuses the gateway answered with, and the reasons the dry run and the learn list use.
void TestEgressReason::tableFacts()
{
    const auto status = [](EgressReason reason) { return egressReasonInfo(reason).httpStatus; };
    QCOMPARE(status(EgressReason::Allowed), 0);
    QCOMPARE(status(EgressReason::HostNotAllowed), 403);
    QCOMPARE(status(EgressReason::MalformedPath), 400);
    QCOMPARE(status(EgressReason::HeaderTooLarge), 431);
    QCOMPARE(status(EgressReason::UnsupportedVersion), 505);
    QCOMPARE(status(EgressReason::BodyTooLarge), 413);
    QCOMPARE(status(EgressReason::IpLiteral), 403);
    QCOMPARE(status(EgressReason::SniHostMismatch), 421);
    QCOMPARE(status(EgressReason::BadSni), 421);
    QCOMPARE(status(EgressReason::HostMismatch), 421);
    QCOMPARE(status(EgressReason::DestinationMismatch), 421);
    QCOMPARE(status(EgressReason::PrivateDestination), 403);
    QCOMPARE(status(EgressReason::UpstreamUnreachable), 502);
    QCOMPARE(status(EgressReason::CredentialExfil), 403);
    QCOMPARE(status(EgressReason::CredentialUnavailable), 503);
    QCOMPARE(status(EgressReason::UnscrubbableResponse), 502);
    QSet<QString> ruled;
    for (const EgressReasonInfo &row : egressReasons()) {
        if (row.ruleDecision)
            ruled.insert(wireName(row.reason));
    }
    QCOMPARE(ruled,
             (QSet<QString> {u"allowed"_s, u"host_not_allowed"_s, u"port_not_allowed"_s,
                             u"method_not_allowed"_s, u"path_not_allowed"_s}));
    QCOMPARE(egressReasonInfo(EgressReason::CredentialExfil).layer, EgressReasonLayer::Credentials);
    QCOMPARE(egressReasonInfo(EgressReason::FirewallLost).layer, EgressReasonLayer::Network);
}

QTEST_GUILESS_MAIN(TestEgressReason)
#include "tst_egressreason.moc"

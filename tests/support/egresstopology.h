#pragma once

#include "core/pki/sandboxca.h"
#include "gatewaytestbed.h"
#include "helperprocess.h"
#include "netns.h"

#include <QHostAddress>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace airlock::test {

/// The network of an end-to-end egress test: a real airlockd (HelperProcess, in a network
/// namespace of its own) whose gateways resolve names through a test DNS authority and reach
/// local test servers, both in an "upstream" namespace joined to the helper's by a veth pair:
///
///   guest ──tap── [helper ns: airlockd, gateway, table; 203.0.113.1] ──veth 203.0.113.0/24──
///   [upstream ns: the hosts' addresses, DNS 203.0.113.53]
///
/// 203.0.113.0/24 is TEST-NET-3 (RFC 5737), assigned only inside namespaces the test made;
/// neither has a default route, so nothing leaves the machine. airlockd gets
/// `--upstream-dns 203.0.113.53:53` and, when the test has one, `--upstream-ca` (the trust store
/// its gateways verify upstream servers against).
///
///     EgressTopology net({.tag = u"e"_s, .hosts = {{u"pkg.test"_s, kPkg}}});
///     QVERIFY2(net.start(), qPrintable(net.lastError()));
///     TestUpstream *pkg = net.serve(u"pkg.test"_s, 80, false); // "hello pkg.test /PATH"
///     QVERIFY2(pkg, qPrintable(net.lastError()));
///     RpcTestClient client(net.helper().socketPath());
///
/// The destructor stops airlockd (its guests and gateways with it), then the servers, and
/// deletes the upstream namespace (the veth pair goes with it), also after a start() that
/// failed half-way: a failing test leaves nothing behind. Needs root.
class EgressTopology
{
public:
    struct Options
    {
        /// Names what the test makes: the namespace `alt-<tag>-<pid>` (leftovers of dead pids
        /// are removed first) and the veth ends `a<tag>h<pid>` (helper side) and
        /// `a<tag>u<pid>`; at most 3 characters, so the names fit IFNAMSIZ.
        QString tag;
        /// The names the DNS authority answers (A records, NXDOMAIN for any other); each
        /// address is assigned in the upstream namespace (/24), for serve() or the test's own
        /// servers (upstreamNamespace()).
        QList<std::pair<QString, QHostAddress>> hosts;
        /// Generates a test CA (upstreamCa(), "upstream-test") that signs the TLS servers of
        /// serve() and is airlockd's --upstream-ca.
        bool generateUpstreamCa = false;
        /// Or a PEM file of the test's own as --upstream-ca (e.g. a red-team TestCa); the
        /// unprivileged gateway must be able to read it.
        QString upstreamCaFile;
        /// Further airlockd arguments, after the ones above (e.g. {"--log-level", "trace"}).
        QStringList helperArguments;
    };

    static inline const QHostAddress kHelperAddress {QStringLiteral("203.0.113.1")};
    static inline const QHostAddress kDnsAddress {QStringLiteral("203.0.113.53")};

    /// Creates the (not yet started) helper with its arguments; nothing else happens yet, so
    /// the test may still configure helper() (setImageStore(), setOutputFile()...).
    explicit EgressTopology(Options options);
    ~EgressTopology();
    EgressTopology(const EgressTopology &) = delete;
    EgressTopology &operator=(const EgressTopology &) = delete;

    /// Generates and saves the upstream CA (if asked), starts airlockd, makes the upstream
    /// namespace, the veth pair and the addresses, and starts the DNS authority in it. False,
    /// with lastError() set, at the first step that fails.
    bool start();
    /// Starts a TestUpstream (gatewaytestbed.h) for host `name` of Options::hosts on its
    /// address inside the upstream namespace: HTTPS with a leaf for `name` under upstreamCa()
    /// when `tls`, plain HTTP otherwise. Call after start(). The server lives as long as the
    /// topology; nullptr (lastError() says why) on failure.
    TestUpstream *serve(const QString &name, quint16 port, bool tls);

    HelperProcess &helper() { return *m_helper; }
    TestDnsServer &dns() { return m_dns; }
    /// The generated upstream CA; nullptr without Options::generateUpstreamCa (or before start()).
    const airlock::pki::SandboxCa *upstreamCa() const
    {
        return m_upstreamCa ? &*m_upstreamCa : nullptr;
    }
    /// What airlockd got as --upstream-ca ("" for none).
    QString upstreamCaPath() const { return m_upstreamCaPath; }
    /// The upstream namespace (name() and an fd for setns(2), e.g. for inNamespace() or the
    /// test's own servers); empty before start().
    const NetworkNamespace &upstreamNamespace() const { return m_upstream; }
    QString lastError() const { return m_lastError; }

private:
    bool fail(const QString &error);
    std::optional<QHostAddress> addressOf(const QString &name) const;

    Options m_options;
    QTemporaryDir m_dir; ///< the generated CA; outlives the helper (declared before it)
    QString m_upstreamCaPath;
    std::optional<airlock::pki::SandboxCa> m_upstreamCa;
    std::unique_ptr<HelperProcess> m_helper;
    NetworkNamespace m_upstream;
    TestDnsServer m_dns;
    std::map<QString, std::unique_ptr<TestUpstream>> m_servers;
    QString m_lastError;
};

} // namespace airlock::test

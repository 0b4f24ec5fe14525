#include "egresstopology.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>

#include <net/if.h>
#include <sys/stat.h>

namespace airlock::test {

EgressTopology::EgressTopology(Options options)
    : m_options(std::move(options))
    , m_dir(QDir::tempPath() + QStringLiteral("/airlock-egress-XXXXXX"))
{
    // The unprivileged gateway reads the trust store: the path must be traversable.
    ::chmod(QFile::encodeName(m_dir.path()).constData(), 0711);
    if (m_options.generateUpstreamCa)
        m_upstreamCaPath = m_dir.filePath(QStringLiteral("upstream.pem"));
    else
        m_upstreamCaPath = m_options.upstreamCaFile;
    QStringList arguments {QStringLiteral("--upstream-dns"),
                           kDnsAddress.toString() + QStringLiteral(":53")};
    if (!m_upstreamCaPath.isEmpty())
        arguments << QStringLiteral("--upstream-ca") << m_upstreamCaPath;
    m_helper = std::make_unique<HelperProcess>(arguments + m_options.helperArguments);
}

EgressTopology::~EgressTopology()
{
    m_helper.reset(); // stops airlockd and kills its QEMUs; its namespace takes one veth end
    for (auto &[name, server] : m_servers)
        server->stop();
    m_dns.stop();
    m_upstream.remove();
}

bool EgressTopology::fail(const QString &error)
{
    m_lastError = error;
    return false;
}

std::optional<QHostAddress> EgressTopology::addressOf(const QString &name) const
{
    for (const auto &[host, address] : m_options.hosts) {
        if (host == name)
            return address;
    }
    return std::nullopt;
}

bool EgressTopology::start()
{
    if (!m_dir.isValid())
        return fail(QStringLiteral("cannot create a temporary directory"));
    if (m_options.generateUpstreamCa) {
        auto ca = airlock::pki::SandboxCa::generate(QStringLiteral("upstream-test"));
        if (!ca)
            return fail(QStringLiteral("upstream CA: ") + ca.error().message);
        m_upstreamCa.emplace(std::move(*ca));
        auto saved =
            m_upstreamCa->save(m_upstreamCaPath, m_dir.filePath(QStringLiteral("upstream.key")));
        if (!saved)
            return fail(QStringLiteral("upstream CA: ") + saved.error().message);
    }
    if (!m_helper->start())
        return fail(m_helper->lastError());
    const QString helperNs = m_helper->networkNamespace();

    // The upstream namespace, joined to the helper's by a veth pair.
    const QString pid = QString::number(QCoreApplication::applicationPid());
    const QString prefix = QStringLiteral("alt-") + m_options.tag + u'-';
    const QString hostSide = u'a' + m_options.tag + u'h' + pid;
    const QString upstreamSide = u'a' + m_options.tag + u'u' + pid;
    if (m_options.tag.isEmpty() || hostSide.size() >= IFNAMSIZ)
        return fail(
            QStringLiteral("tag \"%1\": empty, or interface names too long").arg(m_options.tag));
    removeStaleNamespaces(prefix);
    // A crashed run with our pid (pid reuse) leaves a namespace no stale check removes.
    if (QFileInfo::exists(QStringLiteral("/run/netns/") + prefix + pid))
        runIp({QStringLiteral("netns"), QStringLiteral("delete"), prefix + pid});
    auto upstream = NetworkNamespace::create(prefix + pid);
    if (!upstream)
        return fail(QStringLiteral("cannot create network namespace %1").arg(prefix + pid));
    m_upstream = std::move(*upstream);
    const QString upstreamNs = m_upstream.name();
    if (!runIp({QStringLiteral("link"), QStringLiteral("add"), hostSide, QStringLiteral("netns"),
                helperNs, QStringLiteral("type"), QStringLiteral("veth"), QStringLiteral("peer"),
                QStringLiteral("name"), upstreamSide, QStringLiteral("netns"), upstreamNs})
        || !runIp({QStringLiteral("-n"), helperNs, QStringLiteral("addr"), QStringLiteral("add"),
                   kHelperAddress.toString() + QStringLiteral("/24"), QStringLiteral("dev"),
                   hostSide})
        || !runIp({QStringLiteral("-n"), helperNs, QStringLiteral("link"), QStringLiteral("set"),
                   hostSide, QStringLiteral("up")}))
        return fail(QStringLiteral("cannot make the veth pair %1/%2").arg(hostSide, upstreamSide));
    QList<QHostAddress> addresses;
    QHash<QString, QString> records;
    for (const auto &[name, address] : std::as_const(m_options.hosts)) {
        records.insert(name, address.toString());
        if (!addresses.contains(address))
            addresses.append(address);
    }
    addresses.append(kDnsAddress);
    for (const QHostAddress &address : std::as_const(addresses)) {
        if (!runIp({QStringLiteral("-n"), upstreamNs, QStringLiteral("addr"), QStringLiteral("add"),
                    address.toString() + QStringLiteral("/24"), QStringLiteral("dev"),
                    upstreamSide}))
            return fail(
                QStringLiteral("cannot assign %1 in %2").arg(address.toString(), upstreamNs));
    }
    if (!runIp({QStringLiteral("-n"), upstreamNs, QStringLiteral("link"), QStringLiteral("set"),
                upstreamSide, QStringLiteral("up")}))
        return fail(QStringLiteral("cannot bring %1 up").arg(upstreamSide));
    if (!inNamespace(m_upstream.fd(), [&] { return m_dns.start(kDnsAddress, 53, records); }))
        return fail(QStringLiteral("the test DNS authority did not start on %1:53")
                        .arg(kDnsAddress.toString()));
    return true;
}

TestUpstream *EgressTopology::serve(const QString &name, quint16 port, bool tls)
{
    const std::optional<QHostAddress> address = addressOf(name);
    if (!address) {
        fail(QStringLiteral("%1 is not one of the topology's hosts").arg(name));
        return nullptr;
    }
    if (m_upstream.fd() < 0 || (tls && !m_upstreamCa)) {
        fail(QStringLiteral("serve(%1): not started, or TLS without a generated upstream CA")
                 .arg(name));
        return nullptr;
    }
    auto server = std::make_unique<TestUpstream>();
    TestUpstream::Options options {*address, port, tls, nullptr, {}, {}};
    if (tls) {
        options.ca = &*m_upstreamCa;
        options.names = {name};
    }
    if (!inNamespace(m_upstream.fd(), [&] { return server->start(options); })) {
        fail(QStringLiteral("the server for %1 did not start on %2:%3")
                 .arg(name, address->toString())
                 .arg(port));
        return nullptr;
    }
    TestUpstream *started = server.get();
    m_servers[name + u':' + QString::number(port)] = std::move(server);
    return started;
}

} // namespace airlock::test

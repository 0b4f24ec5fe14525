#include "core/gateway/gatewayconfig.h"

#include <QJsonArray>
#include <QJsonValue>
#include <QSet>

namespace airlock::gateway {

namespace {

std::unexpected<Error> fieldError(const QString &path, const QString &why)
{
    return fail(ErrorKind::InvalidParams, QStringLiteral("field '%1': %2").arg(path, why));
}

// Reads the fields of one JSON object, naming each by its dotted path in errors.
class FieldReader
{
public:
    FieldReader(const QJsonObject &object, QString prefix)
        : m_object(object), m_prefix(std::move(prefix))
    { }

    QString path(const QString &key) const
    {
        return m_prefix.isEmpty() ? key : m_prefix + u'.' + key;
    }
    bool has(const QString &key) const { return m_object.contains(key); }

    // Every key must be one of `known` (a typo must not silently change the gateway).
    Result<void> onlyKeys(std::initializer_list<const char16_t *> known) const
    {
        QSet<QString> allowed;
        for (const char16_t *k : known)
            allowed.insert(QString::fromUtf16(k));
        for (auto it = m_object.begin(); it != m_object.end(); ++it) {
            if (!allowed.contains(it.key()))
                return fieldError(path(it.key()), QStringLiteral("unknown key"));
        }
        return {};
    }

    Result<QString> string(const QString &key, std::optional<QString> fallback = {}) const
    {
        const QJsonValue value = m_object.value(key);
        if (value.isUndefined()) {
            if (fallback)
                return *fallback;
            return fieldError(path(key), QStringLiteral("missing"));
        }
        if (!value.isString())
            return fieldError(path(key), QStringLiteral("must be a string"));
        return value.toString();
    }

    Result<qint64> integer(const QString &key, qint64 min, qint64 max,
                           std::optional<qint64> fallback = {}) const
    {
        const QJsonValue value = m_object.value(key);
        if (value.isUndefined()) {
            if (fallback)
                return *fallback;
            return fieldError(path(key), QStringLiteral("missing"));
        }
        const double number = value.toDouble();
        if (!value.isDouble() || !std::isfinite(number) || std::trunc(number) != number)
            return fieldError(path(key), QStringLiteral("must be an integer"));
        if (number < double(min) || number > double(max))
            return fieldError(path(key),
                              QStringLiteral("must be between %1 and %2").arg(min).arg(max));
        return qint64(number);
    }

    Result<QJsonObject> object(const QString &key, bool required) const
    {
        const QJsonValue value = m_object.value(key);
        if (value.isUndefined()) {
            if (required)
                return fieldError(path(key), QStringLiteral("missing"));
            return QJsonObject();
        }
        if (!value.isObject())
            return fieldError(path(key), QStringLiteral("must be an object"));
        return value.toObject();
    }

    Result<QHostAddress> ipv4(const QString &key) const
    {
        const auto text = string(key);
        AIRLOCK_TRY(text);
        const auto range = AddressRange::parse(*text);
        if (!range || !range->isIPv4() || range->prefixLength() != 32)
            return fieldError(path(key), QStringLiteral("must be a dotted-quad IPv4 address"));
        return range->network();
    }

private:
    const QJsonObject &m_object;
    QString m_prefix;
};

Result<GatewayListen> readListen(const QJsonObject &object)
{
    FieldReader r(object, QStringLiteral("listen"));
    AIRLOCK_TRY_INIT(keys, r.onlyKeys({u"tcpFd", u"dnsUdpFd", u"dnsTcpFd", u"tcp", u"dns"}));
    GatewayListen listen;
    const bool fds = r.has(QStringLiteral("tcpFd")) || r.has(QStringLiteral("dnsUdpFd"))
        || r.has(QStringLiteral("dnsTcpFd"));
    const bool addresses = r.has(QStringLiteral("tcp")) || r.has(QStringLiteral("dns"));
    if (fds == addresses)
        return fieldError(QStringLiteral("listen"),
                          QStringLiteral("give either tcpFd, dnsUdpFd and dnsTcpFd, or tcp and "
                                         "dns"));
    if (fds) {
        for (const auto &[key, target] :
             {std::pair {QStringLiteral("tcpFd"), &listen.tcpFd},
              std::pair {QStringLiteral("dnsUdpFd"), &listen.dnsUdpFd},
              std::pair {QStringLiteral("dnsTcpFd"), &listen.dnsTcpFd}}) {
            AIRLOCK_TRY_INIT(fd, r.integer(key, 3, 1 << 20));
            *target = int(*fd);
        }
        return listen;
    }
    AIRLOCK_TRY_INIT(tcp, r.string(QStringLiteral("tcp")));
    AIRLOCK_TRY_INIT(tcpAddress, SocketAddress::parse(*tcp, r.path(QStringLiteral("tcp"))));
    AIRLOCK_TRY_INIT(dns, r.string(QStringLiteral("dns")));
    AIRLOCK_TRY_INIT(dnsAddress, SocketAddress::parse(*dns, r.path(QStringLiteral("dns"))));
    listen.tcp = *tcpAddress;
    listen.dns = *dnsAddress;
    return listen;
}

} // namespace

Result<SocketAddress> SocketAddress::parse(const QString &text, const QString &field)
{
    const qsizetype colon = text.lastIndexOf(u':');
    if (colon <= 0)
        return fieldError(field, QStringLiteral("must be \"a.b.c.d:port\""));
    const auto range = AddressRange::parse(QStringView(text).first(colon));
    if (!range || !range->isIPv4() || range->prefixLength() != 32)
        return fieldError(field, QStringLiteral("must be \"a.b.c.d:port\" with an IPv4 address"));
    const QStringView portText = QStringView(text).sliced(colon + 1);
    bool ok = !portText.isEmpty() && portText.size() <= 5;
    for (QChar c : portText)
        ok = ok && c >= u'0' && c <= u'9';
    const uint port = ok ? portText.toUInt(&ok) : 0;
    if (!ok || port > 65535)
        return fieldError(field, QStringLiteral("port must be 0..65535"));
    return SocketAddress {range->network(), quint16(port)};
}

QString SocketAddress::toString() const
{
    return address.toString() + u':' + QString::number(port);
}

AddressRange GatewayConfig::linkRange() const
{
    return *AddressRange::fromAddress(link.gateway, link.prefixLength);
}

Result<GatewayConfig> GatewayConfig::fromJson(const QJsonObject &object)
{
    FieldReader r(object, QString());
    AIRLOCK_TRY_INIT(
        keys,
        r.onlyKeys({u"type", u"version", u"sandbox", u"listen", u"link", u"explicitProxyPort",
                    u"syntheticPool", u"upstreamDns", u"refusedRanges", u"refuseHostAddresses",
                    u"trustStore", u"ca", u"policy", u"limits"}));
    GatewayConfig config;
    AIRLOCK_TRY_INIT(version, r.integer(QStringLiteral("version"), 0, 1 << 30));
    if (*version != kVersion)
        return fieldError(QStringLiteral("version"),
                          QStringLiteral("version %1 is not supported (this gateway speaks %2)")
                              .arg(*version)
                              .arg(kVersion));
    AIRLOCK_TRY_INIT(sandbox, r.string(QStringLiteral("sandbox")));
    if (sandbox->isEmpty() || sandbox->size() > 63)
        return fieldError(QStringLiteral("sandbox"), QStringLiteral("must be 1..63 characters"));
    config.sandbox = *sandbox;

    AIRLOCK_TRY_INIT(listenObject, r.object(QStringLiteral("listen"), true));
    AIRLOCK_TRY_INIT(listen, readListen(*listenObject));
    config.listen = *listen;

    AIRLOCK_TRY_INIT(linkObject, r.object(QStringLiteral("link"), true));
    FieldReader link(*linkObject, QStringLiteral("link"));
    AIRLOCK_TRY_INIT(linkKeys, link.onlyKeys({u"gateway", u"guest", u"prefixLength"}));
    AIRLOCK_TRY_INIT(gateway, link.ipv4(QStringLiteral("gateway")));
    AIRLOCK_TRY_INIT(guest, link.ipv4(QStringLiteral("guest")));
    AIRLOCK_TRY_INIT(prefix, link.integer(QStringLiteral("prefixLength"), 8, 31));
    config.link = GatewayLink {*gateway, *guest, int(*prefix)};
    if (!config.linkRange().contains(*guest))
        return fieldError(QStringLiteral("link.guest"),
                          QStringLiteral("not inside %1").arg(config.linkRange().toString()));

    AIRLOCK_TRY_INIT(proxyPort, r.integer(QStringLiteral("explicitProxyPort"), 1, 65535, 3128));
    config.explicitProxyPort = quint16(*proxyPort);

    AIRLOCK_TRY_INIT(poolText, r.string(QStringLiteral("syntheticPool")));
    const auto pool = AddressRange::parse(*poolText);
    if (!pool)
        return fieldError(QStringLiteral("syntheticPool"), pool.error().message);
    if (!pool->isIPv4() || pool->prefixLength() < 8 || pool->prefixLength() > 30)
        return fieldError(QStringLiteral("syntheticPool"),
                          QStringLiteral("must be an IPv4 prefix of length 8..30"));
    config.syntheticPool = *pool;

    AIRLOCK_TRY_INIT(dnsObject, r.object(QStringLiteral("upstreamDns"), true));
    FieldReader dns(*dnsObject, QStringLiteral("upstreamDns"));
    AIRLOCK_TRY_INIT(dnsKeys, dns.onlyKeys({u"address", u"port", u"timeoutMs"}));
    AIRLOCK_TRY_INIT(dnsAddress, dns.ipv4(QStringLiteral("address")));
    AIRLOCK_TRY_INIT(dnsPort, dns.integer(QStringLiteral("port"), 1, 65535, 53));
    AIRLOCK_TRY_INIT(dnsTimeout, dns.integer(QStringLiteral("timeoutMs"), 100, 60000, 2000));
    config.upstreamDnsAddress = *dnsAddress;
    config.upstreamDnsPort = quint16(*dnsPort);
    config.upstreamDnsTimeoutMs = int(*dnsTimeout);

    if (r.has(QStringLiteral("refusedRanges"))) {
        const QJsonValue value = object.value(QStringLiteral("refusedRanges"));
        if (!value.isArray())
            return fieldError(QStringLiteral("refusedRanges"),
                              QStringLiteral("must be an array of strings"));
        QStringList ranges;
        for (const QJsonValue &item : value.toArray()) {
            if (!item.isString())
                return fieldError(QStringLiteral("refusedRanges"),
                                  QStringLiteral("must be an array of strings"));
            ranges.append(item.toString());
        }
        auto refused = RefusedRanges::fromStrings(ranges);
        if (!refused)
            return fieldError(QStringLiteral("refusedRanges"), refused.error().message);
        config.refusedRanges = *refused;
    }

    if (r.has(QStringLiteral("refuseHostAddresses"))) {
        const QJsonValue value = object.value(QStringLiteral("refuseHostAddresses"));
        if (!value.isBool())
            return fieldError(QStringLiteral("refuseHostAddresses"),
                              QStringLiteral("must be true or false"));
        config.refuseHostAddresses = value.toBool();
    }

    AIRLOCK_TRY_INIT(trustObject, r.object(QStringLiteral("trustStore"), false));
    FieldReader trust(*trustObject, QStringLiteral("trustStore"));
    AIRLOCK_TRY_INIT(trustKeys, trust.onlyKeys({u"caFile", u"caDirectory"}));
    AIRLOCK_TRY_INIT(caFile, trust.string(QStringLiteral("caFile"), QString()));
    AIRLOCK_TRY_INIT(caDirectory, trust.string(QStringLiteral("caDirectory"), QString()));
    config.trustStore = TlsTrustStore {*caFile, *caDirectory};

    AIRLOCK_TRY_INIT(caObject, r.object(QStringLiteral("ca"), true));
    FieldReader ca(*caObject, QStringLiteral("ca"));
    AIRLOCK_TRY_INIT(caKeys, ca.onlyKeys({u"certificatePem", u"keyPem"}));
    AIRLOCK_TRY_INIT(certificatePem, ca.string(QStringLiteral("certificatePem")));
    AIRLOCK_TRY_INIT(keyPem, ca.string(QStringLiteral("keyPem")));
    config.caCertificatePem = certificatePem->toLatin1();
    config.caKeyPem = keyPem->toLatin1();

    AIRLOCK_TRY_INIT(policyObject, r.object(QStringLiteral("policy"), true));
    auto policy = EgressPolicy::fromJson(*policyObject);
    if (!policy)
        return fieldError(QStringLiteral("policy"), policy.error().message);
    config.policy = *policy;

    AIRLOCK_TRY_INIT(limitsObject, r.object(QStringLiteral("limits"), false));
    FieldReader limits(*limitsObject, QStringLiteral("limits"));
    AIRLOCK_TRY_INIT(limitKeys,
                     limits.onlyKeys({u"maxConnections", u"idleTimeoutMs", u"maxHeaderBytes"}));
    AIRLOCK_TRY_INIT(maxConnections,
                     limits.integer(QStringLiteral("maxConnections"), 1, 65536, 1024));
    AIRLOCK_TRY_INIT(idle, limits.integer(QStringLiteral("idleTimeoutMs"), 100, 3600000, 60000));
    AIRLOCK_TRY_INIT(
        header, limits.integer(QStringLiteral("maxHeaderBytes"), 1024, 1024 * 1024, 64 * 1024));
    config.limits = GatewayLimits {int(*maxConnections), int(*idle), int(*header)};
    return config;
}

#undef AIRLOCK_TRY

} // namespace airlock::gateway

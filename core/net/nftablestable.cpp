#include "core/net/nftablestable.h"

#include "core/model/names.h"
#include "core/net/helperinstance.h"
#include "core/net/tapdevice.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSet>

#include <nftables/libnftables.h>

#include <array>
#include <memory>
#include <optional>

namespace airlock {

using namespace Qt::StringLiterals;

namespace {

Q_LOGGING_CATEGORY(lcNft, "airlock.net.nftables")

const QString TablePrefix = u"airlock_"_s;
const QString Netdev = u"netdev"_s;
const QString Inet = u"inet"_s;

/// Counter names, in documentation order (docs/network.md explains each).
const QStringList CounterNames = {
    u"drop_spoof_mac"_s, u"drop_spoof_ipv4"_s,
    u"drop_ipv6"_s,      u"drop_arp"_s,
    u"drop_ethertype"_s, u"drop_special_destination"_s,
    u"drop_tcp_port"_s,  u"drop_udp"_s,
    u"drop_icmp"_s,      u"drop_other_protocol"_s,
    u"drop_input"_s,     u"drop_forward"_s,
    u"redirect_tcp"_s,   u"redirect_dns"_s,
};

/// Destinations that are never redirected to the gateway (docs/redteam-cases.md F3): "this
/// network", loopback, link-local with the metadata addresses 169.254.169.254 and 169.254.170.2,
/// the metadata address 100.100.100.200, multicast, reserved and limited broadcast.
QJsonArray specialDestinations()
{
    auto prefix = [](const char16_t *address, int length) {
        return QJsonObject {
            {u"prefix"_s,
             QJsonObject {{u"addr"_s, QString::fromUtf16(address)}, {u"len"_s, length}}}};
    };
    return QJsonArray {prefix(u"0.0.0.0", 8), prefix(u"127.0.0.0", 8), prefix(u"169.254.0.0", 16),
                       u"100.100.100.200"_s, prefix(u"224.0.0.0", 3)};
}

QJsonObject payload(const QString &protocol, const QString &field)
{
    return {{u"payload"_s, QJsonObject {{u"protocol"_s, protocol}, {u"field"_s, field}}}};
}

QJsonObject meta(const QString &key)
{
    return {{u"meta"_s, QJsonObject {{u"key"_s, key}}}};
}

QJsonObject match(const QJsonObject &left, const QJsonValue &right, const QString &op = u"=="_s)
{
    return {{u"match"_s, QJsonObject {{u"op"_s, op}, {u"left"_s, left}, {u"right"_s, right}}}};
}

QJsonObject verdict(const QString &name)
{
    return {{name, QJsonValue(QJsonValue::Null)}};
}

QJsonObject set(const QJsonArray &elements)
{
    return {{u"set"_s, elements}};
}

/// Collects one table's commands and the counters its rules reference.
class TableBuilder
{
public:
    TableBuilder(QString family, QString table)
        : m_family(std::move(family)), m_table(std::move(table))
    { }

    void chain(const QString &name, const QString &type, const QString &hook, int priority,
               const QString &device = {})
    {
        QJsonObject chain {{u"family"_s, m_family},   {u"table"_s, m_table}, {u"name"_s, name},
                           {u"type"_s, type},         {u"hook"_s, hook},     {u"prio"_s, priority},
                           {u"policy"_s, u"accept"_s}};
        if (!device.isEmpty())
            chain.insert(u"dev"_s, device);
        m_chains.append(QJsonObject {{u"add"_s, QJsonObject {{u"chain"_s, chain}}}});
        m_chain = name;
    }

    /// A rule in the current chain: matches, then an optional counter, then the verdict
    /// statement (an object such as {"drop": null} or {"redirect": {...}}).
    void rule(QJsonArray expressions, const QString &counter, const QJsonObject &statement)
    {
        if (!counter.isEmpty()) {
            Q_ASSERT(CounterNames.contains(counter));
            m_counters.insert(counter);
            expressions.append(QJsonObject {{u"counter"_s, counter}});
        }
        expressions.append(statement);
        m_chains.append(QJsonObject {{u"add"_s,
                                      QJsonObject {{u"rule"_s,
                                                    QJsonObject {{u"family"_s, m_family},
                                                                 {u"table"_s, m_table},
                                                                 {u"chain"_s, m_chain},
                                                                 {u"expr"_s, expressions}}}}}});
    }

    QJsonObject tableObject() const
    {
        return {{u"table"_s, QJsonObject {{u"family"_s, m_family}, {u"name"_s, m_table}}}};
    }

    /// add table, then its counters (in CounterNames order), then chains and rules.
    void appendTo(QJsonArray &commands) const
    {
        commands.append(QJsonObject {{u"add"_s, tableObject()}});
        for (const QString &name : CounterNames) {
            if (!m_counters.contains(name))
                continue;
            commands.append(QJsonObject {{u"add"_s,
                                          QJsonObject {{u"counter"_s,
                                                        QJsonObject {{u"family"_s, m_family},
                                                                     {u"table"_s, m_table},
                                                                     {u"name"_s, name}}}}}});
        }
        for (const QJsonValue &command : m_chains)
            commands.append(command);
    }

private:
    QString m_family;
    QString m_table;
    QString m_chain;
    QJsonArray m_chains;
    QSet<QString> m_counters;
};

/// The "create if missing, then delete" pair that makes a later add start from nothing, all
/// inside the same transaction (nft(8): `add` of an existing table is not an error).
void appendDeleteIfPresent(QJsonArray &commands, const QString &family, const QString &table)
{
    const QJsonObject object {
        {u"table"_s, QJsonObject {{u"family"_s, family}, {u"name"_s, table}}}};
    commands.append(QJsonObject {{u"add"_s, object}});
    commands.append(QJsonObject {{u"delete"_s, object}});
}

QJsonDocument wrap(const QJsonArray &commands)
{
    QJsonArray all {QJsonObject {{u"metainfo"_s, QJsonObject {{u"json_schema_version"_s, 1}}}}};
    for (const QJsonValue &command : commands)
        all.append(command);
    return QJsonDocument(QJsonObject {{u"nftables"_s, all}});
}

struct ContextDeleter
{
    void operator()(nft_ctx *context) const { nft_ctx_free(context); }
};

/// Runs a JSON document through libnftables (JSON output mode makes it parse JSON input,
/// libnftables-json(5)); returns the JSON output buffer.
Result<QByteArray> run(const QJsonDocument &document)
{
    std::unique_ptr<nft_ctx, ContextDeleter> context(nft_ctx_new(NFT_CTX_DEFAULT));
    if (!context)
        return fail(ErrorKind::BackendUnavailable, u"cannot create a libnftables context"_s);
    nft_ctx_output_set_flags(context.get(), NFT_CTX_OUTPUT_JSON);
    if (nft_ctx_buffer_output(context.get()) != 0 || nft_ctx_buffer_error(context.get()) != 0)
        return fail(ErrorKind::Internal, u"cannot buffer libnftables output"_s);
    const QByteArray input = document.toJson(QJsonDocument::Compact);
    const int rc = nft_run_cmd_from_buffer(context.get(), input.constData());
    if (rc != 0) {
        const QString error =
            QString::fromLocal8Bit(nft_ctx_get_error_buffer(context.get())).trimmed();
        return fail(ErrorKind::OperationFailed,
                    error.isEmpty() ? u"libnftables failed"_s : u"libnftables: "_s + error);
    }
    return QByteArray(nft_ctx_get_output_buffer(context.get()));
}

/// The "nftables" array of a libnftables JSON answer.
QJsonArray outputItems(const QByteArray &output)
{
    return QJsonDocument::fromJson(output).object().value(u"nftables"_s).toArray();
}

/// The items of table `table` in `family`; std::nullopt when that table does not exist (one
/// command per family, so a missing table fails only its own listing).
Result<std::optional<QJsonArray>> listTable(const QString &family, const QString &table)
{
    const QJsonArray list {QJsonObject {
        {u"list"_s,
         QJsonObject {{u"table"_s, QJsonObject {{u"family"_s, family}, {u"name"_s, table}}}}}}};
    auto output = run(wrap(list));
    if (!output) {
        if (output.error().message.contains(u"No such file or directory"_s))
            return std::optional<QJsonArray>();
        return std::unexpected(output.error());
    }
    return std::optional<QJsonArray>(outputItems(*output));
}

} // namespace

Result<void> NftablesSpec::validate() const
{
    AIRLOCK_TRY(validateName(sandbox));
    static const QRegularExpression instancePattern(
        u"^([0-9a-f]{%1})?$"_s.arg(HelperInstance::kTagLength));
    if (!instancePattern.match(instance).hasMatch())
        return fail(ErrorKind::InvalidParams,
                    u"invalid helper instance tag '%1' (%2 hex digits)"_s.arg(instance).arg(
                        HelperInstance::kTagLength));
    if (!TapDevice::isValidInterfaceName(ifname))
        return fail(ErrorKind::InvalidParams,
                    u"invalid interface name '%1' (al and 2..13 of [a-z0-9_-])"_s.arg(ifname));
    static const QRegularExpression macPattern(u"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$"_s);
    if (!macPattern.match(guestMac).hasMatch())
        return fail(ErrorKind::InvalidParams,
                    u"guest MAC '%1' is not six lower-case hex octets"_s.arg(guestMac));
    if (guestMac.left(2).toUInt(nullptr, 16) & 1)
        return fail(ErrorKind::InvalidParams,
                    u"guest MAC '%1' is a multicast address"_s.arg(guestMac));
    if (guest.protocol() != QAbstractSocket::IPv4Protocol
        || gateway.protocol() != QAbstractSocket::IPv4Protocol || guest == gateway)
        return fail(ErrorKind::InvalidParams,
                    u"guest and gateway need two different IPv4 addresses"_s);
    if (gatewayTcpPort == 0 || gatewayDnsPort == 0 || gatewayTcpPort == gatewayDnsPort)
        return fail(ErrorKind::InvalidParams,
                    u"gateway TCP and DNS ports must be two different non-zero ports"_s);
    if (explicitProxyPort != 0
        && (explicitProxyPort == 53 || explicitProxyPort == gatewayTcpPort
            || explicitProxyPort == gatewayDnsPort))
        return fail(ErrorKind::InvalidParams,
                    u"the explicit proxy port must differ from 53 and the gateway's listener "
                    "ports"_s);
    return {};
}

QString NftablesTable::tableName(const QString &sandbox, const QString &instance)
{
    // '_' is in no sandbox name: the tag and the name never run into each other.
    return instance.isEmpty() ? TablePrefix + sandbox : TablePrefix + instance + u'_' + sandbox;
}

QStringList NftablesTable::counterNames()
{
    return CounterNames;
}

Result<QJsonDocument> NftablesTable::document(const NftablesSpec &spec)
{
    AIRLOCK_TRY(spec.validate());
    const QString table = tableName(spec.sandbox, spec.instance);
    const QString mac = spec.guestMac;
    const QString guest = spec.guest.toString();
    const QString gateway = spec.gateway.toString();
    const QJsonObject drop = verdict(u"drop"_s);
    const QJsonObject accept = verdict(u"accept"_s);
    const QString notEqual = u"!="_s;

    // netdev: the first hook a guest frame meets, bound to the device itself.
    TableBuilder l2(Netdev, table);
    l2.chain(u"guest_ingress"_s, u"filter"_s, u"ingress"_s, -500, spec.ifname);
    const QJsonObject etherType = payload(u"ether"_s, u"type"_s);
    l2.rule({match(payload(u"ether"_s, u"saddr"_s), mac, notEqual)}, u"drop_spoof_mac"_s, drop);
    l2.rule({match(etherType, u"ip6"_s)}, u"drop_ipv6"_s, drop);
    l2.rule({match(etherType, u"arp"_s), match(payload(u"arp"_s, u"htype"_s), 1),
             match(payload(u"arp"_s, u"ptype"_s), u"ip"_s), match(payload(u"arp"_s, u"hlen"_s), 6),
             match(payload(u"arp"_s, u"plen"_s), 4),
             match(payload(u"arp"_s, u"saddr ether"_s), mac),
             match(payload(u"arp"_s, u"saddr ip"_s), guest),
             match(payload(u"arp"_s, u"daddr ip"_s), gateway)},
            {}, accept);
    l2.rule({match(etherType, u"arp"_s)}, u"drop_arp"_s, drop);
    l2.rule({match(etherType, u"ip"_s), match(payload(u"ip"_s, u"saddr"_s), guest, notEqual)},
            u"drop_spoof_ipv4"_s, drop);
    l2.rule({match(etherType, u"ip"_s)}, {}, accept);
    l2.rule({}, u"drop_ethertype"_s, drop);

    // inet: the same source checks again in each IP hook, then redirect and filter.
    TableBuilder l3(Inet, table);
    const QJsonObject fromGuest = match(meta(u"iifname"_s), spec.ifname);
    const QJsonObject l4proto = meta(u"l4proto"_s);
    const QJsonObject toGateway = match(payload(u"ip"_s, u"daddr"_s), gateway);
    const QJsonArray gatewayTcpPorts {int(spec.gatewayTcpPort), int(spec.gatewayDnsPort)};
    auto sourceChecks = [&](TableBuilder &builder) {
        builder.rule({fromGuest, match(payload(u"ether"_s, u"saddr"_s), mac, notEqual)},
                     u"drop_spoof_mac"_s, drop);
        builder.rule({fromGuest, match(meta(u"nfproto"_s), u"ipv6"_s)}, u"drop_ipv6"_s, drop);
        builder.rule({fromGuest, match(payload(u"ip"_s, u"saddr"_s), guest, notEqual)},
                     u"drop_spoof_ipv4"_s, drop);
    };
    auto gatewayListeners = [&](TableBuilder &builder) {
        builder.rule({fromGuest, toGateway, match(l4proto, u"tcp"_s),
                      match(payload(u"th"_s, u"dport"_s), set(gatewayTcpPorts))},
                     {}, accept);
        builder.rule({fromGuest, toGateway, match(l4proto, u"udp"_s),
                      match(payload(u"th"_s, u"dport"_s), int(spec.gatewayDnsPort))},
                     {}, accept);
    };

    l3.chain(u"guest_guard"_s, u"filter"_s, u"prerouting"_s, -300);
    sourceChecks(l3);
    l3.rule({fromGuest, match(payload(u"ip"_s, u"daddr"_s), set(specialDestinations()))},
            u"drop_special_destination"_s, drop);

    l3.chain(u"guest_redirect"_s, u"nat"_s, u"prerouting"_s, -100);
    l3.rule({fromGuest, match(l4proto, set({u"tcp"_s, u"udp"_s})),
             match(payload(u"th"_s, u"dport"_s), 53)},
            u"redirect_dns"_s,
            QJsonObject {{u"redirect"_s, QJsonObject {{u"port"_s, int(spec.gatewayDnsPort)}}}});
    if (spec.explicitProxyPort != 0)
        l3.rule({fromGuest, toGateway, match(l4proto, u"tcp"_s),
                 match(payload(u"th"_s, u"dport"_s), int(spec.explicitProxyPort))},
                u"redirect_tcp"_s,
                QJsonObject {{u"redirect"_s, QJsonObject {{u"port"_s, int(spec.gatewayTcpPort)}}}});
    l3.rule({fromGuest, match(payload(u"ip"_s, u"daddr"_s), gateway, notEqual),
             match(l4proto, u"tcp"_s)},
            u"redirect_tcp"_s,
            QJsonObject {{u"redirect"_s, QJsonObject {{u"port"_s, int(spec.gatewayTcpPort)}}}});

    // After dstnat (-100): redirected packets now carry the gateway's address and port.
    l3.chain(u"guest_filter"_s, u"filter"_s, u"prerouting"_s, -90);
    gatewayListeners(l3);
    l3.rule({fromGuest, match(l4proto, u"tcp"_s)}, u"drop_tcp_port"_s, drop);
    l3.rule({fromGuest, match(l4proto, u"udp"_s)}, u"drop_udp"_s, drop);
    l3.rule({fromGuest, match(l4proto, u"icmp"_s)}, u"drop_icmp"_s, drop);
    l3.rule({fromGuest}, u"drop_other_protocol"_s, drop);

    l3.chain(u"guest_input"_s, u"filter"_s, u"input"_s, 0);
    sourceChecks(l3);
    gatewayListeners(l3);
    l3.rule({fromGuest}, u"drop_input"_s, drop);

    l3.chain(u"guest_forward"_s, u"filter"_s, u"forward"_s, 0);
    l3.rule({fromGuest}, u"drop_forward"_s, drop);
    l3.rule({match(meta(u"oifname"_s), spec.ifname)}, u"drop_forward"_s, drop);

    QJsonArray commands;
    appendDeleteIfPresent(commands, Netdev, table);
    appendDeleteIfPresent(commands, Inet, table);
    l2.appendTo(commands);
    l3.appendTo(commands);
    return wrap(commands);
}

Result<void> NftablesTable::load(const NftablesSpec &spec)
{
    auto document = NftablesTable::document(spec);
    AIRLOCK_TRY(document);
    if (auto ran = run(*document); !ran)
        return fail(
            ErrorKind::OperationFailed,
            u"cannot load the tables of sandbox %1: %2"_s.arg(spec.sandbox, ran.error().message));
    qCInfo(lcNft, "loaded tables %s for %s on %s",
           qPrintable(tableName(spec.sandbox, spec.instance)), qPrintable(spec.guest.toString()),
           qPrintable(spec.ifname));
    return {};
}

Result<void> NftablesTable::remove(const QString &sandbox, const QString &instance)
{
    AIRLOCK_TRY(validateName(sandbox));
    QJsonArray commands;
    appendDeleteIfPresent(commands, Netdev, tableName(sandbox, instance));
    appendDeleteIfPresent(commands, Inet, tableName(sandbox, instance));
    if (auto ran = run(wrap(commands)); !ran)
        return fail(
            ErrorKind::OperationFailed,
            u"cannot remove the tables of sandbox %1: %2"_s.arg(sandbox, ran.error().message));
    qCInfo(lcNft, "removed tables %s", qPrintable(tableName(sandbox, instance)));
    return {};
}

Result<QMap<QString, NftCounter>> NftablesTable::counters(const QString &sandbox,
                                                          const QString &instance)
{
    AIRLOCK_TRY(validateName(sandbox));
    const QString table = tableName(sandbox, instance);
    QMap<QString, NftCounter> values;
    bool found = false;
    for (const QString &family : {Netdev, Inet}) {
        auto listed = listTable(family, table);
        AIRLOCK_TRY(listed);
        if (!*listed)
            continue;
        found = true;
        for (const QJsonValue &item : **listed) {
            const QJsonObject counter = item.toObject().value(u"counter"_s).toObject();
            const QString name = counter.value(u"name"_s).toString();
            if (counter.isEmpty() || !CounterNames.contains(name))
                continue;
            NftCounter &value = values[name];
            value.packets += quint64(counter.value(u"packets"_s).toInteger());
            value.bytes += quint64(counter.value(u"bytes"_s).toInteger());
        }
    }
    if (!found)
        return fail(ErrorKind::NotFound, u"sandbox %1 has no nftables table"_s.arg(sandbox));
    return values;
}

Result<QStringList> NftablesTable::listLeftoverTables(const QString &instance)
{
    const QJsonArray list {
        QJsonObject {{u"list"_s, QJsonObject {{u"tables"_s, QJsonValue(QJsonValue::Null)}}}}};
    auto output = run(wrap(list));
    AIRLOCK_TRY(output);
    const QString prefix = instance.isEmpty() ? TablePrefix : TablePrefix + instance + u'_';
    QStringList sandboxes;
    for (const QJsonValue &item : outputItems(*output)) {
        const QJsonObject table = item.toObject().value(u"table"_s).toObject();
        const QString family = table.value(u"family"_s).toString();
        const QString name = table.value(u"name"_s).toString();
        if ((family != Netdev && family != Inet) || !name.startsWith(prefix))
            continue;
        // validateName() refuses '_': another helper's tagged table never passes as untagged.
        const QString sandbox = name.mid(prefix.size());
        if (validateName(sandbox) && !sandboxes.contains(sandbox))
            sandboxes << sandbox;
    }
    sandboxes.sort();
    return sandboxes;
}

namespace {

/// The parts of a listing that change on their own (handles, counter values) go.
QJsonValue withoutVolatileFields(const QJsonValue &value)
{
    if (value.isArray()) {
        QJsonArray items;
        for (const QJsonValue &item : value.toArray())
            items.append(withoutVolatileFields(item));
        return items;
    }
    if (!value.isObject())
        return value;
    QJsonObject object;
    const QJsonObject in = value.toObject();
    for (auto it = in.begin(); it != in.end(); ++it) {
        if (it.key() == u"handle"_s || it.key() == u"packets"_s || it.key() == u"bytes"_s)
            continue;
        object.insert(it.key(), withoutVolatileFields(it.value()));
    }
    return object;
}

/// A sandbox's two tables as listed (netdev, inet), without metainfo and volatile fields;
/// none where that table does not exist.
using TableItems = std::array<std::optional<QJsonArray>, 2>;

/// The fingerprint of `tables`: the same whether they came from listing each table or the
/// whole ruleset (tst_nftablestable compares the two).
QByteArray hashTables(const TableItems &tables)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (const std::optional<QJsonArray> &items : tables) {
        if (items)
            hash.addData(QJsonDocument(*items).toJson(QJsonDocument::Compact));
        else
            hash.addData(QByteArrayView("missing\n"));
    }
    return hash.result();
}

} // namespace

Result<QByteArray> NftablesTable::fingerprint(const QString &sandbox, const QString &instance)
{
    AIRLOCK_TRY(validateName(sandbox));
    const QString table = tableName(sandbox, instance);
    TableItems tables;
    for (size_t slot = 0; slot < tables.size(); ++slot) {
        // One command per family: a missing table fails only its own listing.
        auto listed = listTable(slot == 0 ? Netdev : Inet, table);
        AIRLOCK_TRY(listed);
        if (!*listed)
            continue;
        QJsonArray &items = tables[slot].emplace();
        for (const QJsonValue &item : **listed) {
            if (!item.toObject().contains(u"metainfo"_s))
                items.append(withoutVolatileFields(item));
        }
    }
    if (!tables[0] && !tables[1])
        return fail(ErrorKind::NotFound,
                    u"sandbox %1 has no nftables table %2"_s.arg(sandbox, table));
    return hashTables(tables);
}

Result<QHash<QString, QByteArray>> NftablesTable::fingerprints(const QString &instance)
{
    const QJsonArray list {
        QJsonObject {{u"list"_s, QJsonObject {{u"ruleset"_s, QJsonValue(QJsonValue::Null)}}}}};
    AIRLOCK_TRY_INIT(output, run(wrap(list)));
    const QString prefix = instance.isEmpty() ? TablePrefix : TablePrefix + instance + u'_';
    QHash<QString, TableItems> bySandbox;
    for (const QJsonValue &item : outputItems(*output)) {
        const QJsonObject object = item.toObject();
        if (object.size() != 1 || object.contains(u"metainfo"_s))
            continue;
        // {"table": {family, name}}, or {"chain"|"rule"|"set"|...: {family, table, ...}}.
        const bool isTable = object.begin().key() == u"table"_s;
        const QJsonObject body = object.begin().value().toObject();
        const QString family = body.value(u"family"_s).toString();
        const QString name = body.value(isTable ? u"name"_s : u"table"_s).toString();
        const int slot = family == Netdev ? 0 : family == Inet ? 1 : -1;
        if (slot < 0 || !name.startsWith(prefix))
            continue;
        // validateName() refuses '_': another helper's tagged table never passes as untagged.
        const QString sandbox = name.mid(prefix.size());
        if (!validateName(sandbox))
            continue;
        std::optional<QJsonArray> &items = bySandbox[sandbox][size_t(slot)];
        if (!items)
            items.emplace();
        items->append(withoutVolatileFields(item));
    }
    QHash<QString, QByteArray> result;
    for (auto it = bySandbox.cbegin(); it != bySandbox.cend(); ++it)
        result.insert(it.key(), hashTables(*it));
    return result;
}

} // namespace airlock

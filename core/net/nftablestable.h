#pragma once

#include "core/model/error.h"

#include <QHash>
#include <QHostAddress>
#include <QJsonDocument>
#include <QMap>
#include <QString>
#include <QStringList>

namespace airlock {

/// What one sandbox's table enforces: the guest on `ifname` may only use its MAC and IPv4
/// address, and may only reach the gateway's TCP and DNS listeners on the link.
struct NftablesSpec
{
    /// Sandbox name ([a-z0-9][a-z0-9-]{0,62}); the tables are named
    /// NftablesTable::tableName(sandbox, instance).
    QString sandbox;
    /// The owning helper's tag (HelperInstance::tagFor), empty for untagged tables.
    QString instance;
    /// Host side of the sandbox link (a tap, or a veth in tests): "al-..." (TapDevice).
    QString ifname;
    /// The guest's MAC, "02:61:6c:00:00:05" (lower-case, unicast).
    QString guestMac;
    /// The guest's only allowed IPv4 source address.
    QHostAddress guest;
    /// The host side address on the link (assigned to ifname); redirect targets it.
    QHostAddress gateway;
    /// The gateway's transparent TCP listener on `gateway` (all guest TCP goes there).
    quint16 gatewayTcpPort = 0;
    /// The gateway's DNS listener on `gateway`, UDP and TCP (all guest port-53 traffic).
    quint16 gatewayDnsPort = 0;
    /// The gateway's explicit-proxy port on `gateway` (0: none). A guest connection to
    /// gateway:explicitProxyPort is redirected to the TCP listener like all other TCP, so the
    /// gateway sees that original destination and serves it as an explicit HTTP proxy
    /// (docs/gateway.md). Must differ from 53 and the two listener ports.
    quint16 explicitProxyPort = 0;

    /// Checks every field. Errors: InvalidName (sandbox), InvalidParams (the rest).
    Result<void> validate() const;
};

/// One counter's value.
struct NftCounter
{
    quint64 packets = 0;
    quint64 bytes = 0;
};

/// The per-sandbox nftables ruleset, built as a libnftables JSON document (never an `nft`
/// command string) and loaded through libnftables in one transaction. A sandbox owns two
/// tables of the same name, airlock_<instance>_<sandbox> (tableName()): one in family `netdev` (an
/// ingress chain bound to the tap: Ethernet source, ARP, EtherType and IPv4 source checks, because
/// the `inet` ingress hook never shows ARP to its chains) and one in family `inet` (prerouting
/// guard, redirection, prerouting filter, input, forward). docs/redteam-cases.md principle 8: the
/// source checks are repeated in every hook the guest's packets reach. Principle 3: everything not
/// redirected to the gateway is dropped and counted per reason (counterNames()). See
/// docs/network.md for the rendered ruleset.
///
/// All calls act on the calling thread's network namespace and need CAP_NET_ADMIN there.
/// Each call uses its own libnftables context, so calls are safe from any one thread at a time.
class NftablesTable
{
public:
    /// "airlock_" + instance + "_" + sandbox, or "airlock_" + sandbox without an instance tag.
    /// The tag keeps the tables of helpers sharing a namespace apart (HelperInstance).
    static QString tableName(const QString &sandbox, const QString &instance = {});
    /// The named counters every table carries, in the order the docs list them.
    static QStringList counterNames();

    /// The transaction load() runs: create-if-missing, delete, then add both tables with their
    /// counters, chains and rules. Errors: as NftablesSpec::validate().
    static Result<QJsonDocument> document(const NftablesSpec &spec);
    /// Replaces the sandbox's tables atomically: either the old tables stay untouched or the
    /// new ones are in place, never neither (one netlink batch). Counters restart from zero.
    /// Errors: validation errors; OperationFailed with libnftables' message (e.g. the device
    /// does not exist).
    static Result<void> load(const NftablesSpec &spec);
    /// Deletes both tables in one transaction; succeeds if they do not exist. Errors:
    /// InvalidName, OperationFailed.
    static Result<void> remove(const QString &sandbox, const QString &instance = {});
    /// Packets and bytes per counter name (summed over both tables). Errors: NotFound when the
    /// sandbox has no table, InvalidName, OperationFailed.
    static Result<QMap<QString, NftCounter>> counters(const QString &sandbox,
                                                      const QString &instance = {});
    /// Sandbox names that have a table of helper `instance` (tableName()) in family netdev or
    /// inet, sorted and unique: what a crashed helper left behind. Never another instance's
    /// tables (docs/reviews/2026-12-01-newuser-pass.md#h1). Errors: OperationFailed.
    static Result<QStringList> listLeftoverTables(const QString &instance = {});
    /// SHA-256 over both tables as the kernel lists them, without handles and counter values:
    /// equal as long as nobody removed, replaced or changed a chain or rule. What a running
    /// helper compares, so that a table deleted or edited behind its back is noticed.
    /// Errors: NotFound (neither table exists), InvalidName, OperationFailed.
    static Result<QByteArray> fingerprint(const QString &sandbox, const QString &instance = {});
    /// fingerprint() of every sandbox with a table of helper `instance`, by sandbox name, from
    /// one listing of the ruleset: checking N tables costs one kernel dump, not 2N (each of
    /// which walks every table). Errors: OperationFailed.
    static Result<QHash<QString, QByteArray>> fingerprints(const QString &instance = {});
};

} // namespace airlock

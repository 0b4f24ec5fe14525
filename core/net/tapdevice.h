#pragma once

#include "core/model/error.h"

#include <QHostAddress>
#include <QString>
#include <QStringList>

#include <sys/types.h>

namespace airlock {

/// What TapDevice::create() sets up.
struct TapConfig
{
    /// Interface name: "al" then up to 13 of [a-z0-9_-] (IFNAMSIZ is 16 with the NUL).
    QString ifname;
    /// The unprivileged VMM user that may attach to the tap (TUNSETOWNER).
    uid_t owner = 0;
    /// Host side address of the link (the gateway), IPv4.
    QHostAddress address;
    /// 30 or 31 (see AddressPool).
    int prefixLength = 30;
};

/// Persistent tap devices on the host side of each sandbox link, made with the tun driver's
/// ioctls (Documentation/networking/tuntap.rst) and configured with the classic SIOCSIF*
/// ioctls (netdevice(7)); no `ip` process is spawned. All calls act on the calling thread's
/// network namespace and need CAP_NET_ADMIN there.
class TapDevice
{
public:
    /// The tap of sandbox `sandboxName` of the helper tagged `instance` (HelperInstance):
    /// "al" + instance + "-" + the sandbox name when that fits in 15 bytes (7 characters with a
    /// tag, 12 untagged); longer names become "al" + instance + "_" + as many hex digits of
    /// their SHA-256 as fit (28 bits with a tag, 48 untagged). '_' is in no sandbox name, so a
    /// hashed name never equals a literal one (docs/reviews/2026-12-01-newuser-pass.md#l1: 16 bits
    /// collided).
    static QString interfaceName(const QString &sandboxName, const QString &instance);
    /// True for names interfaceName() can produce: "al" + 2..13 of [a-z0-9_-].
    static bool isValidInterfaceName(QStringView ifname);
    /// True if interfaceName() with `instance` can produce `ifname` ("al" + instance, then '-'
    /// or '_'): the helper tagged `instance` owns it.
    static bool belongsTo(QStringView ifname, const QString &instance);

    /// Creates the tap (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR, IFF_TUN_EXCL so an existing
    /// device is never reused), makes it persistent and owned by config.owner, disables IPv6 on
    /// it, assigns config.address/prefixLength and sets it up. On any failure the device is
    /// removed again. Errors: InvalidParams (name, address, prefix), AlreadyExists (a device
    /// of that name exists), BackendUnavailable (no /dev/net/tun), OperationFailed (an ioctl).
    static Result<void> create(const TapConfig &config);
    /// Opens a queue of an existing tap (TUNSETIFF IFF_TAP | IFF_NO_PI | IFF_VNET_HDR) and
    /// returns its descriptor (close-on-exec): what airlockd hands to the unprivileged VMM,
    /// which could not open /dev/net/tun itself (mode 0600 on Debian). Errors: InvalidParams,
    /// NotFound (no such tap), BackendUnavailable, OperationFailed.
    static Result<int> attach(const QString &ifname);
    /// Removes a persistent tap (TUNSETPERSIST 0). Succeeds if the device does not exist.
    /// Errors: InvalidParams (not a valid al-* name or not a tap), Busy (a process still holds
    /// it, e.g. a running VMM), OperationFailed.
    static Result<void> remove(const QString &ifname);
    /// Tap devices of the helper tagged `instance` in this namespace (belongsTo(): leftovers
    /// after a crash, for cleanup at helper start), sorted; never another helper's. Errors:
    /// OperationFailed when interfaces cannot be listed.
    static Result<QStringList> listLeftovers(const QString &instance);
    /// True if ifname exists and is a tun/tap device in tap mode (ethtool driver "tun", bus
    /// info "tap").
    static bool isTap(const QString &ifname);
};

} // namespace airlock

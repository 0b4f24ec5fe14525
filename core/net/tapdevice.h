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
    /// Interface name: "al-" then up to 12 of [a-z0-9-] (IFNAMSIZ is 16 with the NUL).
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
    /// "al-" + the sandbox name when it fits in 15 bytes; longer names become "al-" + their
    /// first 7 characters + "-" + 4 hex digits of their SHA-256, so distinct names rarely
    /// collide (create() still refuses an existing name).
    static QString interfaceName(const QString &sandboxName);
    /// True for names interfaceName() can produce: "al-" + 1..12 of [a-z0-9-].
    static bool isValidInterfaceName(QStringView ifname);

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
    /// Tap devices named al-* in this namespace (leftovers after a crash, for cleanup at helper
    /// start), sorted. Errors: OperationFailed when interfaces cannot be listed.
    static Result<QStringList> listLeftovers();
    /// True if ifname exists and is a tun/tap device in tap mode (ethtool driver "tun", bus
    /// info "tap").
    static bool isTap(const QString &ifname);
};

} // namespace airlock

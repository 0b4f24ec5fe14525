#include "core/net/tapdevice.h"

#include <QCryptographicHash>
#include <QFile>
#include <QLoggingCategory>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcTap, "airlock.net.tap")

constexpr QStringView Prefix = u"al";

/// Closes a file descriptor when it goes out of scope.
class Fd
{
public:
    explicit Fd(int fd) : m_fd(fd) { }
    ~Fd()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    int get() const { return m_fd; }
    int release() { return std::exchange(m_fd, -1); }

private:
    int m_fd;
};

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

ifreq requestFor(const QString &ifname)
{
    ifreq request {};
    const QByteArray name = ifname.toLatin1();
    std::memcpy(request.ifr_name, name.constData(), std::min<size_t>(name.size(), IFNAMSIZ - 1));
    return request;
}

Result<void> ioctlFailed(const QString &ifname, const char *what, int error)
{
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("%1 on %2 failed: %3")
                    .arg(QLatin1StringView(what), ifname, errnoText(error)));
}

sockaddr inetAddress(quint32 hostOrder)
{
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(hostOrder);
    sockaddr generic {};
    std::memcpy(&generic, &address, sizeof address);
    return generic;
}

/// Configures address, netmask and IFF_UP through an AF_INET datagram socket (netdevice(7)).
Result<void> configure(const TapConfig &config)
{
    Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (sock.get() < 0)
        return ioctlFailed(config.ifname, "socket(AF_INET)", errno);
    ifreq request = requestFor(config.ifname);
    request.ifr_addr = inetAddress(config.address.toIPv4Address());
    if (::ioctl(sock.get(), SIOCSIFADDR, &request) < 0)
        return ioctlFailed(config.ifname, "SIOCSIFADDR", errno);
    request = requestFor(config.ifname);
    request.ifr_netmask = inetAddress(~quint32(0) << (32 - config.prefixLength));
    if (::ioctl(sock.get(), SIOCSIFNETMASK, &request) < 0)
        return ioctlFailed(config.ifname, "SIOCSIFNETMASK", errno);
    request = requestFor(config.ifname);
    if (::ioctl(sock.get(), SIOCGIFFLAGS, &request) < 0)
        return ioctlFailed(config.ifname, "SIOCGIFFLAGS", errno);
    request.ifr_flags = short(request.ifr_flags | IFF_UP);
    if (::ioctl(sock.get(), SIOCSIFFLAGS, &request) < 0)
        return ioctlFailed(config.ifname, "SIOCSIFFLAGS", errno);
    return {};
}

/// The guest link is IPv4 only (issue 3): no link-local address, no router solicitations on
/// the host side. /proc/sys/net is per network namespace (of the opening thread).
void disableIpv6(const QString &ifname)
{
    QFile file(QStringLiteral("/proc/sys/net/ipv6/conf/%1/disable_ipv6").arg(ifname));
    if (!file.open(QIODevice::WriteOnly) || file.write("1\n") != 2)
        qCDebug(lcTap, "cannot disable IPv6 on %s (IPv6 unavailable?)", qPrintable(ifname));
}

} // namespace

QString TapDevice::interfaceName(const QString &sandboxName, const QString &instance)
{
    const QString named = Prefix.toString() + instance + u'-';
    const qsizetype room = IFNAMSIZ - 1 - named.size(); // 12 untagged, 7 with a tag
    if (sandboxName.size() <= room)
        return named + sandboxName;
    // '_' never occurs in a sandbox name, so a hashed name cannot equal a literal one.
    const QByteArray digest =
        QCryptographicHash::hash(sandboxName.toUtf8(), QCryptographicHash::Sha256);
    return Prefix.toString() + instance + u'_' + QString::fromLatin1(digest.toHex().left(room));
}

bool TapDevice::isValidInterfaceName(QStringView ifname)
{
    if (!ifname.startsWith(Prefix) || ifname.size() <= Prefix.size() + 1 || ifname.size() > 15)
        return false;
    return std::all_of(ifname.begin() + Prefix.size(), ifname.end(), [](QChar c) {
        return (c >= u'a' && c <= u'z') || (c >= u'0' && c <= u'9') || c == u'-' || c == u'_';
    });
}

bool TapDevice::belongsTo(QStringView ifname, const QString &instance)
{
    if (!isValidInterfaceName(ifname) || !ifname.mid(Prefix.size()).startsWith(instance)
        || ifname.size() <= Prefix.size() + instance.size() + 1)
        return false;
    const QChar separator = ifname.at(Prefix.size() + instance.size());
    return separator == u'-' || separator == u'_';
}

bool TapDevice::isTap(const QString &ifname)
{
    Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (sock.get() < 0)
        return false;
    ethtool_drvinfo info {};
    info.cmd = ETHTOOL_GDRVINFO;
    ifreq request = requestFor(ifname);
    request.ifr_data = reinterpret_cast<char *>(&info);
    if (::ioctl(sock.get(), SIOCETHTOOL, &request) < 0)
        return false;
    // drivers/net/tun.c reports driver "tun" and bus_info "tap" or "tun".
    return std::strncmp(info.driver, "tun", sizeof info.driver) == 0
        && std::strncmp(info.bus_info, "tap", sizeof info.bus_info) == 0;
}

Result<void> TapDevice::create(const TapConfig &config)
{
    if (!isValidInterfaceName(config.ifname))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("invalid tap name '%1' (al- and 1..12 of [a-z0-9-])")
                        .arg(config.ifname));
    if (config.address.protocol() != QAbstractSocket::IPv4Protocol)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("tap %1 needs an IPv4 address").arg(config.ifname));
    if (config.prefixLength != 30 && config.prefixLength != 31)
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("tap %1: prefix length must be 30 or 31").arg(config.ifname));

    {
        Fd tun(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
        if (tun.get() < 0)
            return fail(ErrorKind::BackendUnavailable,
                        QStringLiteral("cannot open /dev/net/tun: %1").arg(errnoText(errno)));
        ifreq request = requestFor(config.ifname);
        // IFF_TUN_EXCL is 0x8000: the flags field is a short, so the value wraps on purpose.
        request.ifr_flags = static_cast<short>(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_TUN_EXCL);
        if (::ioctl(tun.get(), TUNSETIFF, &request) < 0) {
            const int error = errno;
            if (error == EBUSY || error == EEXIST)
                return fail(ErrorKind::AlreadyExists,
                            QStringLiteral("network device %1 already exists").arg(config.ifname));
            return ioctlFailed(config.ifname, "TUNSETIFF", error);
        }
        if (::ioctl(tun.get(), TUNSETOWNER, static_cast<unsigned long>(config.owner)) < 0)
            return ioctlFailed(config.ifname, "TUNSETOWNER", errno); // not persistent yet
        if (::ioctl(tun.get(), TUNSETPERSIST, 1UL) < 0)
            return ioctlFailed(config.ifname, "TUNSETPERSIST", errno);
    }
    disableIpv6(config.ifname);
    if (auto configured = configure(config); !configured) {
        if (auto removed = remove(config.ifname); !removed)
            qCWarning(lcTap, "cannot remove %s after a failed setup: %s", qPrintable(config.ifname),
                      qPrintable(removed.error().message));
        return configured;
    }
    qCInfo(lcTap, "created tap %s owned by uid %u with %s/%d", qPrintable(config.ifname),
           unsigned(config.owner), qPrintable(config.address.toString()), config.prefixLength);
    return {};
}

Result<int> TapDevice::attach(const QString &ifname)
{
    if (!isValidInterfaceName(ifname))
        return fail(ErrorKind::InvalidParams, QStringLiteral("invalid tap name '%1'").arg(ifname));
    if (!isTap(ifname))
        return fail(ErrorKind::NotFound, QStringLiteral("no tap device %1").arg(ifname));
    Fd tun(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
    if (tun.get() < 0)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("cannot open /dev/net/tun: %1").arg(errnoText(errno)));
    ifreq request = requestFor(ifname);
    request.ifr_flags = static_cast<short>(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR);
    if (::ioctl(tun.get(), TUNSETIFF, &request) < 0)
        return std::unexpected(ioctlFailed(ifname, "TUNSETIFF", errno).error());
    return tun.release();
}

Result<void> TapDevice::remove(const QString &ifname)
{
    if (!isValidInterfaceName(ifname))
        return fail(ErrorKind::InvalidParams, QStringLiteral("invalid tap name '%1'").arg(ifname));
    if (::if_nametoindex(ifname.toLatin1().constData()) == 0)
        return {};
    if (!isTap(ifname))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("network device %1 is not a tap device").arg(ifname));
    Fd tun(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
    if (tun.get() < 0)
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("cannot open /dev/net/tun: %1").arg(errnoText(errno)));
    ifreq request = requestFor(ifname);
    request.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
    if (::ioctl(tun.get(), TUNSETIFF, &request) < 0) {
        const int error = errno;
        if (error == EBUSY)
            return fail(ErrorKind::Busy,
                        QStringLiteral("tap %1 is still attached to a process").arg(ifname));
        return ioctlFailed(ifname, "TUNSETIFF", error);
    }
    if (::ioctl(tun.get(), TUNSETPERSIST, 0UL) < 0)
        return ioctlFailed(ifname, "TUNSETPERSIST 0", errno);
    qCInfo(lcTap, "removed tap %s", qPrintable(ifname));
    return {}; // the device goes away when `tun` closes
}

Result<QStringList> TapDevice::listLeftovers(const QString &instance)
{
    struct if_nameindex *interfaces = ::if_nameindex();
    if (!interfaces)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot list network interfaces: %1").arg(errnoText(errno)));
    QStringList taps;
    for (const struct if_nameindex *entry = interfaces; entry->if_index != 0; ++entry) {
        const QString name = QString::fromLatin1(entry->if_name);
        if (belongsTo(name, instance) && isTap(name))
            taps << name;
    }
    ::if_freenameindex(interfaces);
    taps.sort();
    return taps;
}

} // namespace airlock

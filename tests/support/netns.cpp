#include "netns.h"

#include <QDir>
#include <QProcess>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock::test {

bool runIp(const QStringList &arguments, QString *output)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral("ip"), arguments);
    const bool ok = process.waitForFinished(10000) && process.exitStatus() == QProcess::NormalExit
        && process.exitCode() == 0;
    const QString text = QString::fromLocal8Bit(process.readAll());
    if (output)
        *output = text;
    if (!ok)
        qWarning("ip %s: %s", qPrintable(arguments.join(u' ')), qPrintable(text));
    return ok;
}

std::optional<NetworkNamespace> NetworkNamespace::create(const QString &name)
{
    if (!runIp({QStringLiteral("netns"), QStringLiteral("add"), name}))
        return std::nullopt;
    NetworkNamespace ns;
    ns.m_name = name;
    ns.m_fd = ::open(QByteArray("/run/netns/" + name.toLatin1()).constData(), O_RDONLY | O_CLOEXEC);
    if (ns.m_fd < 0) {
        qWarning("open /run/netns/%s: %s", qPrintable(name), std::strerror(errno));
        return std::nullopt; // the destructor deletes it
    }
    if (!runIp({QStringLiteral("-n"), name, QStringLiteral("link"), QStringLiteral("set"),
                QStringLiteral("lo"), QStringLiteral("up")}))
        return std::nullopt;
    return ns;
}

NetworkNamespace::NetworkNamespace(NetworkNamespace &&other) noexcept
    : m_name(std::exchange(other.m_name, QString())), m_fd(std::exchange(other.m_fd, -1))
{ }

NetworkNamespace &NetworkNamespace::operator=(NetworkNamespace &&other) noexcept
{
    if (this != &other) {
        remove();
        m_name = std::exchange(other.m_name, QString());
        m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
}

NetworkNamespace::~NetworkNamespace()
{
    remove();
}

void NetworkNamespace::remove()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    if (!m_name.isEmpty())
        runIp({QStringLiteral("netns"), QStringLiteral("delete"), m_name});
    m_name.clear();
}

void removeStaleNamespaces(const QString &prefix)
{
    const QStringList entries = QDir(QStringLiteral("/run/netns")).entryList(QDir::Files);
    for (const QString &entry : entries) {
        if (!entry.startsWith(prefix))
            continue;
        const pid_t pid = entry.section(u'-', -1).toInt();
        if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH)
            runIp({QStringLiteral("netns"), QStringLiteral("delete"), entry});
    }
}

bool enterNamespace(int nsFd)
{
    if (::setns(nsFd, CLONE_NEWNET) != 0) {
        qWarning("setns: %s", std::strerror(errno));
        return false;
    }
    return true;
}

QByteArray interfaceMac(int nsFd, const QString &ifname)
{
    return inNamespace(nsFd, [&] {
        const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ifreq request {};
        std::strncpy(request.ifr_name, ifname.toLatin1().constData(), IFNAMSIZ - 1);
        const bool ok = ::ioctl(sock, SIOCGIFHWADDR, &request) == 0;
        ::close(sock);
        return ok ? QByteArray(request.ifr_hwaddr.sa_data, ETH_ALEN) : QByteArray();
    });
}

bool sendFrame(int nsFd, const QString &ifname, const QByteArray &frame, int repeat)
{
    return sendFrames(nsFd, ifname, QList<QByteArray>(repeat, frame));
}

bool sendFrames(int nsFd, const QString &ifname, const QList<QByteArray> &frames)
{
    return inNamespace(nsFd, [&] {
        const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return false;
        sockaddr_ll link {};
        link.sll_family = AF_PACKET;
        link.sll_ifindex = int(::if_nametoindex(ifname.toLatin1().constData()));
        link.sll_halen = ETH_ALEN;
        bool sent = true;
        for (const QByteArray &frame : frames) {
            std::memcpy(link.sll_addr, frame.constData(), ETH_ALEN);
            sent = ::sendto(fd, frame.constData(), size_t(frame.size()), 0,
                            reinterpret_cast<const sockaddr *>(&link), sizeof link)
                    == frame.size()
                && sent;
        }
        ::close(fd);
        return sent;
    });
}

} // namespace airlock::test

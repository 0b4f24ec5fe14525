#include "testdnsauthority.h"

#include "guestclient.h"
#include "netns.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace airlock::test {

namespace {

struct PendingAnswer
{
    std::chrono::steady_clock::time_point due;
    QByteArray wire;
    sockaddr_in to {};
};

QByteArray toWire(const ldns_pkt *pkt)
{
    uint8_t *wire = nullptr;
    size_t size = 0;
    if (ldns_pkt2wire(&wire, pkt, &size) != LDNS_STATUS_OK) {
        std::free(wire);
        return {};
    }
    QByteArray bytes(reinterpret_cast<const char *>(wire), qsizetype(size));
    std::free(wire);
    return bytes;
}

bool readExactly(int fd, char *buffer, size_t size)
{
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::recv(fd, buffer + done, size - done, 0);
        if (n <= 0)
            return false;
        done += size_t(n);
    }
    return true;
}

// Whether `wire` asks for TestDnsAuthority::kBarrierName.
bool isBarrier(QByteArrayView wire)
{
    ldns_pkt *query = nullptr;
    if (ldns_wire2pkt(&query, reinterpret_cast<const uint8_t *>(wire.data()), size_t(wire.size()))
        != LDNS_STATUS_OK)
        return false;
    bool barrier = false;
    if (ldns_rr_list_rr_count(ldns_pkt_question(query)) == 1) {
        char *owner = ldns_rdf2str(ldns_rr_owner(ldns_rr_list_rr(ldns_pkt_question(query), 0)));
        barrier = QString::fromLatin1(owner).toLower()
            == TestDnsAuthority::kBarrierName + QLatin1Char('.');
        std::free(owner);
    }
    ldns_pkt_free(query);
    return barrier;
}

} // namespace

TestDnsAuthority::TestDnsAuthority(int nsFd) : m_nsFd(nsFd) { }

TestDnsAuthority::~TestDnsAuthority()
{
    stop();
}

void TestDnsAuthority::setRecords(const QString &name, const QStringList &records)
{
    std::lock_guard lock(m_mutex);
    m_records.insert(name, records);
}

void TestDnsAuthority::setDelay(const QString &name, int ms)
{
    std::lock_guard lock(m_mutex);
    m_delays.insert(name, ms);
}

bool TestDnsAuthority::start(const QHostAddress &address, quint16 port, int barrierFromNsFd)
{
    m_address = address;
    m_port = port;
    m_barrierFromNsFd = barrierFromNsFd;
    m_wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    const bool bound = inNamespace(m_nsFd, [&] {
        sockaddr_in local {};
        local.sin_family = AF_INET;
        local.sin_port = htons(port);
        local.sin_addr.s_addr = htonl(address.toIPv4Address());
        const int one = 1;
        m_udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        m_tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ::setsockopt(m_tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(m_udp, reinterpret_cast<const sockaddr *>(&local), sizeof local) != 0
            || ::bind(m_tcp, reinterpret_cast<const sockaddr *>(&local), sizeof local) != 0
            || ::listen(m_tcp, 16) != 0) {
            qWarning("test DNS authority: bind %s:%u: %s", qPrintable(address.toString()), port,
                     std::strerror(errno));
            return false;
        }
        return true;
    });
    if (!bound)
        return false;
    m_thread = std::thread([this] { run(); });
    return true;
}

void TestDnsAuthority::stop()
{
    if (m_stopping.exchange(true))
        return;
    if (m_wakeFd >= 0) {
        const quint64 one = 1;
        [[maybe_unused]] const auto n = ::write(m_wakeFd, &one, sizeof one);
    }
    if (m_thread.joinable())
        m_thread.join();
    for (int *fd : {&m_udp, &m_tcp, &m_wakeFd}) {
        if (*fd >= 0)
            ::close(*fd);
        *fd = -1;
    }
}

QList<TestDnsAuthority::Query> TestDnsAuthority::queries() const
{
    std::lock_guard lock(m_mutex);
    return m_queries;
}

QStringList TestDnsAuthority::queryNames() const
{
    std::lock_guard lock(m_mutex);
    QStringList names;
    for (const Query &query : m_queries)
        names << query.name;
    return names;
}

bool TestDnsAuthority::settle(int timeoutMs)
{
    if (m_barrierFromNsFd < 0)
        return false;
    const DnsResult result =
        guestDnsQuery(m_barrierFromNsFd, m_address, kBarrierName, 1, false, m_port, timeoutMs);
    return result.answered && result.rcode == 0;
}

void TestDnsAuthority::clear()
{
    std::lock_guard lock(m_mutex);
    m_queries.clear();
}

QByteArray TestDnsAuthority::answer(const QByteArray &wire, bool tcp, const QHostAddress &from,
                                    quint16 fromPort, int *delayMs)
{
    ldns_pkt *query = nullptr;
    if (ldns_wire2pkt(&query, reinterpret_cast<const uint8_t *>(wire.constData()),
                      size_t(wire.size()))
            != LDNS_STATUS_OK
        || ldns_rr_list_rr_count(ldns_pkt_question(query)) != 1) {
        ldns_pkt_free(query);
        return {};
    }
    const ldns_rr *question = ldns_rr_list_rr(ldns_pkt_question(query), 0);
    char *ownerText = ldns_rdf2str(ldns_rr_owner(question));
    QString name = QString::fromLatin1(ownerText).toLower();
    std::free(ownerText);
    if (name.endsWith(u'.'))
        name.chop(1);
    const quint16 type = quint16(ldns_rr_get_type(question));

    QStringList records;
    if (name == kBarrierName) {
        *delayMs = 0; // settle(): answered at once, NOERROR without records, not logged
    } else {
        std::lock_guard lock(m_mutex);
        m_queries.append({name, type, tcp, from, fromPort, ldns_pkt_id(query)});
        records = m_records.value(name);
        *delayMs = m_delays.value(name, 0);
        // Wildcards: the closest "*.suffix" above the name (RFC 4592, simplified).
        for (qsizetype dot = name.indexOf(u'.'); records.isEmpty() && dot >= 0;
             dot = name.indexOf(u'.', dot + 1))
            records = m_records.value(QStringLiteral("*") + name.mid(dot));
    }

    ldns_pkt *reply = ldns_pkt_new();
    ldns_pkt_set_id(reply, ldns_pkt_id(query));
    ldns_pkt_set_qr(reply, true);
    ldns_pkt_set_aa(reply, true);
    ldns_pkt_set_rd(reply, ldns_pkt_rd(query));
    ldns_pkt_push_rr(reply, LDNS_SECTION_QUESTION, ldns_rr_clone(question));
    ldns_pkt_set_rcode(reply,
                       records.isEmpty() && name != kBarrierName ? LDNS_RCODE_NXDOMAIN
                                                                 : LDNS_RCODE_NOERROR);
    for (const QString &record : std::as_const(records)) {
        ldns_rr *rr = nullptr;
        const QByteArray text = name.toLatin1() + ". 60 IN " + record.toLatin1();
        if (ldns_rr_new_frm_str(&rr, text.constData(), 0, nullptr, nullptr) == LDNS_STATUS_OK)
            ldns_pkt_push_rr(reply, LDNS_SECTION_ANSWER, rr);
        else
            qWarning("test DNS authority: bad record '%s'", text.constData());
    }
    const QByteArray bytes = toWire(reply);
    ldns_pkt_free(reply);
    ldns_pkt_free(query);
    return bytes;
}

void TestDnsAuthority::run()
{
    std::vector<PendingAnswer> pending;
    while (!m_stopping) {
        int timeoutMs = -1;
        const auto now = std::chrono::steady_clock::now();
        for (auto it = pending.begin(); it != pending.end();) {
            if (it->due <= now) {
                ::sendto(m_udp, it->wire.constData(), size_t(it->wire.size()), 0,
                         reinterpret_cast<const sockaddr *>(&it->to), sizeof it->to);
                it = pending.erase(it);
            } else {
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(it->due - now).count();
                timeoutMs = timeoutMs < 0 ? int(left) : std::min(timeoutMs, int(left));
                ++it;
            }
        }
        pollfd fds[3] = {{m_udp, POLLIN, 0}, {m_tcp, POLLIN, 0}, {m_wakeFd, POLLIN, 0}};
        if (::poll(fds, 3, timeoutMs) < 0 && errno != EINTR)
            return;
        if (fds[2].revents)
            return;
        if (fds[0].revents & POLLIN) {
            char buffer[4096];
            sockaddr_in from {};
            socklen_t length = sizeof from;
            const ssize_t n = ::recvfrom(m_udp, buffer, sizeof buffer, MSG_DONTWAIT,
                                         reinterpret_cast<sockaddr *>(&from), &length);
            if (n > 0) {
                if (isBarrier(QByteArrayView(buffer, n))) {
                    // Every TCP connection already waiting is answered before the barrier.
                    for (pollfd tcp {m_tcp, POLLIN, 0}; ::poll(&tcp, 1, 0) == 1;)
                        serveTcpConnection();
                }
                int delay = 0;
                const QByteArray reply =
                    answer(QByteArray(buffer, qsizetype(n)), false,
                           QHostAddress(reinterpret_cast<const sockaddr *>(&from)),
                           ntohs(from.sin_port), &delay);
                if (!reply.isEmpty() && delay >= 0)
                    pending.push_back(
                        {std::chrono::steady_clock::now() + std::chrono::milliseconds(delay), reply,
                         from});
            }
        }
        if (fds[1].revents & POLLIN)
            serveTcpConnection();
    }
}

void TestDnsAuthority::serveTcpConnection()
{
    // One query per TCP connection is all the gateway's resolver sends (RFC 7766 allows more;
    // the test does not need them). Answered inline, delays ignored.
    sockaddr_in from {};
    socklen_t length = sizeof from;
    const int fd = ::accept4(m_tcp, reinterpret_cast<sockaddr *>(&from), &length, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    const timeval timeout {2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    unsigned char prefix[2];
    if (readExactly(fd, reinterpret_cast<char *>(prefix), 2)) {
        QByteArray query((prefix[0] << 8) | prefix[1], '\0');
        int delay = 0;
        if (readExactly(fd, query.data(), size_t(query.size()))) {
            const QByteArray reply =
                answer(query, true, QHostAddress(reinterpret_cast<const sockaddr *>(&from)),
                       ntohs(from.sin_port), &delay);
            QByteArray framed;
            framed.append(char(reply.size() >> 8)).append(char(reply.size() & 0xff));
            framed += reply;
            ::send(fd, framed.constData(), size_t(framed.size()), MSG_NOSIGNAL);
        }
    }
    ::close(fd);
}

} // namespace airlock::test

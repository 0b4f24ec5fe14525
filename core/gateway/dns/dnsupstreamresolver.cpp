#include "core/gateway/dns/dnsupstreamresolver.h"

#include "core/gateway/dns/dnsldns.h"

#include <QNetworkDatagram>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTimer>
#include <QUdpSocket>
#include <QtEndian>

namespace airlock::gateway {

using namespace ldnsutil;

namespace {

constexpr int kMaxCnameChain = 8;

DnsUpstreamAnswer final(DnsResolution resolution, quint32 ttl = DnsUpstreamResolver::kMinTtl)
{
    DnsUpstreamAnswer answer;
    answer.kind = DnsUpstreamAnswer::Kind::Final;
    answer.resolution = std::move(resolution);
    answer.ttl = DnsUpstreamResolver::boundTtl(ttl);
    return answer;
}

std::unexpected<DnsFailure> failure(EgressReason reason, QString detail)
{
    return std::unexpected(DnsFailure {reason, std::move(detail)});
}

// The address of an A or AAAA record, or std::nullopt.
std::optional<QHostAddress> recordAddress(const ldns_rr *rr)
{
    if (ldns_rr_rd_count(rr) != 1)
        return std::nullopt;
    const ldns_rdf *rdf = ldns_rr_rdf(rr, 0);
    if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_A && ldns_rdf_size(rdf) == 4)
        return QHostAddress(qFromBigEndian<quint32>(ldns_rdf_data(rdf)));
    if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_AAAA && ldns_rdf_size(rdf) == 16)
        return QHostAddress(static_cast<const quint8 *>(ldns_rdf_data(rdf)));
    return std::nullopt;
}

bool sameAddress(const QHostAddress &a, const QHostAddress &b)
{
    return a.isEqual(b, QHostAddress::ConvertV4MappedToIPv4);
}

} // namespace

struct DnsUpstreamResolver::Pending
{
    quint16 id = 0;
    QByteArray query;
    QList<Callback> callbacks;
    QPointer<QUdpSocket> udp;
    QPointer<QTcpSocket> tcp;
    QByteArray tcpBuffer;
    QPointer<QTimer> timer;
};

DnsUpstreamResolver::DnsUpstreamResolver(DnsUpstreamConfig config, QObject *parent)
    : QObject(parent), m_config(std::move(config))
{ }

DnsUpstreamResolver::~DnsUpstreamResolver() = default;

quint32 DnsUpstreamResolver::boundTtl(quint32 ttl)
{
    return std::clamp(ttl, kMinTtl, kMaxTtl);
}

QByteArray DnsUpstreamResolver::buildQuery(const QString &name, quint16 id)
{
    Rdf owner(ldns_dname_new_frm_str(name.toLatin1().constData()));
    if (!owner)
        return {};
    // ldns_pkt_query_new takes ownership of the name.
    Pkt query(ldns_pkt_query_new(owner.release(), LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, LDNS_RD));
    if (!query)
        return {};
    ldns_pkt_set_id(query.get(), id);
    return toWire(query.get());
}

DnsUpstreamAnswer DnsUpstreamResolver::interpretAnswer(QByteArrayView wire, quint16 id,
                                                       const QString &name,
                                                       const RefusedRanges &refused)
{
    const DnsUpstreamAnswer mismatch;
    const Pkt pkt = parse(wire);
    if (!pkt || !ldns_pkt_qr(pkt.get()) || ldns_pkt_id(pkt.get()) != id
        || ldns_pkt_get_opcode(pkt.get()) != LDNS_PACKET_QUERY)
        return mismatch;
    const ldns_rr_list *questions = ldns_pkt_question(pkt.get());
    if (!questions || ldns_rr_list_rr_count(questions) != 1)
        return mismatch;
    const ldns_rr *question = ldns_rr_list_rr(questions, 0);
    const Rdf qname(ldns_dname_new_frm_str(name.toLatin1().constData()));
    if (!qname || ldns_rr_get_type(question) != LDNS_RR_TYPE_A
        || ldns_rr_get_class(question) != LDNS_RR_CLASS_IN
        || ldns_dname_compare(ldns_rr_owner(question), qname.get()) != 0)
        return mismatch;

    if (ldns_pkt_tc(pkt.get())) {
        DnsUpstreamAnswer answer;
        answer.kind = DnsUpstreamAnswer::Kind::Truncated;
        return answer;
    }
    const ldns_pkt_rcode rcode = ldns_pkt_get_rcode(pkt.get());
    if (rcode == LDNS_RCODE_NXDOMAIN)
        return final(failure(EgressReason::UpstreamNxDomain,
                             QStringLiteral("the upstream says %1 does not exist").arg(name)));
    if (rcode != LDNS_RCODE_NOERROR)
        return final(failure(EgressReason::UpstreamFailure,
                             QStringLiteral("the upstream answered RCODE %1").arg(int(rcode))));

    const ldns_rr_list *answers = ldns_pkt_answer(pkt.get());
    const size_t count = answers ? ldns_rr_list_rr_count(answers) : 0;
    // E6: one record pointing into a refused range refuses the whole answer.
    for (size_t i = 0; i < count; ++i) {
        const ldns_rr *rr = ldns_rr_list_rr(answers, i);
        const auto address = recordAddress(rr);
        if (!address)
            continue;
        if (const auto range = refused.match(*address))
            return final(failure(EgressReason::PrivateDestination,
                                 QStringLiteral("the upstream answer for %1 points to %2, in the "
                                                "refused range %3")
                                     .arg(name, address->toString(), range->toString())));
    }

    // The A records of the name, following CNAMEs inside the answer.
    QList<QHostAddress> addresses;
    quint32 ttl = kMaxTtl;
    Rdf current(ldns_rdf_clone(qname.get()));
    for (int step = 0; step <= kMaxCnameChain && current && addresses.isEmpty(); ++step) {
        const ldns_rdf *target = nullptr;
        for (size_t i = 0; i < count; ++i) {
            const ldns_rr *rr = ldns_rr_list_rr(answers, i);
            if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN
                || ldns_dname_compare(ldns_rr_owner(rr), current.get()) != 0)
                continue;
            if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_A) {
                if (const auto address = recordAddress(rr)) {
                    addresses.append(*address);
                    ttl = std::min(ttl, ldns_rr_ttl(rr));
                }
            } else if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_CNAME && ldns_rr_rd_count(rr) == 1
                       && !target) {
                target = ldns_rr_rdf(rr, 0);
                ttl = std::min(ttl, ldns_rr_ttl(rr));
            }
        }
        if (!addresses.isEmpty() || !target)
            break;
        current.reset(ldns_rdf_clone(target));
    }
    if (addresses.isEmpty())
        return final(
            failure(EgressReason::NoAddress,
                    QStringLiteral("the upstream answer holds no A record for %1").arg(name)));
    return final(addresses, ttl);
}

void DnsUpstreamResolver::resolve(const QString &name, Callback done)
{
    if (const auto hit = cached(name)) {
        done(*hit);
        return;
    }
    if (const auto it = m_pending.constFind(name); it != m_pending.constEnd()) {
        (*it)->callbacks.append(std::move(done));
        return;
    }
    if (m_pending.size() >= m_config.maxPending) {
        done(failure(EgressReason::Overloaded,
                     QStringLiteral("%1 resolutions already in flight").arg(m_pending.size())));
        return;
    }
    auto pending = std::make_shared<Pending>();
    pending->id = quint16(QRandomGenerator::system()->generate() & 0xffff);
    pending->query = buildQuery(name, pending->id);
    pending->callbacks.append(std::move(done));
    if (pending->query.isEmpty()) {
        m_pending.insert(name, pending);
        complete(name,
                 failure(EgressReason::UpstreamFailure,
                         QStringLiteral("cannot encode a query for %1").arg(name)));
        return;
    }

    pending->udp = new QUdpSocket(this);
    const QHostAddress any = m_config.address.protocol() == QAbstractSocket::IPv6Protocol
        ? QHostAddress(QHostAddress::AnyIPv6)
        : QHostAddress(QHostAddress::AnyIPv4);
    pending->timer = new QTimer(this);
    pending->timer->setSingleShot(true);
    connect(pending->timer, &QTimer::timeout, this, [this, name] {
        complete(name,
                 failure(EgressReason::UpstreamTimeout,
                         QStringLiteral("no answer from %1 port %2 within %3 ms")
                             .arg(m_config.address.toString())
                             .arg(m_config.port)
                             .arg(m_config.timeoutMs)));
    });
    m_pending.insert(name, pending);
    if (!pending->udp->bind(any, 0)) {
        complete(
            name,
            failure(
                EgressReason::UpstreamFailure,
                QStringLiteral("cannot bind a query socket: %1").arg(pending->udp->errorString())));
        return;
    }
    connect(pending->udp, &QUdpSocket::readyRead, this, [this, name] { onUdpReadyRead(name); });
    pending->timer->start(m_config.timeoutMs);
    if (pending->udp->writeDatagram(pending->query, m_config.address, m_config.port)
        != pending->query.size()) {
        complete(
            name,
            failure(EgressReason::UpstreamFailure,
                    QStringLiteral("cannot send the query: %1").arg(pending->udp->errorString())));
    }
}

std::optional<QList<QHostAddress>> DnsUpstreamResolver::cached(const QString &name) const
{
    const auto it = m_cache.constFind(name);
    if (it == m_cache.constEnd() || it->expiry.hasExpired())
        return std::nullopt;
    return it->addresses;
}

void DnsUpstreamResolver::onUdpReadyRead(const QString &name)
{
    const auto it = m_pending.constFind(name);
    if (it == m_pending.constEnd())
        return;
    const std::shared_ptr<Pending> pending = *it;
    while (pending->udp && pending->udp->hasPendingDatagrams()) {
        const QNetworkDatagram datagram = pending->udp->receiveDatagram(65536);
        if (!sameAddress(datagram.senderAddress(), m_config.address)
            || datagram.senderPort() != int(m_config.port)) {
            ++m_ignored;
            continue;
        }
        const DnsUpstreamAnswer answer =
            interpretAnswer(datagram.data(), pending->id, name, m_config.refused);
        if (answer.kind == DnsUpstreamAnswer::Kind::Mismatch) {
            ++m_ignored;
            continue;
        }
        if (answer.kind == DnsUpstreamAnswer::Kind::Truncated) {
            if (!pending->tcp)
                startTcp(name);
            return;
        }
        accept(name, answer);
        return;
    }
}

void DnsUpstreamResolver::startTcp(const QString &name)
{
    const std::shared_ptr<Pending> pending = m_pending.value(name);
    if (!pending)
        return;
    pending->tcp = new QTcpSocket(this);
    connect(pending->tcp, &QTcpSocket::connected, this, [pending] {
        QByteArray frame(2, Qt::Uninitialized);
        qToBigEndian<quint16>(quint16(pending->query.size()), frame.data());
        pending->tcp->write(frame + pending->query);
    });
    connect(pending->tcp, &QTcpSocket::readyRead, this, [this, name] { onTcpReadyRead(name); });
    connect(pending->tcp, &QTcpSocket::errorOccurred, this, [this, name, pending] {
        if (m_pending.value(name) == pending)
            complete(name,
                     failure(EgressReason::UpstreamFailure,
                             QStringLiteral("TCP fallback failed: %1")
                                 .arg(pending->tcp ? pending->tcp->errorString() : QString())));
    });
    pending->tcp->connectToHost(m_config.address, m_config.port);
}

void DnsUpstreamResolver::onTcpReadyRead(const QString &name)
{
    const std::shared_ptr<Pending> pending = m_pending.value(name);
    if (!pending || !pending->tcp)
        return;
    pending->tcpBuffer += pending->tcp->readAll();
    if (pending->tcpBuffer.size() > 65537) {
        complete(name,
                 failure(EgressReason::UpstreamFailure, QStringLiteral("TCP answer too long")));
        return;
    }
    if (pending->tcpBuffer.size() < 2)
        return;
    const quint16 length = qFromBigEndian<quint16>(pending->tcpBuffer.constData());
    if (pending->tcpBuffer.size() < 2 + length)
        return;
    const DnsUpstreamAnswer answer = interpretAnswer(
        QByteArrayView(pending->tcpBuffer).sliced(2, length), pending->id, name, m_config.refused);
    if (answer.kind != DnsUpstreamAnswer::Kind::Final) {
        complete(name,
                 failure(EgressReason::UpstreamFailure,
                         QStringLiteral("the TCP answer does not match the query")));
        return;
    }
    accept(name, answer);
}

void DnsUpstreamResolver::accept(const QString &name, const DnsUpstreamAnswer &answer)
{
    if (answer.resolution) {
        if (m_cache.size() >= m_config.maxCacheEntries) {
            m_cache.removeIf([](const auto &entry) { return entry.value().expiry.hasExpired(); });
            if (m_cache.size() >= m_config.maxCacheEntries)
                m_cache.clear();
        }
        m_cache.insert(name,
                       CacheEntry {*answer.resolution,
                                   QDeadlineTimer(qint64(answer.ttl) * 1000, Qt::CoarseTimer)});
    }
    complete(name, answer.resolution);
}

void DnsUpstreamResolver::complete(const QString &name, const DnsResolution &resolution)
{
    const std::shared_ptr<Pending> pending = m_pending.take(name);
    if (!pending)
        return;
    if (pending->timer) {
        pending->timer->stop();
        pending->timer->deleteLater();
    }
    if (pending->udp) {
        pending->udp->disconnect(this);
        pending->udp->close();
        pending->udp->deleteLater();
    }
    if (pending->tcp) {
        pending->tcp->disconnect(this);
        pending->tcp->abort();
        pending->tcp->deleteLater();
    }
    for (const Callback &callback : std::as_const(pending->callbacks))
        callback(resolution);
}

} // namespace airlock::gateway

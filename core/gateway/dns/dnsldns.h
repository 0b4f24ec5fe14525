#pragma once

// Internal helpers around ldns for the gateway's DNS files: owning pointers and conversions.
// Not part of any public interface; include only from core/gateway/dns*.cpp and their tests.

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <ldns/ldns.h>

#include <cstdlib>
#include <memory>

namespace airlock::gateway::ldnsutil {

/// Frees an ldns_pkt with ldns_pkt_free.
struct PktDeleter
{
    void operator()(ldns_pkt *p) const { ldns_pkt_free(p); }
};
/// Frees an ldns_rdf with ldns_rdf_deep_free.
struct RdfDeleter
{
    void operator()(ldns_rdf *r) const { ldns_rdf_deep_free(r); }
};
/// Frees an ldns_rr with ldns_rr_free.
struct RrDeleter
{
    void operator()(ldns_rr *r) const { ldns_rr_free(r); }
};

using Pkt = std::unique_ptr<ldns_pkt, PktDeleter>; ///< owning ldns_pkt
using Rdf = std::unique_ptr<ldns_rdf, RdfDeleter>; ///< owning ldns_rdf
using Rr = std::unique_ptr<ldns_rr, RrDeleter>; ///< owning ldns_rr

/// ldns_wire2pkt on `wire`; nullptr when ldns rejects it.
inline Pkt parse(QByteArrayView wire)
{
    ldns_pkt *pkt = nullptr;
    if (ldns_wire2pkt(&pkt, reinterpret_cast<const uint8_t *>(wire.data()), size_t(wire.size()))
        != LDNS_STATUS_OK)
        return nullptr;
    return Pkt(pkt);
}

/// ldns_pkt2wire; an empty array when ldns fails.
inline QByteArray toWire(const ldns_pkt *pkt)
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

/// The presentation form of an rdf (ldns_rdf2str): a dname as "pkg.test." with bytes outside
/// printable ASCII, '.', '\' and others escaped ("\000", "\."), so a name holding such bytes
/// never canonicalizes (canonicalizeHostname rejects '\').
inline QString toString(const ldns_rdf *rdf)
{
    char *text = ldns_rdf2str(rdf);
    if (!text)
        return {};
    QString result = QString::fromLatin1(text);
    std::free(text);
    return result;
}

} // namespace airlock::gateway::ldnsutil

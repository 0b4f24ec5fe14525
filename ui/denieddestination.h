#pragma once

#include "core/model/egresspolicy.h"
#include "ui/egressentry.h"

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

namespace airlock {

/// What one sandbox was denied for one name, gathered from its live denials: the ports,
/// methods and paths seen, how often and when. The "Allow?" prompt offers the two rules built
/// from it (nameRule, seenRule); nothing here allows anything.
struct DeniedDestination
{
    /// At most this many distinct paths are kept (and become path prefixes of seenRule).
    static constexpr int kMaxPaths = 8;

    QString sandbox;
    QString name; ///< canonical host name
    QList<quint16> ports; ///< ports seen, in order of first appearance
    QStringList methods; ///< HTTP methods seen (valid rule methods only)
    QStringList paths; ///< paths seen (no query), at most kMaxPaths
    qint64 count = 0; ///< denied decisions (a summary event counts in full)
    QDateTime first; ///< arrival of the first denial (UTC)
    QDateTime last; ///< arrival of the last one (UTC)

    /// The canonical name a live denial is about, or an empty string when the denial is not
    /// one a rule could change (not a host, port, method or path decision, or no valid name).
    static QString nameOf(const EgressEntry &entry);
    /// Adds a denial of this sandbox and name (see nameOf) that arrived at `now`.
    void add(const EgressEntry &entry, const QDateTime &now);
    /// "Allow this name for this sandbox": the exact name on the ports seen (443 when only a
    /// lookup was seen), any method and path.
    EgressRule nameRule(const QString &comment) const;
    /// "Allow what was seen": the exact name, the ports seen, the methods seen (any when none
    /// was seen, e.g. only TLS or DNS), the paths seen as prefixes (any when none was seen).
    EgressRule seenRule(const QString &comment) const;
};

} // namespace airlock

#pragma once

#include "core/model/error.h"

#include <QJsonObject>
#include <QList>
#include <QString>

namespace airlock {

/// Steps of a snapshot.fork or snapshot.restore that a helper killed in the middle must know
/// about at its next start (docs/reviews/2026-12-01-newuser-pass.md#m2 and #m3): one small JSON
/// file per operation in STATE/journal (root's, mode 0700), written durably before the step that
/// can be interrupted and removed once the operation ended either way.
class OperationJournal
{
public:
    /// One operation in progress: `kind` ("fork", "restore"), the sandbox it concerns, and what
    /// the operation recorded (e.g. {"snapshot": id, "safety": id}).
    struct Entry
    {
        QString kind;
        QString sandbox;
        QJsonObject data;
    };

    /// The journal of the helper with state dir `stateDir`.
    explicit OperationJournal(QString stateDir);

    /// Records (or replaces) the entry for `kind` and `sandbox` (a validated name), renamed into
    /// place after fdatasync. Errors: OperationFailed.
    Result<void> begin(const QString &kind, const QString &sandbox, const QJsonObject &data);
    /// Removes the entry; nothing to do when there is none.
    void end(const QString &kind, const QString &sandbox);
    /// Entries a killed helper left, in name order; unreadable files are removed (logged).
    QList<Entry> pending() const;

private:
    QString pathFor(const QString &kind, const QString &sandbox) const;

    QString m_dir;
};

} // namespace airlock

#pragma once

#include <QJsonObject>
#include <QString>

namespace airlock::ctl {

/// `snapshot ls` output: one row per snapshot, oldest first (ID PARENT CREATED KIND LABEL SIZE
/// NEW STORED PAUSE), `*` after the id of the sandbox's head, `pinned` in KIND; then the
/// schedule. `listing` is the result of snapshot.list.
QString formatSnapshotTable(const QJsonObject &listing);
/// "256.0 MiB", "12.3 KiB", "0 B".
QString formatBytes(qint64 bytes);

} // namespace airlock::ctl

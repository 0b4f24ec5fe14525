#pragma once

#include <QString>

namespace airlock {

/// Routes every Qt log message (qCDebug/qCInfo/qCWarning/qCCritical in any category) to spdlog,
/// with two sinks: stderr (journald picks it up under systemd) and a rotating file
/// `<logDir>/<baseName>.log` (5 files of 10 MiB). `level` is one of trace, debug, info, warning,
/// error; debug and trace also enable the `airlock.*.debug` categories. Call once, early in
/// main(); an unwritable log dir leaves only the stderr sink (reported on stderr).
void installLogHandler(const QString &logDir, const QString &baseName, const QString &level);

/// True when `level` is a name installLogHandler() accepts.
bool isValidLogLevel(const QString &level);

} // namespace airlock

#pragma once

#include <QString>

namespace airlock {

/// Where airlockd finds airlock-gateway when --gateway does not say: beside airlockd (an
/// install tree or a relocated install), then a build tree's layout (build/app/airlockd and
/// build/app/airlock-gateway, docs/reviews/2026-11-30-redteam-pass.md#f8), else
/// `libexecDir`/airlock-gateway (the package's /usr/lib/airlock). A candidate counts only when it
/// is an executable regular file; the result is canonical for the first two.
QString locateGatewayProgram(const QString &helperDir, const QString &libexecDir);

/// The same search for another of airlockd's internal executables, `name` (airlock-fcctl):
/// beside airlockd, then build/app/NAME/NAME, else `libexecDir`/NAME.
QString locateHelperProgram(const QString &name, const QString &helperDir,
                            const QString &libexecDir);

} // namespace airlock

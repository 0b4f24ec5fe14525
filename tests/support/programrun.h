#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace airlock::test {

/// Runs `program ARGUMENTS...` to the end (10 s at most), writing `input` to its standard input.
/// With `output` its standard output and error land there (merged); without, they go to the
/// test's own. True when it exited 0 in time.
bool runProgram(const QString &program, const QStringList &arguments, const QByteArray &input = {},
                QByteArray *output = nullptr);

} // namespace airlock::test

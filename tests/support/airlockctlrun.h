#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace airlock::test {

class TestUser;

/// What one airlockctl run printed and how it ended.
struct CtlRun
{
    int exitCode = -1; ///< -1: did not start, crashed or timed out
    QString out;
    QString err;
};

/// Runs `ctl --socket SOCKET ARGUMENTS...`, as `user` when one is given (TestUser::runAs),
/// writes `input` to its standard input and closes it, and waits up to 60 s (then kills it).
CtlRun runAirlockctl(const QString &ctl, const QString &socket, const QStringList &arguments,
                     const QByteArray &input = {}, const TestUser *user = nullptr);

} // namespace airlock::test

#include "airlockctlrun.h"

#include "testuser.h"

#include <QProcess>

namespace airlock::test {

CtlRun runAirlockctl(const QString &ctl, const QString &socket, const QStringList &arguments,
                     const QByteArray &input, const TestUser *user)
{
    QProcess process;
    if (user)
        user->runAs(process);
    process.start(ctl, QStringList {QStringLiteral("--socket"), socket} + arguments);
    if (!process.waitForStarted())
        return {};
    process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(60000)) {
        process.kill();
        process.waitForFinished();
        return {};
    }
    CtlRun run;
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

} // namespace airlock::test

#include "programrun.h"

#include <QProcess>

namespace airlock::test {

bool runProgram(const QString &program, const QStringList &arguments, const QByteArray &input,
                QByteArray *output)
{
    QProcess process;
    process.setProcessChannelMode(output ? QProcess::MergedChannels : QProcess::ForwardedChannels);
    process.start(program, arguments);
    if (!process.waitForStarted(10000))
        return false;
    if (!input.isEmpty())
        process.write(input);
    process.closeWriteChannel();
    const bool finished = process.waitForFinished(10000);
    if (output)
        *output = process.readAll();
    return finished && process.exitCode() == 0;
}

} // namespace airlock::test

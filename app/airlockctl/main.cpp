// airlockctl: the command-line client of airlockd. Everything lives in CommandRunner; this only
// provides the application object and the standard streams.

#include "app/airlockctl/commandrunner.h"

#include <QCoreApplication>
#include <QTextStream>

#include <csignal>
#include <cstdio>

int main(int argc, char *argv[])
{
    // A closed stdout or socket is an error we report, not a reason to die silently.
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("airlockctl"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AIRLOCK_VERSION));
    QTextStream out(stdout);
    QTextStream err(stderr);
    airlock::ctl::CommandRunner runner(out, err, qEnvironmentVariable("AIRLOCK_SOCKET"));
    const int code = runner.run(QCoreApplication::arguments());
    out.flush();
    err.flush();
    return code;
}

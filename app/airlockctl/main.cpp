// airlockctl: the command-line client of airlockd. CommandRunner and its command groups do the
// work; this only provides the application object and the standard streams.

#include "app/airlockctl/commandrunner.h"
#include "core/ssh/sshtransport.h"

#include <QCoreApplication>
#include <QTextStream>

#include <csignal>
#include <cstdio>

int main(int argc, char *argv[])
{
    // A closed stdout or socket is an error we report, not a reason to die silently.
    std::signal(SIGPIPE, SIG_IGN);
    // Library warnings reach a terminal user: in airlockctl's own words, without the Qt
    // logging category (docs/reviews/2026-12-01-newuser-pass.md#l5: "airlock.client: helper error
    // without id").
    qSetMessagePattern(QStringLiteral("airlockctl: %{message}"));
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("airlockctl"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AIRLOCK_VERSION));
    QTextStream out(stdout);
    QTextStream err(stderr);
    int code = 0;
    {
        airlock::ctl::CommandRunner runner(out, err, qEnvironmentVariable("AIRLOCK_SOCKET"));
        code = runner.run(QCoreApplication::arguments());
    }
    // The runner closed its SSH session, if any; its worker finishes before libcrypto's exit
    // handlers run (they would pull the ground from under it).
    airlock::SshTransport::waitForWorkers(5000);
    out.flush();
    err.flush();
    return code;
}

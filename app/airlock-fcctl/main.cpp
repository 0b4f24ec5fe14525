// airlock-fcctl: the API client of one Firecracker VMM (docs/vmm.md, "airlock-fcctl"). Only
// wiring; the logic lives in core/fcctl. Started by airlockd as the VMM's own uid with
// PR_SET_NO_NEW_PRIVS and no capabilities, beside the firecracker process it speaks to: every
// HTTP answer of Firecracker (which a guest that escaped into it controls) is parsed here, never
// by root.

#include "core/fcctl/fcctlcontroller.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>

int main(int argc, char *argv[])
{
    // Firecracker runs as the same uid: without this it could ptrace the process that reads its
    // answers and forge what airlockd is told beyond what its own answers can say.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("airlock-fcctl"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AIRLOCK_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Airlock's client of one Firecracker VMM's API. Started by airlockd; "
                       "commands and answers are JSON lines on the control channel."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption controlOption(
        QStringLiteral("control-fd"),
        QStringLiteral("Inherited stream socket carrying airlockd's commands."),
        QStringLiteral("FD"));
    const QCommandLineOption apiOption(QStringLiteral("api-sock"),
                                       QStringLiteral("Firecracker's API socket (--api-sock)."),
                                       QStringLiteral("PATH"));
    parser.addOption(controlOption);
    parser.addOption(apiOption);
    parser.process(app);

    bool ok = false;
    const int fd = parser.value(controlOption).toInt(&ok);
    if (!parser.isSet(controlOption) || !ok || fd < 0 || ::fcntl(fd, F_GETFD) < 0) {
        std::fprintf(stderr,
                     "airlock-fcctl: --control-fd FD (an open file descriptor) is required\n");
        return 2;
    }
    if (parser.value(apiOption).isEmpty()) {
        std::fprintf(stderr, "airlock-fcctl: --api-sock PATH is required\n");
        return 2;
    }
    // Its memory is a few requests in flight; 256 MiB bounds a parser bug without touching that
    // (soft = hard: it cannot be raised again).
#ifndef __SANITIZE_ADDRESS__
    const rlimit data {rlim_t(256) << 20, rlim_t(256) << 20};
    ::setrlimit(RLIMIT_DATA, &data);
#endif
    std::signal(SIGPIPE, SIG_IGN);

    airlock::FcctlController controller(fd, parser.value(apiOption));
    QObject::connect(
        &controller, &airlock::FcctlController::finished, &app,
        [](const QString &reason) {
            if (!reason.isEmpty())
                std::fprintf(stderr, "airlock-fcctl: %s\n", qPrintable(reason));
            QCoreApplication::exit(reason.isEmpty() ? 0 : 1);
        },
        Qt::QueuedConnection);
    return app.exec();
}

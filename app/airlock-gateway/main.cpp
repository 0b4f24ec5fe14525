// airlock-gateway: one sandbox's egress gateway (docs/gateway.md). Only wiring; everything it
// runs lives in core/gateway. Started by airlockd, unprivileged, with its control channel and
// listening sockets inherited.

#include "core/gateway/controlchannel.h"
#include "core/gateway/gatewaycontroller.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QLoggingCategory>

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <utility>

int main(int argc, char *argv[])
{
    // The gateway holds the sandbox CA's key (and credentials): no core file may carry them, and
    // no other process of its uid may ptrace it (prctl(2) PR_SET_DUMPABLE).
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    // Qt's own poll(2) dispatcher instead of GLib's: every relayed request costs several
    // wakeups, and the GLib main loop roughly doubles the cost of each (bench_gateway).
    qputenv("QT_NO_GLIB", "1");
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("airlock-gateway"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AIRLOCK_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Airlock's per-sandbox egress gateway: DNS, TLS termination and HTTP "
                       "checks for one sandbox. Started by airlockd; configured over the "
                       "control channel (one JSON object per line)."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption controlOption(
        QStringLiteral("control-fd"),
        QStringLiteral("Inherited stream socket carrying the control messages."),
        QStringLiteral("FD"));
    parser.addOption(controlOption);
    const QCommandLineOption logLevelOption(
        QStringLiteral("log-level"),
        QStringLiteral("info (default), or debug/trace: every decision is logged (airlockd passes "
                       "its own level)."),
        QStringLiteral("LEVEL"), QStringLiteral("info"));
    parser.addOption(logLevelOption);
    const QCommandLineOption maxDataOption(
        QStringLiteral("max-data-bytes"),
        QStringLiteral("RLIMIT_DATA (soft and hard) for this process: its heap and private "
                       "mappings (airlockd passes 1 GiB; 0 keeps the inherited limit)."),
        QStringLiteral("BYTES"), QStringLiteral("0"));
    parser.addOption(maxDataOption);
    const QCommandLineOption maxLogOption(
        QStringLiteral("max-log-bytes"),
        QStringLiteral("RLIMIT_FSIZE (soft and hard): stderr, the log file airlockd gives it, "
                       "stops growing at this size (airlockd passes 64 MiB; 0: unlimited)."),
        QStringLiteral("BYTES"), QStringLiteral("0"));
    parser.addOption(maxLogOption);
    parser.process(app);
    // Limits the guest cannot talk the gateway out of
    // (docs/reviews/2026-12-01-credentials-redteam.md#f5 and #f11): memory, and the log at trace
    // level. Soft = hard, so they cannot be raised again. Beyond RLIMIT_FSIZE a write fails with
    // EFBIG instead of raising SIGXFSZ (which would kill the gateway, and the sandbox's network
    // with it).
    std::signal(SIGXFSZ, SIG_IGN);
    for (const auto &[option, resource] :
         {std::pair {&maxDataOption, RLIMIT_DATA}, std::pair {&maxLogOption, RLIMIT_FSIZE}}) {
        bool valid = false;
        const qulonglong bytes = parser.value(*option).toULongLong(&valid);
        if (!valid) {
            std::fprintf(stderr, "airlock-gateway: --%s takes a number of bytes\n",
                         qPrintable(option->names().constFirst()));
            return 2;
        }
        const rlimit limit {rlim_t(bytes), rlim_t(bytes)};
#ifdef __SANITIZE_ADDRESS__
        // AddressSanitizer maps terabytes of shadow memory and quarantines what is freed, so a
        // data limit kills the instrumented gateway at its first allocation (AIRLOCK_SANITIZE
        // builds only; the limit is tested in the normal build).
        if (resource == RLIMIT_DATA)
            continue;
#endif
        if (bytes > 0 && ::setrlimit(resource, &limit) != 0) {
            std::fprintf(stderr, "airlock-gateway: setrlimit --%s: %s\n",
                         qPrintable(option->names().constFirst()), std::strerror(errno));
            return 2;
        }
    }
    const QString logLevel = parser.value(logLevelOption);
    if (logLevel != u"info" && logLevel != u"debug" && logLevel != u"trace") {
        std::fprintf(stderr, "airlock-gateway: --log-level must be info, debug or trace\n");
        return 2;
    }
    // QT_LOGGING_RULES, when set, still wins (Qt applies it after these rules).
    QLoggingCategory::setFilterRules(logLevel == u"info" ? QStringLiteral("airlock.*.debug=false")
                                                         : QStringLiteral("airlock.*.debug=true"));

    bool ok = false;
    const int fd = parser.value(controlOption).toInt(&ok);
    if (!parser.isSet(controlOption) || !ok || fd < 0 || ::fcntl(fd, F_GETFD) < 0) {
        std::fprintf(stderr,
                     "airlock-gateway: --control-fd FD (an open file descriptor) is "
                     "required\n");
        return 2;
    }
    // Peers that went away must not kill the gateway; every send uses MSG_NOSIGNAL anyway.
    std::signal(SIGPIPE, SIG_IGN);

    airlock::gateway::ControlChannel channel(fd);
    airlock::gateway::GatewayController controller(&channel);
    QObject::connect(
        &controller, &airlock::gateway::GatewayController::exitRequested, &app,
        [](int code) { QCoreApplication::exit(code); }, Qt::QueuedConnection);
    return app.exec();
}

// airlock-e2b: an E2B-compatible endpoint on 127.0.0.1 in front of airlockd (docs/e2b.md).
// Runs as the user, as a client of the helper like the window; core/e2b does the work, this
// only reads the options and wires the pieces.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/e2b/apikeystore.h"
#include "core/e2b/e2bserver.h"
#include "core/e2b/sandboxregistry.h"
#include "core/ssh/sshendpoint.h"
#include "core/ssh/sshtransport.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QTextStream>

#include <csignal>
#include <cstdio>

#include <sys/stat.h>
#include <unistd.h>

namespace {

QString stateFile()
{
    QString base = qEnvironmentVariable("XDG_STATE_HOME");
    if (base.isEmpty())
        base = QDir::homePath() + QStringLiteral("/.local/state");
    return base + QStringLiteral("/airlock/e2b-sandboxes.json");
}

} // namespace

int main(int argc, char *argv[])
{
    std::signal(SIGPIPE, SIG_IGN);
    // The key file and the state file are the user's alone.
    ::umask(077);
    qSetMessagePattern(QStringLiteral("airlock-e2b: %{message}"));
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("airlock-e2b"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AIRLOCK_VERSION));
    QTextStream out(stdout);
    QTextStream err(stderr);

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Serves the E2B API on 127.0.0.1 for programs written against the e2b SDK; their "
        "sandboxes are Airlock sandboxes (docs/e2b.md)."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption port(QStringLiteral("port"),
                                  QStringLiteral("Port on 127.0.0.1 (default 3000)."),
                                  QStringLiteral("PORT"), QStringLiteral("3000"));
    const QCommandLineOption socket(
        QStringLiteral("socket"),
        QStringLiteral("Helper socket (default $AIRLOCK_SOCKET, else %1).")
            .arg(QStringLiteral(AIRLOCK_DEFAULT_SOCKET)),
        QStringLiteral("PATH"));
    const QCommandLineOption host(
        QStringLiteral("host"),
        QStringLiteral("Reach airlockd on another machine over SSH ([USER@]HOST[:PORT]); keys from "
                       "ssh-agent or --identity, host keys from known_hosts (nothing is asked)."),
        QStringLiteral("HOST"));
    const QCommandLineOption identity(QStringLiteral("identity"),
                                      QStringLiteral("SSH private key file (with --host)."),
                                      QStringLiteral("FILE"));
    const QCommandLineOption knownHosts(
        QStringLiteral("known-hosts"),
        QStringLiteral("known_hosts file (with --host; default ~/.ssh/known_hosts)."),
        QStringLiteral("FILE"));
    const QCommandLineOption sshConfig(
        QStringLiteral("ssh-config"),
        QStringLiteral("OpenSSH client configuration (with --host; default ~/.ssh/config; none)."),
        QStringLiteral("FILE"));
    const QCommandLineOption printEnv(
        QStringLiteral("print-env"),
        QStringLiteral("Print the E2B_API_KEY, E2B_API_URL and E2B_SANDBOX_URL lines to export."));
    parser.addOptions({port, socket, host, identity, knownHosts, sshConfig, printEnv});
    parser.process(app);

    if (::geteuid() == 0) {
        err << "airlock-e2b: refusing to run as root: run it as the user whose E2B programs use "
               "it (a member of group airlock)"
            << Qt::endl;
        return 1;
    }
    bool portOk = false;
    const uint portNumber = parser.value(port).toUInt(&portOk);
    if (!portOk || portNumber == 0 || portNumber > 65535) {
        err << "airlock-e2b: --port needs a number 1..65535" << Qt::endl;
        return 2;
    }
    const auto key =
        airlock::e2b::ApiKeyStore::loadOrCreate(airlock::e2b::ApiKeyStore::defaultDirectory());
    if (!key) {
        err << "airlock-e2b: " << key.error().message << Qt::endl;
        return 1;
    }
    const QString url = QStringLiteral("http://127.0.0.1:%1").arg(portNumber);
    if (parser.isSet(printEnv)) {
        out << "export E2B_API_KEY=" << QString::fromLatin1(*key) << " E2B_API_URL=" << url
            << " E2B_SANDBOX_URL=" << url << Qt::endl;
        return 0;
    }

    std::unique_ptr<airlock::Transport> transport;
    if (parser.isSet(host)) {
        auto endpoint = airlock::SshEndpoint::parse(parser.value(host));
        if (!endpoint) {
            err << "airlock-e2b: --host: " << endpoint.error().message << Qt::endl;
            return 2;
        }
        // On the remote machine the helper is at the default path unless --socket says
        // otherwise; $AIRLOCK_SOCKET describes this machine.
        if (parser.isSet(socket))
            endpoint->socketPath = parser.value(socket);
        endpoint->identityFile = parser.value(identity);
        endpoint->knownHostsFile = parser.value(knownHosts);
        endpoint->configFile = parser.value(sshConfig);
        // No prompter: a server runs without a terminal; unknown host keys are refused.
        transport = std::make_unique<airlock::SshTransport>(*endpoint);
    } else {
        QString socketPath = parser.value(socket);
        if (socketPath.isEmpty())
            socketPath =
                qEnvironmentVariable("AIRLOCK_SOCKET", QStringLiteral(AIRLOCK_DEFAULT_SOCKET));
        transport = std::make_unique<airlock::LocalSocketTransport>(socketPath);
    }
    airlock::HelperClient helper(std::move(transport), QStringLiteral("airlock-e2b"));
    if (const auto connected = helper.connectSync(); !connected) {
        err << "airlock-e2b: " << connected.error().message << Qt::endl;
        return 1;
    }
    // A restarted helper is met again; the processes it followed for us ran on in the guests.
    helper.setAutoReconnect(true);

    airlock::e2b::SandboxRegistry registry(stateFile());
    airlock::e2b::E2bServer server(&helper, *key, &registry);
    if (const auto listening = server.listen(quint16(portNumber)); !listening) {
        err << "airlock-e2b: " << listening.error().message << Qt::endl;
        return 1;
    }
    // After the server is connected to it: sandboxes that expired meanwhile are killed now.
    registry.load();
    out << "airlock-e2b: listening on " << url << Qt::endl;
    const int code = app.exec();
    // Its SSH worker finishes before libcrypto's exit handlers run.
    airlock::SshTransport::waitForWorkers(5000);
    return code;
}

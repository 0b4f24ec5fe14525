// airlock: the desktop window. Wiring only; everything testable lives in ui/ and core/.

#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/ssh/sshtransport.h"
#include "ui/hoststore.h"
#include "ui/mainwindow.h"
#include "ui/resources.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTranslator>

#include <memory>

namespace {

/// --version and --help must answer without a display (packaging checks, SSH sessions), so
/// they get a QCoreApplication instead of a window system connection.
bool onlyPrintsInformation(int argc, char *argv[])
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "--version" || arg == "-v" || arg == "--help" || arg == "-h"
            || arg == "--help-all")
            return true;
    }
    return false;
}

} // namespace

int main(int argc, char *argv[])
{
    const std::unique_ptr<QCoreApplication> app(onlyPrintsInformation(argc, argv)
                                                    ? new QCoreApplication(argc, argv)
                                                    : new QApplication(argc, argv));
    QCoreApplication::setApplicationName(QStringLiteral("airlock"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AIRLOCK_VERSION));
    QCoreApplication::setOrganizationDomain(QStringLiteral("airlock.org"));
    if (qobject_cast<QApplication *>(app.get())) {
        QGuiApplication::setApplicationDisplayName(QStringLiteral("Airlock"));
        QGuiApplication::setDesktopFileName(QStringLiteral("org.airlock.Airlock"));
    }
    airlock::initUiResources();

    QTranslator qtTranslator;
    if (qtTranslator.load(QLocale(), QStringLiteral("qtbase"), QStringLiteral("_"),
                          QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QApplication::installTranslator(&qtTranslator);
    QTranslator translator;
    if (translator.load(QLocale(), QStringLiteral("airlock"), QStringLiteral("_"),
                        QStringLiteral(":/i18n")))
        QApplication::installTranslator(&translator);

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QApplication::translate("main", "Manage microVM sandboxes for untrusted coding agents."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QString envSocket = qEnvironmentVariable("AIRLOCK_SOCKET");
    const QCommandLineOption socketOption(
        QStringLiteral("socket"),
        QApplication::translate("main", "Helper socket (default: $AIRLOCK_SOCKET or %1).")
            .arg(QStringLiteral(AIRLOCK_DEFAULT_SOCKET)),
        QApplication::translate("main", "PATH"),
        envSocket.isEmpty() ? QStringLiteral(AIRLOCK_DEFAULT_SOCKET) : envSocket);
    const QCommandLineOption consoleOption(
        QStringLiteral("open-console"),
        QApplication::translate("main", "Select sandbox NAME and open its console."),
        QApplication::translate("main", "NAME"));
    const QCommandLineOption connectionsOption(
        QStringLiteral("connections"),
        QApplication::translate("main", "Open the connections manager (remote hosts) at start."));
    parser.addOption(socketOption);
    parser.addOption(consoleOption);
    parser.addOption(connectionsOption);
    parser.process(*app);

    // The window and every SSH session live in this scope; once they are gone, the SSH workers
    // finish closing their sessions before libcrypto's exit handlers run.
    const int code = [&] {
        auto transport =
            std::make_unique<airlock::LocalSocketTransport>(parser.value(socketOption));
        airlock::HelperClient client(std::move(transport), QStringLiteral("airlock"));
        client.setAutoReconnect(true);

        airlock::MainWindow window(&client);
        if (parser.isSet(consoleOption))
            window.openConsoleWhenListed(parser.value(consoleOption));
        window.show();
        client.connectToHelper();
        // Remote hosts from the connections manager, each over its own SSH session (docs/ssh.md).
        QSettings settings;
        window.setRemoteHosts(airlock::HostStore::load(settings));
        if (parser.isSet(connectionsOption))
            window.showConnectionsDialog();
        return QApplication::exec();
    }();
    airlock::SshTransport::waitForWorkers(5000);
    return code;
}

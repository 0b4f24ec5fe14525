#include "app/airlockctl/commandrunner.h"

#include "app/airlockctl/bridgecommands.h"
#include "app/airlockctl/consolecommands.h"
#include "app/airlockctl/credentialcommands.h"
#include "app/airlockctl/egresscommands.h"
#include "app/airlockctl/guestcommands.h"
#include "app/airlockctl/policycommands.h"
#include "app/airlockctl/sandboxcommands.h"
#include "app/airlockctl/snapshotcommands.h"
#include "app/airlockctl/templatecommands.h"
#include "app/airlockctl/terminalprompter.h"
#include "app/airlockctl/workspacecommands.h"
#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/model/error.h"
#include "core/ssh/sshtransport.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace airlock::ctl {

namespace {

constexpr int kConnectTimeoutMs = 10000;

} // namespace

CommandRunner::CommandRunner(QTextStream &out, QTextStream &err, const QString &environmentSocket)
    : m_out(out)
    , m_err(err)
    , m_socketPath(environmentSocket.isEmpty() ? QStringLiteral(AIRLOCK_DEFAULT_SOCKET)
                                               : environmentSocket)
{
    // The order of `airlockctl --help`.
    m_groups.push_back(std::make_unique<SandboxCommands>(*this));
    m_groups.push_back(std::make_unique<ConsoleCommands>(*this));
    m_groups.push_back(std::make_unique<GuestCommands>(*this));
    m_groups.push_back(std::make_unique<WorkspaceCommands>(*this));
    m_groups.push_back(std::make_unique<BridgeCommands>(*this));
    m_groups.push_back(std::make_unique<PolicyCommands>(*this));
    m_groups.push_back(std::make_unique<CredentialCommands>(*this));
    m_groups.push_back(std::make_unique<EgressCommands>(*this));
    m_groups.push_back(std::make_unique<SnapshotCommands>(*this));
    m_groups.push_back(std::make_unique<TemplateCommands>(*this));
    for (const auto &group : m_groups)
        m_commands.append(group->commands());
}

CommandRunner::~CommandRunner() = default;

void CommandRunner::printGlobalHelp(QTextStream &stream) const
{
    stream << "Usage: airlockctl [--host [USER@]HOST[:PORT]] [--socket PATH] [--json] COMMAND "
              "[ARGS...]\n\n"
              "Manage Airlock sandboxes through airlockd.\n\n"
              "Options:\n"
              "  --socket PATH   helper socket (default $AIRLOCK_SOCKET, else "
           << AIRLOCK_DEFAULT_SOCKET
           << ")\n"
              "  --host [USER@]HOST[:PORT]\n"
              "                  talk to the helper on HOST over SSH (docs/ssh.md); --socket\n"
              "                  then names the socket on HOST\n"
              "  --identity FILE       SSH private key (default: ssh-agent, ~/.ssh/id_*)\n"
              "  --known-hosts FILE    default ~/.ssh/known_hosts\n"
              "  --ssh-config FILE     OpenSSH client config (default ~/.ssh/config; 'none')\n"
              "  --remote-airlockctl PATH\n"
              "                  airlockctl on HOST for the bridge fallback (default airlockctl)\n"
              "  --json          print the helper's JSON instead of tables and sentences\n"
              "  -h, --help      show this help; COMMAND --help shows a command's options\n"
              "  -V, --version   show the version\n\n"
              "Commands:\n";
    for (const Command &command : m_commands) {
        stream << "  " << command.usage() << "\n      " << command.summary << "\n";
    }
    stream << "\nExit status: 0 ok, 1 the operation failed, 2 usage error.\n";
    stream.flush();
}

int CommandRunner::usageError(const QString &message, const QString &command)
{
    m_err << "airlockctl: " << message << "\n";
    m_err << "Try 'airlockctl " << (command.isEmpty() ? QString() : command + QLatin1Char(' '))
          << "--help'." << Qt::endl;
    return ExitUsage;
}

int CommandRunner::run(const QStringList &arguments)
{
    qsizetype i = 1;
    for (; i < arguments.size(); ++i) {
        const QString &arg = arguments[i];
        // Options with a value, as `--name VALUE` or `--name=VALUE`.
        struct ValueOption
        {
            QString name;
            QString *target;
            const char *value; ///< for "needs a VALUE"
        };
        const ValueOption valueOptions[] = {
            {QStringLiteral("--socket"), &m_socketPath, "PATH"},
            {QStringLiteral("--host"), &m_host, "[USER@]HOST[:PORT]"},
            {QStringLiteral("--identity"), &m_identityFile, "FILE"},
            {QStringLiteral("--known-hosts"), &m_knownHostsFile, "FILE"},
            {QStringLiteral("--ssh-config"), &m_sshConfigFile, "FILE"},
            {QStringLiteral("--remote-airlockctl"), &m_remoteCommand, "PATH"},
        };
        bool matched = false;
        for (const auto &[option, target, value] : valueOptions) {
            if (arg == option) {
                if (i + 1 >= arguments.size())
                    return usageError(
                        QStringLiteral("%1 needs a %2").arg(option, QLatin1String(value)));
                *target = arguments[++i];
                matched = true;
            } else if (arg.startsWith(option + QLatin1Char('='))) {
                *target = arg.mid(option.size() + 1);
                matched = true;
            }
        }
        if (matched) {
            if (arg.startsWith(QStringLiteral("--socket")))
                m_socketGiven = true;
        } else if (arg == QStringLiteral("--json")) {
            m_json = true;
        } else if (arg == QStringLiteral("-h") || arg == QStringLiteral("--help")) {
            printGlobalHelp(m_out);
            return ExitOk;
        } else if (arg == QStringLiteral("-V") || arg == QStringLiteral("--version")) {
            m_out << "airlockctl " << AIRLOCK_VERSION << Qt::endl;
            return ExitOk;
        } else if (arg.startsWith(QLatin1Char('-'))) {
            return usageError(QStringLiteral("unknown option '%1'").arg(arg));
        } else {
            break;
        }
    }
    if (i >= arguments.size()) {
        printGlobalHelp(m_err);
        return ExitUsage;
    }
    if (m_socketPath.isEmpty())
        return usageError(QStringLiteral("--socket needs a non-empty PATH"));
    if (!m_host.isEmpty()) {
        const Result<SshEndpoint> endpoint = SshEndpoint::parse(m_host);
        if (!endpoint)
            return usageError(QStringLiteral("--host: %1").arg(endpoint.error().message));
        m_endpoint = *endpoint;
        // On the remote host the helper sits at the default path unless --socket says
        // otherwise; $AIRLOCK_SOCKET describes this machine, not that one.
        m_endpoint.socketPath =
            m_socketGiven ? m_socketPath : QStringLiteral(AIRLOCK_DEFAULT_SOCKET);
        m_endpoint.identityFile = m_identityFile;
        m_endpoint.knownHostsFile = m_knownHostsFile;
        m_endpoint.configFile = m_sshConfigFile;
        if (!m_remoteCommand.isEmpty())
            m_endpoint.remoteCommand = m_remoteCommand;
    }
    const QString name = arguments[i];
    for (const Command &command : m_commands) {
        if (command.name == name)
            return runCommand(command, arguments.mid(i));
    }
    return usageError(QStringLiteral("unknown command '%1'").arg(name));
}

int CommandRunner::runCommand(const Command &command, const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(command.summary);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print the helper's JSON answer."));
    const QCommandLineOption socket(QStringLiteral("socket"),
                                    QStringLiteral("Helper socket (see airlockctl --help)."),
                                    QStringLiteral("PATH"));
    parser.addOption(help);
    parser.addOptions(command.options);
    parser.addOption(json);
    parser.addOption(socket);
    if (!parser.parse(arguments))
        return usageError(parser.errorText(), command.name);
    if (parser.isSet(help)) {
        QString text = parser.helpText();
        text = text.mid(text.indexOf(QLatin1Char('\n')) + 1); // drop Qt's generic usage line
        m_out << "Usage: airlockctl [--socket PATH] " << command.usage() << "\n" << text;
        m_out.flush();
        return ExitOk;
    }
    if (parser.isSet(json))
        m_json = true;
    if (parser.isSet(socket)) {
        m_socketPath = parser.value(socket);
        m_endpoint.socketPath = m_socketPath;
    }
    const QStringList positional = parser.positionalArguments();
    const Action *action = command.select(positional);
    if (!action) {
        if (command.takesNoArguments())
            return usageError(QStringLiteral("%1 takes no arguments").arg(command.name),
                              command.name);
        return usageError(QStringLiteral("usage: airlockctl ") + command.usage(), command.name);
    }
    return action->handler(
        {command.name, action->name.isEmpty() ? positional : positional.mid(1), parser});
}

bool CommandRunner::connectHelper()
{
    if (m_client)
        return true;
    std::unique_ptr<Transport> transport;
    if (m_host.isEmpty()) {
        transport = std::make_unique<LocalSocketTransport>(m_socketPath);
    } else {
        m_prompter = std::make_unique<TerminalPrompter>();
        transport = std::make_unique<SshTransport>(m_endpoint, m_prompter.get());
    }
    m_client = std::make_unique<HelperClient>(std::move(transport), QStringLiteral("airlockctl"));
    const Result<void> connected = m_client->connectSync(kConnectTimeoutMs);
    if (!connected) {
        m_err << "airlockctl: " << connected.error().message << Qt::endl;
        m_client.reset();
        return false;
    }
    return true;
}

std::optional<QJsonValue>
CommandRunner::call(const char *method, const QJsonObject &params, int timeoutMs,
                    const QList<std::pair<QString, QString>> &fieldOptions)
{
    if (!connectHelper())
        return std::nullopt;
    Result<QJsonValue> result = m_client->callSync(QString::fromLatin1(method), params, timeoutMs);
    if (!result) {
        QString message = result.error().message;
        for (const auto &[field, option] : fieldOptions) {
            message.replace(QStringLiteral("field '%1'").arg(field), option);
            message.replace(QRegularExpression(QStringLiteral("(?<![-\\w])%1(?!\\w)").arg(field)),
                            option);
        }
        m_err << "airlockctl: " << message << Qt::endl;
        return std::nullopt;
    }
    return *result;
}

void CommandRunner::printJson(const QJsonValue &value)
{
    const QJsonDocument document =
        value.isArray() ? QJsonDocument(value.toArray()) : QJsonDocument(value.toObject());
    m_out << QString::fromUtf8(document.toJson(QJsonDocument::Indented));
    m_out.flush();
}

} // namespace airlock::ctl

#include "app/airlockctl/commandrunner.h"

#include "app/airlockctl/consolesession.h"
#include "app/airlockctl/sandboxformat.h"
#include "app/airlockctl/snapshotformat.h"
#include "app/airlockctl/stdiobridge.h"
#include "app/airlockctl/terminalprompter.h"
#include "core/client/helperclient.h"
#include "core/client/localsockettransport.h"
#include "core/model/egresspolicy.h"
#include "core/protocol/methods.h"
#include "core/ssh/sshtransport.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimer>

#include <unistd.h>

namespace airlock::ctl {

namespace {

/// The protocol fields of a sandbox's shape and the options that set them.
const QList<std::pair<QString, QString>> kShapeOptions {
    {QStringLiteral("memoryMib"), QStringLiteral("--memory")},
    {QStringLiteral("vcpus"), QStringLiteral("--vcpus")},
};

constexpr int kConnectTimeoutMs = 10000;
// Starting only waits for the VMM process, but QEMU under TCG on a loaded host is slow to exec.
constexpr int kStartTimeoutMs = 120000;
// How long `stop` waits beyond the helper's own power-off timeout for the kill to land.
constexpr int kStopGraceMs = 30000;

const QString kName = QStringLiteral("name");

QString quoted(const QString &name)
{
    return QLatin1Char('\'') + name + QLatin1Char('\'');
}

} // namespace

struct CommandRunner::Command
{
    QString name;
    QString arguments; ///< synopsis after the command name
    QString summary;
    int (CommandRunner::*handler)(QCommandLineParser &);
    QList<QCommandLineOption> options;
    int positionals; ///< exact number of positional arguments; -1: the handler checks
};

const QList<CommandRunner::Command> &CommandRunner::commands()
{
    static const QList<Command> list {
        {QStringLiteral("create"),
         QStringLiteral("NAME [--vcpus N] [--memory MIB] [--image ID] [--cold-boot]"),
         QStringLiteral("Create a stopped sandbox. NAME: [a-z0-9][a-z0-9-]{0,62}. It starts from "
                        "its image's template when the helper has one, else boots cold."),
         &CommandRunner::cmdCreate,
         {QCommandLineOption(QStringLiteral("vcpus"), QStringLiteral("Virtual CPUs (1-32)."),
                             QStringLiteral("N")),
          QCommandLineOption(QStringLiteral("memory"),
                             QStringLiteral("Guest memory in MiB (64-65536)."),
                             QStringLiteral("MIB")),
          QCommandLineOption(QStringLiteral("image"),
                             QStringLiteral("Image id from 'airlockctl images'."),
                             QStringLiteral("ID")),
          QCommandLineOption(QStringLiteral("cold-boot"),
                             QStringLiteral("Always boot the kernel, never start from the "
                                            "image's template."))},
         1},
        {QStringLiteral("list"),
         QString(),
         QStringLiteral("List sandboxes as a table (--json: the helper's JSON)."),
         &CommandRunner::cmdList,
         {},
         0},
        {QStringLiteral("info"),
         QStringLiteral("NAME"),
         QStringLiteral("Show every field of a sandbox, including acceleration and why KVM was "
                        "not used."),
         &CommandRunner::cmdInfo,
         {},
         1},
        {QStringLiteral("start"),
         QStringLiteral("NAME"),
         QStringLiteral("Boot a sandbox; returns once its VMM runs (watch the console for "
                        "'airlock-guest ready')."),
         &CommandRunner::cmdStart,
         {},
         1},
        {QStringLiteral("stop"),
         QStringLiteral("NAME [--timeout SECONDS]"),
         QStringLiteral("Ask the guest to power off, kill it after the timeout, and wait until "
                        "it is stopped."),
         &CommandRunner::cmdStop,
         {QCommandLineOption(QStringLiteral("timeout"),
                             QStringLiteral("Seconds before the VMM is killed (default 10)."),
                             QStringLiteral("SECONDS"), QStringLiteral("10"))},
         1},
        {QStringLiteral("kill"),
         QStringLiteral("NAME"),
         QStringLiteral("Kill a sandbox's VMM at once."),
         &CommandRunner::cmdKill,
         {},
         1},
        {QStringLiteral("rm"),
         QStringLiteral("NAME"),
         QStringLiteral("Delete a stopped sandbox and its runtime files."),
         &CommandRunner::cmdRemove,
         {},
         1},
        {QStringLiteral("images"),
         QString(),
         QStringLiteral("List the images in the helper's image store."),
         &CommandRunner::cmdImages,
         {},
         0},
        {QStringLiteral("console"),
         QStringLiteral("NAME"),
         QStringLiteral("Attach to a sandbox's serial console (scrollback first). Ctrl-] "
                        "detaches; piped stdin is typed as is; ends when the sandbox stops."),
         &CommandRunner::cmdConsole,
         {},
         1},
        {QStringLiteral("bridge"),
         QString(),
         QStringLiteral("Pipe stdin/stdout to the helper socket (for 'ssh HOST airlockctl "
                        "bridge')."),
         &CommandRunner::cmdBridge,
         {},
         0},
        {QStringLiteral("policy"),
         QStringLiteral("get NAME | set NAME FILE | validate FILE"),
         QStringLiteral("Show, replace or check a sandbox's egress policy (docs/policy.md). FILE "
                        "'-' reads stdin. validate exits 1 when the policy is invalid, printing "
                        "each error on its own line."),
         &CommandRunner::cmdPolicy,
         {},
         -1},
        {QStringLiteral("secret"),
         QStringLiteral("set NAME | ls | rm NAME"),
         QStringLiteral("Store a secret in the helper's vault (set reads the value from standard "
                        "input, never from the command line), list secrets without their "
                        "values, or delete one that no binding uses (docs/credentials.md)."),
         &CommandRunner::cmdSecret,
         {},
         -1},
        {QStringLiteral("binding"),
         QStringLiteral("add SANDBOX SECRET HOST [--path PREFIX] [--method M]... [--header NAME] "
                        "[--template T | --basic USER] | ls [SANDBOX] | rm ID"),
         QStringLiteral("Let a sandbox's gateway inject a secret into https requests to exactly "
                        "HOST (port 443), by default as 'Authorization: Bearer {secret}'; the "
                        "guest only holds a placeholder."),
         &CommandRunner::cmdBinding,
         {QCommandLineOption(QStringLiteral("path"),
                             QStringLiteral("Only requests whose path starts with PREFIX."),
                             QStringLiteral("PREFIX")),
          QCommandLineOption(QStringLiteral("method"),
                             QStringLiteral("Only this method (repeatable), e.g. GET."),
                             QStringLiteral("M")),
          QCommandLineOption(QStringLiteral("header"),
                             QStringLiteral("Header to set (default Authorization)."),
                             QStringLiteral("NAME")),
          QCommandLineOption(QStringLiteral("template"),
                             QStringLiteral("Header value with {secret} once (default 'Bearer "
                                            "{secret}')."),
                             QStringLiteral("T")),
          QCommandLineOption(QStringLiteral("basic"),
                             QStringLiteral("HTTP basic authentication as USER (RFC 7617)."),
                             QStringLiteral("USER"))},
         -1},
        {QStringLiteral("egress"),
         QStringLiteral("NAME [--follow] [--limit N]"),
         QStringLiteral("Show a sandbox's latest egress decisions (TIME LAYER VERDICT REASON "
                        "NAME METHOD PATH); --follow keeps printing new ones until interrupted. "
                        "--json prints one JSON object per line."),
         &CommandRunner::cmdEgress,
         {QCommandLineOption({QStringLiteral("f"), QStringLiteral("follow")},
                             QStringLiteral("Keep printing new events.")),
          QCommandLineOption(QStringLiteral("limit"),
                             QStringLiteral("How many stored events to show first (1-1000, "
                                            "default 20)."),
                             QStringLiteral("N"), QStringLiteral("20"))},
         1},
        {QStringLiteral("pause"),
         QStringLiteral("NAME"),
         QStringLiteral("Stop a running guest's CPUs (state paused)."),
         &CommandRunner::cmdPause,
         {},
         1},
        {QStringLiteral("resume"),
         QStringLiteral("NAME"),
         QStringLiteral("Let a paused guest run again."),
         &CommandRunner::cmdResume,
         {},
         1},
        {QStringLiteral("snapshot"),
         QStringLiteral("create NAME [--label L] | ls NAME | restore NAME SNAP | fork SNAP NEWNAME "
                        "[--with-bindings] | rm SNAP | pin SNAP | unpin SNAP | rename SNAP LABEL "
                        "| schedule NAME [--interval MIN] [--hourly H] [--daily D]"),
         QStringLiteral("Snapshots of a running guest (docs/snapshots.md). restore first takes a "
                        "safety snapshot of a running sandbox; fork starts a new sandbox from a "
                        "snapshot (its own name, addresses and CA; credential bindings only with "
                        "--with-bindings); schedule shows or sets automatic snapshots (interval "
                        "0: off)."),
         &CommandRunner::cmdSnapshot,
         {QCommandLineOption(QStringLiteral("label"), QStringLiteral("Snapshot label."),
                             QStringLiteral("LABEL")),
          QCommandLineOption(QStringLiteral("with-bindings"),
                             QStringLiteral("fork: copy the original's credential bindings "
                                            "(with new placeholders).")),
          QCommandLineOption(QStringLiteral("interval"),
                             QStringLiteral("Minutes between automatic snapshots (0: off)."),
                             QStringLiteral("MIN")),
          QCommandLineOption(QStringLiteral("hourly"),
                             QStringLiteral("Hours during which one snapshot per hour is kept."),
                             QStringLiteral("H")),
          QCommandLineOption(QStringLiteral("daily"),
                             QStringLiteral("Days during which one snapshot per day is kept."),
                             QStringLiteral("D"))},
         -1},
        {QStringLiteral("template"),
         QStringLiteral("ls | prepare [--image ID] [--vcpus N] [--memory MIB] [--wait]"),
         QStringLiteral("Templates: snapshots of a booted image that sandboxes start from instead "
                        "of a cold boot (docs/snapshots.md). prepare makes one for the image and "
                        "shape unless a current one exists; --wait waits until it is ready."),
         &CommandRunner::cmdTemplate,
         {QCommandLineOption(QStringLiteral("image"), QStringLiteral("Image id (default default)."),
                             QStringLiteral("ID")),
          QCommandLineOption(QStringLiteral("vcpus"), QStringLiteral("Virtual CPUs (default 1)."),
                             QStringLiteral("N")),
          QCommandLineOption(QStringLiteral("memory"),
                             QStringLiteral("Guest memory in MiB (default 256)."),
                             QStringLiteral("MIB")),
          QCommandLineOption(QStringLiteral("wait"),
                             QStringLiteral("Wait until the template is ready (up to 5 min)."))},
         -1},
    };
    return list;
}

CommandRunner::CommandRunner(QTextStream &out, QTextStream &err, const QString &environmentSocket)
    : m_out(out)
    , m_err(err)
    , m_socketPath(environmentSocket.isEmpty() ? QStringLiteral(AIRLOCK_DEFAULT_SOCKET)
                                               : environmentSocket)
{ }

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
    for (const Command &command : commands()) {
        const QString synopsis = (command.name + QLatin1Char(' ') + command.arguments).trimmed();
        stream << "  " << synopsis << "\n      " << command.summary << "\n";
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
    for (const Command &command : commands()) {
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
        m_out << "Usage: airlockctl [--socket PATH] "
              << (command.name + QLatin1Char(' ') + command.arguments).trimmed() << "\n"
              << text;
        m_out.flush();
        return ExitOk;
    }
    if (parser.isSet(json))
        m_json = true;
    if (parser.isSet(socket)) {
        m_socketPath = parser.value(socket);
        m_endpoint.socketPath = m_socketPath;
    }
    if (command.positionals >= 0 && parser.positionalArguments().size() != command.positionals) {
        if (command.positionals == 0)
            return usageError(QStringLiteral("%1 takes no arguments").arg(command.name),
                              command.name);
        return usageError(
            QStringLiteral("usage: airlockctl %1 %2").arg(command.name, command.arguments),
            command.name);
    }
    return (this->*command.handler)(parser);
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

int CommandRunner::cmdCreate(QCommandLineParser &parser)
{
    QJsonObject params {{kName, parser.positionalArguments().first()}};
    for (const char *key : {"vcpus", "memory"}) {
        const QString option = QLatin1String(key);
        if (!parser.isSet(option))
            continue;
        bool ok = false;
        const int value = parser.value(option).toInt(&ok);
        if (!ok)
            return usageError(QStringLiteral("--%1: '%2' is not a whole number")
                                  .arg(option, parser.value(option)),
                              QStringLiteral("create"));
        params.insert(option == QStringLiteral("vcpus") ? QStringLiteral("vcpus")
                                                        : QStringLiteral("memoryMib"),
                      value);
    }
    if (parser.isSet(QStringLiteral("image")))
        params.insert(QStringLiteral("image"), parser.value(QStringLiteral("image")));
    if (parser.isSet(QStringLiteral("cold-boot")))
        params.insert(QStringLiteral("boot"), QStringLiteral("cold"));
    const auto result = call(protocol::method::SandboxCreate, params, 30000, kShapeOptions);
    if (!result)
        return ExitFailed;
    if (m_json) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonObject sandbox = result->toObject();
    const int vcpus = sandbox.value(QStringLiteral("vcpus")).toInt();
    m_out << QStringLiteral("created sandbox %1 (%2 vCPU%3, %4 MiB, image %5)")
                 .arg(quoted(sandbox.value(kName).toString()))
                 .arg(vcpus)
                 .arg(vcpus == 1 ? QString() : QStringLiteral("s"))
                 .arg(sandbox.value(QStringLiteral("memoryMib")).toInt())
                 .arg(sandbox.value(QStringLiteral("image")).toString())
          << Qt::endl;
    return ExitOk;
}

int CommandRunner::cmdList(QCommandLineParser &)
{
    const auto result = call(protocol::method::SandboxList, {});
    if (!result)
        return ExitFailed;
    if (m_json) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonArray sandboxes = result->toObject().value(QStringLiteral("sandboxes")).toArray();
    if (sandboxes.isEmpty()) {
        m_out << "no sandboxes (create one with: airlockctl create NAME)" << Qt::endl;
        return ExitOk;
    }
    m_out << formatSandboxTable(sandboxes, QDateTime::currentDateTimeUtc());
    m_out.flush();
    return ExitOk;
}

int CommandRunner::cmdInfo(QCommandLineParser &parser)
{
    const auto result =
        call(protocol::method::SandboxGet, {{kName, parser.positionalArguments().first()}});
    if (!result)
        return ExitFailed;
    if (m_json)
        printJson(*result);
    else
        m_out << formatSandboxInfo(result->toObject(), QDateTime::currentDateTimeUtc());
    m_out.flush();
    return ExitOk;
}

int CommandRunner::cmdStart(QCommandLineParser &parser)
{
    const QString name = parser.positionalArguments().first();
    const auto result = call(protocol::method::SandboxStart, {{kName, name}}, kStartTimeoutMs);
    if (!result)
        return ExitFailed;
    if (m_json) {
        printJson(*result);
        return ExitOk;
    }
    const QJsonObject sandbox = result->toObject();
    const bool fromTemplate =
        sandbox.value(QStringLiteral("startedFrom")).toString() == QLatin1String("template");
    m_out << QStringLiteral("started sandbox %1%2 (%3)")
                 .arg(quoted(name),
                      fromTemplate ? QStringLiteral(" from its image's template") : QString(),
                      sandbox.value(QStringLiteral("acceleration")).toString())
          << Qt::endl;
    const QString warning = sandbox.value(QStringLiteral("accelerationWarning")).toString();
    if (!warning.isEmpty())
        m_err << "airlockctl: warning: " << warning << Qt::endl;
    warnIdentity(sandbox);
    return ExitOk;
}

void CommandRunner::warnIdentity(const QJsonObject &sandbox)
{
    const QString warning = sandbox.value(QStringLiteral("identityWarning")).toString();
    if (!warning.isEmpty())
        m_err << "airlockctl: warning: " << quoted(sandbox.value(kName).toString()) << ": "
              << warning << Qt::endl;
}

int CommandRunner::cmdStop(QCommandLineParser &parser)
{
    const QString name = parser.positionalArguments().first();
    bool ok = false;
    const double seconds = parser.value(QStringLiteral("timeout")).toDouble(&ok);
    if (!ok || seconds < 0)
        return usageError(QStringLiteral("--timeout: '%1' is not a number of seconds")
                              .arg(parser.value(QStringLiteral("timeout"))),
                          QStringLiteral("stop"));
    const int timeoutMs = int(std::min(seconds, 1e6) * 1000);

    // Subscribe first: the stopped event must not slip by between the answer and the wait.
    if (!call(protocol::method::EventsSubscribe, {}))
        return ExitFailed;
    QJsonObject last;
    bool stopped = false;
    QEventLoop loop;
    QObject::connect(
        m_client.get(), &HelperClient::notificationReceived, &loop,
        [&](const QString &method, const QJsonObject &params) {
            if (method == QLatin1String(protocol::notification::SandboxRemoved)
                && params.value(kName).toString() == name) {
                stopped = true;
                loop.quit();
            }
            if (method != QLatin1String(protocol::notification::SandboxChanged))
                return;
            const QJsonObject sandbox = params.value(QStringLiteral("sandbox")).toObject();
            if (sandbox.value(kName).toString() != name)
                return;
            last = sandbox;
            if (sandbox.value(QStringLiteral("state")).toString() == QStringLiteral("stopped")) {
                stopped = true;
                loop.quit();
            }
        });
    QObject::connect(m_client.get(), &HelperClient::connectionLost, &loop, [&](const Error &error) {
        m_err << "airlockctl: " << error.message << Qt::endl;
        loop.quit();
    });
    const auto result = call(protocol::method::SandboxStop,
                             {{kName, name}, {QStringLiteral("timeoutMs"), timeoutMs}});
    if (!result)
        return ExitFailed;
    if (last.isEmpty())
        last = result->toObject();
    if (!stopped && last.value(QStringLiteral("state")).toString() == QStringLiteral("stopped"))
        stopped = true;
    if (!stopped) {
        QTimer::singleShot(timeoutMs + kStopGraceMs, &loop, &QEventLoop::quit);
        loop.exec();
    }
    if (!stopped) {
        if (m_client->state() == HelperClient::State::Ready)
            m_err << "airlockctl: sandbox " << quoted(name) << " did not stop in time" << Qt::endl;
        return ExitFailed;
    }
    if (m_json)
        printJson(last);
    else
        m_out << "stopped sandbox " << quoted(name) << Qt::endl;
    return ExitOk;
}

int CommandRunner::nameCommand(QCommandLineParser &parser, const char *method, const char *done)
{
    const QString name = parser.positionalArguments().first();
    const auto result = call(method, {{kName, name}});
    if (!result)
        return ExitFailed;
    if (m_json)
        printJson(*result);
    else
        m_out << QLatin1String(done) << " sandbox " << quoted(name) << Qt::endl;
    return ExitOk;
}

int CommandRunner::cmdKill(QCommandLineParser &parser)
{
    return nameCommand(parser, protocol::method::SandboxKill, "killed");
}

int CommandRunner::cmdRemove(QCommandLineParser &parser)
{
    return nameCommand(parser, protocol::method::SandboxDelete, "removed");
}

int CommandRunner::cmdImages(QCommandLineParser &)
{
    const auto result = call(protocol::method::ImageList, {});
    if (!result)
        return ExitFailed;
    if (m_json) {
        printJson(*result);
        return ExitOk;
    }
    m_out << formatImageTable(result->toObject().value(QStringLiteral("images")).toArray());
    m_out.flush();
    return ExitOk;
}

int CommandRunner::cmdConsole(QCommandLineParser &parser)
{
    if (!connectHelper())
        return ExitFailed;
    m_out.flush();
    ConsoleSession session(m_client.get(), parser.positionalArguments().first(), STDIN_FILENO,
                           STDOUT_FILENO, m_err);
    return session.run();
}

int CommandRunner::cmdBridge(QCommandLineParser &)
{
    if (!m_host.isEmpty())
        return usageError(QStringLiteral("bridge runs on the helper's host; it takes no --host"),
                          QStringLiteral("bridge"));
    m_out.flush();
    StdioBridge bridge(m_socketPath, STDIN_FILENO, STDOUT_FILENO, m_err);
    return bridge.run();
}

std::optional<QJsonObject> CommandRunner::readPolicyFile(const QString &path)
{
    QFile file;
    const bool opened = path == QStringLiteral("-")
        ? file.open(stdin, QIODevice::ReadOnly)
        : (file.setFileName(path), file.open(QIODevice::ReadOnly));
    if (!opened) {
        m_err << "airlockctl: cannot read " << path << ": " << file.errorString() << Qt::endl;
        return std::nullopt;
    }
    // One byte more than allowed, so that an oversized file is told apart from a full one.
    const QByteArray bytes = file.read(EgressPolicy::kMaxJsonBytes + 1);
    if (bytes.size() > EgressPolicy::kMaxJsonBytes) {
        m_err << "airlockctl: " << path << ": a policy file is at most "
              << EgressPolicy::kMaxJsonBytes << " bytes" << Qt::endl;
        return std::nullopt;
    }
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError) {
        m_err << "airlockctl: " << path << ": not valid JSON at offset " << error.offset << ": "
              << error.errorString() << Qt::endl;
        return std::nullopt;
    }
    if (!document.isObject()) {
        m_err << "airlockctl: " << path
              << ": a policy must be a JSON object {\"version\": 1, \"rules\": [...]}" << Qt::endl;
        return std::nullopt;
    }
    return document.object();
}

int CommandRunner::cmdPolicy(QCommandLineParser &parser)
{
    const QStringList args = parser.positionalArguments();
    const QString command = QStringLiteral("policy");
    const QString action = args.value(0);
    const QString policyKey = QStringLiteral("policy");
    if (action == QStringLiteral("get") && args.size() == 2) {
        const auto result = call(protocol::method::PolicyGet, {{kName, args.at(1)}});
        if (!result)
            return ExitFailed;
        printJson(m_json ? *result : result->toObject().value(policyKey));
        return ExitOk;
    }
    if (action == QStringLiteral("set") && args.size() == 3) {
        const auto policy = readPolicyFile(args.at(2));
        if (!policy)
            return ExitFailed;
        const auto result =
            call(protocol::method::PolicySet, {{kName, args.at(1)}, {policyKey, *policy}});
        if (!result)
            return ExitFailed;
        if (m_json) {
            printJson(*result);
        } else {
            const qsizetype rules = result->toObject()
                                        .value(policyKey)
                                        .toObject()
                                        .value(QStringLiteral("rules"))
                                        .toArray()
                                        .size();
            m_out << "set the egress policy of sandbox " << quoted(args.at(1)) << " (" << rules
                  << (rules == 1 ? " rule)" : " rules)") << Qt::endl;
        }
        return ExitOk;
    }
    if (action == QStringLiteral("validate") && args.size() == 2) {
        const auto policy = readPolicyFile(args.at(1));
        if (!policy)
            return ExitFailed;
        const auto result = call(protocol::method::PolicyValidate, {{policyKey, *policy}});
        if (!result)
            return ExitFailed;
        const QJsonObject answer = result->toObject();
        const bool valid = answer.value(QStringLiteral("valid")).toBool();
        if (m_json) {
            printJson(answer);
        } else if (valid) {
            m_out << args.at(1) << ": valid" << Qt::endl;
        } else {
            for (const QJsonValue &error : answer.value(QStringLiteral("errors")).toArray())
                m_err << args.at(1) << ": "
                      << error.toObject().value(QStringLiteral("message")).toString() << "\n";
            m_err.flush();
        }
        return valid ? ExitOk : ExitFailed;
    }
    return usageError(
        QStringLiteral("usage: airlockctl policy get NAME | set NAME FILE | validate FILE"),
        command);
}

void CommandRunner::printEgress(qint64 seq, const QJsonObject &event)
{
    if (m_json)
        m_out << QString::fromUtf8(QJsonDocument(QJsonObject {{QStringLiteral("seq"), seq},
                                                              {QStringLiteral("event"), event}})
                                       .toJson(QJsonDocument::Compact))
              << "\n";
    else
        m_out << formatEgressRow(event);
    m_out.flush();
}

int CommandRunner::cmdEgress(QCommandLineParser &parser)
{
    const QString name = parser.positionalArguments().first();
    bool ok = false;
    const int limit = parser.value(QStringLiteral("limit")).toInt(&ok);
    if (!ok || limit < 1 || limit > 1000)
        return usageError(QStringLiteral("--limit: '%1' is not a number from 1 to 1000")
                              .arg(parser.value(QStringLiteral("limit"))),
                          QStringLiteral("egress"));
    const bool follow = parser.isSet(QStringLiteral("follow"));
    // Subscribe before reading the history, so nothing falls between the two; seqs dedupe.
    if (follow && !call(protocol::method::EventsSubscribe, {}))
        return ExitFailed;
    QList<std::pair<qint64, QJsonObject>> pending;
    if (follow) {
        QObject::connect(m_client.get(), &HelperClient::notificationReceived, m_client.get(),
                         [&pending, name](const QString &method, const QJsonObject &params) {
                             if (method == QLatin1String(protocol::notification::EgressEvent)
                                 && params.value(QStringLiteral("sandbox")).toString() == name)
                                 pending.append({params.value(QStringLiteral("seq")).toInteger(),
                                                 params.value(QStringLiteral("event")).toObject()});
                         });
    }
    const auto result =
        call(protocol::method::EgressHistory, {{kName, name}, {QStringLiteral("limit"), limit}});
    if (!result)
        return ExitFailed;
    const QJsonArray events = result->toObject().value(QStringLiteral("events")).toArray();
    if (m_json && !follow) {
        printJson(*result);
        return ExitOk;
    }
    if (!m_json)
        m_out << formatEgressHeader();
    qint64 lastSeq = 0;
    for (const QJsonValue &value : events) {
        const QJsonObject entry = value.toObject();
        lastSeq = entry.value(QStringLiteral("seq")).toInteger();
        printEgress(lastSeq, entry.value(QStringLiteral("event")).toObject());
    }
    if (!m_json && events.isEmpty() && !follow)
        m_out << "no egress events for sandbox " << quoted(name) << Qt::endl;
    if (!follow)
        return ExitOk;
    QEventLoop loop;
    auto flush = [&] {
        for (const auto &[seq, event] : std::as_const(pending)) {
            if (seq > lastSeq) {
                lastSeq = seq;
                printEgress(seq, event);
            }
        }
        pending.clear();
    };
    flush();
    QObject::connect(m_client.get(), &HelperClient::notificationReceived, &loop,
                     [&](const QString &, const QJsonObject &) { flush(); });
    QObject::connect(m_client.get(), &HelperClient::connectionLost, &loop, [&](const Error &error) {
        m_err << "airlockctl: " << error.message << Qt::endl;
        loop.quit();
    });
    loop.exec();
    return ExitFailed;
}

int CommandRunner::cmdPause(QCommandLineParser &parser)
{
    return nameCommand(parser, protocol::method::VmPause, "paused");
}

int CommandRunner::cmdResume(QCommandLineParser &parser)
{
    return nameCommand(parser, protocol::method::VmResume, "resumed");
}

int CommandRunner::cmdSnapshot(QCommandLineParser &parser)
{
    const QStringList args = parser.positionalArguments();
    const QString action = args.value(0);
    const QString snapshotKey = QStringLiteral("snapshot");
    // Snapshot operations copy and hash guest memory: give them longer than a sandbox call.
    constexpr int kTimeoutMs = 300000;
    const auto describe = [this](const QJsonValue &value, const char *done) {
        const QJsonObject s = value.toObject();
        if (m_json) {
            printJson(s);
            return ExitOk;
        }
        m_out << done << " snapshot " << s.value(QStringLiteral("id")).toString() << " of "
              << quoted(s.value(QStringLiteral("sandbox")).toString());
        if (!s.value(QStringLiteral("label")).toString().isEmpty())
            m_out << " (" << s.value(QStringLiteral("label")).toString() << ")";
        m_out << Qt::endl;
        return ExitOk;
    };
    if (action == QStringLiteral("create") && args.size() == 2) {
        QJsonObject params {{kName, args.at(1)}};
        if (parser.isSet(QStringLiteral("label")))
            params.insert(QStringLiteral("label"), parser.value(QStringLiteral("label")));
        const auto result = call(protocol::method::SnapshotCreate, params, kTimeoutMs);
        if (!result)
            return ExitFailed;
        if (m_json)
            return describe(*result, "");
        const QJsonObject s = result->toObject();
        m_out << "created snapshot " << s.value(QStringLiteral("id")).toString() << " of "
              << quoted(args.at(1)) << ": "
              << formatBytes(s.value(QStringLiteral("logicalBytes")).toInteger()) << ", "
              << formatBytes(s.value(QStringLiteral("newBytes")).toInteger()) << " new ("
              << formatBytes(s.value(QStringLiteral("newStoredBytes")).toInteger())
              << " stored), guest paused " << s.value(QStringLiteral("pauseMs")).toInteger()
              << " ms" << Qt::endl;
        return ExitOk;
    }
    if (action == QStringLiteral("ls") && args.size() == 2) {
        const auto result = call(protocol::method::SnapshotList, {{kName, args.at(1)}});
        if (!result)
            return ExitFailed;
        if (m_json)
            printJson(*result);
        else
            m_out << formatSnapshotTable(result->toObject()) << Qt::flush;
        return ExitOk;
    }
    if (action == QStringLiteral("restore") && args.size() == 3) {
        const auto result = call(protocol::method::SnapshotRestore,
                                 {{kName, args.at(1)}, {snapshotKey, args.at(2)}}, kTimeoutMs);
        if (!result)
            return ExitFailed;
        if (m_json) {
            printJson(*result);
            return ExitOk;
        }
        const QJsonValue safety = result->toObject().value(QStringLiteral("safety"));
        m_out << "restored sandbox " << quoted(args.at(1)) << " to snapshot " << args.at(2);
        if (safety.isObject())
            m_out << " (safety snapshot "
                  << safety.toObject().value(QStringLiteral("id")).toString() << ")";
        m_out << Qt::endl;
        warnIdentity(result->toObject().value(QStringLiteral("sandbox")).toObject());
        return ExitOk;
    }
    if (action == QStringLiteral("fork") && args.size() == 3) {
        const bool withBindings = parser.isSet(QStringLiteral("with-bindings"));
        const auto result = call(protocol::method::SnapshotFork,
                                 {{snapshotKey, args.at(1)},
                                  {kName, args.at(2)},
                                  {QStringLiteral("bindings"), withBindings}},
                                 kTimeoutMs);
        if (!result)
            return ExitFailed;
        if (m_json) {
            printJson(*result);
            return ExitOk;
        }
        const int copied = result->toObject().value(QStringLiteral("bindingsCopied")).toInt();
        m_out << "forked sandbox " << quoted(args.at(2)) << " from snapshot " << args.at(1) << "; "
              << (withBindings
                      ? QStringLiteral("%1 credential binding%2 copied with new placeholders")
                            .arg(copied)
                            .arg(copied == 1 ? QString() : QStringLiteral("s"))
                      : QStringLiteral("no credential bindings copied (--with-bindings copies "
                                       "them)"))
              << Qt::endl;
        // Bindings of other users' secrets stay behind (docs/credentials.md, "Trust model").
        if (const QString leftOut =
                result->toObject().value(QStringLiteral("bindingsLeftOutReason")).toString();
            !leftOut.isEmpty())
            m_err << "airlockctl: " << leftOut << Qt::endl;
        warnIdentity(result->toObject());
        return ExitOk;
    }
    if (action == QStringLiteral("rm") && args.size() == 2) {
        const auto result = call(protocol::method::SnapshotDelete, {{snapshotKey, args.at(1)}});
        if (!result)
            return ExitFailed;
        if (m_json)
            printJson(*result);
        else
            m_out << "removed snapshot " << args.at(1) << Qt::endl;
        return ExitOk;
    }
    if ((action == QStringLiteral("pin") || action == QStringLiteral("unpin"))
        && args.size() == 2) {
        const bool pin = action == QStringLiteral("pin");
        const auto result = call(protocol::method::SnapshotPin,
                                 {{snapshotKey, args.at(1)}, {QStringLiteral("pinned"), pin}});
        if (!result)
            return ExitFailed;
        return describe(*result, pin ? "pinned" : "unpinned");
    }
    if (action == QStringLiteral("rename") && args.size() == 3) {
        const auto result =
            call(protocol::method::SnapshotRename,
                 {{snapshotKey, args.at(1)}, {QStringLiteral("label"), args.at(2)}});
        if (!result)
            return ExitFailed;
        return describe(*result, "renamed");
    }
    if (action == QStringLiteral("schedule") && args.size() == 2) {
        QJsonObject schedule;
        for (const auto &[option, key] :
             {std::pair {"interval", "intervalMinutes"}, std::pair {"hourly", "hourlyHours"},
              std::pair {"daily", "dailyDays"}}) {
            if (!parser.isSet(QLatin1String(option)))
                continue;
            bool ok = false;
            const int value = parser.value(QLatin1String(option)).toInt(&ok);
            if (!ok)
                return usageError(
                    QStringLiteral("--%1: '%2' is not a whole number")
                        .arg(QLatin1String(option), parser.value(QLatin1String(option))),
                    QStringLiteral("snapshot"));
            schedule.insert(QLatin1String(key), value);
        }
        QJsonObject params {{kName, args.at(1)}};
        if (!schedule.isEmpty()) {
            // Unset fields keep their current values.
            const auto current = call(protocol::method::SnapshotSchedule, params);
            if (!current)
                return ExitFailed;
            QJsonObject merged = current->toObject();
            for (auto it = schedule.begin(); it != schedule.end(); ++it)
                merged.insert(it.key(), it.value());
            params.insert(QStringLiteral("schedule"), merged);
        }
        const auto result = call(protocol::method::SnapshotSchedule, params);
        if (!result)
            return ExitFailed;
        if (m_json) {
            printJson(*result);
            return ExitOk;
        }
        const QJsonObject s = result->toObject();
        const int interval = s.value(QStringLiteral("intervalMinutes")).toInt();
        m_out << quoted(args.at(1)) << ": automatic snapshots "
              << (interval > 0 ? QStringLiteral("every %1 min").arg(interval)
                               : QStringLiteral("off"))
              << "; keep hourly " << s.value(QStringLiteral("hourlyHours")).toInt() << " h, daily "
              << s.value(QStringLiteral("dailyDays")).toInt() << " days" << Qt::endl;
        return ExitOk;
    }
    return usageError(QStringLiteral("usage: airlockctl snapshot create NAME [--label L] | ls NAME "
                                     "| restore NAME SNAP | fork SNAP NEWNAME [--with-bindings] | "
                                     "rm SNAP | pin SNAP | unpin SNAP | rename SNAP LABEL | "
                                     "schedule NAME [--interval MIN] [--hourly H] [--daily D]"),
                      QStringLiteral("snapshot"));
}

int CommandRunner::cmdTemplate(QCommandLineParser &parser)
{
    const QStringList args = parser.positionalArguments();
    const QString action = args.value(0);
    const auto printTemplates = [this](const QJsonArray &templates) {
        if (templates.isEmpty()) {
            m_out << "no templates (make one with: airlockctl template prepare)" << Qt::endl;
            return;
        }
        m_out << "ID                IMAGE     VCPUS  MEMORY    CREATED              CURRENT"
              << Qt::endl;
        for (const QJsonValue &value : templates) {
            const QJsonObject t = value.toObject();
            m_out << t.value(QStringLiteral("id")).toString().leftJustified(18)
                  << t.value(QStringLiteral("image")).toString().leftJustified(10)
                  << QString::number(t.value(QStringLiteral("vcpus")).toInt()).leftJustified(7)
                  << (QString::number(t.value(QStringLiteral("memoryMib")).toInt())
                      + QStringLiteral(" MiB"))
                         .leftJustified(10)
                  << QDateTime::fromString(t.value(QStringLiteral("createdAt")).toString(),
                                           Qt::ISODateWithMs)
                         .toLocalTime()
                         .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                         .leftJustified(21)
                  << (t.value(QStringLiteral("current")).toBool() ? "yes" : "no (stale)")
                  << Qt::endl;
        }
    };
    if (action == QStringLiteral("ls") && args.size() == 1) {
        const auto result = call(protocol::method::TemplateList, {});
        if (!result)
            return ExitFailed;
        if (m_json)
            printJson(*result);
        else
            printTemplates(result->toObject().value(QStringLiteral("templates")).toArray());
        return ExitOk;
    }
    if (action == QStringLiteral("prepare") && args.size() == 1) {
        QJsonObject params;
        if (parser.isSet(QStringLiteral("image")))
            params.insert(QStringLiteral("image"), parser.value(QStringLiteral("image")));
        for (const auto &[option, key] :
             {std::pair {"vcpus", "vcpus"}, std::pair {"memory", "memoryMib"}}) {
            if (!parser.isSet(QLatin1String(option)))
                continue;
            bool ok = false;
            const int value = parser.value(QLatin1String(option)).toInt(&ok);
            if (!ok)
                return usageError(
                    QStringLiteral("--%1: '%2' is not a whole number")
                        .arg(QLatin1String(option), parser.value(QLatin1String(option))),
                    QStringLiteral("template"));
            params.insert(QLatin1String(key), value);
        }
        auto result = call(protocol::method::TemplatePrepare, params, 30000, kShapeOptions);
        if (!result)
            return ExitFailed;
        // template.prepare answers at once; with --wait ask again until the template is there.
        QDeadlineTimer deadline(5 * 60 * 1000);
        while (parser.isSet(QStringLiteral("wait"))
               && !result->toObject().value(QStringLiteral("template")).isObject()) {
            if (!result->toObject().value(QStringLiteral("preparing")).toBool()) {
                m_err << "airlockctl: the template could not be prepared (the helper's log says "
                         "why)"
                      << Qt::endl;
                return ExitFailed;
            }
            if (deadline.hasExpired()) {
                m_err << "airlockctl: the template is not ready after 5 minutes" << Qt::endl;
                return ExitFailed;
            }
            QEventLoop pause;
            QTimer::singleShot(500, &pause, &QEventLoop::quit);
            pause.exec();
            result = call(protocol::method::TemplatePrepare, params);
            if (!result)
                return ExitFailed;
        }
        if (m_json) {
            printJson(*result);
            return ExitOk;
        }
        const QJsonValue made = result->toObject().value(QStringLiteral("template"));
        if (made.isObject())
            m_out << "template " << made.toObject().value(QStringLiteral("id")).toString()
                  << " of image " << made.toObject().value(QStringLiteral("image")).toString()
                  << " is ready" << Qt::endl;
        else
            m_out << "preparing a template (airlockctl template ls shows it when ready)"
                  << Qt::endl;
        return ExitOk;
    }
    return usageError(QStringLiteral("usage: airlockctl template ls | prepare [--image ID] "
                                     "[--vcpus N] [--memory MIB] [--wait]"),
                      QStringLiteral("template"));
}

} // namespace airlock::ctl

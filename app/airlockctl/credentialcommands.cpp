#include "app/airlockctl/credentialcommands.h"

#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/sandboxformat.h"
#include "core/model/secretvalue.h"
#include "core/protocol/methods.h"

#include <QJsonArray>

#include <openssl/crypto.h>

#include <cerrno>
#include <termios.h>
#include <unistd.h>

namespace airlock::ctl {

namespace {

// One byte over the helper's limit, so an oversized value is told apart from a full one.
constexpr qsizetype kReadLimit = SecretValue::kMaxBytes + 1;

// Reads a secret from `fd` until EOF (a pipe) or the end of one line (a terminal), and drops
// one trailing newline. Never from argv: argv is visible in /proc/PID/cmdline and shell history.
std::optional<QByteArray> readSecretFrom(int fd, bool oneLine)
{
    QByteArray value;
    char byte = 0;
    for (;;) {
        const ssize_t n = ::read(fd, &byte, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            OPENSSL_cleanse(value.data(), std::size_t(value.size()));
            return std::nullopt;
        }
        if (n == 0 || (oneLine && byte == '\n'))
            break;
        value.append(byte);
        if (value.size() >= kReadLimit)
            break;
    }
    byte = 0;
    if (value.endsWith('\n'))
        value.chop(1);
    if (value.endsWith('\r'))
        value.chop(1);
    return value;
}

// Echo off while a person types the value on a terminal (termios(3)).
class EchoOff
{
public:
    explicit EchoOff(int fd) : m_fd(fd)
    {
        if (::tcgetattr(fd, &m_saved) != 0)
            return;
        termios quiet = m_saved;
        quiet.c_lflag &= ~tcflag_t(ECHO);
        m_active = ::tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
    }
    ~EchoOff()
    {
        if (m_active)
            ::tcsetattr(m_fd, TCSAFLUSH, &m_saved);
    }
    EchoOff(const EchoOff &) = delete;
    EchoOff &operator=(const EchoOff &) = delete;

private:
    int m_fd;
    termios m_saved {};
    bool m_active = false;
};

} // namespace

QList<Command> CredentialCommands::commands()
{
    return {
        {.name = QStringLiteral("secret"),
         .summary = QStringLiteral("Store a secret in the helper's vault (set reads the value "
                                   "from standard input, never from the command line), list "
                                   "secrets without their values, or delete one that no binding "
                                   "uses (docs/credentials.md)."),
         .actions = {{.name = QStringLiteral("set"),
                      .arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&CredentialCommands::setSecret)},
                     {.name = QStringLiteral("ls"),
                      .handler = handler(&CredentialCommands::listSecrets),
                      .aliases = {QStringLiteral("list")}},
                     {.name = QStringLiteral("rm"),
                      .arguments = QStringLiteral("NAME"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&CredentialCommands::removeSecret),
                      .aliases = {QStringLiteral("delete")}}}},
        {.name = QStringLiteral("binding"),
         .summary = QStringLiteral("Let a sandbox's gateway inject a secret into https requests "
                                   "to exactly HOST (port 443), by default as 'Authorization: "
                                   "Bearer {secret}'; the guest only holds a placeholder."),
         .options = {QCommandLineOption(QStringLiteral("path"),
                                        QStringLiteral("Only requests whose path starts with "
                                                       "PREFIX."),
                                        QStringLiteral("PREFIX")),
                     QCommandLineOption(QStringLiteral("method"),
                                        QStringLiteral("Only this method (repeatable), e.g. GET."),
                                        QStringLiteral("M")),
                     QCommandLineOption(QStringLiteral("header"),
                                        QStringLiteral("Header to set (default Authorization)."),
                                        QStringLiteral("NAME")),
                     QCommandLineOption(QStringLiteral("template"),
                                        QStringLiteral("Header value with {secret} once (default "
                                                       "'Bearer {secret}')."),
                                        QStringLiteral("T")),
                     QCommandLineOption(QStringLiteral("basic"),
                                        QStringLiteral("HTTP basic authentication as USER (RFC "
                                                       "7617)."),
                                        QStringLiteral("USER"))},
         .actions = {{.name = QStringLiteral("add"),
                      .arguments = QStringLiteral("SANDBOX SECRET HOST [--path PREFIX] [--method "
                                                  "M]... [--header NAME] [--template T | --basic "
                                                  "USER]"),
                      .minArguments = 3,
                      .maxArguments = 3,
                      .handler = handler(&CredentialCommands::addBinding)},
                     {.name = QStringLiteral("ls"),
                      .arguments = QStringLiteral("[SANDBOX]"),
                      .minArguments = 0,
                      .maxArguments = 1,
                      .handler = handler(&CredentialCommands::listBindings),
                      .aliases = {QStringLiteral("list")}},
                     {.name = QStringLiteral("rm"),
                      .arguments = QStringLiteral("ID"),
                      .minArguments = 1,
                      .maxArguments = 1,
                      .handler = handler(&CredentialCommands::removeBinding),
                      .aliases = {QStringLiteral("remove")}}}},
    };
}

int CredentialCommands::setSecret(const Invocation &invocation)
{
    const QString name = invocation.arguments.at(0);
    const bool terminal = ::isatty(STDIN_FILENO) == 1;
    std::optional<QByteArray> value;
    if (terminal) {
        m_err << "Value for secret '" << name << "' (input hidden): " << Qt::flush;
        EchoOff echoOff(STDIN_FILENO);
        value = readSecretFrom(STDIN_FILENO, true);
        m_err << Qt::endl;
    } else {
        value = readSecretFrom(STDIN_FILENO, false);
    }
    if (!value) {
        m_err << "airlockctl: cannot read the secret from standard input" << Qt::endl;
        return ExitFailed;
    }
    if (value->isEmpty() || value->size() > SecretValue::kMaxBytes) {
        OPENSSL_cleanse(value->data(), std::size_t(value->size()));
        m_err << "airlockctl: a secret value must hold 1 to " << SecretValue::kMaxBytes
              << " bytes (read from standard input)" << Qt::endl;
        return ExitFailed;
    }
    const auto result = call(protocol::method::SecretSet,
                             {{kName, name}, {QStringLiteral("value"), QString::fromUtf8(*value)}});
    OPENSSL_cleanse(value->data(), std::size_t(value->size()));
    if (!result)
        return ExitFailed;
    if (json())
        printJson(*result);
    else
        m_out << "stored secret '" << name << "' (fingerprint "
              << result->toObject().value(QStringLiteral("fingerprint")).toString() << ")"
              << Qt::endl;
    return ExitOk;
}

int CredentialCommands::listSecrets(const Invocation &)
{
    const auto result = call(protocol::method::SecretList, {});
    if (!result)
        return ExitFailed;
    const QJsonArray secrets = result->toObject().value(QStringLiteral("secrets")).toArray();
    if (json())
        printJson(*result);
    else if (secrets.isEmpty())
        m_out << "no secrets (store one with: airlockctl secret set NAME < file)" << Qt::endl;
    else
        m_out << formatSecretTable(secrets) << Qt::flush;
    return ExitOk;
}

int CredentialCommands::removeSecret(const Invocation &invocation)
{
    const QString name = invocation.arguments.at(0);
    const auto result = call(protocol::method::SecretDelete, {{kName, name}});
    if (!result)
        return ExitFailed;
    if (json())
        printJson(*result);
    else
        m_out << "deleted secret '" << name << "'" << Qt::endl;
    return ExitOk;
}

int CredentialCommands::addBinding(const Invocation &invocation)
{
    const QStringList &args = invocation.arguments;
    const QCommandLineParser &options = invocation.options;
    QJsonObject params {{QStringLiteral("sandbox"), args.at(0)},
                        {QStringLiteral("secret"), args.at(1)},
                        {QStringLiteral("host"), args.at(2)}};
    if (options.isSet(QStringLiteral("path")))
        params.insert(QStringLiteral("pathPrefix"), options.value(QStringLiteral("path")));
    if (options.isSet(QStringLiteral("method")))
        params.insert(QStringLiteral("methods"),
                      QJsonArray::fromStringList(options.values(QStringLiteral("method"))));
    const bool basic = options.isSet(QStringLiteral("basic"));
    if (basic
        && (options.isSet(QStringLiteral("header")) || options.isSet(QStringLiteral("template"))))
        return usageError(invocation,
                          QStringLiteral("--basic and --header/--template exclude each other"));
    if (basic) {
        params.insert(
            QStringLiteral("placement"),
            QJsonObject {{QStringLiteral("type"), QStringLiteral("basic")},
                         {QStringLiteral("username"), options.value(QStringLiteral("basic"))}});
    } else {
        QJsonObject placement {{QStringLiteral("type"), QStringLiteral("header")}};
        if (options.isSet(QStringLiteral("header")))
            placement.insert(QStringLiteral("header"), options.value(QStringLiteral("header")));
        if (options.isSet(QStringLiteral("template")))
            placement.insert(QStringLiteral("template"), options.value(QStringLiteral("template")));
        params.insert(QStringLiteral("placement"), placement);
    }
    const auto result = call(protocol::method::BindingAdd, params);
    if (!result)
        return ExitFailed;
    const QJsonObject binding = result->toObject();
    if (json())
        printJson(*result);
    else
        m_out << "added binding " << binding.value(QStringLiteral("id")).toInteger()
              << ": sandbox '" << args.at(0) << "' gets secret '" << args.at(1)
              << "' injected for https://" << binding.value(QStringLiteral("host")).toString()
              << "; the guest holds a placeholder in $"
              << binding.value(QStringLiteral("placeholderVariable")).toString() << Qt::endl;
    return ExitOk;
}

int CredentialCommands::listBindings(const Invocation &invocation)
{
    QJsonObject params;
    if (!invocation.arguments.isEmpty())
        params.insert(QStringLiteral("sandbox"), invocation.arguments.at(0));
    const auto result = call(protocol::method::BindingList, params);
    if (!result)
        return ExitFailed;
    const QJsonArray bindings = result->toObject().value(QStringLiteral("bindings")).toArray();
    if (json())
        printJson(*result);
    else if (bindings.isEmpty())
        m_out << "no bindings" << Qt::endl;
    else
        m_out << formatBindingTable(bindings) << Qt::flush;
    return ExitOk;
}

int CredentialCommands::removeBinding(const Invocation &invocation)
{
    bool ok = false;
    const qint64 id = invocation.arguments.at(0).toLongLong(&ok);
    if (!ok || id <= 0)
        return usageError(invocation,
                          QStringLiteral("'%1' is not a binding id (see airlockctl binding ls)")
                              .arg(invocation.arguments.at(0)));
    const auto result = call(protocol::method::BindingRemove, {{QStringLiteral("id"), id}});
    if (!result)
        return ExitFailed;
    if (json())
        printJson(*result);
    else
        m_out << "removed binding " << id << Qt::endl;
    return ExitOk;
}

} // namespace airlock::ctl

// `airlockctl secret ...` and `airlockctl binding ...` (docs/airlockctl.md, docs/credentials.md).
#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/sandboxformat.h"
#include "core/model/secretvalue.h"
#include "core/protocol/methods.h"

#include <QCommandLineParser>
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

int CommandRunner::cmdSecret(QCommandLineParser &parser)
{
    const QStringList args = parser.positionalArguments();
    const QString command = QStringLiteral("secret");
    const QString action = args.value(0);
    const QString nameKey = QStringLiteral("name");
    if (action == QStringLiteral("set") && args.size() == 2) {
        const bool terminal = ::isatty(STDIN_FILENO) == 1;
        std::optional<QByteArray> value;
        if (terminal) {
            m_err << "Value for secret '" << args.at(1) << "' (input hidden): " << Qt::flush;
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
        const auto result =
            call(protocol::method::SecretSet,
                 {{nameKey, args.at(1)}, {QStringLiteral("value"), QString::fromUtf8(*value)}});
        OPENSSL_cleanse(value->data(), std::size_t(value->size()));
        if (!result)
            return ExitFailed;
        if (m_json)
            printJson(*result);
        else
            m_out << "stored secret '" << args.at(1) << "' (fingerprint "
                  << result->toObject().value(QStringLiteral("fingerprint")).toString() << ")"
                  << Qt::endl;
        return ExitOk;
    }
    if ((action == QStringLiteral("ls") || action == QStringLiteral("list")) && args.size() == 1) {
        const auto result = call(protocol::method::SecretList, {});
        if (!result)
            return ExitFailed;
        const QJsonArray secrets = result->toObject().value(QStringLiteral("secrets")).toArray();
        if (m_json)
            printJson(*result);
        else if (secrets.isEmpty())
            m_out << "no secrets (store one with: airlockctl secret set NAME < file)" << Qt::endl;
        else
            m_out << formatSecretTable(secrets) << Qt::flush;
        return ExitOk;
    }
    if ((action == QStringLiteral("rm") || action == QStringLiteral("delete"))
        && args.size() == 2) {
        const auto result = call(protocol::method::SecretDelete, {{nameKey, args.at(1)}});
        if (!result)
            return ExitFailed;
        if (m_json)
            printJson(*result);
        else
            m_out << "deleted secret '" << args.at(1) << "'" << Qt::endl;
        return ExitOk;
    }
    return usageError(QStringLiteral("usage: airlockctl secret set NAME | ls | rm NAME"), command);
}

int CommandRunner::cmdBinding(QCommandLineParser &parser)
{
    const QStringList args = parser.positionalArguments();
    const QString command = QStringLiteral("binding");
    const QString action = args.value(0);
    if (action == QStringLiteral("add") && args.size() == 4) {
        QJsonObject params {{QStringLiteral("sandbox"), args.at(1)},
                            {QStringLiteral("secret"), args.at(2)},
                            {QStringLiteral("host"), args.at(3)}};
        if (parser.isSet(QStringLiteral("path")))
            params.insert(QStringLiteral("pathPrefix"), parser.value(QStringLiteral("path")));
        if (parser.isSet(QStringLiteral("method")))
            params.insert(QStringLiteral("methods"),
                          QJsonArray::fromStringList(parser.values(QStringLiteral("method"))));
        const bool basic = parser.isSet(QStringLiteral("basic"));
        if (basic
            && (parser.isSet(QStringLiteral("header")) || parser.isSet(QStringLiteral("template"))))
            return usageError(QStringLiteral("--basic and --header/--template exclude each other"),
                              command);
        if (basic) {
            params.insert(
                QStringLiteral("placement"),
                QJsonObject {{QStringLiteral("type"), QStringLiteral("basic")},
                             {QStringLiteral("username"), parser.value(QStringLiteral("basic"))}});
        } else {
            QJsonObject placement {{QStringLiteral("type"), QStringLiteral("header")}};
            if (parser.isSet(QStringLiteral("header")))
                placement.insert(QStringLiteral("header"), parser.value(QStringLiteral("header")));
            if (parser.isSet(QStringLiteral("template")))
                placement.insert(QStringLiteral("template"),
                                 parser.value(QStringLiteral("template")));
            params.insert(QStringLiteral("placement"), placement);
        }
        const auto result = call(protocol::method::BindingAdd, params);
        if (!result)
            return ExitFailed;
        const QJsonObject binding = result->toObject();
        if (m_json)
            printJson(*result);
        else
            m_out << "added binding " << binding.value(QStringLiteral("id")).toInteger()
                  << ": sandbox '" << args.at(1) << "' gets secret '" << args.at(2)
                  << "' injected for https://" << binding.value(QStringLiteral("host")).toString()
                  << "; the guest holds a placeholder in $"
                  << binding.value(QStringLiteral("placeholderVariable")).toString() << Qt::endl;
        return ExitOk;
    }
    if ((action == QStringLiteral("ls") || action == QStringLiteral("list")) && args.size() <= 2) {
        QJsonObject params;
        if (args.size() == 2)
            params.insert(QStringLiteral("sandbox"), args.at(1));
        const auto result = call(protocol::method::BindingList, params);
        if (!result)
            return ExitFailed;
        const QJsonArray bindings = result->toObject().value(QStringLiteral("bindings")).toArray();
        if (m_json)
            printJson(*result);
        else if (bindings.isEmpty())
            m_out << "no bindings" << Qt::endl;
        else
            m_out << formatBindingTable(bindings) << Qt::flush;
        return ExitOk;
    }
    if ((action == QStringLiteral("rm") || action == QStringLiteral("remove"))
        && args.size() == 2) {
        bool ok = false;
        const qint64 id = args.at(1).toLongLong(&ok);
        if (!ok || id <= 0)
            return usageError(QStringLiteral("'%1' is not a binding id (see airlockctl binding ls)")
                                  .arg(args.at(1)),
                              command);
        const auto result = call(protocol::method::BindingRemove, {{QStringLiteral("id"), id}});
        if (!result)
            return ExitFailed;
        if (m_json)
            printJson(*result);
        else
            m_out << "removed binding " << id << Qt::endl;
        return ExitOk;
    }
    return usageError(
        QStringLiteral("usage: airlockctl binding add SANDBOX SECRET HOST [options] | "
                       "ls [SANDBOX] | rm ID"),
        command);
}

} // namespace airlock::ctl

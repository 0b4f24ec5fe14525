#include "app/airlockctl/guestcommands.h"

#include "app/airlockctl/commandrunner.h"
#include "app/airlockctl/execrunner.h"
#include "core/client/helperclient.h"
#include "core/model/names.h"
#include "core/protocol/methods.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QRegularExpression>

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace airlock::ctl {

namespace {

namespace method = protocol::method;

const QString kEnv = QStringLiteral("env");
const QString kCwd = QStringLiteral("cwd");
const QString kUser = QStringLiteral("user");
const QString kTimeout = QStringLiteral("timeout");
const QString kInteractive = QStringLiteral("interactive");
const QString kTty = QStringLiteral("tty");

/// Bytes per files.read / files.write call (the helper's limit).
constexpr qint64 kChunkBytes = 512 * 1024;
constexpr int kFileCallTimeoutMs = 60000;

/// "NAME:/path" → (NAME, /path); std::nullopt for a host path.
std::optional<std::pair<QString, QString>> guestLocation(const QString &argument)
{
    static const QRegularExpression pattern(QStringLiteral("^([a-z0-9][a-z0-9-]{0,62}):(/.*)$"));
    const QRegularExpressionMatch match = pattern.match(argument);
    if (!match.hasMatch())
        return std::nullopt;
    return std::pair {match.captured(1), match.captured(2)};
}

} // namespace

QList<Command> GuestCommands::commands()
{
    return {
        {.name = QStringLiteral("exec"),
         .summary = QStringLiteral(
             "Run a command in a running sandbox through its guest agent (no network needed). "
             "Its stdout and stderr stay apart; its exit status becomes airlockctl's (128+N "
             "for signal N, 125 when it could not run)."),
         .options = {QCommandLineOption(kEnv, QStringLiteral("Set NAME=VALUE (repeatable)."),
                                        QStringLiteral("NAME=VALUE")),
                     QCommandLineOption(kCwd, QStringLiteral("Working folder in the guest."),
                                        QStringLiteral("DIR")),
                     QCommandLineOption(kUser, QStringLiteral("Guest user (root, agent, ...)."),
                                        QStringLiteral("USER")),
                     QCommandLineOption(kTimeout,
                                        QStringLiteral("Kill its process group after SECONDS."),
                                        QStringLiteral("SECONDS")),
                     QCommandLineOption({QStringLiteral("i"), kInteractive},
                                        QStringLiteral("Forward stdin to the command.")),
                     QCommandLineOption({QStringLiteral("t"), kTty},
                                        QStringLiteral("Run it on a pseudo terminal."))},
         .actions = {{.arguments = QStringLiteral("NAME [options] -- CMD [ARG...]"),
                      .minArguments = 2,
                      .maxArguments = 100000,
                      .handler = handler(&GuestCommands::exec)}}},
        {.name = QStringLiteral("cp"),
         .summary =
             QStringLiteral("Copy a file into or out of a running sandbox: "
                            "cp NAME:/guest/path HOSTPATH, or cp HOSTPATH NAME:/guest/path."),
         .actions = {{.arguments = QStringLiteral("SOURCE DEST"),
                      .minArguments = 2,
                      .maxArguments = 2,
                      .handler = handler(&GuestCommands::copy)}}},
    };
}

int GuestCommands::exec(const Invocation &invocation)
{
    const QString &name = invocation.arguments.first();
    if (auto valid = validateName(name); !valid)
        return usageError(invocation, valid.error().message);
    QJsonArray argv;
    for (const QString &arg : invocation.arguments.mid(1))
        argv.append(arg);
    QJsonObject start {{kName, name}, {QStringLiteral("argv"), argv}};
    QJsonObject env;
    for (const QString &pair : invocation.options.values(kEnv)) {
        const qsizetype equals = pair.indexOf(u'=');
        if (equals <= 0)
            return usageError(invocation,
                              QStringLiteral("--env: '%1' is not NAME=VALUE").arg(pair));
        env.insert(pair.first(equals), pair.mid(equals + 1));
    }
    if (!env.isEmpty())
        start.insert(kEnv, env);
    if (invocation.options.isSet(kCwd))
        start.insert(kCwd, invocation.options.value(kCwd));
    if (invocation.options.isSet(kUser))
        start.insert(kUser, invocation.options.value(kUser));
    if (invocation.options.isSet(kTimeout)) {
        bool ok = false;
        const double seconds = invocation.options.value(kTimeout).toDouble(&ok);
        if (!ok || seconds <= 0 || seconds > 86400 * 7)
            return usageError(invocation,
                              QStringLiteral("--timeout: '%1' is not a number of "
                                             "seconds")
                                  .arg(invocation.options.value(kTimeout)));
        start.insert(QStringLiteral("timeoutMs"), qint64(seconds * 1000));
    }
    if (invocation.options.isSet(kInteractive))
        start.insert(QStringLiteral("stdin"), true);
    if (invocation.options.isSet(kTty)) {
        winsize size {};
        const bool known =
            ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0 && size.ws_col > 0;
        start.insert(QStringLiteral("pty"),
                     QJsonObject {{QStringLiteral("rows"), known ? int(size.ws_row) : 24},
                                  {QStringLiteral("cols"), known ? int(size.ws_col) : 80}});
    }
    if (!m_runner.connectHelper())
        return ExecRunner::kExitUnavailable;
    m_out.flush();
    m_err.flush();
    ExecRunner runner(m_runner.client(), start, STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, m_err);
    return runner.run();
}

int GuestCommands::copy(const Invocation &invocation)
{
    const QString &source = invocation.arguments.at(0);
    const QString &destination = invocation.arguments.at(1);
    const auto from = guestLocation(source);
    const auto to = guestLocation(destination);
    if (from.has_value() == to.has_value())
        return usageError(invocation,
                          QStringLiteral("one of SOURCE and DEST must be NAME:/path in a sandbox, "
                                         "the other a host path"));
    if (!m_runner.connectHelper())
        return ExitFailed;
    return from ? download(from->first, from->second, destination)
                : upload(source, to->first, to->second);
}

int GuestCommands::download(const QString &sandbox, const QString &guestPath,
                            const QString &hostPath)
{
    QString target = hostPath;
    if (QFileInfo(target).isDir())
        target = QDir(target).filePath(QFileInfo(guestPath).fileName());
    QFile file(target);
    // As the calling user, like cp: no helper ever opens this path.
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        m_err << "airlockctl: cannot write " << target << ": " << file.errorString() << Qt::endl;
        return ExitFailed;
    }
    qint64 offset = 0;
    for (;;) {
        const auto answer = call(method::FilesRead,
                                 {{kName, sandbox},
                                  {QStringLiteral("path"), guestPath},
                                  {QStringLiteral("offset"), offset},
                                  {QStringLiteral("length"), kChunkBytes}},
                                 kFileCallTimeoutMs);
        if (!answer) {
            file.remove();
            return ExitFailed;
        }
        const QByteArray data = QByteArray::fromBase64(
            answer->toObject().value(QStringLiteral("data")).toString().toLatin1());
        if (file.write(data) != data.size()) {
            m_err << "airlockctl: cannot write " << target << ": " << file.errorString()
                  << Qt::endl;
            return ExitFailed;
        }
        offset += data.size();
        if (answer->toObject().value(QStringLiteral("eof")).toBool())
            break;
    }
    if (!json())
        m_out << "copied " << offset << " bytes to " << target << Qt::endl;
    return ExitOk;
}

int GuestCommands::upload(const QString &hostPath, const QString &sandbox, const QString &guestPath)
{
    QFile file(hostPath);
    if (!file.open(QIODevice::ReadOnly)) {
        m_err << "airlockctl: cannot read " << hostPath << ": " << file.errorString() << Qt::endl;
        return ExitFailed;
    }
    QString target = guestPath;
    const auto stat = m_runner.client()->callSync(
        QString::fromLatin1(method::FilesStat),
        {{kName, sandbox}, {QStringLiteral("path"), guestPath}, {QStringLiteral("follow"), true}},
        kFileCallTimeoutMs);
    if (stat && stat->toObject().value(QStringLiteral("type")) == QLatin1String("directory"))
        target = guestPath + (guestPath.endsWith(u'/') ? QString() : QStringLiteral("/"))
            + QFileInfo(hostPath).fileName();
    // The permission bits travel (an executable stays one); setuid and setgid do not.
    struct stat info
    {
    };
    const int mode = ::fstat(file.handle(), &info) == 0 ? int(info.st_mode & 0777) : 0644;
    qint64 written = 0;
    bool first = true;
    while (first || !file.atEnd()) {
        const QByteArray data = file.read(kChunkBytes);
        if (data.isEmpty() && !first)
            break;
        const auto answer = call(method::FilesWrite,
                                 {{kName, sandbox},
                                  {QStringLiteral("path"), target},
                                  {QStringLiteral("data"), QString::fromLatin1(data.toBase64())},
                                  {QStringLiteral("append"), !first},
                                  {QStringLiteral("mode"), mode}},
                                 kFileCallTimeoutMs);
        if (!answer)
            return ExitFailed;
        written += data.size();
        first = false;
    }
    if (!json())
        m_out << "copied " << written << " bytes to " << sandbox << ':' << target << Qt::endl;
    return ExitOk;
}

} // namespace airlock::ctl

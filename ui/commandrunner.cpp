#include "ui/commandrunner.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QPointer>

namespace airlock {

namespace {

QString key(const char *name)
{
    return QString::fromLatin1(name);
}

} // namespace

CommandExit CommandExit::fromJson(const QJsonObject &params)
{
    CommandExit exit;
    if (params.contains(QStringLiteral("exitCode"))) {
        exit.kind = Kind::Exited;
        exit.exitCode = params.value(QStringLiteral("exitCode")).toInt();
    } else if (params.contains(QStringLiteral("signal"))) {
        exit.kind = Kind::Signalled;
        exit.signal = params.value(QStringLiteral("signal")).toInt();
        exit.timedOut = params.value(QStringLiteral("timedOut")).toBool();
    } else {
        exit.kind = Kind::Failed;
        const QJsonObject error = params.value(QStringLiteral("error")).toObject();
        exit.error.kind = errorKindFromName(error.value(QStringLiteral("kind")).toString())
                              .value_or(ErrorKind::AgentUnavailable);
        exit.error.message = error.value(QStringLiteral("message")).toString();
    }
    return exit;
}

CommandRunner::CommandRunner(HelperClient *client, QString sandbox, QObject *parent)
    : QObject(parent), m_client(client), m_sandbox(std::move(sandbox))
{
    connect(m_client, &HelperClient::notificationReceived, this, &CommandRunner::onNotification);
    // Without the connection no exec.exit can come (the process runs on, detached).
    connect(m_client, &HelperClient::connectionLost, this, [this](const Error &error) {
        if (!m_running)
            return;
        m_running = false;
        CommandExit exit;
        exit.kind = CommandExit::Kind::Failed;
        exit.error = error;
        emit finished(exit);
    });
}

CommandRunner::~CommandRunner()
{
    if (m_running && m_pid != 0)
        stop();
}

bool CommandRunner::start(const QString &command, const QString &cwd, const QString &user)
{
    if (m_running || m_starting)
        return false;
    QJsonObject params {{QStringLiteral("name"), m_sandbox}, {QStringLiteral("command"), command}};
    if (!cwd.isEmpty())
        params.insert(QStringLiteral("cwd"), cwd);
    if (!user.isEmpty())
        params.insert(QStringLiteral("user"), user);
    m_starting = true;
    m_early.clear();
    const quint64 generation = ++m_generation;
    QPointer<CommandRunner> self(this);
    m_client->call(key(protocol::method::ExecStart), params,
                   [self, generation](const Result<QJsonValue> &answer) {
                       if (!self || generation != self->m_generation)
                           return;
                       self->m_starting = false;
                       if (!answer) {
                           self->m_early.clear();
                           emit self->failed(answer.error());
                           return;
                       }
                       self->m_pid = answer->toObject().value(QStringLiteral("pid")).toInteger();
                       self->m_running = true;
                       emit self->started(self->m_pid);
                       // What came before the answer was handled (the helper sends the answer
                       // first, but be robust to a client that reorders).
                       const auto early = std::exchange(self->m_early, {});
                       for (const auto &[method, p] : early) {
                           if (!self || !self->m_running)
                               return;
                           self->handle(method, p);
                       }
                   });
    return true;
}

void CommandRunner::stop(int signal)
{
    if (!m_running || m_pid == 0)
        return;
    QPointer<CommandRunner> self(this);
    m_client->call(key(protocol::method::ExecSignal),
                   {{QStringLiteral("name"), m_sandbox},
                    {QStringLiteral("pid"), m_pid},
                    {QStringLiteral("signal"), signal}},
                   [self](const Result<QJsonValue> &answer) {
                       // not_found: it ended meanwhile; its exec.exit says how.
                       if (self && !answer && answer.error().kind != ErrorKind::NotFound)
                           emit self->failed(answer.error());
                   });
}

void CommandRunner::onNotification(const QString &method, const QJsonObject &params)
{
    if (!method.startsWith(QLatin1String("exec."))
        || params.value(QStringLiteral("sandbox")).toString() != m_sandbox)
        return;
    if (m_starting) {
        m_early.append({method, params});
        return;
    }
    if (m_running)
        handle(method, params);
}

void CommandRunner::handle(const QString &method, const QJsonObject &params)
{
    if (params.value(QStringLiteral("pid")).toInteger() != m_pid)
        return;
    if (method == key(protocol::notification::ExecOutput)) {
        const QByteArray data =
            QByteArray::fromBase64(params.value(QStringLiteral("data")).toString().toLatin1());
        const Stream stream =
            params.value(QStringLiteral("stream")).toString() == QLatin1String("stderr")
            ? Stream::Stderr
            : Stream::Stdout;
        emit output(stream, data);
    } else if (method == key(protocol::notification::ExecExit)) {
        m_running = false;
        emit finished(CommandExit::fromJson(params));
    }
}

} // namespace airlock

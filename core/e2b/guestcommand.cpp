#include "core/e2b/guestcommand.h"

#include "core/client/helperclient.h"

#include <QJsonArray>

namespace airlock::e2b {

GuestCommand::GuestCommand(const E2bContext &context, QString sandbox, Done done)
    : QObject(context.helper)
    , m_context(context)
    , m_sandbox(std::move(sandbox))
    , m_done(std::move(done))
{
    connect(m_context.helper, &HelperClient::notificationReceived, this,
            &GuestCommand::onNotification);
    connect(m_context.helper, &HelperClient::connectionLost, this,
            [this](const Error &error) { finish(std::unexpected(error)); });
}

void GuestCommand::run(const E2bContext &context, const QString &sandbox, const QStringList &argv,
                       Done done, int timeoutMs)
{
    auto *command = new GuestCommand(context, sandbox, std::move(done));
    context.call(QStringLiteral("exec.start"),
                 {{QStringLiteral("name"), sandbox},
                  {QStringLiteral("argv"), QJsonArray::fromStringList(argv)},
                  {QStringLiteral("user"), QStringLiteral("root")},
                  {QStringLiteral("timeoutMs"), timeoutMs}},
                 [command](const Result<QJsonObject> &started) {
                     if (!started)
                         return command->finish(std::unexpected(started.error()));
                     // The helper answers before it forwards any output: nothing was missed.
                     command->m_pid = quint32(started->value(QStringLiteral("pid")).toInteger());
                 });
}

void GuestCommand::onNotification(const QString &method, const QJsonObject &params)
{
    if (m_finished || m_pid == 0 || params.value(QStringLiteral("sandbox")).toString() != m_sandbox
        || quint32(params.value(QStringLiteral("pid")).toInteger()) != m_pid)
        return;
    if (method == QLatin1String("exec.output")) {
        const QByteArray data =
            QByteArray::fromBase64(params.value(QStringLiteral("data")).toString().toLatin1());
        QByteArray &to =
            params.value(QStringLiteral("stream")).toString() == QLatin1String("stderr") ? m_err
                                                                                         : m_out;
        to.append(data.first(std::min(data.size(), kMaxOutputBytes - to.size())));
        return;
    }
    if (method != QLatin1String("exec.exit"))
        return;
    if (params.contains(QStringLiteral("error")))
        return finish(fail(ErrorKind::AgentUnavailable,
                           params.value(QStringLiteral("error"))
                               .toObject()
                               .value(QStringLiteral("message"))
                               .toString()));
    if (params.contains(QStringLiteral("signal"))
        || params.value(QStringLiteral("exitCode")).toInt() != 0)
        return finish(fail(ErrorKind::OperationFailed,
                           QStringLiteral("the guest command failed: %1")
                               .arg(QString::fromUtf8(m_err.left(400)).trimmed())));
    finish(m_out);
}

void GuestCommand::finish(const Result<QByteArray> &result)
{
    if (m_finished)
        return;
    m_finished = true;
    Done done = std::move(m_done);
    deleteLater();
    done(result);
}

} // namespace airlock::e2b

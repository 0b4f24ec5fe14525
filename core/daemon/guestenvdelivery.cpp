#include "core/daemon/guestenvdelivery.h"

#include "core/agent/agentclient.h"
#include "core/agent/agentwritestream.h"

#include <QLoggingCategory>
#include <QTimer>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcEnv, "airlock.daemon.credentials")
}

GuestEnvDelivery::GuestEnvDelivery(AgentApi::ClientLookup agents, SeedFiles seedFiles,
                                   QObject *parent)
    : QObject(parent), m_agents(std::move(agents)), m_seedFiles(std::move(seedFiles))
{ }

void GuestEnvDelivery::deliver(const QString &sandbox)
{
    if (const auto it = m_writing.find(sandbox); it != m_writing.end()) {
        it.value() = true; // written again once the current write is over
        return;
    }
    write(sandbox);
}

void GuestEnvDelivery::write(const QString &sandbox)
{
    auto files = m_seedFiles(sandbox);
    if (!files) // not running (or no network): the next start writes the seed
        return;
    QByteArray env;
    for (const SeedFile &file : std::as_const(*files)) {
        if (file.path == u"env")
            env = file.content;
    }
    auto client = m_agents(sandbox);
    if (!client) {
        const QString why = client.error().message;
        QTimer::singleShot(0, this, [this, sandbox, why] { written(sandbox, why); });
        m_writing.insert(sandbox, false);
        return;
    }
    m_writing.insert(sandbox, false);
    agentwire::WriteRequest request;
    request.path = kGuestPath;
    request.mode = 0600;
    agent::AgentWriteStream *stream = (*client)->writeFile(request);
    stream->writeAllAndFinish(env);
    connect(stream, &agent::AgentWriteStream::finished, this, [this, stream, sandbox] {
        stream->deleteLater();
        written(sandbox, {});
    });
    connect(stream, &agent::AgentStream::failed, this,
            [this, stream, sandbox](const agent::AgentError &error) {
                stream->deleteLater();
                written(sandbox, error.message);
            });
}

void GuestEnvDelivery::written(const QString &sandbox, const QString &error)
{
    const bool again = m_writing.take(sandbox);
    if (error.isEmpty()) {
        qCInfo(lcEnv, "%s: the guest's %s holds its bindings' placeholders", qPrintable(sandbox),
               kGuestPath);
        Q_EMIT delivered(sandbox);
    } else {
        qCWarning(lcEnv,
                  "%s: cannot rewrite the guest's %s (%s); it gets the file at its next "
                  "start",
                  qPrintable(sandbox), kGuestPath, qPrintable(error));
        Q_EMIT failed(sandbox, error);
    }
    if (again)
        write(sandbox);
}

} // namespace airlock

#include "ui/sandboxactions.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QJsonObject>
#include <QTimer>

#include <memory>

namespace airlock {

namespace {

const char *methodOf(SandboxActions::Action action)
{
    switch (action) {
    case SandboxActions::Action::Create:
        return protocol::method::SandboxCreate;
    case SandboxActions::Action::Start:
        return protocol::method::SandboxStart;
    case SandboxActions::Action::Stop:
        return protocol::method::SandboxStop;
    case SandboxActions::Action::Kill:
        return protocol::method::SandboxKill;
    case SandboxActions::Action::Pause:
        return protocol::method::VmPause;
    case SandboxActions::Action::Resume:
        return protocol::method::VmResume;
    case SandboxActions::Action::Delete:
        return protocol::method::SandboxDelete;
    }
    return nullptr; // not reached: every action is handled above
}

} // namespace

SandboxActions::SandboxActions(QObject *parent) : QObject(parent) { }

SandboxActions::~SandboxActions() = default;

void SandboxActions::setClient(HelperClient *client)
{
    m_client = client;
}

HelperClient *SandboxActions::client() const
{
    return m_client;
}

SandboxActions::Enablement SandboxActions::enablement(bool connected,
                                                      std::optional<SandboxState> selected)
{
    Enablement enabled;
    enabled.create = connected;
    if (!connected || !selected)
        return enabled;
    const SandboxState state = *selected;
    enabled.start = state == SandboxState::Stopped;
    enabled.stop = state == SandboxState::Running || state == SandboxState::Paused;
    enabled.kill = state == SandboxState::Running || state == SandboxState::Stopping
        || state == SandboxState::Starting || state == SandboxState::Paused;
    enabled.remove = state == SandboxState::Stopped;
    enabled.pause = state == SandboxState::Running;
    enabled.resume = state == SandboxState::Paused;
    enabled.openConsole = true;
    enabled.editPolicy = true;
    return enabled;
}

QString SandboxActions::failureText(Action action, const QString &sandbox)
{
    switch (action) {
    case Action::Create:
        return tr("Could not create sandbox “%1”.").arg(sandbox);
    case Action::Start:
        return tr("Could not start sandbox “%1”.").arg(sandbox);
    case Action::Stop:
        return tr("Could not stop sandbox “%1”.").arg(sandbox);
    case Action::Kill:
        return tr("Could not force-stop sandbox “%1”.").arg(sandbox);
    case Action::Pause:
        return tr("Could not pause sandbox “%1”.").arg(sandbox);
    case Action::Resume:
        return tr("Could not resume sandbox “%1”.").arg(sandbox);
    case Action::Delete:
        return tr("Could not delete sandbox “%1”.").arg(sandbox);
    }
    return {};
}

void SandboxActions::create(const SandboxSpec &spec, bool start, const QString &boot)
{
    if (!m_client)
        return;
    QJsonObject params = spec.toJson();
    if (!boot.isEmpty())
        params.insert(QStringLiteral("boot"), boot); // a helper without templates ignores it
    QPointer<SandboxActions> self(this);
    QPointer<HelperClient> client(m_client);
    m_client->call(QString::fromLatin1(protocol::method::SandboxCreate), params,
                   [self, client, spec, start](const Result<QJsonValue> &result) {
                       if (!self)
                           return;
                       if (!result) {
                           Q_EMIT self->failed(Action::Create, spec.name,
                                               failureText(Action::Create, spec.name),
                                               result.error());
                           return;
                       }
                       if (auto sandbox = Sandbox::fromJson(result->toObject()))
                           Q_EMIT self->sandboxReported(*sandbox);
                       Q_EMIT self->succeeded(Action::Create, spec.name);
                       if (start && self && client)
                           self->request(client, Action::Start, spec.name);
                   });
}

void SandboxActions::start(const QString &sandbox)
{
    request(m_client, Action::Start, sandbox);
}

void SandboxActions::stop(const QString &sandbox)
{
    request(m_client, Action::Stop, sandbox);
}

void SandboxActions::kill(const QString &sandbox)
{
    request(m_client, Action::Kill, sandbox);
}

void SandboxActions::pause(const QString &sandbox)
{
    request(m_client, Action::Pause, sandbox);
}

void SandboxActions::resume(const QString &sandbox)
{
    request(m_client, Action::Resume, sandbox);
}

void SandboxActions::remove(const QString &sandbox)
{
    request(m_client, Action::Delete, sandbox);
}

void SandboxActions::restart(const QString &sandbox)
{
    if (sandbox.isEmpty() || !m_client)
        return;
    Q_EMIT progress(sandbox, tr("Restarting %1…").arg(sandbox));
    // sandbox.stop answers once the power-down was asked for (state `stopping`); the guest is
    // gone when the helper's sandbox.changed says `stopped`. Watched from before the request,
    // so a report that arrives with the answer is not missed.
    struct Watch
    {
        QMetaObject::Connection connection;
        QPointer<QTimer> timer; // from the answer on
        bool answered = false;
        bool stopped = false;
    };
    auto watch = std::make_shared<Watch>();
    QPointer<HelperClient> client(m_client);
    auto startNow = [this, watch, client, sandbox] {
        QObject::disconnect(watch->connection);
        if (watch->timer) {
            watch->timer->stop();
            watch->timer->deleteLater();
        }
        if (client)
            request(client, Action::Start, sandbox);
    };
    watch->connection =
        connect(client, &HelperClient::notificationReceived, this,
                [watch, sandbox, startNow](const QString &method, const QJsonObject &params) {
                    if (method != QLatin1String(protocol::notification::SandboxChanged))
                        return;
                    const QJsonObject object = params.value(QStringLiteral("sandbox")).toObject();
                    if (object.value(QStringLiteral("name")).toString() != sandbox)
                        return;
                    const auto reported = Sandbox::fromJson(object);
                    if (!reported)
                        return;
                    watch->stopped = reported->state == SandboxState::Stopped;
                    if (watch->answered && watch->stopped)
                        startNow();
                });
    request(client, Action::Stop, sandbox, [this, watch, sandbox, startNow](bool succeeded) {
        if (!succeeded) {
            QObject::disconnect(watch->connection);
            return;
        }
        watch->answered = true;
        if (watch->stopped) {
            startNow();
            return;
        }
        auto *timer = new QTimer(this);
        timer->setSingleShot(true);
        watch->timer = timer;
        connect(timer, &QTimer::timeout, this, [this, watch, timer, sandbox] {
            QObject::disconnect(watch->connection);
            timer->deleteLater();
            Q_EMIT progress(
                sandbox,
                tr("%1 did not stop within 2 minutes; it was not restarted.").arg(sandbox));
        });
        timer->start(kRestartTimeoutMs);
    });
}

void SandboxActions::request(HelperClient *client, Action action, const QString &sandbox,
                             std::function<void(bool succeeded)> then)
{
    if (!client || sandbox.isEmpty())
        return;
    QPointer<SandboxActions> self(this);
    client->call(QString::fromLatin1(methodOf(action)), {{QStringLiteral("name"), sandbox}},
                 [self, action, sandbox, then](const Result<QJsonValue> &result) {
                     if (!self)
                         return;
                     if (result)
                         Q_EMIT self->succeeded(action, sandbox);
                     else
                         Q_EMIT self->failed(action, sandbox, failureText(action, sandbox),
                                             result.error());
                     if (then && self)
                         then(result.has_value());
                 });
}

} // namespace airlock

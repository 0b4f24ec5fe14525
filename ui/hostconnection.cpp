#include "ui/hostconnection.h"

#include "core/client/helperclient.h"
#include "core/ssh/sshtransport.h"
#include "ui/sandboxtablemodel.h"
#include "ui/sshdialogprompter.h"

namespace airlock {

HostConnection::HostConnection(HelperClient *client, SandboxTableModel *model, QObject *parent)
    : QObject(parent), m_client(client), m_model(model)
{
    watchClient();
}

HostConnection::HostConnection(const SshEndpoint &endpoint, QWidget *dialogParent, QObject *parent)
    : QObject(parent)
    , m_endpoint(endpoint)
    , m_prompter(std::make_unique<SshDialogPrompter>(dialogParent))
{
    auto transport = std::make_unique<SshTransport>(endpoint, m_prompter.get());
    m_transport = transport.get();
    m_ownedClient = std::make_unique<HelperClient>(std::move(transport), QStringLiteral("airlock"));
    m_client = m_ownedClient.get();
    m_client->setAutoReconnect(true);
    m_model = new SandboxTableModel(this);
    m_model->setClient(m_client);
    connect(m_transport, &SshTransport::stateChanged, this, &HostConnection::updateFromTransport);
    watchClient();
}

HostConnection::~HostConnection()
{
    // The model refers to the client: drop it first.
    if (m_ownedClient) {
        delete m_model;
        m_model = nullptr;
    }
}

void HostConnection::watchClient()
{
    if (!m_client)
        return;
    connect(m_client, &HelperClient::ready, this, [this] {
        m_lastError.clear();
        setState(State::Connected);
    });
    connect(m_client, &HelperClient::connectionLost, this, [this](const Error &error) {
        m_lastError = error.message;
        if (m_transport)
            updateFromTransport();
        else
            setState(State::Disconnected);
    });
    connect(m_client, &HelperClient::stateChanged, this, [this](HelperClient::State state) {
        if (state == HelperClient::State::Connecting)
            setState(State::Connecting);
    });
    if (m_client->state() == HelperClient::State::Ready)
        m_state = State::Connected;
    else if (m_client->state() == HelperClient::State::Connecting)
        m_state = State::Connecting;
}

void HostConnection::updateFromTransport()
{
    switch (m_transport->state()) {
    case SshTransport::State::Connecting:
        setState(State::Connecting);
        return;
    case SshTransport::State::Connected:
        return; // Connected once the helper answered hello
    case SshTransport::State::AuthenticationFailed:
        m_client->setAutoReconnect(false);
        m_lastError = m_transport->lastError();
        setState(State::AuthenticationFailed);
        return;
    case SshTransport::State::HostKeyChanged:
    case SshTransport::State::HostKeyRejected:
        m_client->setAutoReconnect(false);
        m_lastError = m_transport->lastError();
        setState(m_transport->state() == SshTransport::State::HostKeyChanged ? State::HostKeyChanged
                                                                             : State::Disconnected);
        return;
    case SshTransport::State::Disconnected:
        if (!m_transport->lastError().isEmpty())
            m_lastError = m_transport->lastError();
        setState(State::Disconnected);
        return;
    }
}

QString HostConnection::title() const
{
    return isRemote() ? m_endpoint.displayName() : tr("This computer");
}

QString HostConnection::stateText() const
{
    switch (m_state) {
    case State::Connecting:
        return tr("Connecting…");
    case State::Connected:
        return tr("Connected");
    case State::AuthenticationFailed:
        return tr("Authentication failed");
    case State::HostKeyChanged:
        return tr("Host key changed");
    case State::Disconnected:
        break;
    }
    return tr("Disconnected");
}

void HostConnection::connectToHost()
{
    if (!m_client)
        return;
    if (m_transport)
        m_client->setAutoReconnect(true);
    m_client->disconnectFromHelper();
    m_client->connectToHelper();
}

void HostConnection::disconnectFromHost()
{
    if (m_client)
        m_client->disconnectFromHelper();
}

void HostConnection::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

} // namespace airlock

#pragma once

#include "core/model/error.h"
#include "core/ssh/sshendpoint.h"

#include <QObject>
#include <QPointer>

#include <memory>

namespace airlock {

class HelperClient;
class SandboxTableModel;
class SshDialogPrompter;
class SshTransport;

/// One helper the window talks to: the local one (a HelperClient made by main.cpp) or a remote
/// one over SSH (made here, with its own SshTransport and dialog prompter). Owns the host's
/// sandbox model and sums the client's and the transport's states into the one state a user
/// sees in the sidebar.
class HostConnection final : public QObject
{
    Q_OBJECT
public:
    enum class State { Connecting, Connected, AuthenticationFailed, HostKeyChanged, Disconnected };
    Q_ENUM(State)

    /// The local helper: `client` is not owned; `model` (owned by the caller) shows it.
    HostConnection(HelperClient *client, SandboxTableModel *model, QObject *parent = nullptr);
    /// A remote helper over SSH; questions go to dialogs over `dialogParent`.
    HostConnection(const SshEndpoint &endpoint, QWidget *dialogParent, QObject *parent = nullptr);
    ~HostConnection() override;

    bool isRemote() const { return m_transport != nullptr; }
    /// "This computer" or "user@host:port".
    QString title() const;
    const SshEndpoint &endpoint() const { return m_endpoint; }
    HelperClient *client() const { return m_client; }
    SandboxTableModel *model() const { return m_model; }
    State state() const { return m_state; }
    /// The state in words (translated), e.g. "Host key changed".
    QString stateText() const;
    /// The last problem (English, from the transport or helper), empty when connected.
    QString lastError() const { return m_lastError; }

    /// Connects (again): after an authentication failure or a changed host key this is the
    /// only way back, as those stop automatic reconnection (no password prompt every 10 s).
    void connectToHost();
    void disconnectFromHost();

Q_SIGNALS:
    void stateChanged(airlock::HostConnection::State state);

private:
    void watchClient();
    void setState(State state);
    void updateFromTransport();

    SshEndpoint m_endpoint;
    std::unique_ptr<SshDialogPrompter> m_prompter;
    std::unique_ptr<HelperClient> m_ownedClient;
    HelperClient *m_client = nullptr;
    SshTransport *m_transport = nullptr; // owned by the client
    SandboxTableModel *m_model = nullptr;
    State m_state = State::Disconnected;
    QString m_lastError;
};

} // namespace airlock

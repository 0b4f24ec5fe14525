#pragma once

#include "core/e2b/controlapi.h"
#include "core/e2b/envdservice.h"
#include "core/e2b/sandboxregistry.h"
#include "core/model/error.h"

#include <QByteArray>
#include <QObject>
#include <QTcpServer>

namespace airlock {
class HelperClient;
}

namespace airlock::e2b {

/// airlock-e2b's HTTP listener on 127.0.0.1 (never another address): one port for both E2B's
/// control API (`E2B_API_URL`, authenticated by `X-API-KEY`) and envd (`E2B_SANDBOX_URL`,
/// routed by the SDK's `E2b-Sandbox-Id` header and authenticated by the sandbox's
/// `X-Access-Token`). Request bodies are bounded: 1 MiB, POST /files 128 MiB (413 beyond).
/// Expired sandboxes (SandboxRegistry::expired) are killed and deleted here.
class E2bServer : public QObject
{
    Q_OBJECT
public:
    /// `helper` must be connected and outlive the server.
    E2bServer(HelperClient *helper, QByteArray apiKey, SandboxRegistry *registry,
              QObject *parent = nullptr);
    ~E2bServer() override;

    /// Listens on 127.0.0.1:`port` (0: any free port).
    Result<void> listen(quint16 port);
    quint16 port() const;
    /// The most a request other than POST /files may carry.
    static constexpr qint64 kMaxRequestBytes = 1024 * 1024;

private:
    void onNewConnection();
    void onRequest(const QPointer<HttpConnection> &connection, const HttpRequest &request);
    void onExpired(const QString &id);

    HelperClient *m_helper;
    QByteArray m_apiKey;
    SandboxRegistry *m_registry;
    QTcpServer m_server;
    ControlApi m_control;
    EnvdService m_envd;
};

} // namespace airlock::e2b

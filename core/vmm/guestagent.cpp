#include "core/vmm/guestagent.h"

#include "core/agent/agentclient.h"
#include "core/agent/agenterror.h"

#include <QEventLoop>
#include <QIODevice>
#include <QLocalSocket>
#include <QPointer>

#include <optional>

namespace airlock {

namespace {

agentwire::Bytes bytesOf(const QByteArray &data)
{
    return agentwire::Bytes(reinterpret_cast<const std::uint8_t *>(data.constData()),
                            reinterpret_cast<const std::uint8_t *>(data.constData()) + data.size());
}

} // namespace

GuestAgent::GuestAgent(QIODevice *device, QObject *parent) : QObject(parent), m_device(device)
{
    m_device->setParent(this);
    // Nothing reads before the first refresh or wait: Qt stops pulling from the socket at this
    // size, QEMU stops pulling from the port, and a chatty guest blocks on its own writes.
    if (auto *socket = qobject_cast<QLocalSocket *>(m_device))
        socket->setReadBufferSize(kReadBufferBytes);
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &GuestAgent::onTimeout);
}

GuestAgent::~GuestAgent()
{
    // A refresh in flight is never answered: whoever waits learns it from the VMM's exit.
    m_done = nullptr;
    if (m_client) {
        // Before the members its callbacks reach; the device is its child now, and goes along.
        delete std::exchange(m_client, nullptr);
        return;
    }
    if (auto *socket = qobject_cast<QLocalSocket *>(m_device))
        socket->abort();
}

Result<GuestIdentityMessage> GuestAgent::encode(const GuestIdentity &identity)
{
    const auto invalid = [](const QString &what) {
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("guest identity: %1 cannot be sent to the agent").arg(what));
    };
    if (!identity.address.isEmpty() && (identity.prefixLength < 0 || identity.prefixLength > 32))
        return invalid(QStringLiteral("prefix length"));
    if (identity.files.size() > kMaxFiles)
        return invalid(QStringLiteral("over %1 seed files").arg(kMaxFiles));
    GuestIdentityMessage message;
    agentwire::IdentityRequest &request = message.request;
    // Latin-1 of text that is not would turn into '?', which the validation below refuses.
    request.hostname = identity.hostname.toLatin1().toStdString();
    request.mac = identity.mac.toLatin1().toStdString();
    request.address = identity.address.toLatin1().toStdString();
    request.prefixLength =
        identity.address.isEmpty() ? std::uint8_t(0) : std::uint8_t(identity.prefixLength);
    request.gateway = identity.gateway.toLatin1().toStdString();
    request.dns = identity.dns.toLatin1().toStdString();
    request.entropy = bytesOf(identity.entropy);
    request.fileCount = std::uint16_t(identity.files.size());
    if (const auto why = request.validate())
        return invalid(QString::fromStdString(*why));
    for (const SeedFile &file : identity.files) {
        if (file.content.size() > kMaxFileBytes)
            return invalid(
                QStringLiteral("file '%1' (over %2 bytes)").arg(file.path).arg(kMaxFileBytes));
        if (file.mode < 0 || file.mode > 07777)
            return invalid(QStringLiteral("mode of '%1'").arg(file.path));
        agentwire::IdentityFile out;
        out.name = file.path.toLatin1().toStdString();
        out.mode = std::uint32_t(file.mode);
        out.content = bytesOf(file.content);
        if (const auto why = out.validate())
            return invalid(QString::fromStdString(*why));
        message.files.push_back(std::move(out));
    }
    return message;
}

bool GuestAgent::isReady() const
{
    return m_client && m_client->isReady();
}

bool GuestAgent::isClosed() const
{
    if (m_client && m_client->state() == agent::AgentClient::State::Failed)
        return true;
    auto *socket = qobject_cast<QLocalSocket *>(m_device);
    return !m_device->isOpen() || (socket && socket->state() != QLocalSocket::ConnectedState);
}

agent::AgentClient *GuestAgent::connection(int handshakeTimeoutMs)
{
    if (isClosed())
        return nullptr;
    return client(/*restored=*/false, handshakeTimeoutMs);
}

agent::AgentClient *GuestAgent::client(bool restored, int timeoutMs)
{
    if (m_client)
        return m_client;
    agent::AgentClient::Limits limits;
    // The handshake of a cold boot lasts until the agent starts; each call bounds its own wait
    // with m_timer, these only keep the client from waiting longer.
    limits.handshakeTimeoutMs = qMax(1, timeoutMs);
    limits.requestTimeoutMs = qMax(1, timeoutMs);
    // A guest that never saw its host go (restored from a snapshot) may be inside a frame.
    limits.resyncPreambleBytes = restored ? agent::AgentClient::kResyncPreambleBytes : 0;
    // A cold boot's agent starts when init gets to it, which on TCG may be after the first
    // exec was asked for: that one fails, the channel stays, and the agent is met when it
    // comes. A restored guest's agent is running: it answers at once or it is broken.
    limits.keepTryingHandshake = !restored;
    m_client = new agent::AgentClient(m_device, limits, this);
    connect(m_client, &agent::AgentClient::ready, this, &GuestAgent::onClientReady);
    connect(m_client, &agent::AgentClient::failed, this, &GuestAgent::onClientFailed);
    m_client->start();
    return m_client;
}

void GuestAgent::refresh(const GuestIdentity &identity, int timeoutMs, Done done)
{
    if (m_done) {
        done(fail(ErrorKind::Busy, QStringLiteral("a refresh of this guest is under way")));
        return;
    }
    auto message = encode(identity);
    if (!message) {
        done(std::unexpected(message.error()));
        return;
    }
    if (isClosed()) {
        done(fail(ErrorKind::OperationFailed, QStringLiteral("the guest agent channel is closed")));
        return;
    }
    expect(timeoutMs, std::move(done));
    const quint64 attempt = m_attempt;
    client(/*restored=*/true, timeoutMs)
        ->refreshIdentity(std::move(message->request), message->files,
                          [this, attempt](const agent::AgentResult<void> &result) {
                              if (attempt != m_attempt)
                                  return; // timed out meanwhile
                              finish(result ? Result<void>() : fromAgent(result.error()));
                          });
}

void GuestAgent::awaitReady(int timeoutMs, Done done)
{
    if (m_done) {
        done(fail(ErrorKind::Busy, QStringLiteral("a refresh of this guest is under way")));
        return;
    }
    if (isReady()) {
        done({});
        return;
    }
    m_awaitingReady = true;
    expect(timeoutMs, std::move(done));
    if (isClosed()) {
        finishLater(
            fail(ErrorKind::OperationFailed,
                 QStringLiteral("the guest agent channel closed before the agent started")));
        return;
    }
    client(/*restored=*/false, timeoutMs);
}

void GuestAgent::expect(int timeoutMs, Done done)
{
    m_done = std::move(done);
    m_timeoutMs = timeoutMs;
    m_timer.start(timeoutMs);
}

Result<void> GuestAgent::refreshAndWait(const GuestIdentity &identity, int timeoutMs)
{
    std::optional<Result<void>> result;
    QEventLoop loop;
    refresh(identity, timeoutMs, [&result, &loop](const Result<void> &done) {
        result = done;
        loop.quit();
    });
    if (!result)
        loop.exec();
    return *result;
}

void GuestAgent::finish(const Result<void> &result)
{
    m_timer.stop();
    m_awaitingReady = false;
    ++m_attempt;
    if (Done done = std::exchange(m_done, nullptr))
        done(result);
}

void GuestAgent::finishLater(const Result<void> &result)
{
    const quint64 attempt = m_attempt;
    QMetaObject::invokeMethod(
        this,
        [this, attempt, result] {
            if (attempt == m_attempt)
                finish(result);
        },
        Qt::QueuedConnection);
}

void GuestAgent::onTimeout()
{
    if (!m_done)
        return;
    finish(fail(ErrorKind::Timeout,
                (m_awaitingReady ? QStringLiteral("the guest agent did not start within %1 ms")
                                 : QStringLiteral("the guest agent did not answer within %1 ms"))
                    .arg(m_timeoutMs)));
}

void GuestAgent::onClientReady()
{
    if (m_done && m_awaitingReady)
        finish({});
}

void GuestAgent::onClientFailed(const agent::AgentError &error)
{
    // A refresh learnt it from its own callback already; this ends a wait.
    if (m_done)
        finish(fromAgent(error));
}

Result<void> GuestAgent::fromAgent(const agent::AgentError &error)
{
    using Kind = agent::AgentError::Kind;
    switch (error.kind) {
    case Kind::Timeout:
        return fail(ErrorKind::Timeout, error.message);
    case Kind::InvalidRequest:
        return fail(ErrorKind::InvalidParams, error.message);
    case Kind::IdentityFailed: // "... could not apply its new identity (step NAME)"
        return fail(ErrorKind::OperationFailed, error.message);
    case Kind::AgentUnavailable:
    case Kind::ProtocolError:
    case Kind::Guest:
        break;
    }
    return fail(ErrorKind::OperationFailed,
                QStringLiteral("%1 (%2)").arg(error.message, error.name()));
}

} // namespace airlock

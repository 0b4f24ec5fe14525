#include "core/daemon/gatewayprocess.h"

#include "core/model/answerlater.h"
#include "core/vmm/processreaper.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <QTimer>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcGateway, "airlock.daemon.gateway")

/// How long a stopped gateway's ProcessReaper waits for it to be gone after SIGKILL.
constexpr int kKillWaitMs = 3000;

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

/// Closes a descriptor when it goes out of scope unless released.
class FdGuard
{
public:
    explicit FdGuard(int fd = -1) : m_fd(fd) { }
    ~FdGuard()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    FdGuard(const FdGuard &) = delete;
    FdGuard &operator=(const FdGuard &) = delete;
    int get() const { return m_fd; }
    int release() { return std::exchange(m_fd, -1); }

private:
    int m_fd;
};

/// A socket of `type` bound to address:port (and listening for SOCK_STREAM), close-on-exec.
Result<int> bindListener(const QHostAddress &address, quint16 port, int type)
{
    FdGuard fd(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
    if (fd.get() < 0)
        return fail(ErrorKind::OperationFailed, QStringLiteral("socket: %1").arg(errnoText(errno)));
    const int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(address.toIPv4Address());
    if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&sin), sizeof sin) != 0) {
        const int error = errno;
        // Two helpers with one address pool on one host meet here (issue 16, section 4).
        const QString hint = error == EADDRINUSE
            ? QStringLiteral(" (another airlockd on this host with the same --address-pool?)")
            : QString();
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot bind the gateway's %1 listener to %2:%3: %4%5")
                        .arg(type == SOCK_STREAM ? QStringLiteral("TCP") : QStringLiteral("UDP"),
                             address.toString())
                        .arg(port)
                        .arg(errnoText(error), hint));
    }
    if (type == SOCK_STREAM && ::listen(fd.get(), 1024) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("listen on %1:%2: %3")
                        .arg(address.toString())
                        .arg(port)
                        .arg(errnoText(errno)));
    return fd.release();
}

} // namespace

GatewayProcess::GatewayProcess(QObject *parent) : QObject(parent)
{
    m_readyTimer.setSingleShot(true);
    connect(&m_readyTimer, &QTimer::timeout, this, [this] {
        finishStart(fail(
            ErrorKind::OperationFailed,
            QStringLiteral("airlock-gateway was not ready within %1 ms").arg(m_readyTimeoutMs)));
    });
    m_outboxTimer.setSingleShot(true);
    connect(&m_outboxTimer, &QTimer::timeout, this, [this] {
        abandonControl(QStringLiteral("airlock-gateway has not read its control channel for %1 "
                                      "ms; stopping it")
                           .arg(kOutboxStallMs));
    });
}

GatewayProcess::~GatewayProcess()
{
    stop(500);
    if (auto released = std::exchange(m_released, nullptr))
        released();
}

pid_t GatewayProcess::pid() const
{
    return m_process ? m_process->pid() : 0;
}

void GatewayProcess::start(const GatewayConfig &config, int readyTimeoutMs, Ready ready)
{
    Q_ASSERT(ready);
    if (auto launched = launch(config); !launched) {
        answerLater(this, std::move(ready), launched);
        return;
    }
    m_readyCallback = std::move(ready);
    m_readyTimer.start(readyTimeoutMs);
    m_readyTimeoutMs = readyTimeoutMs;
    m_notifier = new QSocketNotifier(m_control, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &GatewayProcess::onReadable);
}

Result<void> GatewayProcess::launch(const GatewayConfig &config)
{
    if (m_process)
        return fail(ErrorKind::InvalidState, QStringLiteral("the gateway is already running"));
    if (!config.program.startsWith(u'/') || !QFileInfo(config.program).isExecutable())
        return fail(ErrorKind::BackendUnavailable,
                    QStringLiteral("airlock-gateway not found at '%1'").arg(config.program));
    m_config = config;
    m_ready = false;
    m_fatal.clear();
    // The config carries the newest policy: everything sent before is superseded by it.
    m_appliedGeneration = m_policyGeneration;
    m_stopping = false;

    // Listeners first: a port conflict is reported before any process exists.
    auto tcp = bindListener(config.gateway, config.tcpPort, SOCK_STREAM);
    AIRLOCK_TRY(tcp);
    FdGuard tcpFd(*tcp);
    auto dnsUdp = bindListener(config.gateway, config.dnsPort, SOCK_DGRAM);
    AIRLOCK_TRY(dnsUdp);
    FdGuard dnsUdpFd(*dnsUdp);
    auto dnsTcp = bindListener(config.gateway, config.dnsPort, SOCK_STREAM);
    AIRLOCK_TRY(dnsTcp);
    FdGuard dnsTcpFd(*dnsTcp);
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("socketpair: %1").arg(errnoText(errno)));
    FdGuard ours(pair[0]);
    FdGuard theirs(pair[1]);

    // The child sees 3 = TCP, 4 = DNS UDP, 5 = DNS TCP, 6 = control.
    SpawnOptions options;
    options.inheritedFds = {
        {tcpFd.get(), 3}, {dnsUdpFd.get(), 4}, {dnsTcpFd.get(), 5}, {theirs.get(), 6}};
    options.dropPrivileges = true;
    // A gateway works for its guest (TLS, DNS, its start-up key and certificates): like the
    // guest's VMM it yields to the helper's event loop. Ten gateways starting at once at the
    // helper's weight kept `sandbox.list` waiting for 100 ms and more (bench_scale).
    options.autogroupNice = kGuestAutogroupNice;
    const QString logLevel = config.logLevel == u"debug" || config.logLevel == u"trace"
        ? config.logLevel
        : QStringLiteral("info");
    auto pid =
        VmmProcess::spawn({config.program, QStringLiteral("--control-fd"), QStringLiteral("6"),
                           QStringLiteral("--log-level"), logLevel,
                           QStringLiteral("--max-data-bytes"), QString::number(config.maxDataBytes),
                           QStringLiteral("--max-log-bytes"), QString::number(config.maxLogBytes)},
                          config.logPath, config.credentials, options);
    AIRLOCK_TRY(pid);
    // Only the gateway holds the listeners and its end of the control socket from now on.
    auto *process = new VmmProcess(this);
    if (auto watched = process->watch(*pid); !watched) {
        delete process;
        int status;
        ::waitpid(*pid, &status, 0);
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("airlock-gateway exited at once: %1").arg(lastLogLine()));
    }
    m_process = process;
    connect(m_process, &VmmProcess::exited, this, &GatewayProcess::onProcessExited);
    m_control = ours.release();
    ::fcntl(m_control, F_SETFL, ::fcntl(m_control, F_GETFL) | O_NONBLOCK);
    m_framer = std::make_unique<protocol::LineFramer>(kMaxLineBytes);

    const QJsonObject link {{QStringLiteral("gateway"), config.gateway.toString()},
                            {QStringLiteral("guest"), config.guest.toString()},
                            {QStringLiteral("prefixLength"), config.prefixLength}};
    QJsonObject message {
        {QStringLiteral("type"), QStringLiteral("config")},
        {QStringLiteral("version"), 1},
        {QStringLiteral("sandbox"), config.sandbox},
        {QStringLiteral("listen"),
         QJsonObject {{QStringLiteral("tcpFd"), 3},
                      {QStringLiteral("dnsUdpFd"), 4},
                      {QStringLiteral("dnsTcpFd"), 5}}},
        {QStringLiteral("link"), link},
        {QStringLiteral("explicitProxyPort"), config.explicitProxyPort},
        {QStringLiteral("upstreamDns"), config.upstreamDns},
        {QStringLiteral("syntheticPool"), config.syntheticPool},
        {QStringLiteral("trustStore"),
         config.trustStoreCaFile.isEmpty()
             ? QJsonObject()
             : QJsonObject {{QStringLiteral("caFile"), config.trustStoreCaFile}}},
        {QStringLiteral("ca"),
         QJsonObject {
             {QStringLiteral("certificatePem"), QString::fromLatin1(config.caCertificatePem)},
             {QStringLiteral("keyPem"), QString::fromLatin1(config.caKeyPem)}}},
        {QStringLiteral("policy"), config.policy.toJson()},
    };
    if (auto sent = sendLine(message); !sent) {
        const QString log = lastLogLine();
        stop(500);
        return fail(ErrorKind::OperationFailed,
                    log.isEmpty() || sent.error().message.contains(log)
                        ? sent.error().message
                        : QStringLiteral("%1 (gateway log: %2)").arg(sent.error().message, log));
    }
    return {};
}

void GatewayProcess::finishStart(Result<void> result)
{
    Ready ready = std::exchange(m_readyCallback, {});
    if (!ready)
        return;
    m_readyTimer.stop();
    if (result) {
        qCInfo(lcGateway, "%s: airlock-gateway ready (pid %d, uid %u)",
               qPrintable(m_config.sandbox), int(pid()), unsigned(m_config.credentials.uid));
    } else {
        Error error = result.error();
        const QString log = lastLogLine();
        if (!log.isEmpty() && !error.message.contains(log))
            error.message = QStringLiteral("%1 (gateway log: %2)").arg(error.message, log);
        // No gateway process is left behind a failed start.
        stop(500);
        result = std::unexpected(error);
    }
    // From the event loop: the caller may delete this object in its callback, and this runs
    // inside this object's socket and timer handlers.
    answerLater(this, std::move(ready), result);
}

Result<void> GatewayProcess::setPolicy(const EgressPolicy &policy, PolicyAck applied)
{
    if (!m_process || m_control < 0 || !m_ready)
        return fail(ErrorKind::InvalidState, QStringLiteral("the gateway is not running"));
    m_config.policy = policy;
    const quint64 generation = ++m_policyGeneration;
    AIRLOCK_TRY(sendLine(QJsonObject {{QStringLiteral("type"), QStringLiteral("policy")},
                                      {QStringLiteral("generation"), qint64(generation)},
                                      {QStringLiteral("policy"), policy.toJson()}}));
    if (!applied)
        return {};
    m_policyWaiters.append({generation, std::move(applied)});
    QTimer::singleShot(kPolicyAckTimeoutMs, this, [this, generation] {
        failPolicyWaiter(generation,
                         Error {ErrorKind::Timeout,
                                QStringLiteral("the policy is stored, but the gateway of '%1' has "
                                               "not confirmed it within %2 s")
                                    .arg(m_config.sandbox)
                                    .arg(kPolicyAckTimeoutMs / 1000)});
    });
    return {};
}

void GatewayProcess::failPolicyWaiter(quint64 generation, const Error &error)
{
    const auto waiting =
        std::find_if(m_policyWaiters.begin(), m_policyWaiters.end(),
                     [&](const PolicyWaiter &w) { return w.generation == generation; });
    if (waiting == m_policyWaiters.end())
        return;
    const PolicyAck ack = std::move(waiting->ack);
    m_policyWaiters.erase(waiting);
    ack(std::unexpected(error));
}

Result<void> GatewayProcess::forgetSecret(const QString &secret)
{
    if (!m_process || m_control < 0 || !m_ready)
        return fail(ErrorKind::InvalidState, QStringLiteral("the gateway is not running"));
    return sendLine(QJsonObject {{QStringLiteral("type"), QStringLiteral("forgetSecret")},
                                 {QStringLiteral("secret"), secret}});
}

void GatewayProcess::resolvePolicyWaiters(quint64 generation, const Result<void> &result)
{
    // Taken out first: an answer may reach code that sends the next policy.
    QList<PolicyWaiter> done;
    for (auto it = m_policyWaiters.begin(); it != m_policyWaiters.end();) {
        if (it->generation <= generation) {
            done.append(std::move(*it));
            it = m_policyWaiters.erase(it);
        } else {
            ++it;
        }
    }
    for (const PolicyWaiter &waiter : std::as_const(done))
        waiter.ack(result);
}

Result<void> GatewayProcess::setCredentials(const QList<GatewayCredentialGrant> &credentials)
{
    if (!m_process || m_control < 0 || !m_ready)
        return fail(ErrorKind::InvalidState, QStringLiteral("the gateway is not running"));
    QJsonArray entries;
    qsizetype payload = 0;
    for (const GatewayCredentialGrant &grant : credentials) {
        const CredentialBinding &binding = grant.binding;
        QJsonObject entry {{QStringLiteral("binding"), binding.id},
                           {QStringLiteral("secret"), binding.secret},
                           {QStringLiteral("host"), binding.host},
                           {QStringLiteral("placement"), binding.placement.toJson()},
                           {QStringLiteral("placeholder"), grant.placeholder},
                           {QStringLiteral("valueBytes"), grant.value ? grant.value->size() : 0}};
        if (!binding.pathPrefix.isEmpty())
            entry.insert(QStringLiteral("pathPrefix"), binding.pathPrefix);
        if (!binding.methods.isEmpty())
            entry.insert(QStringLiteral("methods"), QJsonArray::fromStringList(binding.methods));
        entries.append(entry);
        payload += grant.value ? grant.value->size() : 0;
    }
    QJsonObject message {{QStringLiteral("type"), QStringLiteral("credentials")},
                         {QStringLiteral("credentials"), entries}};
    if (payload > 0)
        message.insert(QStringLiteral("payloadBytes"), payload);
    if (auto sent = sendLine(message); !sent)
        return sent;
    for (const GatewayCredentialGrant &grant : credentials) {
        if (!grant.value)
            continue;
        if (auto sent = sendBytes(grant.value->reveal()); !sent)
            return sent;
    }
    qCInfo(lcGateway, "%s: %lld credential(s) handed to the gateway", qPrintable(m_config.sandbox),
           static_cast<long long>(credentials.size()));
    return {};
}

Result<void> GatewayProcess::sendLine(const QJsonObject &message)
{
    QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact);
    line.append('\n');
    return sendBytes(line);
}

Result<void> GatewayProcess::sendBytes(QByteArrayView line)
{
    if (m_control < 0)
        return fail(ErrorKind::InvalidState, QStringLiteral("airlock-gateway is not running"));
    qsizetype written = 0;
    // Behind queued bytes nothing may overtake; otherwise straight to the socket, so that a
    // secret is copied only when the gateway is slow to read.
    while (m_outbox.empty() && written < line.size()) {
        const ssize_t n = ::send(m_control, line.constData() + written,
                                 size_t(line.size() - written), MSG_NOSIGNAL);
        if (n > 0) {
            written += n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot write to airlock-gateway: %1").arg(errnoText(errno)));
    }
    if (written == line.size())
        return {};
    // The socket is full: the rest waits for the gateway to read, on the event loop (a
    // gateway that stops reading, stuck or compromised, must not stall airlockd).
    if (m_outbox.size() + size_t(line.size() - written) > kMaxOutboxBytes) {
        const QString message =
            QStringLiteral("airlock-gateway has not read %1 bytes of its control channel; "
                           "stopping it")
                .arg(m_outbox.size());
        abandonControl(message);
        return fail(ErrorKind::OperationFailed, message);
    }
    m_outbox.insert(m_outbox.end(), line.begin() + written, line.end());
    if (!m_writeNotifier) {
        m_writeNotifier = new QSocketNotifier(m_control, QSocketNotifier::Write, this);
        connect(m_writeNotifier, &QSocketNotifier::activated, this, &GatewayProcess::flushOutbox);
    }
    m_writeNotifier->setEnabled(true);
    if (!m_outboxTimer.isActive())
        m_outboxTimer.start(kOutboxStallMs);
    return {};
}

void GatewayProcess::flushOutbox()
{
    size_t sent = 0;
    while (sent < m_outbox.size()) {
        const ssize_t n =
            ::send(m_control, m_outbox.data() + sent, m_outbox.size() - sent, MSG_NOSIGNAL);
        if (n > 0) {
            sent += size_t(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        abandonControl(QStringLiteral("cannot write to airlock-gateway: %1")
                           .arg(errnoText(n < 0 ? errno : EPIPE)));
        return;
    }
    if (sent == 0)
        return;
    // Credential values pass through here: what was sent is wiped before it is let go.
    std::memmove(m_outbox.data(), m_outbox.data() + sent, m_outbox.size() - sent);
    explicit_bzero(m_outbox.data() + (m_outbox.size() - sent), sent);
    m_outbox.resize(m_outbox.size() - sent);
    if (m_outbox.empty()) {
        m_writeNotifier->setEnabled(false);
        m_outboxTimer.stop();
    } else {
        m_outboxTimer.start(kOutboxStallMs); // progress: a new grace period
    }
}

void GatewayProcess::abandonControl(const QString &why)
{
    qCWarning(lcGateway, "%s: %s", qPrintable(m_config.sandbox), qPrintable(why));
    if (m_readyCallback) {
        finishStart(fail(ErrorKind::OperationFailed, why));
        return;
    }
    // As on EOF: the gateway goes, its exit is reported by the pidfd (and restarts it).
    closeControl();
    if (m_process && !m_process->hasExited())
        m_process->sendSignal(SIGKILL);
}

bool GatewayProcess::readAvailable()
{
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::recv(m_control, buffer, sizeof buffer, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0)
            return false;
        m_framer->append(QByteArray(buffer, n));
        while (auto line = m_framer->next()) {
            if (!*line) {
                qCWarning(lcGateway, "%s: %s", qPrintable(m_config.sandbox),
                          qPrintable(line->error().message));
                return false;
            }
            const QJsonDocument document = QJsonDocument::fromJson(**line);
            if (!document.isObject()) {
                qCWarning(lcGateway, "%s: ignoring a control line that is not a JSON object",
                          qPrintable(m_config.sandbox));
                continue;
            }
            handleMessage(document.object());
        }
    }
    return true;
}

void GatewayProcess::handleMessage(const QJsonObject &message)
{
    const QString type = message.value(QStringLiteral("type")).toString();
    if (type == u"ready") {
        m_ready = true;
        finishStart({});
    } else if (type == u"fatal") {
        m_fatal = message.value(QStringLiteral("error")).toString();
        if (m_fatal.isEmpty())
            m_fatal = QStringLiteral("(no message)");
        finishStart(
            fail(ErrorKind::OperationFailed,
                 QStringLiteral("airlock-gateway refused its configuration: %1").arg(m_fatal)));
    } else if (type == u"credentialsApplied") {
        qCInfo(lcGateway, "%s: the gateway holds %d credential(s)", qPrintable(m_config.sandbox),
               message.value(QStringLiteral("credentials")).toInt());
    } else if (type == u"applied") {
        const quint64 generation = quint64(message.value(QStringLiteral("generation")).toDouble());
        qCInfo(lcGateway, "%s: the gateway applied policy generation %llu (%d rules)",
               qPrintable(m_config.sandbox), static_cast<unsigned long long>(generation),
               message.value(QStringLiteral("rules")).toInt());
        // Generations only grow: an answer for an older one confirms nothing newer.
        if (generation > m_appliedGeneration && generation <= m_policyGeneration) {
            m_appliedGeneration = generation;
            resolvePolicyWaiters(generation, {});
        }
    } else if (type == u"error") {
        const QString error = message.value(QStringLiteral("error")).toString();
        qCWarning(lcGateway, "%s: the gateway refused a message: %s", qPrintable(m_config.sandbox),
                  qPrintable(error));
        const quint64 generation = quint64(message.value(QStringLiteral("generation")).toDouble());
        if (generation > 0)
            failPolicyWaiter(generation,
                             Error {ErrorKind::OperationFailed,
                                    QStringLiteral("the gateway of '%1' refused the policy: %2")
                                        .arg(m_config.sandbox, error)});
    } else if (type == u"egress") {
        const QJsonObject event = message.value(QStringLiteral("event")).toObject();
        if (!event.isEmpty())
            Q_EMIT egress(event);
    } else {
        qCDebug(lcGateway, "%s: ignoring control message of type '%s'",
                qPrintable(m_config.sandbox), qPrintable(type));
    }
}

void GatewayProcess::onReadable()
{
    if (readAvailable())
        return;
    if (m_readyCallback) {
        finishStart(fail(ErrorKind::OperationFailed,
                         QStringLiteral("airlock-gateway exited before it was ready")));
        return;
    }
    // EOF or garbage: the gateway is going away (or must). Its exit is reported by the pidfd.
    closeControl();
    if (m_process && !m_process->hasExited())
        m_process->sendSignal(SIGKILL);
}

void GatewayProcess::onProcessExited(bool statusKnown, int waitStatus)
{
    if (m_stopping)
        return;
    QString reason;
    if (!statusKnown)
        reason = QStringLiteral("airlock-gateway exited");
    else if (WIFSIGNALED(waitStatus))
        reason =
            QStringLiteral("airlock-gateway was killed by signal %1").arg(WTERMSIG(waitStatus));
    else
        reason =
            QStringLiteral("airlock-gateway exited with status %1").arg(WEXITSTATUS(waitStatus));
    if (!m_fatal.isEmpty())
        reason += QStringLiteral(": ") + m_fatal;
    closeControl();
    m_process->deleteLater();
    m_process = nullptr;
    m_ready = false;
    if (auto released = std::exchange(m_released, nullptr))
        released();
    if (m_readyCallback) {
        finishStart(
            fail(ErrorKind::OperationFailed,
                 QStringLiteral("airlock-gateway exited before it was ready: %1").arg(reason)));
        return;
    }
    qCWarning(lcGateway, "%s: %s", qPrintable(m_config.sandbox), qPrintable(reason));
    Q_EMIT exited(reason);
}

void GatewayProcess::stop(int graceMs)
{
    closeControl();
    if (!m_process)
        return;
    m_stopping = true;
    QObject::disconnect(m_process, nullptr, this, nullptr);
    // It exits on EOF at once, but its listeners stay bound until it is gone: whoever binds the
    // same ports next waits for m_released (NetworkLinks keeps the link until then).
    ProcessReaper::reap(std::exchange(m_process, nullptr),
                        QStringLiteral("airlock-gateway of %1").arg(m_config.sandbox), graceMs,
                        kKillWaitMs, std::exchange(m_released, nullptr));
    m_ready = false;
}

void GatewayProcess::closeControl()
{
    // A gateway without its control socket exits and takes its listeners with it: nothing
    // passes until the next one starts, with the stored policy. So the policy is enforced.
    resolvePolicyWaiters(m_policyGeneration, {});
    delete m_notifier;
    m_notifier = nullptr;
    delete m_writeNotifier;
    m_writeNotifier = nullptr;
    m_outboxTimer.stop();
    if (!m_outbox.empty())
        explicit_bzero(m_outbox.data(), m_outbox.size());
    m_outbox.clear();
    m_outbox.shrink_to_fit();
    if (m_control >= 0)
        ::close(m_control);
    m_control = -1;
}

QString GatewayProcess::lastLogLine() const
{
    QFile log(m_config.logPath);
    if (!log.open(QIODevice::ReadOnly))
        return {};
    if (log.size() > 4096)
        log.seek(log.size() - 4096);
    const QList<QByteArray> lines = log.readAll().trimmed().split('\n');
    return lines.isEmpty() ? QString() : QString::fromUtf8(lines.last()).trimmed();
}

} // namespace airlock

#include "core/ssh/sshtransport.h"

#include "core/ssh/sshconnection.h"
#include "core/ssh/sshprompter.h"

#include <QLoggingCategory>
#include <QMetaObject>

#include <libssh/libssh.h>
#include <libssh/server.h> // ssh_send_keepalive: declared there, usable by clients

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

Q_DECLARE_LOGGING_CATEGORY(lcSsh)

namespace airlock {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kReadChunk = 64 * 1024;
constexpr int kWriteChunk = 32 * 1024;
// Poll period while bytes wait for channel window or socket space.
constexpr int kBusyPollMs = 5;
// The remote bridge's stderr kept for the error message.
constexpr qsizetype kMaxStderr = 4096;

SshTransport::State stateFor(SshConnection::Failure failure)
{
    switch (failure) {
    case SshConnection::Failure::AuthenticationFailed:
        return SshTransport::State::AuthenticationFailed;
    case SshConnection::Failure::HostKeyChanged:
        return SshTransport::State::HostKeyChanged;
    case SshConnection::Failure::HostKeyRejected:
        return SshTransport::State::HostKeyRejected;
    case SshConnection::Failure::Network:
    case SshConnection::Failure::Channel:
        break;
    }
    return SshTransport::State::Disconnected;
}

} // namespace

namespace {

// Worker threads still running (SshTransport::waitForWorkers).
std::mutex g_workersMutex;
std::condition_variable g_workersDone;
int g_workers = 0;

} // namespace

/// One connection attempt and, once established, its channel pump, on a detached thread.
/// Shared between the thread and the transport; the transport cancels it to let go.
class SshTransport::Run : public std::enable_shared_from_this<Run>
{
public:
    Run(SshTransport *owner, SshEndpoint endpoint, std::shared_ptr<SshKeyCache> keys,
        int keepaliveIntervalMs, int keepaliveCountMax, int connectTimeoutMs)
        : m_owner(owner)
        , m_endpoint(std::move(endpoint))
        , m_keys(std::move(keys))
        , m_keepaliveIntervalMs(keepaliveIntervalMs)
        , m_keepaliveCountMax(keepaliveCountMax)
        , m_connectTimeoutMs(connectTimeoutMs)
        , m_wakeFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
    { }

    ~Run()
    {
        if (m_wakeFd >= 0)
            ::close(m_wakeFd);
    }

    void start()
    {
        {
            const std::lock_guard lock(g_workersMutex);
            ++g_workers;
        }
        std::thread([self = shared_from_this()]() mutable {
            self->exec();
            // Let go of the session's last owner here, on this thread, before counting out.
            self.reset();
            const std::lock_guard lock(g_workersMutex);
            --g_workers;
            g_workersDone.notify_all();
        }).detach();
    }

    /// The transport lets go: nothing more is reported, pending questions are dropped, and
    /// the thread closes the channel and the session on its own.
    void cancel()
    {
        const std::lock_guard lock(m_mutex);
        m_owner = nullptr;
        m_cancelled = true;
        m_condition.notify_all();
        wake();
    }

    void send(const QByteArray &bytes)
    {
        const std::lock_guard lock(m_mutex);
        m_outbox += bytes;
        wake();
    }

private:
    struct Answer
    {
        bool done = false;
        bool accepted = false;
        std::optional<QString> secret;
    };

    void wake()
    {
        const quint64 one = 1;
        [[maybe_unused]] const ssize_t n = ::write(m_wakeFd, &one, sizeof one);
    }

    bool cancelled()
    {
        const std::lock_guard lock(m_mutex);
        return m_cancelled;
    }

    /// Runs `f(owner)` on the owner's thread unless the owner let go (then, or if the owner is
    /// deleted before the call runs, nothing happens).
    template<typename F>
    void post(F f)
    {
        const std::lock_guard lock(m_mutex);
        if (!m_owner)
            return;
        SshTransport *owner = m_owner;
        QMetaObject::invokeMethod(
            owner, [owner, self = shared_from_this(), f = std::move(f)] { f(owner, self.get()); },
            Qt::QueuedConnection);
    }

    /// Asks on the owner's thread through its prompter and waits for the answer.
    template<typename Ask>
    std::shared_ptr<Answer> askOwner(Ask ask)
    {
        auto answer = std::make_shared<Answer>();
        std::unique_lock lock(m_mutex);
        if (!m_owner)
            return answer;
        SshTransport *owner = m_owner;
        QMetaObject::invokeMethod(
            owner,
            [owner, self = shared_from_this(), answer, ask] {
                Answer result;
                if (owner->m_prompter && owner->m_run.get() == self.get())
                    ask(*owner->m_prompter, result);
                const std::lock_guard inner(self->m_mutex);
                answer->accepted = result.accepted;
                answer->secret = std::move(result.secret);
                answer->done = true;
                self->m_condition.notify_all();
            },
            Qt::QueuedConnection);
        m_condition.wait(lock, [&] { return answer->done || m_cancelled; });
        return answer;
    }

    void exec()
    {
        SshConnection::Callbacks callbacks;
        callbacks.acceptHostKey = [this](const SshHostKeyQuestion &question) {
            return askOwner([question](SshPrompter &prompter, Answer &answer) {
                       answer.accepted = prompter.acceptUnknownHostKey(question);
                   })
                ->accepted;
        };
        callbacks.askSecret = [this](const SshSecretQuestion &question) {
            return askOwner([question](SshPrompter &prompter, Answer &answer) {
                       answer.secret = prompter.askSecret(question);
                   })
                ->secret;
        };
        SshConnection connection(m_endpoint, std::move(callbacks), m_keys);
        if (auto problem = connection.establish(m_connectTimeoutMs)) {
            qCInfo(lcSsh) << m_endpoint.displayName() << problem->message;
            const State state = stateFor(problem->failure);
            post([state, reason = problem->message](SshTransport *owner, Run *run) {
                owner->onRunFailed(run, state, reason);
            });
            return;
        }
        if (cancelled())
            return;
        const bool bridge = connection.usesBridge();
        post([bridge](SshTransport *owner, Run *run) { owner->onRunConnected(run, bridge); });
        const QString reason = pump(connection);
        if (!reason.isEmpty())
            post([reason](SshTransport *owner, Run *run) {
                owner->onRunFailed(run, State::Disconnected, reason);
            });
    }

    static int onWake(socket_t fd, int, void *userdata)
    {
        static_cast<Run *>(userdata)->m_woken = true;
        quint64 count = 0;
        [[maybe_unused]] const ssize_t n = ::read(fd, &count, sizeof count);
        return SSH_OK;
    }

    /// Moves bytes both ways until the channel ends, the server goes silent, or the owner lets
    /// go. Returns why it ended (empty when the owner let go).
    QString pump(SshConnection &connection)
    {
        ssh_session session = connection.session();
        ssh_channel channel = connection.channel();
        ssh_set_blocking(session, 0);
        ssh_event event = ssh_event_new();
        ssh_event_add_session(event, session);
        ssh_event_add_fd(event, m_wakeFd, POLLIN, &Run::onWake, this);
        const QString where = m_endpoint.displayName();

        QByteArray pending;
        QByteArray stderrText;
        QByteArray buffer(kReadChunk, Qt::Uninitialized);
        Clock::time_point lastTraffic = Clock::now();
        Clock::time_point lastKeepalive = lastTraffic;
        const auto interval = std::chrono::milliseconds(m_keepaliveIntervalMs);
        QString reason;

        for (;;) {
            {
                const std::lock_guard lock(m_mutex);
                if (m_cancelled)
                    break;
                pending += std::exchange(m_outbox, {});
            }
            while (!pending.isEmpty()) {
                const int n =
                    ssh_channel_write(channel, pending.constData(),
                                      uint32_t(std::min<qsizetype>(pending.size(), kWriteChunk)));
                if (n == SSH_ERROR) {
                    reason = QStringLiteral("connection to %1 lost: %2")
                                 .arg(where, QString::fromUtf8(ssh_get_error(session)));
                    break;
                }
                if (n <= 0)
                    break; // no window or socket space yet
                pending.remove(0, n);
            }
            if (!reason.isEmpty())
                break;

            const int polled = ssh_event_dopoll(
                event, pending.isEmpty() ? std::max(100, m_keepaliveIntervalMs / 4) : kBusyPollMs);
            if (polled == SSH_ERROR && !ssh_is_connected(session)) {
                reason = QStringLiteral("connection to %1 lost: %2")
                             .arg(where, QString::fromUtf8(ssh_get_error(session)));
                break;
            }

            QByteArray received;
            for (;;) {
                const int n = ssh_channel_read_nonblocking(channel, buffer.data(),
                                                           uint32_t(buffer.size()), 0);
                if (n <= 0)
                    break;
                received.append(buffer.constData(), n);
            }
            for (;;) {
                const int n = ssh_channel_read_nonblocking(channel, buffer.data(),
                                                           uint32_t(buffer.size()), 1);
                if (n <= 0)
                    break;
                if (stderrText.size() < kMaxStderr)
                    stderrText.append(buffer.constData(), n);
            }
            // Any packet from the server (data, window adjust, keepalive reply) proves it is
            // alive: dopoll handled an event that was not our wake-up.
            if ((polled == SSH_OK && !std::exchange(m_woken, false)) || !received.isEmpty())
                lastTraffic = Clock::now();
            m_woken = false;
            if (!received.isEmpty())
                post([received](SshTransport *owner, Run *run) {
                    owner->onRunBytes(run, received);
                });

            if (ssh_channel_is_eof(channel) || ssh_channel_is_closed(channel)) {
                reason = endReason(channel, stderrText, connection.usesBridge());
                break;
            }
            if (!ssh_is_connected(session)) {
                reason = QStringLiteral("connection to %1 lost: %2")
                             .arg(where, QString::fromUtf8(ssh_get_error(session)));
                break;
            }
            const Clock::time_point now = Clock::now();
            if (now - lastTraffic >= interval * m_keepaliveCountMax) {
                reason =
                    QStringLiteral("connection to %1 lost: no answer to keepalives for %2 s")
                        .arg(where)
                        .arg(std::chrono::duration_cast<std::chrono::seconds>(now - lastTraffic)
                                 .count());
                break;
            }
            if (now - lastTraffic >= interval && now - lastKeepalive >= interval) {
                // keepalive@openssh.com with want-reply: OpenSSH answers (with a failure
                // message), which counts as traffic. Non-blocking: the reply is read by the
                // next poll; a second call resolves the previous request so a new one goes out.
                ssh_send_keepalive(session);
                ssh_send_keepalive(session);
                lastKeepalive = now;
                ++m_keepalives;
            }
        }
        ssh_event_remove_fd(event, m_wakeFd);
        ssh_event_remove_session(event, session);
        ssh_event_free(event);
        ssh_set_blocking(session, 1);
        if (reason.isEmpty() && ssh_is_connected(session)) {
            // The owner closed: tell the server, so the remote helper sees the client leave.
            ssh_channel_send_eof(channel);
            ssh_channel_close(channel);
        }
        return reason;
    }

    QString endReason(ssh_channel channel, const QByteArray &stderrText, bool bridge) const
    {
        const QString where = m_endpoint.displayName();
        if (!bridge)
            return QStringLiteral("helper on %1 closed the connection").arg(where);
        const int status = ssh_channel_get_exit_status(channel);
        const QString text = QString::fromUtf8(stderrText).trimmed();
        if (status == 127)
            return QStringLiteral("'%1' not found on %2 (%3); install airlockctl there or set "
                                  "the remote command")
                .arg(m_endpoint.remoteCommand, where, text);
        if (!text.isEmpty())
            return QStringLiteral("helper bridge on %1: %2").arg(where, text);
        return QStringLiteral("helper bridge on %1 ended (exit status %2)").arg(where).arg(status);
    }

    std::mutex m_mutex;
    std::condition_variable m_condition;
    SshTransport *m_owner;
    bool m_cancelled = false;
    QByteArray m_outbox;
    const SshEndpoint m_endpoint;
    const std::shared_ptr<SshKeyCache> m_keys;
    const int m_keepaliveIntervalMs;
    const int m_keepaliveCountMax;
    const int m_connectTimeoutMs;
    const int m_wakeFd;
    bool m_woken = false; // set by onWake during ssh_event_dopoll (pump thread only)

public:
    std::atomic<int> m_keepalives = 0; // keepalive requests sent on this connection
};

SshTransport::SshTransport(SshEndpoint endpoint, SshPrompter *prompter, QObject *parent)
    : Transport(parent)
    , m_endpoint(std::move(endpoint))
    , m_prompter(prompter)
    , m_keys(std::make_shared<SshKeyCache>())
{ }

SshTransport::~SshTransport()
{
    if (m_run)
        m_run->cancel();
}

void SshTransport::open()
{
    if (m_run)
        return;
    m_lastError.clear();
    m_run = std::make_shared<Run>(this, m_endpoint, m_keys, m_keepaliveIntervalMs,
                                  m_keepaliveCountMax, m_connectTimeoutMs);
    setState(State::Connecting);
    m_run->start();
}

bool SshTransport::waitForWorkers(int timeoutMs)
{
    std::unique_lock lock(g_workersMutex);
    return g_workersDone.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                                  [] { return g_workers == 0; });
}

void SshTransport::close()
{
    if (!m_run)
        return;
    const bool wasOpen = m_state == State::Connected;
    std::exchange(m_run, {})->cancel();
    m_lastError = QStringLiteral("connection to %1 closed by the client").arg(description());
    setState(State::Disconnected);
    if (wasOpen)
        Q_EMIT disconnected(m_lastError);
}

void SshTransport::write(const QByteArray &bytes)
{
    if (m_run && m_state == State::Connected)
        m_run->send(bytes);
}

bool SshTransport::isOpen() const
{
    return m_state == State::Connected;
}

QString SshTransport::description() const
{
    return QStringLiteral("helper on %1").arg(m_endpoint.displayName());
}

void SshTransport::setKeepalive(int intervalMs, int countMax)
{
    m_keepaliveIntervalMs = std::max(100, intervalMs);
    m_keepaliveCountMax = std::max(1, countMax);
}

int SshTransport::keepalivesSent() const
{
    return m_run ? m_run->m_keepalives.load() : 0;
}

void SshTransport::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void SshTransport::onRunConnected(Run *run, bool bridge)
{
    if (run != m_run.get())
        return;
    m_usesBridge = bridge;
    setState(State::Connected);
    Q_EMIT connected();
}

void SshTransport::onRunBytes(Run *run, const QByteArray &bytes)
{
    if (run == m_run.get() && m_state == State::Connected)
        Q_EMIT bytesReceived(bytes);
}

void SshTransport::onRunFailed(Run *run, State state, const QString &reason)
{
    if (run != m_run.get())
        return;
    m_run.reset();
    m_lastError = reason;
    setState(state);
    Q_EMIT disconnected(reason);
}

} // namespace airlock

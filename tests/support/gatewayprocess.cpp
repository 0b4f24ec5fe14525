#include "gatewayprocess.h"

#include <QFile>
#include <QJsonDocument>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

namespace airlock::test {

GatewayProcess::~GatewayProcess()
{
    stop();
}

QString GatewayProcess::binaryPath()
{
    const QString fromEnvironment = qEnvironmentVariable("AIRLOCK_GATEWAY");
    if (!fromEnvironment.isEmpty())
        return fromEnvironment;
    return QStringLiteral(AIRLOCK_BINARY_DIR "/app/airlock-gateway/airlock-gateway");
}

bool GatewayProcess::spawn(int nsFd, const QString &logFile, QString *error,
                           const QList<int> &inherit)
{
    const QString program = binaryPath();
    if (!QFile::exists(program)) {
        *error =
            QStringLiteral("airlock-gateway not found at %1 (set AIRLOCK_GATEWAY)").arg(program);
        return false;
    }
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        *error = QStringLiteral("socketpair: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
        return false;
    }
    m_controlFd = fds[0];
    const int childFd = fds[1];
    m_logFile = logFile;
    m_process.setProgram(program);
    m_process.setArguments(QStringList {QStringLiteral("--control-fd"), QString::number(childFd)}
                           + m_extraArguments);
    m_process.setStandardOutputFile(logFile);
    m_process.setStandardErrorFile(logFile, QIODevice::Append);
    // In the forked child, before exec: enter the namespace and let the control fd and the
    // inherited ones survive exec (they are O_CLOEXEC in the test process, so no other child
    // inherits them).
    const bool cores = !m_coreDirectory.isEmpty();
    if (cores)
        m_process.setWorkingDirectory(m_coreDirectory);
    m_process.setChildProcessModifier([nsFd, childFd, cores, inherit] {
        if (::setns(nsFd, CLONE_NEWNET) != 0 || ::fcntl(childFd, F_SETFD, 0) != 0)
            ::_exit(126);
        for (const int fd : inherit) {
            if (::fcntl(fd, F_SETFD, 0) != 0)
                ::_exit(126);
        }
        if (cores) {
            const rlimit unlimited {RLIM_INFINITY, RLIM_INFINITY};
            if (::setrlimit(RLIMIT_CORE, &unlimited) != 0)
                ::_exit(126);
        }
    });
    m_process.start();
    const bool started = m_process.waitForStarted(10000);
    ::close(childFd);
    if (!started) {
        *error = QStringLiteral("start %1: %2").arg(program, m_process.errorString());
        return false;
    }
    m_reader = std::thread([this, fd = m_controlFd] { readLoop(fd); });
    return true;
}

bool GatewayProcess::start(int nsFd, const QString &logFile, QJsonObject config, QString *error)
{
    if (!spawn(nsFd, logFile, error))
        return false;
    config.insert(QStringLiteral("type"), QStringLiteral("config"));
    if (!send(config)) {
        *error = QStringLiteral("cannot write the config message");
        return false;
    }
    return true;
}

bool GatewayProcess::send(const QJsonObject &message)
{
    return send(message, QByteArray());
}

qint64 GatewayProcess::pid() const
{
    return m_process.state() == QProcess::Running ? m_process.processId() : 0;
}

std::optional<QJsonObject> GatewayProcess::waitForMessage(const QString &type, int timeoutMs)
{
    return waitFor(
        m_typedSeen,
        [&](const QJsonObject &message) {
            return message.value(QStringLiteral("type")).toString() == type;
        },
        timeoutMs);
}

std::optional<QJsonObject>
GatewayProcess::waitFor(const std::function<bool(const QJsonObject &)> &match, int timeoutMs)
{
    return waitFor(m_consumed, match, timeoutMs);
}

std::optional<QJsonObject>
GatewayProcess::waitFor(qsizetype &cursor, const std::function<bool(const QJsonObject &)> &match,
                        int timeoutMs)
{
    std::unique_lock lock(m_mutex);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    for (;;) {
        while (cursor < m_all.size()) {
            const QJsonObject message = m_all.at(cursor++);
            if (&cursor == &m_typedSeen
                && message.value(QStringLiteral("type")).toString() == u"egress")
                continue;
            if (match(message))
                return message;
        }
        if (m_eof || m_changed.wait_until(lock, deadline) == std::cv_status::timeout)
            return std::nullopt;
    }
}

bool GatewayProcess::send(QJsonObject message, const QByteArray &payload)
{
    if (!payload.isEmpty())
        message.insert(QStringLiteral("payloadBytes"), payload.size());
    return sendRaw(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n' + payload);
}

bool GatewayProcess::sendRaw(const QByteArray &line)
{
    if (m_controlFd < 0)
        return false;
    qsizetype done = 0;
    while (done < line.size()) {
        const ssize_t n =
            ::send(m_controlFd, line.constData() + done, size_t(line.size() - done), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += n;
    }
    return true;
}

void GatewayProcess::readLoop(int fd)
{
    QByteArray buffer;
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        buffer.append(chunk, qsizetype(n));
        qsizetype newline;
        while ((newline = buffer.indexOf('\n')) >= 0) {
            const QByteArray line = buffer.left(newline);
            buffer.remove(0, newline + 1);
            QJsonParseError parseError {};
            const QJsonDocument document = QJsonDocument::fromJson(line, &parseError);
            std::lock_guard lock(m_mutex);
            if (!document.isObject()) {
                m_all.append(
                    QJsonObject {{QStringLiteral("type"), QStringLiteral("invalid")},
                                 {QStringLiteral("line"), QString::fromUtf8(line.left(500))}});
            } else {
                m_all.append(document.object());
                if (document.object().value(QStringLiteral("type")).toString() == u"egress")
                    m_events.append(document.object().value(QStringLiteral("event")).toObject());
            }
            m_changed.notify_all();
        }
    }
    std::lock_guard lock(m_mutex);
    m_eof = true;
    m_changed.notify_all();
}

bool GatewayProcess::waitReady(int timeoutMs, QString *error)
{
    std::unique_lock lock(m_mutex);
    const auto find = [this](const QString &type) -> std::optional<QJsonObject> {
        for (const QJsonObject &message : std::as_const(m_all))
            if (message.value(QStringLiteral("type")).toString() == type)
                return message;
        return std::nullopt;
    };
    m_changed.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] {
        return m_eof || find(QStringLiteral("ready")) || find(QStringLiteral("fatal"));
    });
    if (find(QStringLiteral("ready")))
        return true;
    if (const auto fatal = find(QStringLiteral("fatal")))
        *error = QStringLiteral("gateway fatal: ")
            + QString::fromUtf8(QJsonDocument(*fatal).toJson(QJsonDocument::Compact));
    else if (m_eof)
        *error = QStringLiteral("the gateway closed its control socket before ready");
    else
        *error = QStringLiteral("no ready message within %1 ms").arg(timeoutMs);
    return false;
}

QJsonObject GatewayProcess::readyMessage() const
{
    std::lock_guard lock(m_mutex);
    for (const QJsonObject &message : m_all) {
        if (message.value(QStringLiteral("type")).toString() == u"ready")
            return message;
    }
    return {};
}

void GatewayProcess::closeControl()
{
    if (m_controlFd >= 0)
        ::shutdown(m_controlFd, SHUT_WR);
}

int GatewayProcess::waitForExit(int timeoutMs)
{
    if (m_process.state() != QProcess::NotRunning && !m_process.waitForFinished(timeoutMs))
        return -1;
    return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
}

void GatewayProcess::stop()
{
    if (m_controlFd >= 0)
        ::shutdown(m_controlFd, SHUT_WR); // EOF for the gateway: shut down
    if (m_process.state() != QProcess::NotRunning && !m_process.waitForFinished(5000)) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
    if (m_controlFd >= 0)
        ::shutdown(m_controlFd, SHUT_RDWR);
    if (m_reader.joinable())
        m_reader.join();
    if (m_controlFd >= 0)
        ::close(m_controlFd);
    m_controlFd = -1;
}

bool GatewayProcess::isRunning() const
{
    return m_process.state() == QProcess::Running;
}

QList<QJsonObject> GatewayProcess::events() const
{
    std::lock_guard lock(m_mutex);
    return m_events;
}

void GatewayProcess::mark()
{
    std::lock_guard lock(m_mutex);
    m_mark = m_events.size();
}

QList<QJsonObject> GatewayProcess::eventsSinceMark() const
{
    std::lock_guard lock(m_mutex);
    return m_events.mid(m_mark);
}

std::optional<QJsonObject>
GatewayProcess::waitForEvent(const std::function<bool(const QJsonObject &)> &match,
                             int timeoutMs) const
{
    std::unique_lock lock(m_mutex);
    std::optional<QJsonObject> found;
    m_changed.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] {
        for (qsizetype i = m_mark; i < m_events.size(); ++i)
            if (match(m_events[i])) {
                found = m_events[i];
                return true;
            }
        return m_eof;
    });
    return found;
}

QString GatewayProcess::logTail(int lines) const
{
    QFile file(m_logFile);
    if (!file.open(QIODevice::ReadOnly))
        return QString();
    const QList<QByteArray> all = file.readAll().split('\n');
    return QString::fromUtf8(all.mid(std::max<qsizetype>(0, all.size() - lines)).join('\n'));
}

} // namespace airlock::test

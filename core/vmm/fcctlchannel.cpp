#include "core/vmm/fcctlchannel.h"

#include "core/fcctl/fcctlprotocol.h"
#include "core/model/printabletext.h"
#include "core/protocol/lineframer.h"
#include "core/vmm/processreaper.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <QTimer>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcFcctl, "airlock.vmm.fcctl")
constexpr int kReapGraceMs = 2000;
constexpr int kReapKillWaitMs = 2000;
} // namespace

FcctlChannel::FcctlChannel(QObject *parent) : QObject(parent) { }

FcctlChannel::~FcctlChannel()
{
    for (auto &[id, pending] : m_pending)
        delete pending.timer;
    m_pending.clear();
    delete std::exchange(m_notifier, nullptr);
    if (m_control >= 0)
        ::close(std::exchange(m_control, -1));
    if (m_process) {
        m_process->setParent(nullptr);
        ProcessReaper::reap(std::exchange(m_process, nullptr), QStringLiteral("airlock-fcctl"),
                            kReapGraceMs, kReapKillWaitMs, {});
    }
}

Result<void> FcctlChannel::spawn(const QString &program, const QString &apiSocket,
                                 const QString &logPath, const VmmCredentials &credentials)
{
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return fail(
            ErrorKind::OperationFailed,
            QStringLiteral("socketpair: %1").arg(QString::fromLocal8Bit(std::strerror(errno))));
    SpawnOptions options;
    options.inheritedFds = {{pair[1], 3}};
    options.dropPrivileges = true;
    auto pid = VmmProcess::spawn({program, QStringLiteral("--control-fd"), QStringLiteral("3"),
                                  QStringLiteral("--api-sock"), apiSocket},
                                 logPath, credentials, options);
    ::close(pair[1]);
    if (!pid) {
        ::close(pair[0]);
        return fail(ErrorKind::OperationFailed,
                    QStringLiteral("cannot start airlock-fcctl (%1): %2")
                        .arg(program, pid.error().message));
    }
    m_process = new VmmProcess(this);
    if (auto watched = m_process->watch(*pid); !watched) {
        ::close(pair[0]);
        int status;
        ::waitpid(*pid, &status, 0);
        delete std::exchange(m_process, nullptr);
        return fail(ErrorKind::OperationFailed, QStringLiteral("airlock-fcctl exited at once"));
    }
    connect(m_process, &VmmProcess::exited, this, [this] {
        breakChannel(Error {ErrorKind::Disconnected, QStringLiteral("airlock-fcctl exited")});
    });
    m_control = pair[0];
    ::fcntl(m_control, F_SETFL, ::fcntl(m_control, F_GETFL) | O_NONBLOCK);
    m_framer = std::make_unique<protocol::LineFramer>(fcctl::kMaxLineBytes);
    m_notifier = new QSocketNotifier(m_control, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &FcctlChannel::onReadable);
    qCDebug(lcFcctl) << "airlock-fcctl pid" << *pid << "uid" << credentials.uid;
    return {};
}

void FcctlChannel::later(Reply reply, const Result<QJsonObject> &result)
{
    QTimer::singleShot(0, this, [reply = std::move(reply), result] { reply(result); });
}

void FcctlChannel::send(QLatin1StringView op, QJsonObject fields, int timeoutMs, Reply reply)
{
    if (m_broken)
        return later(std::move(reply), std::unexpected(*m_broken));
    if (m_control < 0)
        return later(std::move(reply),
                     fail(ErrorKind::InvalidState, QStringLiteral("airlock-fcctl is not running")));
    const qint64 id = m_nextId++;
    fields.insert(QStringLiteral("id"), id);
    fields.insert(QStringLiteral("op"), QString(op));
    const QByteArray line = QJsonDocument(fields).toJson(QJsonDocument::Compact) + '\n';
    // Commands are a few hundred bytes into an empty socket buffer: a short write means the
    // channel is broken, not full.
    ssize_t put;
    do {
        put = ::send(m_control, line.constData(), size_t(line.size()), MSG_NOSIGNAL);
    } while (put < 0 && errno == EINTR);
    if (put != line.size()) {
        breakChannel(Error {ErrorKind::Disconnected,
                            QStringLiteral("cannot send to airlock-fcctl: %1")
                                .arg(QString::fromLocal8Bit(std::strerror(errno)))});
        return later(std::move(reply), std::unexpected(*m_broken));
    }
    auto *timer = new QTimer(this);
    timer->setSingleShot(true);
    connect(timer, &QTimer::timeout, this, [this, id, op, timeoutMs] {
        auto it = m_pending.find(id);
        if (it == m_pending.end())
            return;
        Reply expired = std::move(it->second.reply);
        it->second.timer->deleteLater();
        m_pending.erase(it);
        later(
            std::move(expired),
            fail(
                ErrorKind::Timeout,
                QStringLiteral("airlock-fcctl did not answer %1 in %2 ms").arg(op).arg(timeoutMs)));
    });
    timer->start(timeoutMs);
    m_pending.emplace(id, Pending {std::move(reply), timer});
}

void FcctlChannel::onReadable()
{
    char buffer[4096];
    const ssize_t got = ::read(m_control, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (got <= 0)
        return breakChannel(
            Error {ErrorKind::Disconnected, QStringLiteral("airlock-fcctl closed its channel")});
    m_framer->append(QByteArray(buffer, qsizetype(got)));
    while (m_framer) {
        auto line = m_framer->next();
        if (!line)
            return;
        auto taken = *line ? take(**line) : Result<void>(std::unexpected(line->error()));
        if (!taken)
            return breakChannel(Error {
                ErrorKind::OperationFailed,
                QStringLiteral("airlock-fcctl broke its protocol: %1").arg(taken.error().message)});
    }
}

Result<void> FcctlChannel::take(const QByteArray &line)
{
    const QJsonDocument document = QJsonDocument::fromJson(line);
    const QJsonObject answer = document.object();
    const QJsonValue idValue = answer.value(QStringLiteral("id"));
    const QJsonValue ok = answer.value(QStringLiteral("ok"));
    if (!document.isObject() || !idValue.isDouble() || !ok.isBool())
        return fail(ErrorKind::OperationFailed, QStringLiteral("an answer without id and ok"));
    auto it = m_pending.find(qint64(idValue.toDouble()));
    if (it == m_pending.end())
        // A command that timed out may still be answered; anything else is a lie.
        return idValue.toDouble() > 0 && idValue.toDouble() < double(m_nextId)
            ? Result<void>()
            : fail(ErrorKind::OperationFailed, QStringLiteral("an answer to no command"));
    Result<QJsonObject> result;
    if (ok.toBool()) {
        QJsonObject fields = answer;
        fields.remove(QStringLiteral("id"));
        fields.remove(QStringLiteral("ok"));
        result = fields;
    } else {
        const QJsonObject error = answer.value(QStringLiteral("error")).toObject();
        const QJsonValue message = error.value(QStringLiteral("message"));
        if (!message.isString())
            return fail(ErrorKind::OperationFailed, QStringLiteral("an error without a message"));
        const ErrorKind kind = errorKindFromName(error.value(QStringLiteral("kind")).toString())
                                   .value_or(ErrorKind::OperationFailed);
        result = fail(kind, printableText(message.toString().left(fcctl::kMaxMessageChars)));
    }
    Reply reply = std::move(it->second.reply);
    delete it->second.timer;
    m_pending.erase(it);
    // Later: the reply may end this channel's owner, and more lines may follow.
    later(std::move(reply), result);
    return {};
}

void FcctlChannel::breakChannel(const Error &error)
{
    if (!m_broken) {
        m_broken = error;
        if (error.kind != ErrorKind::Disconnected)
            qCWarning(lcFcctl).noquote() << error.message;
        delete std::exchange(m_notifier, nullptr);
        m_framer.reset();
        if (m_control >= 0)
            ::close(std::exchange(m_control, -1));
        if (m_process && error.kind != ErrorKind::Disconnected)
            m_process->sendSignal(SIGKILL);
    }
    failAll(error);
}

void FcctlChannel::failAll(const Error &error)
{
    auto pending = std::exchange(m_pending, {});
    for (auto &[id, entry] : pending) {
        delete entry.timer;
        later(std::move(entry.reply), std::unexpected(error));
    }
}

} // namespace airlock

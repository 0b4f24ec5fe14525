#include "core/vmm/guestagent.h"

#include <QDeadlineTimer>
#include <QIODevice>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QPointer>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <algorithm>

namespace airlock {

namespace {

Q_LOGGING_CATEGORY(lcAgent, "airlock.vmm.agent")

/// Rejections logged per connection; the rest are only counted.
constexpr qint64 kLoggedRejections = 5;

bool isPlainWord(QStringView text)
{
    if (text.isEmpty() || text.size() > 255)
        return false;
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        const bool ok = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9')
            || u == '.' || u == '-' || u == '_' || u == ':' || u == '/';
        if (!ok)
            return false;
    }
    return true;
}

bool isNonce(QByteArrayView text)
{
    if (text.size() != 16)
        return false;
    for (const char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

} // namespace

GuestAgent::GuestAgent(QIODevice *device, QObject *parent) : QObject(parent), m_device(device)
{
    m_device->setParent(this);
    // Bounded: when we stop reading (below), Qt stops pulling from the socket, QEMU stops
    // pulling from the port, and a chatty guest blocks on its own writes.
    if (auto *socket = qobject_cast<QLocalSocket *>(m_device)) {
        socket->setReadBufferSize(kReadBufferBytes);
        connect(socket, &QLocalSocket::disconnected, this, &GuestAgent::onDisconnected);
    }
    connect(m_device, &QIODevice::readyRead, this, &GuestAgent::readPending);
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &GuestAgent::onTimeout);
}

GuestAgent::~GuestAgent()
{
    // A refresh in flight is never answered: whoever waits learns it from the VMM's exit.
    m_done = nullptr;
    if (auto *socket = qobject_cast<QLocalSocket *>(m_device))
        socket->abort();
}

Result<QByteArray> GuestAgent::encode(const GuestIdentity &identity, const QString &nonce)
{
    const auto invalid = [](const QString &what) {
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("guest identity: %1 cannot be sent to the agent").arg(what));
    };
    if (!isNonce(nonce.toLatin1()))
        return invalid(QStringLiteral("nonce"));
    // The body after the begin line, whose length the begin line announces: the agent reads it
    // with one read instead of a shell `read` per byte (each a syscall in a cold TCG guest).
    QByteArray out;
    const auto field = [&out](const char *name, const QString &value) {
        if (!value.isEmpty())
            out += QByteArray(name) + ' ' + value.toLatin1() + '\n';
    };
    for (const QString &value :
         {identity.hostname, identity.mac, identity.address, identity.gateway, identity.dns}) {
        if (!value.isEmpty() && !isPlainWord(value))
            return invalid(QStringLiteral("'%1'").arg(value));
    }
    if (!identity.address.isEmpty() && (identity.prefixLength < 0 || identity.prefixLength > 32))
        return invalid(QStringLiteral("prefix length"));
    if (!identity.entropy.isEmpty())
        out += "entropy " + identity.entropy.toBase64() + '\n';
    field("name", identity.hostname);
    field("mac", identity.mac);
    if (!identity.address.isEmpty())
        field("addr", QStringLiteral("%1/%2").arg(identity.address).arg(identity.prefixLength));
    field("gw", identity.gateway);
    field("dns", identity.dns);
    static const QRegularExpression fileName(QStringLiteral("^[a-zA-Z0-9_-][a-zA-Z0-9._-]*$"));
    for (const SeedFile &file : identity.files) {
        if (!fileName.match(file.path).hasMatch() || file.path.size() > 64)
            return invalid(QStringLiteral("file name '%1'").arg(file.path));
        if (file.content.size() > kMaxFileBytes)
            return invalid(
                QStringLiteral("file '%1' (over %2 bytes)").arg(file.path).arg(kMaxFileBytes));
        if (file.mode < 0 || file.mode > 07777)
            return invalid(QStringLiteral("mode of '%1'").arg(file.path));
        out += "file " + file.path.toLatin1() + ' ' + QByteArray::number(file.mode, 8) + ' '
            + file.content.toBase64() + '\n';
    }
    out += "commit " + nonce.toLatin1() + '\n';
    if (out.size() > kMaxBodyBytes)
        return invalid(QStringLiteral("a refresh of %1 bytes").arg(out.size()));
    return "begin " + nonce.toLatin1() + ' ' + QByteArray::number(out.size()) + '\n' + out;
}

void GuestAgent::refresh(const GuestIdentity &identity, int timeoutMs, Done done)
{
    if (m_done) {
        done(fail(ErrorKind::Busy, QStringLiteral("a refresh of this guest is under way")));
        return;
    }
    const QString nonce =
        QString::number(QRandomGenerator::system()->generate64(), 16).rightJustified(16, u'0');
    auto lines = encode(identity, nonce);
    if (!lines) {
        done(std::unexpected(lines.error()));
        return;
    }
    auto *socket = qobject_cast<QLocalSocket *>(m_device);
    if (!m_device->isOpen() || (socket && socket->state() != QLocalSocket::ConnectedState)) {
        done(fail(ErrorKind::OperationFailed, QStringLiteral("the guest agent channel is closed")));
        return;
    }
    m_waitingFor = nonce;
    expect(timeoutMs, std::move(done));
    m_device->write(*lines);
}

void GuestAgent::awaitReady(int timeoutMs, Done done)
{
    if (m_done) {
        done(fail(ErrorKind::Busy, QStringLiteral("a refresh of this guest is under way")));
        return;
    }
    if (m_ready) {
        done({});
        return;
    }
    m_awaitingReady = true;
    expect(timeoutMs, std::move(done));
}

void GuestAgent::expect(int timeoutMs, Done done)
{
    m_done = std::move(done);
    m_budgetLines = kMaxAnswerLines;
    m_budgetBytes = kMaxAnswerBytes;
    m_timeoutMs = timeoutMs;
    m_timer.start(timeoutMs);
    // What the guest sent before waits unread in the buffer (readyRead will not repeat for it);
    // read it from the event loop, so that `done` is never called from inside the caller.
    QMetaObject::invokeMethod(this, &GuestAgent::readPending, Qt::QueuedConnection);
}

Result<void> GuestAgent::refreshAndWait(const GuestIdentity &identity, int timeoutMs)
{
    std::optional<Result<void>> result;
    refresh(identity, timeoutMs, [&result](const Result<void> &done) { result = done; });
    auto *socket = qobject_cast<QLocalSocket *>(m_device);
    while (!result) {
        // Flushes our lines first (a local socket writes from the event loop otherwise).
        if (m_device->bytesToWrite() > 0)
            m_device->waitForBytesWritten(100);
        else if (!m_device->waitForReadyRead(100) && socket
                 && socket->state() != QLocalSocket::ConnectedState)
            onDisconnected();
        if (!result && m_timer.isActive() && m_timer.remainingTime() == 0)
            onTimeout();
        readPending();
    }
    return *result;
}

void GuestAgent::finish(const Result<void> &result)
{
    m_timer.stop();
    m_waitingFor.clear();
    m_awaitingReady = false;
    m_budgetLines = 0;
    m_budgetBytes = 0;
    if (Done done = std::exchange(m_done, nullptr))
        done(result);
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

void GuestAgent::onDisconnected()
{
    if (!m_done)
        return;
    finish(fail(ErrorKind::OperationFailed,
                m_awaitingReady
                    ? QStringLiteral("the guest agent channel closed before the agent started")
                    : QStringLiteral("the guest agent channel closed during the refresh")));
}

void GuestAgent::readPending()
{
    // Only while we expect something, and only so much per expected answer: a guest cannot
    // make the helper spend time on lines nobody waits for. What is not read stays in the
    // bounded socket buffer, and a chatty guest blocks on its own writes.
    const QPointer<GuestAgent> self(this);
    while (m_done && m_budgetBytes > 0 && m_device->bytesAvailable() > 0) {
        char chunk[4096];
        // Peeked, and only what was parsed is consumed: when the window closes after a line,
        // the rest waits for the next window, which starts at a line boundary.
        const qint64 n = m_device->peek(chunk, std::min<qint64>(sizeof chunk, m_budgetBytes));
        if (n <= 0)
            break;
        QByteArrayView data(chunk, n);
        bool closed = false;
        while (!data.isEmpty() && !closed) {
            const qsizetype newline = data.indexOf('\n');
            const QByteArrayView piece = newline < 0 ? data : data.first(newline);
            if (!m_discarding) {
                if (m_buffer.size() + piece.size() >= kMaxLineBytes) {
                    reject("line too long");
                    m_buffer.clear();
                    m_discarding = true;
                } else {
                    m_buffer.append(piece);
                }
            }
            if (newline < 0) {
                data = {};
                break;
            }
            data = data.sliced(newline + 1);
            const QByteArray line = std::exchange(m_buffer, {});
            const bool complete = !std::exchange(m_discarding, false);
            --m_budgetLines;
            if (complete)
                handleLine(line);
            closed = !m_done || m_budgetLines <= 0;
        }
        const qint64 consumed = n - data.size();
        if (!self) // `done` destroyed this agent (a template guest that gets killed)
            return;
        m_device->skip(consumed);
        m_budgetBytes -= consumed;
        if (m_done && (m_budgetLines <= 0 || m_budgetBytes <= 0)) {
            overBudget();
            if (!self)
                return;
        }
    }
}

void GuestAgent::overBudget()
{
    finish(
        fail(ErrorKind::OperationFailed,
             QStringLiteral("the guest agent sent over %1 lines or %2 bytes without %3")
                 .arg(kMaxAnswerLines)
                 .arg(kMaxAnswerBytes)
                 .arg(m_awaitingReady ? QStringLiteral("starting") : QStringLiteral("answering"))));
}

void GuestAgent::handleLine(QByteArrayView line)
{
    if (line == "ready 1") {
        if (!m_ready) {
            m_ready = true;
            if (m_awaitingReady)
                finish({});
        }
        return;
    }
    const auto nonceOf = [](QByteArrayView rest) {
        return rest.first(qMin<qsizetype>(16, rest.size()));
    };
    if (line.startsWith("ack ") && isNonce(line.sliced(4))) {
        if (!m_waitingFor.isEmpty() && line.sliced(4) == m_waitingFor.toLatin1())
            finish({});
        else
            reject("acknowledgement of another refresh");
        return;
    }
    if (line.startsWith("fail ") && line.size() > 22 && isNonce(nonceOf(line.sliced(5)))
        && line.at(21) == ' ') {
        const QByteArrayView step = line.sliced(22);
        const bool plain = step.size() <= 16
            && std::all_of(step.begin(), step.end(), [](char c) { return c >= 'a' && c <= 'z'; });
        if (plain && !m_waitingFor.isEmpty() && line.sliced(5, 16) == m_waitingFor.toLatin1()) {
            finish(fail(ErrorKind::OperationFailed,
                        QStringLiteral("the guest agent could not apply its new identity (step "
                                       "%1)")
                            .arg(QString::fromLatin1(step))));
            return;
        }
    }
    reject("unexpected line");
}

void GuestAgent::reject(const char *why)
{
    ++m_rejected;
    if (m_rejected <= kLoggedRejections)
        qCWarning(lcAgent, "dropping a line from the guest agent: %s%s", why,
                  m_rejected == kLoggedRejections ? " (further ones are only counted)" : "");
}

} // namespace airlock

#include "app/airlockctl/consolesession.h"

#include "app/airlockctl/rawterminal.h"
#include "app/airlockctl/stdinreader.h"
#include "core/client/consolestream.h"
#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QJsonObject>
#include <QTimer>

#include <unistd.h>

namespace airlock::ctl {

namespace {

constexpr int kDetachGraceMs = 2000;

} // namespace

ConsoleSession::ConsoleSession(HelperClient *client, const QString &sandbox, int inFd, int outFd,
                               QTextStream &err, const Options &options, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_sandbox(sandbox)
    , m_inFd(inFd)
    , m_outFd(outFd)
    , m_err(err)
    , m_options(options)
{ }

ConsoleSession::~ConsoleSession()
{
    delete m_terminal;
}

int ConsoleSession::run()
{
    // Subscribe before looking at the state, so a stop in between is not missed.
    const Result<QJsonValue> subscribed =
        m_client->callSync(QString::fromLatin1(protocol::method::EventsSubscribe), QJsonObject());
    if (!subscribed) {
        m_err << "airlockctl: " << subscribed.error().message << Qt::endl;
        return 1;
    }
    const Result<QJsonValue> sandbox =
        m_client->callSync(QString::fromLatin1(protocol::method::SandboxGet),
                           QJsonObject {{QStringLiteral("name"), m_sandbox}});
    if (!sandbox) {
        m_err << "airlockctl: " << sandbox.error().message << Qt::endl;
        return 1;
    }
    if (sandbox->toObject().value(QStringLiteral("state")).toString()
        == QStringLiteral("stopped")) {
        m_err << QStringLiteral("airlockctl: sandbox '%1' is not running (start it with: "
                                "airlockctl start %1)")
                     .arg(m_sandbox)
              << Qt::endl;
        return 1;
    }

    connect(m_client, &HelperClient::notificationReceived, this, &ConsoleSession::onNotification);
    connect(m_client, &HelperClient::connectionLost, this, [this](const Error &error) {
        finish(1, QStringLiteral("airlockctl: %1").arg(error.message));
    });

    m_terminal = new RawTerminal(m_inFd);
    const bool interactive = m_terminal->enable();

    m_stream = new ConsoleStream(m_client, m_sandbox, this);
    // A script wants the answer to its input, not the boot log nor what others typed before.
    m_stream->setReplay(interactive || m_options.scrollback);
    m_filter.setDropTerminalQueries(!interactive);
    connect(m_stream, &ConsoleStream::output, this, [this](const QByteArray &bytes) {
        // The guest is hostile: its output must not reach the user's clipboard, window title
        // or terminal-specific control strings.
        if (!writeAll(m_outFd, m_filter.feed(bytes)))
            finish(1, QStringLiteral("airlockctl: cannot write the console output"));
        else if (m_inputEnded)
            armIdleTimer(); // the guest is still answering
    });
    connect(m_stream, &ConsoleStream::writesDone, this, [this] {
        if (m_inputEnded)
            armIdleTimer();
    });
    connect(m_stream, &ConsoleStream::failed, this, [this](const Error &error) {
        // A write that raced the guest powering off: sandbox.changed ends the session.
        if (error.kind == ErrorKind::InvalidState)
            return;
        finish(1, QStringLiteral("airlockctl: %1").arg(error.message));
    });

    if (interactive)
        m_err << QStringLiteral("Connected to the console of '%1'. Press Ctrl-] to detach.\r")
                     .arg(m_sandbox)
              << Qt::endl;

    m_idle = new QTimer(this);
    m_idle->setSingleShot(true);
    m_idle->setInterval(m_options.idleTimeoutMs);
    connect(m_idle, &QTimer::timeout, this, [this] { detach(false); });

    m_reader = new StdinReader(m_inFd, this);
    connect(m_reader, &StdinReader::bytesRead, this, &ConsoleSession::onInput);
    if (!interactive && !m_options.follow)
        connect(m_reader, &StdinReader::endOfInput, this, &ConsoleSession::onEndOfInput);
    m_stream->attach();
    m_reader->start();
    if (!m_finished)
        m_loop.exec();
    return m_exitCode;
}

void ConsoleSession::onInput(const QByteArray &bytes)
{
    if (m_detaching)
        return;
    const qsizetype detachAt = bytes.indexOf(kDetachByte);
    if (detachAt < 0) {
        m_stream->write(bytes);
        return;
    }
    if (detachAt > 0)
        m_stream->write(bytes.left(detachAt));
    detach(true);
}

void ConsoleSession::onEndOfInput()
{
    // The guest may still be answering: the session ends only once it has been quiet.
    m_inputEnded = true;
    armIdleTimer();
}

void ConsoleSession::armIdleTimer()
{
    if (m_detaching || m_finished)
        return;
    if (m_stream->pendingWrites() > 0) {
        m_idle->stop(); // writesDone() arms it: the quiet period starts after the last byte
        return;
    }
    m_idle->start();
}

void ConsoleSession::detach(bool byUser)
{
    if (m_detaching)
        return;
    m_detaching = true;
    m_reader->stop();
    const QString message =
        byUser ? QStringLiteral("[detached from the console of '%1']").arg(m_sandbox) : QString();
    m_stream->detach([this, message] { finish(0, message); });
    // The helper answers at once; do not let a wedged one keep the user's terminal hostage.
    QTimer::singleShot(kDetachGraceMs, this, [this, message] { finish(0, message); });
}

void ConsoleSession::onNotification(const QString &method, const QJsonObject &params)
{
    if (method == QLatin1String(protocol::notification::SandboxChanged)) {
        const QJsonObject sandbox = params.value(QStringLiteral("sandbox")).toObject();
        if (sandbox.value(QStringLiteral("name")).toString() != m_sandbox)
            return;
        if (sandbox.value(QStringLiteral("state")).toString() == QStringLiteral("stopped")) {
            const QString reason = sandbox.value(QStringLiteral("stateReason")).toString();
            finish(0,
                   reason.isEmpty()
                       ? QStringLiteral("[sandbox '%1' stopped]").arg(m_sandbox)
                       : QStringLiteral("[sandbox '%1' stopped: %2]").arg(m_sandbox, reason));
        }
    } else if (method == QLatin1String(protocol::notification::SandboxRemoved)) {
        if (params.value(QStringLiteral("name")).toString() == m_sandbox)
            finish(0, QStringLiteral("[sandbox '%1' removed]").arg(m_sandbox));
    }
}

void ConsoleSession::finish(int code, const QString &message)
{
    if (m_finished)
        return;
    m_finished = true;
    m_exitCode = code;
    if (m_reader)
        m_reader->stop();
    const bool wasRaw = m_terminal && m_terminal->isRaw();
    if (m_terminal)
        m_terminal->restore();
    if (wasRaw || !message.isEmpty()) {
        // Start on a fresh line: the guest's prompt usually leaves the cursor mid-line.
        m_err << "\n";
    }
    if (!message.isEmpty())
        m_err << message << "\n";
    m_err.flush();
    m_loop.exit(code);
}

} // namespace airlock::ctl

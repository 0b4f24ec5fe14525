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
                               QTextStream &err, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_sandbox(sandbox)
    , m_inFd(inFd)
    , m_outFd(outFd)
    , m_err(err)
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

    m_stream = new ConsoleStream(m_client, m_sandbox, this);
    connect(m_stream, &ConsoleStream::output, this, [this](const QByteArray &bytes) {
        // The guest is hostile: its output must not reach the user's clipboard, window title
        // or terminal-specific control strings.
        if (!writeAll(m_outFd, m_filter.feed(bytes)))
            finish(1, QStringLiteral("airlockctl: cannot write the console output"));
    });
    connect(m_stream, &ConsoleStream::failed, this, [this](const Error &error) {
        // A write that raced the guest powering off: sandbox.changed ends the session.
        if (error.kind == ErrorKind::InvalidState)
            return;
        finish(1, QStringLiteral("airlockctl: %1").arg(error.message));
    });

    m_terminal = new RawTerminal(m_inFd);
    if (m_terminal->enable())
        m_err << QStringLiteral("Connected to the console of '%1'. Press Ctrl-] to detach.\r")
                     .arg(m_sandbox)
              << Qt::endl;

    m_reader = new StdinReader(m_inFd, this);
    connect(m_reader, &StdinReader::bytesRead, this, &ConsoleSession::onInput);
    // End of piped input is not the end of the session: the guest may still be answering.
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
    detach();
}

void ConsoleSession::detach()
{
    m_detaching = true;
    m_reader->stop();
    m_stream->detach([this] { finish(0); });
    // The helper answers at once; do not let a wedged one keep the user's terminal hostage.
    QTimer::singleShot(kDetachGraceMs, this, [this] { finish(0); });
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

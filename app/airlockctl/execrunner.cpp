#include "app/airlockctl/execrunner.h"

#include "app/airlockctl/rawterminal.h"
#include "app/airlockctl/stdinreader.h"
#include "app/airlockctl/windowsizewatcher.h"
#include "core/client/helperclient.h"
#include "core/protocol/methods.h"

#include <QJsonArray>

#include <algorithm>
#include <utility>

#include <unistd.h>

namespace airlock::ctl {

namespace {

namespace method = protocol::method;
namespace notification = protocol::notification;

/// Input bytes per exec.input call (the helper's limit).
constexpr qsizetype kInputChunkBytes = 64 * 1024;
/// The start waits this long for the guest at most (the agent's own timeouts come first).
constexpr int kStartTimeoutMs = 60000;

} // namespace

ExecRunner::ExecRunner(HelperClient *client, QJsonObject start, int inFd, int outFd, int errFd,
                       QTextStream &err, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_start(std::move(start))
    , m_sandbox(m_start.value(QStringLiteral("name")).toString())
    , m_inFd(inFd)
    , m_outFd(outFd)
    , m_errFd(errFd)
    , m_err(err)
    , m_filterOut(::isatty(outFd) == 1)
    , m_filterErr(::isatty(errFd) == 1)
{ }

ExecRunner::~ExecRunner()
{
    delete m_terminal;
}

int ExecRunner::run()
{
    connect(m_client, &HelperClient::notificationReceived, this, &ExecRunner::onNotification);
    connect(m_client, &HelperClient::connectionLost, this, [this](const Error &error) {
        finish(kExitUnavailable,
               QStringLiteral("the connection to the helper was lost: %1").arg(error.message));
    });
    if (const QJsonValue pty = m_start.value(QStringLiteral("pty")); pty.isObject()) {
        m_terminal = new RawTerminal(m_inFd);
        m_terminal->enable(); // a pipe stays as it is
        m_sentRows = m_wantedRows = pty[QStringLiteral("rows")].toInt();
        m_sentCols = m_wantedCols = pty[QStringLiteral("cols")].toInt();
        const int sizeFd = ::isatty(m_outFd) ? m_outFd : m_inFd;
        if (::isatty(sizeFd)) {
            m_sizeWatcher = new WindowSizeWatcher(sizeFd, this);
            connect(m_sizeWatcher, &WindowSizeWatcher::changed, this, &ExecRunner::onResized);
            // A change between reading the size for exec.start and now.
            int rows = 0;
            int cols = 0;
            if (WindowSizeWatcher::currentSize(sizeFd, &rows, &cols))
                onResized(rows, cols);
        }
    }
    m_client->call(
        QString::fromLatin1(method::ExecStart), m_start,
        [this](const Result<QJsonValue> &answer) {
            if (!answer)
                return finish(kExitUnavailable, answer.error().message);
            onStarted(quint32(answer->toObject().value(QStringLiteral("pid")).toInteger()));
        },
        kStartTimeoutMs);
    if (!m_finished)
        m_loop.exec();
    delete m_terminal;
    m_terminal = nullptr;
    return m_exitCode;
}

void ExecRunner::onStarted(quint32 pid)
{
    m_pid = pid;
    if (m_start.value(QStringLiteral("stdin")).toBool()) {
        m_reader = new StdinReader(m_inFd, this);
        connect(m_reader, &StdinReader::bytesRead, this, &ExecRunner::onInput);
        connect(m_reader, &StdinReader::endOfInput, this, [this] {
            m_inputEnded = true;
            sendInput();
        });
        m_reader->start();
    }
    sendSize(); // a change before the pid was known
    while (!m_early.empty() && !m_finished) {
        auto [method, params] = std::move(m_early.front());
        m_early.pop_front();
        onNotification(method, params);
    }
}

void ExecRunner::onNotification(const QString &method, const QJsonObject &params)
{
    if (m_finished || params.value(QStringLiteral("sandbox")).toString() != m_sandbox)
        return;
    if (m_pid == 0) {
        if (method.startsWith(QLatin1String("exec.")))
            m_early.emplace_back(method, params);
        return;
    }
    if (params.value(QStringLiteral("pid")).toInteger() != m_pid)
        return;
    if (method == QLatin1String(notification::ExecOutput)) {
        const QByteArray data =
            QByteArray::fromBase64(params.value(QStringLiteral("data")).toString().toLatin1());
        const bool toStdout = params.value(QStringLiteral("stream")) == QLatin1String("stdout");
        const int fd = toStdout ? m_outFd : m_errFd;
        const bool filter = toStdout ? m_filterOut : m_filterErr;
        const QByteArray shown = filter ? (toStdout ? m_outFilter : m_errFilter).feed(data) : data;
        if (!writeAll(fd, shown))
            finish(kExitUnavailable, QStringLiteral("cannot write the command's output"));
    } else if (method == QLatin1String(notification::ExecExit)) {
        if (params.contains(QStringLiteral("exitCode")))
            return finish(params.value(QStringLiteral("exitCode")).toInt());
        if (params.contains(QStringLiteral("signal"))) {
            const int signal = params.value(QStringLiteral("signal")).toInt();
            return finish(128 + signal,
                          params.value(QStringLiteral("timedOut")).toBool()
                              ? QStringLiteral("killed at its timeout")
                              : QString());
        }
        const QJsonObject error = params.value(QStringLiteral("error")).toObject();
        finish(kExitUnavailable, error.value(QStringLiteral("message")).toString());
    }
}

void ExecRunner::onInput(const QByteArray &bytes)
{
    m_pendingInput += bytes;
    // One call in flight and at most one chunk waiting: stop reading until the guest took it.
    if (m_pendingInput.size() >= kInputChunkBytes && m_reader)
        m_reader->stop();
    sendInput();
}

void ExecRunner::sendInput()
{
    if (m_inputInFlight || m_finished || m_eofSent)
        return;
    if (m_pendingInput.isEmpty() && !m_inputEnded)
        return;
    const QByteArray chunk =
        m_pendingInput.first(std::min(m_pendingInput.size(), kInputChunkBytes));
    m_pendingInput.remove(0, chunk.size());
    const bool eof = m_inputEnded && m_pendingInput.isEmpty();
    m_inputInFlight = true;
    m_eofSent = eof;
    m_client->call(QString::fromLatin1(method::ExecInput),
                   {{QStringLiteral("name"), m_sandbox},
                    {QStringLiteral("pid"), qint64(m_pid)},
                    {QStringLiteral("data"), QString::fromLatin1(chunk.toBase64())},
                    {QStringLiteral("eof"), eof}},
                   [this](const Result<QJsonValue> &answer) {
                       m_inputInFlight = false;
                       // The process may have ended without reading its input: not an error.
                       if (!answer && answer.error().kind != ErrorKind::InvalidState
                           && answer.error().kind != ErrorKind::NotFound)
                           m_err << "airlockctl: input not delivered: " << answer.error().message
                                 << Qt::endl;
                       if (m_reader && !m_inputEnded && m_pendingInput.size() < kInputChunkBytes)
                           m_reader->start();
                       sendInput();
                   });
}

void ExecRunner::onResized(int rows, int cols)
{
    m_wantedRows = rows;
    m_wantedCols = cols;
    sendSize();
}

void ExecRunner::sendSize()
{
    if (m_pid == 0 || m_finished || (m_wantedRows == m_sentRows && m_wantedCols == m_sentCols))
        return;
    // The helper accepts 1..1000 of each; a larger terminal gets the largest PTY it allows.
    m_sentRows = m_wantedRows;
    m_sentCols = m_wantedCols;
    m_client->call(QString::fromLatin1(method::ExecResize),
                   {{QStringLiteral("name"), m_sandbox},
                    {QStringLiteral("pid"), qint64(m_pid)},
                    {QStringLiteral("rows"), std::clamp(m_sentRows, 1, 1000)},
                    {QStringLiteral("cols"), std::clamp(m_sentCols, 1, 1000)}},
                   [this](const Result<QJsonValue> &answer) {
                       // The process may have ended meanwhile (not_found): not an error.
                       if (!answer && answer.error().kind != ErrorKind::NotFound && !m_finished)
                           m_err << "airlockctl: resize not delivered: " << answer.error().message
                                 << Qt::endl;
                   });
}

void ExecRunner::finish(int code, const QString &message)
{
    if (m_finished)
        return;
    m_finished = true;
    m_exitCode = code;
    if (m_reader)
        m_reader->stop();
    delete std::exchange(m_sizeWatcher, nullptr);
    if (m_terminal)
        m_terminal->restore();
    if (!message.isEmpty())
        m_err << "airlockctl: " << message << Qt::endl;
    m_loop.quit();
}

} // namespace airlock::ctl

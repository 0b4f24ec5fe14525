#include "app/airlockctl/stdiobridge.h"

#include "app/airlockctl/stdinreader.h"
#include "core/client/localsockettransport.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

namespace airlock::ctl {

namespace {

// After stdin ends, how long answers to the last requests may take (sandbox.start can be slow).
constexpr int kLingerMs = 120000;

} // namespace

StdioBridge::StdioBridge(const QString &socketPath, int inFd, int outFd, QTextStream &err,
                         QObject *parent)
    : QObject(parent)
    , m_transport(new LocalSocketTransport(socketPath, this))
    , m_reader(new StdinReader(inFd, this))
    , m_outFd(outFd)
    , m_err(err)
{
    connect(m_transport, &Transport::connected, this, [this] {
        m_connected = true;
        m_reader->start(); // read nothing before there is somewhere to put it
    });
    connect(m_transport, &Transport::bytesReceived, this, [this](const QByteArray &bytes) {
        if (!writeAll(m_outFd, bytes)) {
            finish(0); // our reader went away; nothing left to deliver
            return;
        }
        m_outputLine += bytes;
        m_outstanding -= countLines(m_outputLine, false);
        closeWhenAnswered();
    });
    connect(m_transport, &Transport::disconnected, this, [this](const QString &reason) {
        if (!m_connected)
            m_err << "airlockctl: " << reason << Qt::endl;
        finish(m_connected ? 0 : 1);
    });
    connect(m_reader, &StdinReader::bytesRead, this, [this](const QByteArray &bytes) {
        m_transport->write(bytes);
        m_inputLine += bytes;
        m_outstanding += countLines(m_inputLine, true);
    });
    connect(m_reader, &StdinReader::endOfInput, this, &StdioBridge::onEndOfInput);
}

StdioBridge::~StdioBridge() = default;

int StdioBridge::run()
{
    m_transport->open();
    if (!m_finished)
        m_loop.exec();
    return m_exitCode;
}

void StdioBridge::onEndOfInput()
{
    m_inputEnded = true;
    m_transport->flush();
    closeWhenAnswered();
    QTimer::singleShot(kLingerMs, this, [this] { finish(0); });
}

void StdioBridge::closeWhenAnswered()
{
    if (m_inputEnded && m_outstanding <= 0)
        finish(0);
}

int StdioBridge::countLines(QByteArray &pending, bool requests)
{
    int count = 0;
    qsizetype start = 0;
    for (qsizetype end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n', start)) {
        const QJsonObject message =
            QJsonDocument::fromJson(pending.mid(start, end - start)).object();
        start = end + 1;
        const bool hasId =
            message.contains(QStringLiteral("id")) && !message.value(QStringLiteral("id")).isNull();
        const bool isRequest = message.contains(QStringLiteral("method"));
        if (hasId && isRequest == requests)
            ++count;
    }
    pending.remove(0, start);
    if (pending.size() > 2 * 1024 * 1024)
        pending.clear(); // an oversized line: the helper refuses it and closes anyway
    return count;
}

void StdioBridge::finish(int code)
{
    if (m_finished)
        return;
    m_finished = true;
    m_exitCode = code;
    m_reader->stop();
    m_transport->close();
    m_loop.exit(code);
}

} // namespace airlock::ctl

#include "e2bendpoint.h"

#include "helperprocess.h"
#include "testuser.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTcpServer>

#include <cstdio>

#include <sys/stat.h>
#include <unistd.h>

namespace airlock::test {

namespace {

constexpr int kStartTimeoutMs = 20000;

quint16 freePort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    return probe.serverPort();
}

} // namespace

E2bEndpoint::E2bEndpoint(const HelperProcess &helper, const TestUser &user)
    : m_helper(helper), m_user(user)
{ }

E2bEndpoint::~E2bEndpoint()
{
    stop();
}

void E2bEndpoint::stop()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    m_process.terminate();
    if (!m_process.waitForFinished(5000))
        m_process.kill();
    m_process.waitForFinished(2000);
}

QProcessEnvironment E2bEndpoint::userEnvironment() const
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HOME"), m_home);
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home + QStringLiteral("/.config"));
    env.insert(QStringLiteral("XDG_STATE_HOME"), m_home + QStringLiteral("/.local/state"));
    return env;
}

QProcessEnvironment E2bEndpoint::clientEnvironment() const
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (auto it = m_printed.cbegin(); it != m_printed.cend(); ++it)
        env.insert(it.key(), it.value());
    // With it the SDK never calls the control API (a fake debug sandbox).
    env.remove(QStringLiteral("E2B_DEBUG"));
    return env;
}

bool E2bEndpoint::start()
{
    const QString program = qEnvironmentVariable("AIRLOCK_E2B");
    if (program.isEmpty()) {
        m_lastError = QStringLiteral("AIRLOCK_E2B is not set");
        return false;
    }
    m_home = m_helper.tempPath() + QStringLiteral("/e2b-home");
    const QByteArray home = QFile::encodeName(m_home);
    if (!QDir().mkpath(m_home) || ::chown(home.constData(), m_user.uid(), m_user.gid()) != 0
        || ::chmod(home.constData(), 0700) != 0) {
        m_lastError = QStringLiteral("cannot make %1 for the user").arg(m_home);
        return false;
    }
    if (m_port == 0)
        m_port = freePort();
    m_process.disconnect();
    m_process.setProcessEnvironment(userEnvironment());
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    m_process.setReadChannel(QProcess::StandardOutput);
    QObject::connect(&m_process, &QProcess::readyReadStandardError, &m_process,
                     [this] { std::fputs(m_process.readAllStandardError().constData(), stderr); });
    m_user.runAs(m_process);
    m_process.start(program,
                    QStringList {QStringLiteral("--port"), QString::number(m_port),
                                 QStringLiteral("--socket"), m_helper.socketPath()}
                        + m_extraArguments);
    if (!m_process.waitForStarted()) {
        m_lastError = m_process.errorString();
        return false;
    }
    // It says so once it listens.
    QByteArray said;
    m_printed.clear();
    while (!said.contains("listening on") && m_process.waitForReadyRead(kStartTimeoutMs))
        said += m_process.readAllStandardOutput();
    if (!said.contains("listening on http://127.0.0.1:" + QByteArray::number(m_port))) {
        m_lastError = QStringLiteral("airlock-e2b did not listen: %1").arg(QString::fromUtf8(said));
        return false;
    }

    QProcess print;
    print.setProcessEnvironment(userEnvironment());
    m_user.runAs(print);
    print.start(program,
                {QStringLiteral("--port"), QString::number(m_port), QStringLiteral("--print-env")});
    if (!print.waitForFinished(10000) || print.exitCode() != 0) {
        m_lastError = QStringLiteral("--print-env failed");
        return false;
    }
    const QString line = QString::fromUtf8(print.readAllStandardOutput()).trimmed();
    static const QRegularExpression pattern(QStringLiteral(
        "^export E2B_API_KEY=(e2b_[0-9a-f]{40}) E2B_API_URL=(\\S+) E2B_SANDBOX_URL=(\\S+)$"));
    const auto match = pattern.match(line);
    if (!match.hasMatch()) {
        m_lastError = QStringLiteral("--print-env printed: %1").arg(line);
        return false;
    }
    m_printed.insert(QStringLiteral("E2B_API_KEY"), match.captured(1));
    m_printed.insert(QStringLiteral("E2B_API_URL"), match.captured(2));
    m_printed.insert(QStringLiteral("E2B_SANDBOX_URL"), match.captured(3));
    return true;
}

QString E2bEndpoint::sdkSkipReason(const QString &sdkDir)
{
    QFile skipped(sdkDir + QStringLiteral("/skipped"));
    return skipped.open(QIODevice::ReadOnly) ? QString::fromUtf8(skipped.readAll().trimmed())
                                             : QString();
}

bool E2bEndpoint::sdkInstalled(const QString &sdkDir)
{
    return QFileInfo::exists(sdkDir + QStringLiteral("/node_modules/e2b/package.json"));
}

} // namespace airlock::test

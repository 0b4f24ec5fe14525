#pragma once

#include <QMap>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>

#include <memory>

namespace airlock::test {

class HelperProcess;
class TestUser;

/// A real airlock-e2b for tests and benchmarks (docs/e2b.md): the binary from $AIRLOCK_E2B, run
/// as `user` (it refuses root) with HOME, XDG_CONFIG_HOME and XDG_STATE_HOME in a folder of the
/// helper's temporary directory, against `helper`'s socket, on a free port of 127.0.0.1.
///
///     E2bEndpoint e2b(helper, user);
///     QVERIFY2(e2b.start(), qPrintable(e2b.lastError()));
///     node.setProcessEnvironment(e2b.clientEnvironment());   // E2B_API_KEY, _API_URL,
///     _SANDBOX_URL
///
/// The destructor stops it.
class E2bEndpoint
{
public:
    /// Why the SDK tests cannot run here (install-sdk.sh wrote `sdkDir`/skipped: Node.js older
    /// than the SDK needs), or "" when they can.
    static QString sdkSkipReason(const QString &sdkDir);
    /// Whether `sdkDir` holds the installed e2b package.
    static bool sdkInstalled(const QString &sdkDir);
    E2bEndpoint(const HelperProcess &helper, const TestUser &user);
    ~E2bEndpoint();
    E2bEndpoint(const E2bEndpoint &) = delete;
    E2bEndpoint &operator=(const E2bEndpoint &) = delete;

    /// Starts it and waits until it says it listens; then reads `--print-env`. Again after
    /// stop(): the same port, home and key.
    bool start();
    /// SIGTERM, and waits for it to exit.
    void stop();
    /// Options for the next start() (e.g. --host over SSH).
    void setExtraArguments(const QStringList &arguments) { m_extraArguments = arguments; }
    quint16 port() const { return m_port; }
    QString home() const { return m_home; }
    /// The variables `airlock-e2b --print-env` printed (E2B_API_KEY, E2B_API_URL,
    /// E2B_SANDBOX_URL).
    QMap<QString, QString> printedEnvironment() const { return m_printed; }
    /// This process's environment with those added and E2B_DEBUG removed: for the SDK.
    QProcessEnvironment clientEnvironment() const;
    /// The environment airlock-e2b runs with (its HOME and XDG folders).
    QProcessEnvironment userEnvironment() const;
    QString lastError() const { return m_lastError; }

private:
    const HelperProcess &m_helper;
    const TestUser &m_user;
    QString m_home;
    quint16 m_port = 0;
    QProcess m_process;
    QStringList m_extraArguments;
    QMap<QString, QString> m_printed;
    QString m_lastError;
};

} // namespace airlock::test

#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

namespace airlock::test {

/// A real airlockd for a test: the binary from $AIRLOCK_AIRLOCKD (ctest sets it), on a socket
/// and state dir inside a fresh temporary directory (mode 0711, so unprivileged users and the
/// VMM user can reach the socket and runtime dirs), with `--image-store` set to
/// AIRLOCK_TEST_IMAGE_STORE. Its stderr goes to the test's stderr.
///
///     HelperProcess helper;
///     QVERIFY2(helper.start(), qPrintable(helper.lastError()));
///     RpcTestClient client(helper.socketPath());
///
/// The destructor stops the helper and kills every process it left behind whose command line
/// names the state dir (QEMU included), so a failing test leaves nothing running.
///
/// Network safety: airlockd always runs inside a network namespace of its own
/// (`ip netns add alt-h-<pid>-<n>`, only loopback up, no route anywhere), so the taps, tables,
/// gateways and guests of the test live there and vanish with it (the destructor deletes it).
/// `--gateway` is set from $AIRLOCK_GATEWAY when ctest provides it, and `--templates off`
/// unless the test passes its own `--templates`.
class HelperProcess
{
public:
    /// `extraArguments` are appended to airlockd's command line (e.g. {"--scrollback", "4096"}).
    explicit HelperProcess(QStringList extraArguments = {});
    ~HelperProcess();
    HelperProcess(const HelperProcess &) = delete;
    HelperProcess &operator=(const HelperProcess &) = delete;

    /// Starts airlockd and waits (up to `timeoutMs`) until its socket accepts connections and,
    /// unless setWaitForAdoption(false), until no sandbox is `adopting` any more (a restarted
    /// helper re-adopts its running guests in the background). False, with lastError() set,
    /// when the binary is missing, exits, or never listens.
    bool start(int timeoutMs = 20000);
    /// Whether start() waits for the background adoption to end (the default); off for a test
    /// that watches the adoption itself.
    void setWaitForAdoption(bool wait) { m_waitForAdoption = wait; }
    /// SIGTERM, then waits for a clean exit (SIGKILL after `timeoutMs`). True on exit code 0.
    bool stop(int timeoutMs = 10000);
    /// SIGKILL, as if the helper crashed; guests keep running.
    void kill9();
    /// stop() then start() on the same socket and state dir.
    bool restart(int timeoutMs = 20000);
    /// Kills leftover processes of this helper's sandboxes (QEMU). Returns how many.
    int killLeftoverProcesses();

    bool isRunning() const;
    qint64 pid() const;
    QString socketPath() const;
    QString stateDir() const;
    QString imageStore() const;
    /// Uses another image store (e.g. one the test fills with its own images); call before
    /// start().
    void setImageStore(const QString &path) { m_imageStore = path; }
    /// Writes a store with one image `default` whose kernel cannot boot (enough for everything
    /// but sandbox.start) into tempPath() and uses it. Call before start(). Returns the store's
    /// path, or an empty string (lastError() says why).
    QString useUnbootableImageStore();
    /// Writes airlockd's stdout and stderr to `path` instead of the test's (a test that searches
    /// them, e.g. for a secret). Call before start().
    void setOutputFile(const QString &path)
    {
        // Forwarded channels would win over the redirection.
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        m_process.setStandardOutputFile(path, QIODevice::Append);
        m_process.setStandardErrorFile(path, QIODevice::Append);
    }
    /// Runs airlockd in the existing namespace `name` (another helper's: two helpers sharing
    /// one namespace, as on a host), which this object neither creates nor deletes. Call
    /// before start().
    void shareNetworkNamespace(const QString &name)
    {
        m_namespace = name;
        m_ownsNamespace = false;
    }
    /// The namespace airlockd runs in ("" before start()). Never the host's: a helper there
    /// meets the tables and taps of the host's own helper
    /// (docs/reviews/2026-12-01-newuser-pass.md#h1).
    QString networkNamespace() const { return m_namespace; }
    /// A directory the test may use for its own files; removed with the helper.
    QString tempPath() const;
    QString lastError() const { return m_lastError; }

private:
    /// Waits until no sandbox is `adopting` (start()).
    bool waitForAdoption(int timeoutMs);
    QTemporaryDir m_tempDir;
    QStringList m_extraArguments;
    QProcess m_process;
    QString m_lastError;
    QString m_imageStore;
    bool m_ownsNamespace = true;
    QString m_namespace;
    bool m_waitForAdoption = true;
};

} // namespace airlock::test

#pragma once

#include "core/e2b/e2bcontext.h"
#include "core/e2b/httpconnection.h"
#include "core/e2b/sandboxregistry.h"

#include <QHash>
#include <QObject>
#include <QPointer>

namespace airlock::e2b {

class ProcessStream;
class WatchDirStream;

/// The in-sandbox daemon of E2B, envd, as the SDK reaches it through `E2B_SANDBOX_URL`: every
/// request names its sandbox in `E2b-Sandbox-Id` and carries that sandbox's `X-Access-Token`
/// (Sandbox's constructor in packages/js-sdk/src/sandbox/index.ts); an unknown sandbox is 404
/// (/health: 502, which the SDK reads as "not running"), a wrong token 401, before anything
/// reaches the guest.
///
/// - `process.Process` over Connect (JSON codec): Start and Connect (ProcessStream), List,
///   SendInput, SendSignal, CloseStdin, Update (PTY size); onto exec.*.
/// - `filesystem.Filesystem`: Stat, ListDir, MakeDir, Move, Remove; onto files.*; WatchDir
///   (WatchDirStream) onto files.watch.
/// - `GET /files` (the file's bytes) and `POST /files` (multipart/form-data or
///   application/octet-stream; answers `[EntryInfo]`), envd's spec/envd/envd.yaml; onto
///   files.read / files.write in 512 KiB pieces.
/// - `GET /health`: 204.
///
/// The E2B user names map onto the guest's: none or `user` is `agent` (uid 1000, home
/// /home/agent), `root` is root; relative paths are taken from that user's home, as envd does.
class EnvdService : public QObject
{
    Q_OBJECT
public:
    EnvdService(E2bContext context, QObject *parent = nullptr);
    ~EnvdService() override;

    /// True when the request is for envd (E2b-Sandbox-Id set, or an envd path).
    static bool handles(const HttpRequest &request);
    void handle(const QPointer<HttpConnection> &connection, const HttpRequest &request);
    /// The most a POST /files may carry.
    static constexpr qint64 kMaxUploadBytes = 128LL * 1024 * 1024;

private:
    void onNotification(const QString &method, const QJsonObject &params);
    void unary(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
               const QString &user, const QString &rpc, const QJsonObject &message);
    void watchDir(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
                  const QString &user, const QJsonObject &message);
    void startProcess(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
                      const QString &user, const QString &rpc, const QJsonObject &message);
    void readFile(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
                  const QString &path);
    void writeFiles(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
                    const HttpRequest &request, const QString &user);

    E2bContext m_context;
    /// Streams following a process, by "sandbox/pid".
    QHash<QString, ProcessStream *> m_streams;
    /// WatchDir streams, by "sandbox/watch".
    QHash<QString, WatchDirStream *> m_watches;
};

} // namespace airlock::e2b

#include "core/e2b/envdservice.h"

#include "core/client/helperclient.h"
#include "core/e2b/apierror.h"
#include "core/e2b/apikeystore.h"
#include "core/e2b/connectenvelope.h"
#include "core/e2b/multipartform.h"
#include "core/e2b/processstream.h"
#include "core/e2b/watchdirstream.h"

#include <QDateTime>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>

#include <memory>

namespace airlock::e2b {

namespace {

// What one files.read / files.write call carries at most (docs/protocol.md).
constexpr qint64 kFileChunkBytes = 512 * 1024;
// A download waits for the socket below this many unsent bytes before reading on.
constexpr qint64 kMaxUnsentBytes = 4 * 1024 * 1024;
constexpr int kMaxListEntries = 10000;

const QString kProcessService = QStringLiteral("/process.Process/");
const QString kFilesystemService = QStringLiteral("/filesystem.Filesystem/");

// envd's FileType (spec/envd/filesystem/filesystem.proto); the JSON codec takes the number.
int fileType(const QString &type)
{
    if (type == QLatin1String("file"))
        return 1;
    if (type == QLatin1String("directory"))
        return 2;
    if (type == QLatin1String("symlink"))
        return 3;
    return 0;
}

QString guestUser(const QString &e2bUser)
{
    // E2B's default user is `user`; Airlock's guests call theirs `agent`.
    if (e2bUser.isEmpty() || e2bUser == QLatin1String("user"))
        return QStringLiteral("agent");
    return e2bUser;
}

QString homeOf(const QString &user)
{
    return user == QLatin1String("root") ? QStringLiteral("/root")
                                         : QStringLiteral("/home/") + user;
}

QString resolvePath(const QString &path, const QString &user)
{
    if (path.startsWith(u'/'))
        return QDir::cleanPath(path);
    if (path == QLatin1String("~"))
        return homeOf(user);
    if (path.startsWith(QLatin1String("~/")))
        return QDir::cleanPath(homeOf(user) + path.mid(1));
    return QDir::cleanPath(homeOf(user) + u'/' + path);
}

// The user of `Authorization: Basic base64(user:)` (the SDK's authenticationHeader).
QString basicUser(const QByteArray &authorization)
{
    if (!authorization.startsWith("Basic "))
        return {};
    const QByteArray decoded = QByteArray::fromBase64(authorization.mid(6).trimmed());
    const qsizetype colon = decoded.indexOf(':');
    return QString::fromUtf8(colon < 0 ? decoded : decoded.left(colon));
}

QString permissionString(int mode, const QString &type)
{
    QString text = type == QLatin1String("directory") ? QStringLiteral("d")
        : type == QLatin1String("symlink")            ? QStringLiteral("L")
                                                      : QStringLiteral("-");
    static constexpr char kLetters[] = "rwxrwxrwx";
    for (int bit = 0; bit < 9; ++bit)
        text.append(mode & (0400 >> bit) ? QLatin1Char(kLetters[bit]) : QLatin1Char('-'));
    return text;
}

QString ownerName(qint64 id)
{
    if (id == 0)
        return QStringLiteral("root");
    if (id == 1000)
        return QStringLiteral("agent");
    return QString::number(id);
}

// envd's EntryInfo in the Connect JSON form (int64 as a string, Timestamp as RFC 3339).
QJsonObject entryInfo(const QJsonObject &info, const QString &path)
{
    const QString type = info.value(QStringLiteral("type")).toString();
    const int mode = info.value(QStringLiteral("mode")).toInt();
    const qint64 mtimeNs = info.value(QStringLiteral("mtimeNs")).toInteger();
    QJsonObject entry {
        {QStringLiteral("name"), path == QLatin1String("/") ? path : path.section(u'/', -1)},
        {QStringLiteral("type"), fileType(type)},
        {QStringLiteral("path"), path},
        {QStringLiteral("size"), QString::number(info.value(QStringLiteral("size")).toInteger())},
        {QStringLiteral("mode"), mode},
        {QStringLiteral("permissions"), permissionString(mode, type)},
        {QStringLiteral("owner"), ownerName(info.value(QStringLiteral("uid")).toInteger())},
        {QStringLiteral("group"), ownerName(info.value(QStringLiteral("gid")).toInteger())},
        {QStringLiteral("modifiedTime"),
         QDateTime::fromMSecsSinceEpoch(mtimeNs / 1000000, Qt::UTC).toString(Qt::ISODateWithMs)}};
    if (info.contains(QStringLiteral("target")))
        entry.insert(QStringLiteral("symlinkTarget"), info.value(QStringLiteral("target")));
    return entry;
}

void connectError(const QPointer<HttpConnection> &connection, const QString &code,
                  const QString &message)
{
    if (!connection)
        return;
    HttpResponse response;
    response.status = connectHttpStatus(code);
    response.body = QJsonDocument(QJsonObject {{QStringLiteral("code"), code},
                                               {QStringLiteral("message"), message}})
                        .toJson(QJsonDocument::Compact);
    connection->respond(response);
}

void connectError(const QPointer<HttpConnection> &connection, const Error &error)
{
    connectError(connection, connectCodeFor(error.kind), error.message);
}

void connectOk(const QPointer<HttpConnection> &connection, const QJsonObject &message)
{
    if (connection)
        connection->respond(jsonResponse(200, message));
}

void filesError(const QPointer<HttpConnection> &connection, int status, const QString &message)
{
    if (!connection)
        return;
    HttpResponse response;
    response.status = status;
    response.body = apiErrorBody(status, message);
    connection->respond(response);
}

Result<quint32> selectedPid(const QJsonObject &message)
{
    const QJsonObject selector = message.value(QStringLiteral("process")).toObject();
    if (selector.contains(QStringLiteral("tag")))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("process tags are not supported by airlock-e2b; use the pid"));
    const qint64 pid = selector.value(QStringLiteral("pid")).toInteger();
    if (pid <= 0)
        return fail(ErrorKind::InvalidParams, QStringLiteral("process.pid is required"));
    return quint32(pid);
}

// SendSignal's Signal enum arrives as its name or its number.
int signalNumber(const QJsonValue &value)
{
    if (value.isDouble())
        return value.toInt();
    const QString name = value.toString();
    if (name == QLatin1String("SIGNAL_SIGKILL"))
        return 9;
    if (name == QLatin1String("SIGNAL_SIGTERM"))
        return 15;
    return 0;
}

} // namespace

EnvdService::EnvdService(E2bContext context, QObject *parent) : QObject(parent), m_context(context)
{
    connect(m_context.helper, &HelperClient::notificationReceived, this,
            &EnvdService::onNotification);
    // The processes run on in their guests, but their output was for the lost connection:
    // end the streams rather than leave the SDK waiting for events that cannot come.
    connect(m_context.helper, &HelperClient::connectionLost, this, [this](const Error &error) {
        const QJsonObject lost {
            {QStringLiteral("error"),
             QJsonObject {
                 {QStringLiteral("kind"), QStringLiteral("agent_unavailable")},
                 {QStringLiteral("message"),
                  QStringLiteral("lost the connection to airlockd: %1").arg(error.message)}}}};
        for (ProcessStream *stream : m_streams.values())
            stream->deliver(QStringLiteral("exec.exit"), lost);
        for (WatchDirStream *stream : m_watches.values())
            stream->deliver(QStringLiteral("files.watchEnd"), lost);
    });
}

EnvdService::~EnvdService() = default;

bool EnvdService::handles(const HttpRequest &request)
{
    return request.headers.contains("e2b-sandbox-id") || request.path.startsWith(kProcessService)
        || request.path.startsWith(kFilesystemService) || request.path == QLatin1String("/files")
        || request.path == QLatin1String("/health");
}

void EnvdService::handle(const QPointer<HttpConnection> &connection, const HttpRequest &request)
{
    const bool isConnect =
        request.path.startsWith(kProcessService) || request.path.startsWith(kFilesystemService);
    const QString id = QString::fromUtf8(request.header("e2b-sandbox-id"));
    const E2bSandbox *found = m_context.registry->find(id);
    if (request.path == QLatin1String("/health")) {
        connection->respond(emptyResponse(found && found->pausedSnapshot.isEmpty() ? 204 : 502));
        return;
    }
    if (!found) {
        const QString message = id.isEmpty()
            ? QStringLiteral("no E2b-Sandbox-Id header: set E2B_SANDBOX_URL to airlock-e2b's "
                             "address (airlock-e2b --print-env)")
            : QStringLiteral("sandbox %1 not found").arg(id);
        if (isConnect)
            return connectError(connection, QStringLiteral("not_found"), message);
        return filesError(connection, 404, message);
    }
    const E2bSandbox sandbox = *found;
    if (!ApiKeyStore::equalKeys(request.header("x-access-token"), sandbox.accessToken)) {
        const QString message =
            QStringLiteral("wrong or missing X-Access-Token for sandbox %1").arg(id);
        if (isConnect)
            return connectError(connection, QStringLiteral("unauthenticated"), message);
        return filesError(connection, 401, message);
    }
    QString user = basicUser(request.header("authorization"));
    if (user.isEmpty())
        user = request.query.queryItemValue(QStringLiteral("username"), QUrl::FullyDecoded);
    user = guestUser(user);

    if (request.path == QLatin1String("/files")) {
        const QString path =
            request.query.queryItemValue(QStringLiteral("path"), QUrl::FullyDecoded);
        if (request.method == "GET") {
            if (path.isEmpty())
                return filesError(connection, 400, QStringLiteral("path is required"));
            return readFile(connection, sandbox, resolvePath(path, user));
        }
        if (request.method == "POST")
            return writeFiles(connection, sandbox, request, user);
        return filesError(connection, 405, QStringLiteral("method not allowed"));
    }
    if (!isConnect)
        return filesError(connection, 404,
                          QStringLiteral("no such envd endpoint: %1").arg(request.path));
    if (request.method != "POST")
        return connectError(connection, QStringLiteral("unimplemented"),
                            QStringLiteral("Connect calls are POST"));

    const QString rpc = request.path.mid(1);
    const QByteArray contentType = request.header("content-type").split(';').first().trimmed();
    QJsonObject message;
    const bool streaming = rpc == QLatin1String("process.Process/Start")
        || rpc == QLatin1String("process.Process/Connect")
        || rpc == QLatin1String("filesystem.Filesystem/WatchDir");
    if (streaming) {
        if (contentType != "application/connect+json")
            return connectError(connection, QStringLiteral("invalid_argument"),
                                QStringLiteral("streaming calls take application/connect+json"));
        const auto messages = connectenvelope::decodeAll(request.body);
        if (!messages || messages->size() != 1)
            return connectError(connection, QStringLiteral("invalid_argument"),
                                messages ? QStringLiteral("expected one request message")
                                         : messages.error().message);
        message = QJsonDocument::fromJson(messages->first()).object();
        if (rpc == QLatin1String("filesystem.Filesystem/WatchDir"))
            return watchDir(connection, sandbox, user, message);
        return startProcess(connection, sandbox, user, rpc, message);
    }
    if (contentType != "application/json")
        return connectError(
            connection, QStringLiteral("unimplemented"),
            QStringLiteral("airlock-e2b speaks the Connect JSON codec only (application/json)"));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(
        request.body.isEmpty() ? QByteArray("{}") : request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return connectError(connection, QStringLiteral("invalid_argument"),
                            QStringLiteral("the request is not a JSON object"));
    unary(connection, sandbox, user, rpc, document.object());
}

void EnvdService::watchDir(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
                           const QString &user, const QJsonObject &message)
{
    const QString path = resolvePath(message.value(QStringLiteral("path")).toString(), user);
    auto *stream = new WatchDirStream(m_context, connection, sandbox.airlockName(), this);
    connect(stream, &WatchDirStream::bound, this, [this, stream](quint64 watch) {
        m_watches.insert(stream->sandbox() + u'/' + QString::number(watch), stream);
    });
    connect(stream, &WatchDirStream::finished, this, [this, stream] {
        const QString key = stream->sandbox() + u'/' + QString::number(stream->watch());
        if (m_watches.value(key) == stream)
            m_watches.remove(key);
    });
    stream->start(path, message.value(QStringLiteral("recursive")).toBool());
}

void EnvdService::startProcess(const QPointer<HttpConnection> &connection,
                               const E2bSandbox &sandbox, const QString &user, const QString &rpc,
                               const QJsonObject &message)
{
    auto *stream = new ProcessStream(m_context, connection, sandbox.airlockName(), this);
    connect(stream, &ProcessStream::bound, this, [this, stream](quint32 pid) {
        m_streams.insert(stream->sandbox() + u'/' + QString::number(pid), stream);
    });
    connect(stream, &ProcessStream::finished, this, [this, stream] {
        const QString key = stream->sandbox() + u'/' + QString::number(stream->pid());
        if (m_streams.value(key) == stream)
            m_streams.remove(key);
    });
    if (rpc == QLatin1String("process.Process/Connect")) {
        const auto pid = selectedPid(message);
        if (!pid) {
            stream->deleteLater();
            return connectError(connection, pid.error());
        }
        return stream->attach(*pid);
    }
    const QJsonObject process = message.value(QStringLiteral("process")).toObject();
    const QString cmd = process.value(QStringLiteral("cmd")).toString();
    if (cmd.isEmpty()) {
        stream->deleteLater();
        return connectError(connection, QStringLiteral("invalid_argument"),
                            QStringLiteral("process.cmd is required"));
    }
    QJsonArray argv {cmd};
    // The SDK runs every command as `/bin/bash -l -c CMD`, a login shell, as envd does. The
    // guest profiles (/etc/profile, /etc/profile.d/airlock.sh: installers/guest/files/profile)
    // set HOME and the folder only for the console, so the command keeps the user's HOME and
    // the cwd given here.
    for (const QJsonValue &arg : process.value(QStringLiteral("args")).toArray())
        argv.append(arg.toString());
    QJsonObject env = sandbox.envVars;
    const QJsonObject envs = process.value(QStringLiteral("envs")).toObject();
    for (auto it = envs.begin(); it != envs.end(); ++it)
        env.insert(it.key(), it.value().toString());
    QJsonObject params {{QStringLiteral("name"), sandbox.airlockName()},
                        {QStringLiteral("argv"), argv},
                        {QStringLiteral("env"), env},
                        {QStringLiteral("user"), user},
                        {QStringLiteral("stdin"), message.value(QStringLiteral("stdin")).toBool()}};
    const QString cwd = process.value(QStringLiteral("cwd")).toString();
    // envd starts a command in the user's home unless told otherwise; so does this, for the
    // users whose home it knows (another guest user's is the agent's choice).
    if (!cwd.isEmpty())
        params.insert(QStringLiteral("cwd"), resolvePath(cwd, user));
    else if (user == QLatin1String("agent") || user == QLatin1String("root"))
        params.insert(QStringLiteral("cwd"), homeOf(user));
    if (message.contains(QStringLiteral("pty"))) {
        const QJsonObject size = message.value(QStringLiteral("pty"))
                                     .toObject()
                                     .value(QStringLiteral("size"))
                                     .toObject();
        params.insert(
            QStringLiteral("pty"),
            QJsonObject {{QStringLiteral("rows"), size.value(QStringLiteral("rows")).toInt(24)},
                         {QStringLiteral("cols"), size.value(QStringLiteral("cols")).toInt(80)}});
    }
    stream->start(params, cmd == QLatin1String("/bin/bash"));
}

void EnvdService::unary(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
                        const QString &user, const QString &rpc, const QJsonObject &message)
{
    const QString name = sandbox.airlockName();
    const auto done = [connection](QJsonObject answer = {}) {
        return [connection, answer](const Result<QJsonObject> &result) {
            if (!result)
                return connectError(connection, result.error());
            connectOk(connection, answer);
        };
    };
    if (rpc == QLatin1String("process.Process/List")) {
        m_context.call(QStringLiteral("exec.list"), {{QStringLiteral("name"), name}},
                       [connection](const Result<QJsonObject> &result) {
                           if (!result)
                               return connectError(connection, result.error());
                           QJsonArray processes;
                           for (const QJsonValue &value :
                                result->value(QStringLiteral("processes")).toArray()) {
                               const QJsonObject process = value.toObject();
                               if (!process.value(QStringLiteral("running")).toBool())
                                   continue;
                               processes.append(QJsonObject {
                                   {QStringLiteral("pid"), process.value(QStringLiteral("pid"))},
                                   {QStringLiteral("config"),
                                    QJsonObject {{QStringLiteral("cmd"),
                                                  process.value(QStringLiteral("command"))},
                                                 {QStringLiteral("args"), QJsonArray()},
                                                 {QStringLiteral("envs"), QJsonObject()}}}});
                           }
                           connectOk(connection, {{QStringLiteral("processes"), processes}});
                       });
        return;
    }
    if (rpc.startsWith(QLatin1String("process.Process/"))) {
        const auto pid = selectedPid(message);
        if (!pid)
            return connectError(connection, pid.error());
        QJsonObject params {{QStringLiteral("name"), name}, {QStringLiteral("pid"), qint64(*pid)}};
        if (rpc == QLatin1String("process.Process/SendInput")) {
            const QJsonObject input = message.value(QStringLiteral("input")).toObject();
            params.insert(QStringLiteral("data"),
                          input.contains(QStringLiteral("pty"))
                              ? input.value(QStringLiteral("pty"))
                              : input.value(QStringLiteral("stdin")));
            return m_context.call(QStringLiteral("exec.input"), params, done());
        }
        if (rpc == QLatin1String("process.Process/CloseStdin")) {
            params.insert(QStringLiteral("data"), QString());
            params.insert(QStringLiteral("eof"), true);
            return m_context.call(QStringLiteral("exec.input"), params, done());
        }
        if (rpc == QLatin1String("process.Process/SendSignal")) {
            const int signal = signalNumber(message.value(QStringLiteral("signal")));
            if (signal <= 0)
                return connectError(connection, QStringLiteral("invalid_argument"),
                                    QStringLiteral("signal must be SIGKILL or SIGTERM"));
            params.insert(QStringLiteral("signal"), signal);
            return m_context.call(QStringLiteral("exec.signal"), params, done());
        }
        if (rpc == QLatin1String("process.Process/Update")) {
            const QJsonObject size = message.value(QStringLiteral("pty"))
                                         .toObject()
                                         .value(QStringLiteral("size"))
                                         .toObject();
            params.insert(QStringLiteral("rows"), size.value(QStringLiteral("rows")).toInt());
            params.insert(QStringLiteral("cols"), size.value(QStringLiteral("cols")).toInt());
            return m_context.call(QStringLiteral("exec.resize"), params, done());
        }
        return connectError(connection, QStringLiteral("unimplemented"),
                            QStringLiteral("%1 is not supported by airlock-e2b").arg(rpc));
    }

    const QString path = resolvePath(message.value(QStringLiteral("path")).toString(), user);
    if (rpc == QLatin1String("filesystem.Filesystem/Stat")) {
        m_context.call(
            QStringLiteral("files.stat"),
            {{QStringLiteral("name"), name}, {QStringLiteral("path"), path}},
            [connection, path](const Result<QJsonObject> &result) {
                if (!result)
                    return connectError(connection, result.error());
                connectOk(connection, {{QStringLiteral("entry"), entryInfo(*result, path)}});
            });
        return;
    }
    if (rpc == QLatin1String("filesystem.Filesystem/ListDir")) {
        const int depth = std::clamp(message.value(QStringLiteral("depth")).toInt(1), 1, 64);
        m_context.call(QStringLiteral("files.list"),
                       {{QStringLiteral("name"), name},
                        {QStringLiteral("path"), path},
                        {QStringLiteral("depth"), depth},
                        {QStringLiteral("maxEntries"), kMaxListEntries}},
                       [connection, path](const Result<QJsonObject> &result) {
                           if (!result)
                               return connectError(connection, result.error());
                           QJsonArray entries;
                           for (const QJsonValue &value :
                                result->value(QStringLiteral("entries")).toArray()) {
                               const QJsonObject info = value.toObject();
                               const QString full = (path == QLatin1String("/") ? QString() : path)
                                   + u'/' + info.value(QStringLiteral("name")).toString();
                               entries.append(entryInfo(info, full));
                           }
                           connectOk(connection, {{QStringLiteral("entries"), entries}});
                       });
        return;
    }
    if (rpc == QLatin1String("filesystem.Filesystem/MakeDir")) {
        // envd answers already_exists for an existing path (the SDK's makeDir returns false);
        // files.mkdir with parents does not, so look first.
        m_context.call(
            QStringLiteral("files.stat"),
            {{QStringLiteral("name"), name}, {QStringLiteral("path"), path}},
            [this, connection, name, path](const Result<QJsonObject> &stat) {
                if (stat)
                    return connectError(connection, QStringLiteral("already_exists"),
                                        QStringLiteral("%1 exists").arg(path));
                if (stat.error().kind != ErrorKind::NotFound)
                    return connectError(connection, stat.error());
                m_context.call(
                    QStringLiteral("files.mkdir"),
                    {{QStringLiteral("name"), name},
                     {QStringLiteral("path"), path},
                     {QStringLiteral("parents"), true}},
                    [connection, path](const Result<QJsonObject> &result) {
                        if (!result)
                            return connectError(connection, result.error());
                        connectOk(connection,
                                  {{QStringLiteral("entry"),
                                    QJsonObject {{QStringLiteral("name"), path.section(u'/', -1)},
                                                 {QStringLiteral("type"), 2},
                                                 {QStringLiteral("path"), path}}}});
                    });
            });
        return;
    }
    if (rpc == QLatin1String("filesystem.Filesystem/Move")) {
        const QString from = resolvePath(message.value(QStringLiteral("source")).toString(), user);
        const QString to =
            resolvePath(message.value(QStringLiteral("destination")).toString(), user);
        m_context.call(
            QStringLiteral("files.rename"),
            {{QStringLiteral("name"), name},
             {QStringLiteral("from"), from},
             {QStringLiteral("to"), to}},
            [this, connection, name, to](const Result<QJsonObject> &result) {
                if (!result)
                    return connectError(connection, result.error());
                m_context.call(
                    QStringLiteral("files.stat"),
                    {{QStringLiteral("name"), name}, {QStringLiteral("path"), to}},
                    [connection, to](const Result<QJsonObject> &stat) {
                        if (!stat)
                            return connectError(connection, stat.error());
                        connectOk(connection, {{QStringLiteral("entry"), entryInfo(*stat, to)}});
                    });
            });
        return;
    }
    if (rpc == QLatin1String("filesystem.Filesystem/Remove")) {
        return m_context.call(QStringLiteral("files.remove"),
                              {{QStringLiteral("name"), name},
                               {QStringLiteral("path"), path},
                               {QStringLiteral("recursive"), true}},
                              done());
    }
    connectError(connection, QStringLiteral("unimplemented"),
                 QStringLiteral("%1 is not supported by airlock-e2b (docs/e2b.md)").arg(rpc));
}

void EnvdService::readFile(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
                           const QString &path)
{
    // One files.read after the other; the first decides between an error and 200.
    struct Reader
    {
        E2bContext context;
        QPointer<HttpConnection> connection;
        QString name;
        QString path;
        qint64 offset = 0;
        bool streaming = false;
    };
    auto reader =
        std::make_shared<Reader>(Reader {m_context, connection, sandbox.airlockName(), path});
    auto next = std::make_shared<std::function<void()>>();
    *next = [reader, weakNext = std::weak_ptr<std::function<void()>>(next)] {
        const auto self = weakNext.lock();
        if (!reader->connection)
            return;
        if (reader->connection->pendingBytes() > kMaxUnsentBytes) {
            // Read on once the client took some of what waits.
            auto *socket = reader->connection.data();
            auto link = std::make_shared<QMetaObject::Connection>();
            *link = QObject::connect(socket, &HttpConnection::bytesWritten, socket, [link, self] {
                QObject::disconnect(*link);
                (*self)();
            });
            return;
        }
        reader->context.call(
            QStringLiteral("files.read"),
            {{QStringLiteral("name"), reader->name},
             {QStringLiteral("path"), reader->path},
             {QStringLiteral("offset"), reader->offset},
             {QStringLiteral("length"), kFileChunkBytes}},
            [reader, self](const Result<QJsonObject> &result) {
                if (!reader->connection)
                    return;
                if (!result) {
                    if (reader->streaming) {
                        // Too late for a status: cut the body short, the client sees an error.
                        reader->connection->deleteLater();
                        return;
                    }
                    const ErrorKind kind = result.error().kind;
                    return filesError(reader->connection, httpStatusFor(kind),
                                      result.error().message);
                }
                const QByteArray data = QByteArray::fromBase64(
                    result->value(QStringLiteral("data")).toString().toLatin1());
                const bool eof = result->value(QStringLiteral("eof")).toBool();
                if (!reader->streaming && eof) {
                    HttpResponse response;
                    response.contentType = "application/octet-stream";
                    response.body = data;
                    reader->connection->respond(response);
                    return;
                }
                if (!reader->streaming) {
                    reader->connection->beginStream(200, "application/octet-stream");
                    reader->streaming = true;
                }
                reader->connection->writeChunk(data);
                reader->offset += data.size();
                if (eof)
                    return reader->connection->finishStream();
                (*self)();
            },
            60000);
    };
    (*next)();
}

void EnvdService::writeFiles(const QPointer<HttpConnection> &connection, const E2bSandbox &sandbox,
                             const HttpRequest &request, const QString &user)
{
    if (!request.header("content-encoding").isEmpty()
        && request.header("content-encoding") != "identity")
        return filesError(connection, 400,
                          QStringLiteral("Content-Encoding %1 is not supported by airlock-e2b; "
                                         "write without gzip")
                              .arg(QString::fromLatin1(request.header("content-encoding"))));
    const QString queryPath =
        request.query.queryItemValue(QStringLiteral("path"), QUrl::FullyDecoded);
    const QByteArray contentType = request.header("content-type");
    QList<FormFile> files;
    if (contentType.startsWith("multipart/form-data")) {
        auto parsed = parseMultipartForm(contentType, request.body);
        if (!parsed)
            return filesError(connection, 400, parsed.error().message);
        files = std::move(*parsed);
    } else if (contentType.startsWith("application/octet-stream")) {
        files.append(FormFile {QString(), queryPath, request.body});
    } else {
        return filesError(
            connection, 400,
            QStringLiteral("POST /files takes multipart/form-data or application/octet-stream"));
    }
    if (files.isEmpty())
        return filesError(connection, 400, QStringLiteral("no file in the request"));
    for (FormFile &file : files) {
        // One file named by ?path=; several are named by their own filename (SDK writeFiles).
        const QString target =
            files.size() == 1 && !queryPath.isEmpty() ? queryPath : file.fileName;
        if (target.isEmpty())
            return filesError(connection, 400, QStringLiteral("a file without a path"));
        file.fileName = resolvePath(target, user);
    }
    struct Writer
    {
        E2bContext context;
        QPointer<HttpConnection> connection;
        QString name;
        QList<FormFile> files;
        qsizetype index = 0;
        qint64 offset = 0;
        QJsonArray written;
    };
    auto writer = std::make_shared<Writer>(
        Writer {m_context, connection, sandbox.airlockName(), std::move(files)});
    auto next = std::make_shared<std::function<void()>>();
    *next = [writer, weakNext = std::weak_ptr<std::function<void()>>(next)] {
        const auto self = weakNext.lock();
        if (!writer->connection)
            return;
        if (writer->index == writer->files.size()) {
            writer->connection->respond(jsonResponse(200, writer->written));
            return;
        }
        const FormFile &file = writer->files[writer->index];
        const QByteArray piece = file.content.mid(writer->offset, kFileChunkBytes);
        writer->context.call(
            QStringLiteral("files.write"),
            {{QStringLiteral("name"), writer->name},
             {QStringLiteral("path"), file.fileName},
             {QStringLiteral("data"), QString::fromLatin1(piece.toBase64())},
             {QStringLiteral("append"), writer->offset > 0},
             {QStringLiteral("createParents"), true}},
            [writer, self, size = piece.size()](const Result<QJsonObject> &result) {
                if (!writer->connection)
                    return;
                if (!result)
                    return filesError(writer->connection, httpStatusFor(result.error().kind),
                                      result.error().message);
                const FormFile &done = writer->files[writer->index];
                writer->offset += size;
                if (writer->offset >= done.content.size()) {
                    writer->written.append(
                        QJsonObject {{QStringLiteral("name"), done.fileName.section(u'/', -1)},
                                     {QStringLiteral("type"), QStringLiteral("file")},
                                     {QStringLiteral("path"), done.fileName}});
                    ++writer->index;
                    writer->offset = 0;
                }
                (*self)();
            },
            60000);
    };
    (*next)();
}

void EnvdService::onNotification(const QString &method, const QJsonObject &params)
{
    if (method == QLatin1String("files.event") || method == QLatin1String("files.watchEnd")) {
        const QString key = params.value(QStringLiteral("sandbox")).toString() + u'/'
            + QString::number(params.value(QStringLiteral("watch")).toInteger());
        if (WatchDirStream *stream = m_watches.value(key))
            stream->deliver(method, params);
        return;
    }
    if (method != QLatin1String("exec.output") && method != QLatin1String("exec.exit"))
        return;
    const QString key = params.value(QStringLiteral("sandbox")).toString() + u'/'
        + QString::number(params.value(QStringLiteral("pid")).toInteger());
    if (ProcessStream *stream = m_streams.value(key))
        stream->deliver(method, params);
}

} // namespace airlock::e2b

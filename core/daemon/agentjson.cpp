#include "core/daemon/agentjson.h"

#include "core/model/jsonfields.h"

#include <QJsonArray>

#include <limits>

namespace airlock::agentjson {

namespace {

Error invalid(const QString &message)
{
    return Error {ErrorKind::InvalidParams, message};
}

Result<std::string> stringField(const QJsonObject &params, const QString &key)
{
    AIRLOCK_TRY_INIT(text, json::readString(params, key, QString()));
    return text->toStdString();
}

} // namespace

Result<std::string> guestPath(const QJsonObject &params, const QString &key)
{
    AIRLOCK_TRY_INIT(text, json::readString(params, key));
    const std::string path = text->toStdString();
    if (!agentwire::isValidPath(path))
        return std::unexpected(invalid(
            QStringLiteral("%1 must be an absolute guest path of at most %2 bytes without NUL")
                .arg(key)
                .arg(agentwire::kMaxPathBytes)));
    return path;
}

QJsonObject archiveResult(const agentwire::ArchiveResult &result)
{
    QJsonArray refused;
    for (const auto &[path, reason] : result.refusals)
        refused.append(QJsonObject {{QStringLiteral("path"), QString::fromStdString(path)},
                                    {QStringLiteral("reason"), QString::fromStdString(reason)}});
    return {{QStringLiteral("entries"), qint64(result.entries)},
            {QStringLiteral("bytes"), qint64(result.bytes)},
            {QStringLiteral("refusedCount"), qint64(result.refusedCount)},
            {QStringLiteral("refused"), refused}};
}

Result<QByteArray> base64Param(const QJsonObject &params, const QString &key, qint64 maxBytes)
{
    AIRLOCK_TRY_INIT(text, json::readString(params, key, QString()));
    const QByteArray latin1 = text->toLatin1();
    auto decoded = QByteArray::fromBase64Encoding(latin1, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || QString::fromLatin1(latin1) != *text)
        return std::unexpected(invalid(QStringLiteral("%1 is not base64").arg(key)));
    if (decoded.decoded.size() > maxBytes)
        return std::unexpected(
            invalid(QStringLiteral("%1 holds more than %2 bytes").arg(key).arg(maxBytes)));
    return decoded.decoded;
}

Result<agentwire::ExecRequest> execRequest(const QJsonObject &params)
{
    agentwire::ExecRequest request;
    const QJsonValue argv = params.value(QStringLiteral("argv"));
    const QJsonValue command = params.value(QStringLiteral("command"));
    if (argv.isUndefined() == command.isUndefined())
        return std::unexpected(invalid(QStringLiteral("give either argv or command")));
    if (!argv.isUndefined()) {
        if (!argv.isArray() || argv.toArray().isEmpty())
            return std::unexpected(invalid(QStringLiteral("argv must be a non-empty array")));
        for (const QJsonValue &arg : argv.toArray()) {
            if (!arg.isString())
                return std::unexpected(invalid(QStringLiteral("argv must hold strings")));
            request.argv.push_back(arg.toString().toStdString());
        }
    } else {
        if (!command.isString() || command.toString().isEmpty())
            return std::unexpected(invalid(QStringLiteral("command must be a non-empty string")));
        request.shell = true;
        request.argv.push_back(command.toString().toStdString());
    }
    const QJsonValue env = params.value(QStringLiteral("env"));
    if (!env.isUndefined()) {
        if (!env.isObject())
            return std::unexpected(invalid(QStringLiteral("env must be an object of strings")));
        const QJsonObject vars = env.toObject();
        for (auto it = vars.begin(); it != vars.end(); ++it) {
            if (!it.value().isString())
                return std::unexpected(
                    invalid(QStringLiteral("env.%1 must be a string").arg(it.key())));
            request.env.emplace_back(it.key().toStdString(), it.value().toString().toStdString());
        }
    }
    AIRLOCK_TRY_INIT(cwd, stringField(params, QStringLiteral("cwd")));
    request.cwd = *cwd;
    AIRLOCK_TRY_INIT(user, stringField(params, QStringLiteral("user")));
    // The agent runs as root; "root" and "" both mean it, so that clients can say it.
    request.user = *user == "root" ? std::string() : *user;
    AIRLOCK_TRY_INIT(stdinOpen, json::readBool(params, QStringLiteral("stdin"), false));
    request.stdinOpen = *stdinOpen;
    const QJsonValue pty = params.value(QStringLiteral("pty"));
    if (!pty.isUndefined() && !pty.isNull()) {
        if (!pty.isObject())
            return std::unexpected(invalid(QStringLiteral("pty must be {rows, cols}")));
        AIRLOCK_TRY_INIT(rows,
                         json::readInteger(pty.toObject(), QStringLiteral("rows"), 1, 1000, 24));
        AIRLOCK_TRY_INIT(cols,
                         json::readInteger(pty.toObject(), QStringLiteral("cols"), 1, 1000, 80));
        request.pty = true;
        request.rows = quint16(*rows);
        request.cols = quint16(*cols);
    }
    AIRLOCK_TRY_INIT(timeout,
                     json::readInteger(params, QStringLiteral("timeoutMs"), 0,
                                       std::numeric_limits<quint32>::max(), 0));
    request.timeoutMs = quint32(*timeout);
    if (auto why = request.validate())
        return std::unexpected(invalid(QString::fromStdString(*why)));
    return request;
}

QJsonObject exitStatus(const agentwire::ExitStatus &status)
{
    QJsonObject result;
    result.insert(status.signaled ? QStringLiteral("signal") : QStringLiteral("exitCode"),
                  status.value);
    if (status.timedOut)
        result.insert(QStringLiteral("timedOut"), true);
    return result;
}

QJsonObject fileInfo(const agentwire::FileInfo &info)
{
    static const char *const kTypes[] = {"file", "file", "directory", "symlink", "other"};
    const auto kind = std::size_t(info.kind);
    QJsonObject result {
        {QStringLiteral("name"), QString::fromStdString(info.name)},
        {QStringLiteral("type"),
         QString::fromLatin1(kind < std::size(kTypes) ? kTypes[kind] : "other")},
        {QStringLiteral("mode"), qint64(info.mode & 07777)},
        {QStringLiteral("size"), qint64(info.size)},
        {QStringLiteral("mtimeNs"), qint64(info.mtimeNs)},
        {QStringLiteral("uid"), qint64(info.uid)},
        {QStringLiteral("gid"), qint64(info.gid)},
    };
    if (info.kind == agentwire::FileKind::Symlink)
        result.insert(QStringLiteral("target"), QString::fromStdString(info.linkTarget));
    return result;
}

Error toError(const agent::AgentError &error)
{
    using Kind = agent::AgentError::Kind;
    using Code = agentwire::ErrorCode;
    ErrorKind kind = ErrorKind::OperationFailed;
    switch (error.kind) {
    case Kind::AgentUnavailable:
        kind = ErrorKind::AgentUnavailable;
        break;
    case Kind::Timeout:
        kind = ErrorKind::Timeout;
        break;
    case Kind::ProtocolError:
        kind = ErrorKind::ProtocolError;
        break;
    case Kind::InvalidRequest:
        kind = ErrorKind::InvalidParams;
        break;
    case Kind::IdentityFailed:
        kind = ErrorKind::OperationFailed;
        break;
    case Kind::Guest:
        switch (error.guestCode) {
        case Code::NotFound:
            kind = ErrorKind::NotFound;
            break;
        case Code::IsADirectory:
            kind = ErrorKind::IsADirectory;
            break;
        case Code::NotADirectory:
            kind = ErrorKind::NotADirectory;
            break;
        case Code::Exists:
            kind = ErrorKind::AlreadyExists;
            break;
        case Code::Permission:
            kind = ErrorKind::PermissionDenied;
            break;
        case Code::Invalid:
        case Code::TooLarge:
            kind = ErrorKind::InvalidParams;
            break;
        case Code::NotEmpty:
            kind = ErrorKind::NotEmpty;
            break;
        case Code::NoSpace:
            kind = ErrorKind::NoSpace;
            break;
        case Code::Busy:
        case Code::Limit:
            kind = ErrorKind::Busy;
            break;
        case Code::Unsupported:
            kind = ErrorKind::BackendUnavailable;
            break;
        case Code::ProtocolError:
            kind = ErrorKind::ProtocolError;
            break;
        case Code::Io:
        case Code::Canceled:
        case Code::Internal:
            kind = ErrorKind::OperationFailed;
            break;
        }
        break;
    }
    return Error {kind, error.message};
}

} // namespace airlock::agentjson

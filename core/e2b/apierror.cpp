#include "core/e2b/apierror.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace airlock::e2b {

QByteArray apiErrorBody(int status, const QString &message)
{
    return QJsonDocument(
               QJsonObject {{QStringLiteral("code"), status}, {QStringLiteral("message"), message}})
        .toJson(QJsonDocument::Compact);
}

int httpStatusFor(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::NotFound:
        return 404;
    case ErrorKind::InvalidParams:
    case ErrorKind::InvalidName:
    case ErrorKind::IsADirectory:
    case ErrorKind::NotADirectory:
        return 400;
    case ErrorKind::PermissionDenied:
        return 403;
    case ErrorKind::AlreadyExists:
    case ErrorKind::Busy:
    case ErrorKind::InvalidState:
    case ErrorKind::NotEmpty:
    case ErrorKind::Conflict:
        return 409;
    case ErrorKind::NoSpace:
        // envd's answer for a full disk; the SDK raises NotEnoughSpaceError.
        return 507;
    case ErrorKind::BackendUnavailable:
    case ErrorKind::AgentUnavailable:
    case ErrorKind::Disconnected:
        return 503;
    case ErrorKind::Timeout:
        return 504;
    default:
        return 500;
    }
}

QString connectCodeFor(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::NotFound:
        return QStringLiteral("not_found");
    case ErrorKind::InvalidParams:
    case ErrorKind::InvalidName:
    case ErrorKind::IsADirectory:
    case ErrorKind::NotADirectory:
        return QStringLiteral("invalid_argument");
    case ErrorKind::PermissionDenied:
        return QStringLiteral("permission_denied");
    case ErrorKind::AlreadyExists:
        return QStringLiteral("already_exists");
    case ErrorKind::Busy:
    case ErrorKind::InvalidState:
    case ErrorKind::NotEmpty:
    case ErrorKind::Conflict:
        return QStringLiteral("failed_precondition");
    case ErrorKind::NoSpace:
        return QStringLiteral("resource_exhausted");
    case ErrorKind::BackendUnavailable:
    case ErrorKind::AgentUnavailable:
    case ErrorKind::Disconnected:
        return QStringLiteral("unavailable");
    case ErrorKind::Timeout:
        return QStringLiteral("deadline_exceeded");
    default:
        return QStringLiteral("internal");
    }
}

int connectHttpStatus(const QString &code)
{
    static const QHash<QString, int> statuses {
        {QStringLiteral("canceled"), 499},
        {QStringLiteral("unknown"), 500},
        {QStringLiteral("invalid_argument"), 400},
        {QStringLiteral("deadline_exceeded"), 504},
        {QStringLiteral("not_found"), 404},
        {QStringLiteral("already_exists"), 409},
        {QStringLiteral("permission_denied"), 403},
        {QStringLiteral("resource_exhausted"), 429},
        {QStringLiteral("failed_precondition"), 400},
        {QStringLiteral("aborted"), 409},
        {QStringLiteral("out_of_range"), 400},
        {QStringLiteral("unimplemented"), 501},
        {QStringLiteral("internal"), 500},
        {QStringLiteral("unavailable"), 503},
        {QStringLiteral("data_loss"), 500},
        {QStringLiteral("unauthenticated"), 401},
    };
    return statuses.value(code, 500);
}

} // namespace airlock::e2b

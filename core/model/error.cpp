#include "core/model/error.h"

#include <cstring>

#include <array>

namespace airlock {

namespace {

struct KindInfo
{
    ErrorKind kind;
    const char16_t *name;
    int code;
};

constexpr std::array kKinds {
    KindInfo {ErrorKind::ParseError, u"parse_error", -32700},
    KindInfo {ErrorKind::InvalidRequest, u"invalid_request", -32600},
    KindInfo {ErrorKind::MethodNotFound, u"method_not_found", -32601},
    KindInfo {ErrorKind::InvalidParams, u"invalid_params", -32602},
    KindInfo {ErrorKind::Internal, u"internal", -32603},
    KindInfo {ErrorKind::NotFound, u"not_found", -32000},
    KindInfo {ErrorKind::InvalidName, u"invalid_name", -32001},
    KindInfo {ErrorKind::PermissionDenied, u"permission_denied", -32002},
    KindInfo {ErrorKind::Busy, u"busy", -32003},
    KindInfo {ErrorKind::BackendUnavailable, u"backend_unavailable", -32004},
    KindInfo {ErrorKind::AlreadyExists, u"already_exists", -32005},
    KindInfo {ErrorKind::InvalidState, u"invalid_state", -32006},
    KindInfo {ErrorKind::MessageTooLarge, u"message_too_large", -32007},
    KindInfo {ErrorKind::OperationFailed, u"operation_failed", -32008},
    KindInfo {ErrorKind::Timeout, u"timeout", -32009},
    KindInfo {ErrorKind::Disconnected, u"disconnected", -32010},
    KindInfo {ErrorKind::AgentUnavailable, u"agent_unavailable", -32011},
    KindInfo {ErrorKind::ProtocolError, u"protocol_error", -32012},
    KindInfo {ErrorKind::IsADirectory, u"is_a_directory", -32013},
    KindInfo {ErrorKind::NotADirectory, u"not_a_directory", -32014},
    KindInfo {ErrorKind::NotEmpty, u"not_empty", -32015},
    KindInfo {ErrorKind::NoSpace, u"no_space", -32016},
    KindInfo {ErrorKind::Conflict, u"conflict", -32017},
};

} // namespace

QString errorKindName(ErrorKind kind)
{
    for (const auto &info : kKinds) {
        if (info.kind == kind)
            return QString::fromUtf16(info.name);
    }
    return QStringLiteral("internal");
}

std::optional<ErrorKind> errorKindFromName(QStringView name)
{
    for (const auto &info : kKinds) {
        if (name == QStringView(info.name))
            return info.kind;
    }
    return std::nullopt;
}

int errorCode(ErrorKind kind)
{
    for (const auto &info : kKinds) {
        if (info.kind == kind)
            return info.code;
    }
    return -32603;
}

ErrorKind errorKindFromCode(int code)
{
    for (const auto &info : kKinds) {
        if (info.code == code)
            return info.kind;
    }
    return ErrorKind::Internal;
}

std::unexpected<Error> failSystem(const QString &what, const QString &path, int error)
{
    return fail(
        ErrorKind::OperationFailed,
        QStringLiteral("%1 %2: %3").arg(what, path, QString::fromLocal8Bit(std::strerror(error))));
}

} // namespace airlock

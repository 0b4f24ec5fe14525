#pragma once

#include <QString>

#include <expected>
#include <optional>

namespace airlock {

/// Stable error kinds. Each travels over the wire as a JSON-RPC error code plus a symbolic
/// `data.kind` (see docs/protocol.md); only ui/ turns them into translated sentences.
enum class ErrorKind {
    ParseError, ///< -32700: the message is not JSON (JSON-RPC 2.0)
    InvalidRequest, ///< -32600: JSON, but not a JSON-RPC 2.0 request
    MethodNotFound, ///< -32601
    InvalidParams, ///< -32602: missing or wrongly typed parameter
    Internal, ///< -32603
    NotFound, ///< -32000: no such sandbox, image or client attachment
    InvalidName, ///< -32001: a name outside [a-z0-9][a-z0-9-]{0,62}
    PermissionDenied, ///< -32002: peer is neither root nor in the `airlock` group
    Busy, ///< -32003: the object is in use (e.g. delete of a running sandbox)
    BackendUnavailable, ///< -32004: VMM, image or host facility missing
    AlreadyExists, ///< -32005: duplicate name
    InvalidState, ///< -32006: operation not valid in the current state
    MessageTooLarge, ///< -32007: a frame over 1 MiB; the connection is closed after it
    OperationFailed, ///< -32008: the host operation ran and failed
    Timeout, ///< -32009: no answer in time (client side)
    Disconnected, ///< -32010: the transport closed (client side)
    AgentUnavailable, ///< -32011: the sandbox's guest agent is not connected (or restarted)
    ProtocolError, ///< -32012: the guest agent broke its protocol; its channel was dropped
    IsADirectory, ///< -32013: a guest directory where a file was expected
    NotADirectory, ///< -32014: a guest file where a directory was expected
    NotEmpty, ///< -32015: removing a guest directory that has entries (without recursive)
    NoSpace, ///< -32016: the guest's disk (or its quota) is full
    /// -32017: the object changed since the revision the caller based its change on (e.g.
    /// policy.set with `ifRevision`); read it again and redo the change
    Conflict,
};

/// An error with a stable kind and a human-readable (English, untranslated) message.
struct Error
{
    ErrorKind kind = ErrorKind::Internal;
    QString message;
};

/// Result of an operation that can fail: a value or an Error.
template<typename T>
using Result = std::expected<T, Error>;

/// Shorthand for returning an error: `return fail(ErrorKind::NotFound, u"..."_s);`
inline std::unexpected<Error> fail(ErrorKind kind, QString message)
{
    return std::unexpected(Error {kind, std::move(message)});
}

/// Returns the Error of `result` (a Result<T> expression or variable) from the enclosing
/// function when it holds one; otherwise does nothing and `result`, when a variable, keeps its
/// value for the caller. The enclosing function returns a Result of any value type:
///
///     auto spec = SandboxSpec::fromJson(params);
///     AIRLOCK_TRY(spec);
///     AIRLOCK_TRY(validateName(spec->name));
#define AIRLOCK_TRY(result)                                                                        \
    do {                                                                                           \
        if (auto &&airlockTried = (result); !airlockTried)                                         \
            return std::unexpected(airlockTried.error());                                          \
    } while (false)

/// Declares `auto var = (expr);` (a Result) and returns its Error from the enclosing function
/// when it holds one; after it, `*var` is the value.
#define AIRLOCK_TRY_INIT(var, expr)                                                                \
    auto var = (expr);                                                                             \
    AIRLOCK_TRY(var)

/// `operation_failed` for a system call on `path` that set errno `error`:
/// "WHAT PATH: strerror(error)", e.g. "cannot open /var/lib/airlock/x: No such file or directory".
std::unexpected<Error> failSystem(const QString &what, const QString &path, int error);

/// The symbolic name sent as `data.kind`, e.g. "not_found".
QString errorKindName(ErrorKind kind);
/// Parses a symbolic name; std::nullopt for unknown names.
std::optional<ErrorKind> errorKindFromName(QStringView name);
/// The JSON-RPC error code for a kind (-32700..-32600 standard, -32000..-32099 Airlock).
int errorCode(ErrorKind kind);
/// Kind for a numeric code when `data.kind` is missing; Internal for unknown codes.
ErrorKind errorKindFromCode(int code);

} // namespace airlock

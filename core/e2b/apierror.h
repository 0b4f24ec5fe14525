#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QString>

namespace airlock::e2b {

/// The error body of E2B's control API (spec/openapi.yml `Error`: `{code: int, message}`); the
/// SDK tests `error.code` (404 → SandboxNotFoundError) and shows `message`.
QByteArray apiErrorBody(int status, const QString &message);

/// The HTTP status for a helper error kind: not_found 404, invalid_params 400, busy/state 409,
/// backend problems 503, the rest 500.
int httpStatusFor(ErrorKind kind);

/// The Connect protocol's error code name for a helper error kind
/// (https://connectrpc.com/docs/protocol#error-codes), and its HTTP status for unary answers.
QString connectCodeFor(ErrorKind kind);
int connectHttpStatus(const QString &code);

} // namespace airlock::e2b

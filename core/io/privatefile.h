#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QString>

#include <sys/types.h>

namespace airlock::io {

/// Writes `data` to `path` so that a reader sees either the old file or the whole new one,
/// also after a crash or power loss: `path`.tmp is created with `mode` (O_EXCL, O_NOFOLLOW,
/// never widened by the umask or an existing file), written, fsync'd, renamed over `path`, and
/// the directory is fsync'd (rename(2) durability, see fsync(2)). A stale `path`.tmp from a
/// crash is replaced. Errors: OperationFailed naming the file and the errno text.
Result<void> writeFileAtomically(const QString &path, QByteArrayView data, mode_t mode);

/// Reads a whole file of at most `maxBytes` that only its owner may read or write: it must be
/// a regular file, not a symbolic link, with no group or other permission bits. `what` names
/// the file in errors ("vault key"). Errors: NotFound (missing), PermissionDenied (symlink,
/// not regular, mode wider than 0600), OperationFailed (I/O error, larger than maxBytes). The
/// caller owns the bytes and should OPENSSL_cleanse them when they are key material.
Result<QByteArray> readPrivateFile(const QString &path, qint64 maxBytes, QStringView what);

/// Reads a whole regular file of at most `maxBytes` (no permission requirement). Errors as
/// readPrivateFile, without the mode check.
Result<QByteArray> readSmallFile(const QString &path, qint64 maxBytes, QStringView what);

} // namespace airlock::io

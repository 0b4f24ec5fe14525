#pragma once

#include "core/agentwire/messages.h"

#include <expected>
#include <sys/stat.h>

namespace airlock::guest {

/// The file requests that answer at once (docs/agent-protocol.md, "Files"). Each returns the
/// answer's payload or the Error to send: errno mapped by errorCodeOfErrno(), with a message
/// naming the path.
namespace fileops {

using Failure = agentwire::ErrorMessage;

std::expected<agentwire::FileInfo, Failure> statPath(const agentwire::StatRequest &request);
/// The entries under the folder, a folder's before its content, each folder's names sorted;
/// symlinks to folders are not entered. `truncated` when maxEntries cut it.
std::expected<agentwire::ListResult, Failure> listFolder(const agentwire::ListRequest &request);
std::expected<void, Failure> makeFolder(const agentwire::MkdirRequest &request);
/// Recursive removal opens each folder with O_NOFOLLOW and unlinks relative to it.
std::expected<void, Failure> removePath(const agentwire::RemoveRequest &request);
std::expected<void, Failure> renamePath(const agentwire::RenameRequest &request);

/// FileInfo of `st` (kind from the type bits) named `name`.
agentwire::FileInfo infoOf(const struct stat &st, std::string name);
/// Failure for errno `error` of `what` on `path`.
Failure failure(int error, std::string_view what, std::string_view path);

} // namespace fileops

} // namespace airlock::guest

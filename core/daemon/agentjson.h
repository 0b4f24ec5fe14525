#pragma once

#include "core/agent/agenterror.h"
#include "core/agentwire/messages.h"
#include "core/model/error.h"

#include <QJsonObject>

// The JSON shapes of the exec.* and files.* methods (docs/protocol.md, "Exec" and "Files") and
// their translation to the agent protocol's messages (docs/agent-protocol.md). What the guest
// said (names, link targets, error texts) is untrusted: it goes into JSON strings, which the
// client prints through its escape filter, never into a host path.

namespace airlock::agentjson {

/// exec.start params: `argv` (array of strings) or `command` (one shell line), `env` (object of
/// strings), `cwd`, `user` ("root", "agent" or another guest user), `stdin` (bool), `pty`
/// ({rows, cols}), `timeoutMs` (0: none). InvalidParams naming the field otherwise, including
/// what agentwire::ExecRequest::validate() refuses.
Result<agentwire::ExecRequest> execRequest(const QJsonObject &params);
/// {exitCode} or {signal}, plus `timedOut` when the deadline killed it.
QJsonObject exitStatus(const agentwire::ExitStatus &status);
/// A stat/list entry: {name, type: file|directory|symlink|other, mode, size, mtimeNs, uid, gid,
/// target?}; mode is the permission bits (07777), type says the rest.
QJsonObject fileInfo(const agentwire::FileInfo &info);
/// A `path` field: an absolute guest path of at most agentwire::kMaxPathBytes (InvalidParams).
Result<std::string> guestPath(const QJsonObject &params, const QString &key);
/// What an archive_in wrote: {entries, bytes, refusedCount, refused: [{path, reason}]} (at most
/// the first 64 refusals are listed; refusedCount counts all).
QJsonObject archiveResult(const agentwire::ArchiveResult &result);
/// A base64 field `key` of at most `maxBytes` decoded bytes (InvalidParams otherwise; absent
/// is empty).
Result<QByteArray> base64Param(const QJsonObject &params, const QString &key, qint64 maxBytes);
/// The helper's error for an agent failure: agent_unavailable, timeout, protocol_error,
/// invalid_params, or the guest's code (not_found, is_a_directory, not_a_directory,
/// already_exists, permission_denied, not_empty, no_space, busy, ...), with its message.
Error toError(const agent::AgentError &error);

} // namespace airlock::agentjson

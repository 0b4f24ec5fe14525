#pragma once

#include "core/daemon/registry.h"
#include "core/model/egresspolicy.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>

#include <optional>

namespace airlock {

/// `policy.dryRun` (docs/protocol.md): replays a sandbox's recorded egress decisions against
/// the applied policy and an edited one with the gateway's own PolicyMatcher, and reports the
/// decisions whose verdict would change. Pure: no I/O; the caller reads the history.
///
/// Only decisions the policy made are replayed: recorded reason `allowed`,
/// `host_not_allowed`, `port_not_allowed`, `method_not_allowed` or `path_not_allowed` in
/// layer `dns` (checkHost on `name`), `tls` (checkConnection on SNI or name and port) or
/// `http` (checkRequest on Host or name, port, method and path). Refusals that happen before
/// or regardless of the policy (malformed requests, SNI/Host mismatches, private destinations,
/// timeouts) would not change with a new policy and are skipped.
class PolicyDryRun final
{
public:
    /// Stop adding changes once the answer's `changes` reach this many bytes of JSON, so it
    /// fits one protocol message (1 MiB); `truncated` says so.
    static constexpr qsizetype kMaxChangeBytes = 768 * 1024;

    struct Window
    {
        std::optional<QDateTime> since; ///< inclusive, UTC
        std::optional<QDateTime> until; ///< exclusive, UTC
    };

    /// `{evaluated, skipped, truncated, changes: [{seq, event, before, after}]}` where before
    /// and after are `{verdict: "allowed"|"denied", reason, rule: int|null, detail}`; changes
    /// are in the order of the records (oldest first). Both policies must be valid
    /// (EgressPolicy::validate); InvalidParams otherwise.
    static Result<QJsonObject> evaluate(const EgressPolicy &applied, const EgressPolicy &edited,
                                        const QList<EgressRecord> &records, const Window &window);
};

} // namespace airlock

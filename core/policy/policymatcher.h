#pragma once

#include "core/model/egresspolicy.h"
#include "core/model/egressreason.h"
#include "core/model/error.h"

#include <QString>

namespace airlock::policy {

/// The outcome of a check: the reason (Allowed or a reason of layer Policy in the reason table),
/// the index of the rule it refers to (the matching rule when allowed; the rule that matched
/// most axes for port/method/path denials; -1 otherwise) and an English detail for logs and the
/// GUI.
struct Verdict
{
    EgressReason reason = EgressReason::HostNotAllowed;
    int rule = -1;
    QString detail;

    bool allowed() const { return reason == EgressReason::Allowed; }
};

/// Decides requests against one sandbox's EgressPolicy. Pure: no I/O, no state after
/// construction, safe to share read-only between threads. Every host passed in goes through
/// canonicalizeHostname (docs/redteam-cases.md principle 2), so callers may pass SNI or Host values
/// as they are; anything that does not canonicalize is MalformedHost. Rules are tried in order; the
/// first rule that matches on every axis allows (docs/policy.md, "Matching").
class PolicyMatcher final
{
public:
    /// Validates the policy (EgressPolicy::validate) and builds a matcher; the error is the
    /// validation error, so a matcher never holds a non-canonical pattern.
    static Result<PolicyMatcher> create(EgressPolicy policy);

    const EgressPolicy &policy() const { return m_policy; }

    /// DNS stage: does any rule's host pattern match `host`? Allowed, HostNotAllowed or
    /// MalformedHost; `rule` is the first matching rule.
    Verdict checkHost(QStringView host) const;
    /// TLS/connection stage (SNI or CONNECT target, original destination port): Allowed when a
    /// rule matches host and port; else PortNotAllowed, HostNotAllowed or MalformedHost.
    Verdict checkConnection(QStringView host, quint16 port) const;
    /// HTTP stage, once per request. `target` is the origin-form request target
    /// ("/path?query"); the query is not matched. Order of checks: MalformedHost,
    /// MalformedMethod, MalformedPath (pathProblem), then the rules.
    Verdict checkRequest(QStringView host, quint16 port, QStringView method,
                         QStringView target) const;

    /// The wildcard truth table (docs/redteam-cases.md C2; docs/policy.md): `pattern` is canonical
    /// ("pkg.test" or "*.pkg.test"), `host` canonical. Exact patterns match only the same name;
    /// "*.pkg.test" matches "a.pkg.test" and "a.b.pkg.test", never "pkg.test" or
    /// "evilpkg.test".
    static bool hostMatches(QStringView pattern, QStringView host);
    /// Segment-boundary prefix match on the raw path: "/api" matches "/api" and "/api/x",
    /// never "/apiary"; "/api/" matches "/api/" and "/api/x", not "/api".
    static bool pathMatches(QStringView prefix, QStringView path);
    /// Why an origin-form request target is refused, or an empty string. Refused: empty, not
    /// starting with '/', '#', '\', space, controls, non-ASCII, '%' not followed by two hex
    /// digits, and any segment that after one round of percent-decoding contains '\', a
    /// control byte, or a "." or ".." piece (also with ";params" and split at decoded '/'), so
    /// "/a/../b", "/a/%2e%2e/b", "/a/..;/b" and "/a/x%2f..%2fb" are all refused.
    static QString pathProblem(QStringView target);

private:
    explicit PolicyMatcher(EgressPolicy policy);

    EgressPolicy m_policy;
};

} // namespace airlock::policy

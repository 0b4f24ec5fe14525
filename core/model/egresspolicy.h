#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace airlock {

/// One allowlist entry of an egress policy. Format and meaning: docs/policy.md.
struct EgressRule
{
    static constexpr quint16 kDefaultPort = 443;

    /// Canonical exact name ("pkg.test") or wildcard pattern ("*.pkg.test"), as returned by
    /// canonicalHostPattern. docs/redteam-cases.md C1/C2: exact names match only themselves;
    /// "*.suffix" matches names with one or more labels in front of suffix, never suffix itself.
    QString host;
    QList<quint16> ports {kDefaultPort}; ///< 1..65535, no duplicates, at least one
    QStringList methods; ///< upper-case RFC 9110 §9.1 method tokens; empty = any method
    QStringList pathPrefixes; ///< each starts with '/'; empty = any path (see docs/policy.md)
    QString comment; ///< free text for people, at most 1024 characters

    /// True when host is a "*.suffix" pattern.
    bool isWildcard() const { return host.startsWith(QStringLiteral("*.")); }

    /// Checks every field as fromJson does; the error names the field: "field 'host': ...".
    Result<void> validate() const;
    /// `{host, ports, methods?, pathPrefixes?, comment?}`; empty optional lists and an empty
    /// comment are left out.
    QJsonObject toJson() const;
    /// Reads and validates one rule; host patterns are canonicalized (so "*.PKG.test." is
    /// stored as "*.pkg.test"); everything else must already be in canonical form and is
    /// rejected, not repaired. Unknown keys are errors (a typo must not silently widen or
    /// narrow a rule). Errors are InvalidParams "field '<name>': <why>".
    static Result<EgressRule> fromJson(const QJsonObject &object);

    friend bool operator==(const EgressRule &, const EgressRule &) = default;
};

/// A sandbox's egress allowlist: `{"version": 1, "rules": [...]}`. Anything no rule allows is
/// denied (docs/redteam-cases.md principle 3); a policy with no rules (the default for new
/// sandboxes) denies everything.
struct EgressPolicy
{
    static constexpr int kVersion = 1;
    static constexpr int kMaxRules = 4096;
    static constexpr qsizetype kMaxJsonBytes = 1024 * 1024;

    QList<EgressRule> rules;

    /// The policy of a new sandbox: no rules.
    static EgressPolicy denyAll() { return {}; }

    /// Validates every rule; errors are InvalidParams "rule N, field 'F': why" with N 0-based.
    Result<void> validate() const;
    /// `{"version": 1, "rules": [...]}`.
    QJsonObject toJson() const;
    /// Reads `{"version": 1, "rules": [...]}`. Errors (InvalidParams): a missing or other
    /// version, rules not an array, more than kMaxRules rules, an unknown top-level key, or a
    /// rule error as "rule N, field 'F': why" (N 0-based, the index shown by the matcher).
    static Result<EgressPolicy> fromJson(const QJsonObject &object);
    /// Parses a policy file's bytes (at most kMaxJsonBytes). A JSON syntax error is a
    /// ParseError naming the offset; everything else as fromJson.
    static Result<EgressPolicy> fromJsonBytes(const QByteArray &bytes);
    /// Indented JSON text with a trailing newline, as the templates in resources/policies/.
    QByteArray toJsonBytes() const;
    /// A short name of exactly this content: the first 16 hex digits of the SHA-256 of its
    /// compact JSON (keys sorted, rules in order). policy.get reports it, and policy.set with
    /// `ifRevision` applies only while the stored policy still has it (compare and set).
    QString revision() const;

    friend bool operator==(const EgressPolicy &, const EgressPolicy &) = default;
};

/// Checks an HTTP method token for a rule: RFC 9110 §9.1 token, restricted to upper-case
/// letters, digits, '-' and '_', starting with a letter, at most 32 characters. Methods are
/// case-sensitive (RFC 9110 §9.1), so "get" is rejected, not upper-cased.
bool isValidRuleMethod(QStringView method);

/// Checks a rule's path prefix: starts with '/', at most 1024 characters, only RFC 3986 pchar
/// characters and '/' without percent-encoding (no '%', '?', '#', '\', space, controls or
/// non-ASCII), and no "." or ".." segment. Empty string when valid, else why not.
QString pathPrefixProblem(QStringView prefix);

} // namespace airlock

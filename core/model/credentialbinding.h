#pragma once

#include "core/model/error.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace airlock {

/// Where the gateway puts a secret in a matching request (docs/credentials.md).
struct CredentialPlacement
{
    enum class Kind {
        Header, ///< `header: template` with "{secret}" replaced by the value
        Basic, ///< `Authorization: Basic base64(username ":" secret)` (RFC 7617)
    };
    static constexpr QStringView kSecretToken = u"{secret}";

    Kind kind = Kind::Header;
    QString header = QStringLiteral("Authorization"); ///< Header only: an RFC 9110 §5.1 token
    QString valueTemplate = QStringLiteral("Bearer {secret}"); ///< Header only
    QString username; ///< Basic only: visible ASCII without ':' (RFC 7617 §2)

    /// Checks the placement; InvalidParams "field 'placement.header': why" when refused: headers
    /// that frame, route or end the request or connection (Host, Content-Length, Transfer-Encoding,
    /// Connection, Upgrade, TE, Trailer, Keep-Alive, Proxy-*, Forwarded, Via, X-Forwarded-*), a
    /// template without exactly one "{secret}" or with characters other than visible ASCII and
    /// space, longer than 256 characters.
    Result<void> validate() const;
    QJsonObject toJson() const;
    static Result<CredentialPlacement> fromJson(const QJsonObject &object);

    friend bool operator==(const CredentialPlacement &, const CredentialPlacement &) = default;
};

/// Use counters of one binding, kept by the helper from the gateway's events.
struct CredentialBindingStats
{
    quint64 injections = 0; ///< requests the secret was injected into
    QDateTime lastUsed; ///< UTC of the last injection; invalid when never
    quint64 denied = 0; ///< requests carrying the placeholder that were refused

    QJsonObject toJson() const;
};

/// One credential binding (issue 4, docs/redteam-cases.md principle 7): the gateway of `sandbox`
/// injects `secret` only into https requests on port 443 whose canonical SNI and Host both equal
/// `host`, whose path starts with `pathPrefix` (segment boundary, as policy paths) when set and
/// whose method is in `methods` when set, after every other check passed.
///
/// JSON (binding.add params, binding.list entries): {id, sandbox, secret, host, pathPrefix?,
/// methods?, placement: {type: "header", header, template} | {type: "basic", username},
/// placeholderVariable, createdAt, stats}. Only sandbox, secret, host, pathPrefix, methods and
/// placement are read by fromJson; the rest is the helper's.
struct CredentialBinding
{
    qint64 id = 0; ///< assigned by the helper, > 0 once stored
    QString sandbox;
    QString secret;
    QString host; ///< canonical exact name; wildcards are refused
    QString pathPrefix; ///< empty = any path
    QStringList methods; ///< upper-case tokens; empty = any method
    CredentialPlacement placement;
    QDateTime createdAt;
    CredentialBindingStats stats;

    /// Checks every field; errors are InvalidParams/InvalidName "field '<name>': why".
    Result<void> validate() const;
    QJsonObject toJson() const;
    /// Reads the user's part of a binding and canonicalizes the host (as policy rules do);
    /// unknown keys are errors.
    static Result<CredentialBinding> fromJson(const QJsonObject &object);
};

/// The environment variable that carries the placeholder of `secret` in the guest's
/// /run/airlock/env: "AIRLOCK_SECRET_" + the name upper-cased with '-' as '_'
/// ("github-token" → AIRLOCK_SECRET_GITHUB_TOKEN).
QString placeholderVariable(const QString &secret);

/// A new random placeholder: "airlock-placeholder-" + 32 hex digits (128 bits from the
/// system's CSPRNG), unique per sandbox and secret, never derived from the value.
QString newPlaceholder();

} // namespace airlock

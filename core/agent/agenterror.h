#pragma once

#include "core/agentwire/messages.h"

#include <QString>

#include <expected>

namespace airlock::agent {

/// Why a request to the guest agent failed (docs/agent-protocol.md, "Errors").
struct AgentError
{
    enum class Kind {
        /// No channel, the channel closed, the handshake failed, or the agent restarted:
        /// `agent_unavailable`.
        AgentUnavailable,
        /// The guest did not answer (or stalled a stream) within the limit: `timeout`.
        Timeout,
        /// The guest broke the protocol; the connection is dropped: `protocol_error`.
        ProtocolError,
        /// The request cannot be sent (a relative path, an argument with NUL): `invalid_params`.
        InvalidRequest,
        /// The guest answered Error: guestCode says why (`not_found`, `is_a_directory`, ...).
        Guest,
        /// The identity refresh failed at a step (detail: entropy, name, files, network).
        IdentityFailed,
    };

    Kind kind = Kind::AgentUnavailable;
    agentwire::ErrorCode guestCode = agentwire::ErrorCode::Internal; ///< with Kind::Guest
    QString message; ///< English, for logs and people; the guest's part is untrusted text
    QString detail; ///< the failed step with Kind::IdentityFailed

    /// The stable symbolic name: agent_unavailable, timeout, protocol_error, invalid_params,
    /// identity_failed, or the guest's code name (not_found, is_a_directory, ...).
    QString name() const;

    static AgentError unavailable(QString message)
    {
        return {Kind::AgentUnavailable, {}, std::move(message), {}};
    }
    static AgentError timeout(QString message)
    {
        return {Kind::Timeout, {}, std::move(message), {}};
    }
    static AgentError protocol(QString message)
    {
        return {Kind::ProtocolError, {}, std::move(message), {}};
    }
    static AgentError invalid(QString message)
    {
        return {Kind::InvalidRequest, {}, std::move(message), {}};
    }
    static AgentError guest(agentwire::ErrorCode code, QString message)
    {
        return {Kind::Guest, code, std::move(message), {}};
    }
    /// The guest's Error frame; its message is untrusted text (guestText()).
    static AgentError fromGuest(const agentwire::ErrorMessage &error);
};

/// Text from the guest made safe for a log line or a message: printable ASCII, at most 200
/// bytes; anything else becomes '?'.
QString guestText(std::string_view text);

template<typename T>
using AgentResult = std::expected<T, AgentError>;

} // namespace airlock::agent

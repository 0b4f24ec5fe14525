#include "core/agent/agenterror.h"

namespace airlock::agent {

QString AgentError::name() const
{
    switch (kind) {
    case Kind::AgentUnavailable:
        return QStringLiteral("agent_unavailable");
    case Kind::Timeout:
        return QStringLiteral("timeout");
    case Kind::ProtocolError:
        return QStringLiteral("protocol_error");
    case Kind::InvalidRequest:
        return QStringLiteral("invalid_params");
    case Kind::IdentityFailed:
        return QStringLiteral("identity_failed");
    case Kind::Guest: {
        const std::string_view name = agentwire::errorCodeName(guestCode);
        return QString::fromLatin1(name.data(), qsizetype(name.size()));
    }
    }
    return QStringLiteral("internal");
}

QString guestText(std::string_view text)
{
    QString out;
    for (char c : text.substr(0, 200))
        out += (c >= 0x20 && c < 0x7f) ? QChar::fromLatin1(c) : QChar(u'?');
    return out;
}

AgentError AgentError::fromGuest(const agentwire::ErrorMessage &error)
{
    return guest(error.code, guestText(error.message));
}

} // namespace airlock::agent

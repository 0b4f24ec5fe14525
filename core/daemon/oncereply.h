#pragma once

#include "core/daemon/rpcserver.h"

#include <memory>
#include <utility>

namespace airlock {

/// A Reply answered exactly once: by its first call, or, when the last copy goes unanswered
/// (the agent client was destroyed with the request in it, which drops its callbacks without
/// calling them), with agent_unavailable. Copies share one state, so any copy may answer.
class OnceReply
{
public:
    explicit OnceReply(RpcServer::Reply reply) : m_state(std::make_shared<State>(std::move(reply)))
    { }

    void operator()(const Result<QJsonValue> &result) const
    {
        if (RpcServer::Reply reply = std::exchange(m_state->reply, nullptr))
            reply(result);
    }

private:
    struct State
    {
        explicit State(RpcServer::Reply r) : reply(std::move(r)) { }
        ~State()
        {
            if (reply)
                reply(fail(ErrorKind::AgentUnavailable,
                           QStringLiteral("the sandbox's agent channel closed")));
        }
        RpcServer::Reply reply;
    };
    std::shared_ptr<State> m_state;
};

} // namespace airlock

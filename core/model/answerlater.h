#pragma once

#include <QObject>
#include <QTimer>

#include <type_traits>
#include <utility>

namespace airlock {

/// Calls `callback(value)` from `context`'s event loop, never from the caller's stack: the
/// contract of the helper's asynchronous operations (QmpClient, RootDisk, GatewayProcess,
/// SandboxNetwork...), whose callers may delete the object or start the next step in their
/// callback. Dropped when `context` is deleted first.
template<typename Callback, typename Value>
void answerLater(QObject *context, Callback callback, Value value)
{
    QTimer::singleShot(0, context, [callback = std::move(callback), value = std::move(value)] {
        if constexpr (std::is_constructible_v<bool, const Callback &>) {
            if (!callback)
                return;
        }
        callback(value);
    });
}

} // namespace airlock

#pragma once

#include "core/model/error.h"

#include <QString>

namespace airlock {

/// An exclusive flock(2) on STATE/airlockd.lock, held for the helper's lifetime. Two helpers
/// on one state dir would both re-adopt (or mark stopped) the same guests and write the same
/// registry, so the second one must stop before it touches anything.
class StateDirLock
{
public:
    /// Takes the lock. Busy when another process holds it; OperationFailed when the file cannot
    /// be opened.
    static Result<StateDirLock> acquire(const QString &stateDir);

    StateDirLock(StateDirLock &&other) noexcept;
    StateDirLock &operator=(StateDirLock &&) = delete;
    StateDirLock(const StateDirLock &) = delete;
    ~StateDirLock();

private:
    explicit StateDirLock(int fd);
    int m_fd = -1;
};

} // namespace airlock

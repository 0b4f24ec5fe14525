#pragma once

#include <QAbstractEventDispatcher>
#include <QCoreApplication>

namespace airlock::test {

/// Runs the calling thread's event loop until a pass handles nothing: every posted event,
/// every ready socket notifier and every due timer has been handled. The barrier before a
/// "nothing happened" check: whatever the code under test would do with what is already there
/// (bytes in a socket, a queued call), it has done. `maxPasses` stops a loop that is never idle
/// (a zero-interval timer); returns false then.
inline bool runUntilIdle(int maxPasses = 1000)
{
    QAbstractEventDispatcher *dispatcher = QAbstractEventDispatcher::instance();
    for (int pass = 0; pass < maxPasses; ++pass) {
        QCoreApplication::sendPostedEvents();
        if (!dispatcher->processEvents(QEventLoop::AllEvents))
            return true;
    }
    return false;
}

} // namespace airlock::test

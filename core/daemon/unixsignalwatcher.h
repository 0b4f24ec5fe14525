#pragma once

#include <QList>
#include <QObject>

#include <initializer_list>

class QSocketNotifier;

namespace airlock {

/// Turns POSIX signals (e.g. SIGTERM, SIGINT) into a Qt signal delivered on the event loop
/// (self-pipe: the async-signal handler only writes the signal number to a socket). One
/// instance per process.
class UnixSignalWatcher : public QObject
{
    Q_OBJECT
public:
    explicit UnixSignalWatcher(std::initializer_list<int> signalNumbers, QObject *parent = nullptr);
    ~UnixSignalWatcher() override;

Q_SIGNALS:
    void signalReceived(int signalNumber);

private:
    void readSignal();

    QSocketNotifier *m_notifier = nullptr;
    QList<int> m_signals;
};

} // namespace airlock

#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QString>

class QSocketNotifier;

namespace airlock::gateway {

/// A non-blocking TCP socket fd on the Qt event loop, with the few operations the gateway's
/// relay needs and nothing buffered behind its back: reads happen only when the owner calls
/// read() (so pausing reads with setReadEnabled(false) leaves the data in the kernel and TCP
/// flow control pushes back on the peer), writes are buffered in user space and flushed when
/// the socket is writable (bytesToWrite() tells the owner when to stop producing), and EOF
/// is reported as such (half-close is visible, unlike QTcpSocket). Sends never raise SIGPIPE
/// (MSG_NOSIGNAL). Closes the fd when destroyed.
class StreamSocket final : public QObject
{
    Q_OBJECT
public:
    enum class ReadResult {
        Data, ///< bytes were appended
        WouldBlock, ///< nothing available now
        Eof, ///< the peer closed its sending side
        Error, ///< see errorString()
    };

    /// Adopts a connected socket `fd` (made non-blocking here).
    explicit StreamSocket(int fd, QObject *parent = nullptr);
    /// Starts a non-blocking connect to `address`:`port`; connected() or errorOccurred()
    /// follows. nullptr with `error` set when the socket cannot even be created.
    static StreamSocket *connectTo(const QHostAddress &address, quint16 port, QObject *parent,
                                   QString *error);
    ~StreamSocket() override;

    int fd() const { return m_fd; }
    bool isConnected() const { return m_connected; }
    const QString &errorString() const { return m_error; }

    /// Enables or disables readyRead() notifications (backpressure).
    void setReadEnabled(bool enabled);
    /// Reads at most `capacity` bytes into `buffer` (one recv); `*got` is how many on Data.
    /// A read that returns fewer than `capacity` bytes emptied the kernel's queue at that
    /// moment: the caller need not read again until readyRead() (level-triggered) says so,
    /// which saves the recv that would only answer EAGAIN.
    ReadResult read(char *buffer, qsizetype capacity, qsizetype *got);
    /// Queues `bytes` and writes as much as the kernel takes now.
    void write(QByteArrayView bytes);
    /// Bytes queued and not yet accepted by the kernel.
    qsizetype bytesToWrite() const { return m_queued; }
    /// shutdown(SHUT_WR) once everything queued was written (our FIN after the data).
    void shutdownWriteWhenFlushed();
    /// Closes the fd at once; queued bytes are dropped.
    void close();
    bool isClosed() const { return m_fd < 0; }

Q_SIGNALS:
    void connected();
    void readyRead();
    /// Some queued bytes were written; bytesToWrite() shrank.
    void bytesWritten();
    void errorOccurred();

private:
    StreamSocket(int fd, bool connecting, QObject *parent);
    void onWritable();
    void flush();
    void fail(int error);

    int m_fd = -1;
    bool m_connected = false;
    bool m_readEnabled = true;
    bool m_shutdownPending = false;
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
    QList<QByteArray> m_queue;
    qsizetype m_headOffset = 0; ///< bytes of m_queue.first() already written
    qsizetype m_queued = 0;
    QString m_error;
};

} // namespace airlock::gateway

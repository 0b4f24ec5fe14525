#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QObject>
#include <QString>

namespace airlock {

/// A byte stream to a helper: the local Unix socket now, an SSH channel later. HelperClient
/// speaks JSON-RPC on top and never knows which one it has.
class Transport : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    ~Transport() override = default;

    /// Starts connecting; emits connected() or disconnected(reason).
    virtual void open() = 0;
    /// Closes; emits disconnected() if it was open.
    virtual void close() = 0;
    /// Queues bytes for sending; no-op when closed.
    virtual void write(const QByteArray &bytes) = 0;
    virtual bool isOpen() const = 0;
    /// For the status bar and error messages, e.g. "local helper at /run/airlock/airlockd.sock".
    virtual QString description() const = 0;
    /// What kind of failure the last disconnected() was: PermissionDenied when the helper's
    /// socket refused us (not in the `airlock` group), Disconnected otherwise.
    virtual ErrorKind disconnectKind() const { return ErrorKind::Disconnected; }

Q_SIGNALS:
    void connected();
    void disconnected(const QString &reason);
    void bytesReceived(const QByteArray &bytes);
};

} // namespace airlock

#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>

namespace airlock {

class HelperClient;

/// One sandbox's console over a HelperClient: attaches (scrollback replay first, then live
/// `console.output`), drops chunks it has already delivered (by `seq`), types bytes with
/// `console.write` in protocol-sized pieces, and re-attaches after the client reconnects.
class ConsoleStream : public QObject
{
    Q_OBJECT
public:
    /// Largest decoded `console.write` payload the helper accepts.
    static constexpr qsizetype kMaxWriteBytes = 64 * 1024;

    /// Does not take ownership of `client`, which must outlive the stream.
    ConsoleStream(HelperClient *client, const QString &sandbox, QObject *parent = nullptr);
    ~ConsoleStream() override;

    /// Sends `console.attach` now (or once the client is Ready) and after every reconnection.
    void attach();
    /// Sends `console.detach` and stops delivering output; `done` runs after the answer.
    void detach(std::function<void()> done = {});
    /// Types bytes into the console; failures arrive through failed().
    void write(const QByteArray &bytes);
    /// False: attach without the scrollback (`console.attach` with `replay: false`), so only
    /// output that comes after the attach is delivered. Set before attach().
    void setReplay(bool replay) { m_replay = replay; }
    /// `console.write` calls sent but not answered yet.
    int pendingWrites() const { return m_pendingWrites; }

    QString sandbox() const { return m_sandbox; }
    bool isAttached() const { return m_attached; }

Q_SIGNALS:
    /// An attach succeeded; the scrollback replay follows through output(). Views clear here.
    void attached();
    /// Console bytes, in order, each delivered once per attachment.
    void output(const QByteArray &bytes);
    /// An attach or write failed (e.g. NotFound, InvalidState when the sandbox is stopped).
    void failed(const airlock::Error &error);
    /// Every write so far has been answered: its bytes reached the guest's console (or failed).
    void writesDone();

private:
    void sendAttach();
    void onNotification(const QString &method, const QJsonObject &params);
    void deliver(qint64 seq, const QByteArray &bytes);

    HelperClient *m_client;
    QString m_sandbox;
    bool m_wanted = false;
    bool m_attached = false;
    bool m_attachPending = false;
    bool m_replay = true;
    int m_pendingWrites = 0;
    qint64 m_lastSeq = -1;
    // Live chunks that arrived while the attach answer was still on its way.
    QList<QPair<qint64, QByteArray>> m_early;
};

} // namespace airlock

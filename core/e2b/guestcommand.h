#pragma once

#include "core/e2b/e2bcontext.h"

#include <QByteArray>
#include <QObject>
#include <QStringList>

#include <functional>

namespace airlock::e2b {

/// A short command run in a guest for airlock-e2b itself (not for the SDK): exec.start as root
/// through the helper, its stdout collected (at most kMaxOutputBytes; more is cut), then done
/// with the output once exec.exit came with status 0, or with the error (a non-zero exit is
/// OperationFailed with its stderr). Deletes itself after done.
class GuestCommand : public QObject
{
    Q_OBJECT
public:
    static constexpr qsizetype kMaxOutputBytes = 64 * 1024;
    using Done = std::function<void(const Result<QByteArray> &)>;

    /// Runs `argv` in sandbox `sandbox` (Airlock name), at most `timeoutMs`.
    static void run(const E2bContext &context, const QString &sandbox, const QStringList &argv,
                    Done done, int timeoutMs = 10000);

private:
    GuestCommand(const E2bContext &context, QString sandbox, Done done);
    void onNotification(const QString &method, const QJsonObject &params);
    void finish(const Result<QByteArray> &result);

    E2bContext m_context;
    QString m_sandbox;
    Done m_done;
    quint32 m_pid = 0;
    QByteArray m_out;
    QByteArray m_err;
    bool m_finished = false;
};

} // namespace airlock::e2b

#pragma once

#include "core/fcctl/firecrackerapiclient.h"
#include "core/protocol/lineframer.h"

#include <QDeadlineTimer>
#include <QJsonObject>
#include <QObject>

#include <functional>
#include <vector>

class QSocketNotifier;

namespace airlock {

/// airlock-fcctl's logic: reads airlockd's commands from the control channel (one JSON object
/// per line, core/fcctl/fcctlprotocol.h, docs/vmm.md "airlock-fcctl"), turns each into the
/// Firecracker API requests it stands for (FirecrackerApiClient, typed bodies of
/// firecrackerapitypes.h) and writes one answer line per command.
///
/// It decides what the reported version allows (FirecrackerVersion: entropy, load overrides),
/// so airlockd never sees an HTTP byte, only `{id, ok, version|state|error}`. The commands come
/// from root and are checked for their types anyway: a malformed one is answered with
/// invalid_params. A line over fcctl::kMaxLineBytes or a closed channel ends the process
/// (finished()).
class FcctlController : public QObject
{
    Q_OBJECT
public:
    /// `controlFd`: the socketpair end (owned from now on); `apiSocket`: Firecracker's
    /// `--api-sock`.
    FcctlController(int controlFd, QString apiSocket, QObject *parent = nullptr);
    ~FcctlController() override;

Q_SIGNALS:
    /// The channel closed or broke; `reason` is empty for an orderly close.
    void finished(const QString &reason);

private:
    using Done = std::function<void(const Result<QJsonObject> &)>;
    using Step = std::function<void(std::function<void(const Result<void> &)>)>;
    void onReadable();
    void handle(const QByteArray &line);
    void answer(qint64 id, const Result<QJsonObject> &result);
    void waitForApi(QDeadlineTimer deadline, int waitMs,
                    std::function<void(const Result<firecracker::FirecrackerVersion> &)> done);
    void configure(const QJsonObject &command, Done done);
    void load(const QJsonObject &command, Done done);
    void runSteps(std::vector<Step> steps, std::size_t index, std::function<void()> finished,
                  Done done);

    int m_control = -1;
    QSocketNotifier *m_notifier = nullptr;
    protocol::LineFramer m_framer;
    FirecrackerApiClient m_api;
    /// This controller turned on dirty page tracking (configure or load): only then is a Diff
    /// snapshot asked of Firecracker.
    bool m_dirtyPages = false;
};

} // namespace airlock

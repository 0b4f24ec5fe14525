#include "core/fcctl/fcctlcontroller.h"

#include "core/fcctl/fcctlprotocol.h"

#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <QTimer>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace airlock {

using namespace firecracker;

namespace {
Q_LOGGING_CATEGORY(lcFcctl, "airlock.fcctl")

constexpr int kSocketPollMs = 10; // until Firecracker has created its API socket
constexpr int kMaxWaitMs = 120000;
const QString kRootDriveId = QStringLiteral("rootfs");
const QString kSeedDriveId = QStringLiteral("seed");
const QString kNetIfaceId = QStringLiteral("eth0");

Error withEndpoint(const Error &error, const QString &what)
{
    return Error {error.kind, what + QStringLiteral(": ") + error.message};
}

/// The typed fields of one command; the first wrong one is remembered as an invalid_params
/// error naming it.
class Fields
{
public:
    explicit Fields(const QJsonObject &object) : m_object(object) { }
    QString string(const char *name)
    {
        const QJsonValue value = m_object.value(QLatin1String(name));
        if (value.isUndefined())
            return {};
        if (!value.isString())
            wrong(name);
        return value.toString();
    }
    int integer(const char *name, int min, int max)
    {
        const QJsonValue value = m_object.value(QLatin1String(name));
        const double number = value.toDouble(-1);
        if (!value.isDouble() || number != double(int(number)) || number < min || number > max) {
            wrong(name);
            return min;
        }
        return int(number);
    }
    std::optional<Error> error() const { return m_error; }

private:
    void wrong(const char *name)
    {
        if (!m_error)
            m_error = Error {ErrorKind::InvalidParams,
                             QStringLiteral("command field '%1' is missing or has the wrong type")
                                 .arg(QLatin1String(name))};
    }
    QJsonObject m_object;
    std::optional<Error> m_error;
};

QJsonObject versionResult(const FirecrackerVersion &version)
{
    return {{QStringLiteral("version"), version.text}};
}

/// The answer to configure and load: the version, and whether Diff snapshots may be asked for.
QJsonObject startResult(const FirecrackerVersion &version, bool dirtyPages)
{
    QJsonObject result = versionResult(version);
    result.insert(QStringLiteral("dirtyPages"), dirtyPages);
    return result;
}

Result<QJsonObject> empty(const Result<void> &result)
{
    if (!result)
        return std::unexpected(result.error());
    return QJsonObject {};
}
} // namespace

FcctlController::FcctlController(int controlFd, QString apiSocket, QObject *parent)
    : QObject(parent)
    , m_control(controlFd)
    , m_framer(fcctl::kMaxLineBytes)
    , m_api(std::move(apiSocket))
{
    ::fcntl(m_control, F_SETFL, ::fcntl(m_control, F_GETFL) | O_NONBLOCK);
    m_notifier = new QSocketNotifier(m_control, QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &FcctlController::onReadable);
}

FcctlController::~FcctlController()
{
    if (m_control >= 0)
        ::close(m_control);
}

void FcctlController::onReadable()
{
    char buffer[4096];
    const ssize_t got = ::read(m_control, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (got <= 0) {
        m_notifier->setEnabled(false);
        return Q_EMIT finished(got == 0 ? QString() : QStringLiteral("control channel broke"));
    }
    m_framer.append(QByteArray(buffer, qsizetype(got)));
    while (auto line = m_framer.next()) {
        if (!*line) {
            m_notifier->setEnabled(false);
            return Q_EMIT finished(line->error().message);
        }
        handle(**line);
    }
}

void FcctlController::answer(qint64 id, const Result<QJsonObject> &result)
{
    QJsonObject message = result ? *result : QJsonObject {};
    message.insert(QStringLiteral("id"), id);
    message.insert(QStringLiteral("ok"), bool(result));
    if (!result)
        message.insert(QStringLiteral("error"),
                       QJsonObject {{QStringLiteral("kind"), errorKindName(result.error().kind)},
                                    {QStringLiteral("message"),
                                     result.error().message.left(fcctl::kMaxMessageChars)}});
    QByteArray line = QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
    // Answers are small and airlockd reads them at once: wait for room rather than queue.
    for (qsizetype done = 0; done < line.size() && m_control >= 0;) {
        const ssize_t put = ::write(m_control, line.constData() + done, size_t(line.size() - done));
        if (put > 0) {
            done += put;
        } else if (put < 0 && errno == EAGAIN) {
            pollfd fd {m_control, POLLOUT, 0};
            ::poll(&fd, 1, 1000);
        } else if (!(put < 0 && errno == EINTR)) {
            qCWarning(lcFcctl) << "cannot answer airlockd:" << std::strerror(errno);
            return;
        }
    }
}

void FcctlController::handle(const QByteArray &line)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(line, &parseError);
    const QJsonObject command = document.object();
    const QJsonValue idValue = command.value(QStringLiteral("id"));
    const qint64 id = idValue.isDouble() ? qint64(idValue.toDouble()) : -1;
    const QString op = command.value(QStringLiteral("op")).toString();
    if (!document.isObject() || id < 0)
        return answer(id,
                      fail(ErrorKind::InvalidRequest,
                           QStringLiteral("a command is a JSON object with an id")));
    const auto done = [this, id](const Result<QJsonObject> &result) { answer(id, result); };
    const auto doneVoid = [done](const Result<void> &result) { done(empty(result)); };
    if (op == fcctl::kConfigure)
        return configure(command, done);
    if (op == fcctl::kLoad)
        return load(command, done);
    if (op == fcctl::kStart)
        return m_api.putAction(InstanceActionInfo {InstanceActionInfo::Type::InstanceStart},
                               doneVoid);
    if (op == fcctl::kCtrlAltDel)
        return m_api.putAction(InstanceActionInfo {InstanceActionInfo::Type::SendCtrlAltDel},
                               doneVoid);
    if (op == fcctl::kPause)
        return m_api.patchVm(VmState {VmState::State::Paused}, doneVoid);
    if (op == fcctl::kResume)
        return m_api.patchVm(VmState {VmState::State::Resumed}, doneVoid);
    if (op == fcctl::kVersion)
        return m_api.getVersion([done](const Result<FirecrackerVersion> &version) {
            done(version ? Result<QJsonObject>(versionResult(*version))
                         : std::unexpected(version.error()));
        });
    if (op == fcctl::kState)
        return m_api.getInstanceState([done](const Result<QString> &state) {
            done(state ? Result<QJsonObject>(QJsonObject {{QStringLiteral("state"), *state}})
                       : std::unexpected(state.error()));
        });
    if (op == fcctl::kSnapshot) {
        Fields fields(command);
        SnapshotCreateParams params;
        params.memFilePath = fields.string("memPath");
        params.snapshotPath = fields.string("statePath");
        const QString type = fields.string("type");
        if (fields.error() || params.memFilePath.isEmpty() || params.snapshotPath.isEmpty())
            return done(std::unexpected(fields.error().value_or(
                Error {ErrorKind::InvalidParams,
                       QStringLiteral("snapshot needs memPath and statePath")})));
        if (type == QLatin1String("Diff")) {
            // A Diff without the dirty page log would be Firecracker's mincore(2) guess (1.13
            // and later), right only without swap: never asked for.
            if (!m_dirtyPages)
                return done(fail(ErrorKind::InvalidState,
                                 QStringLiteral("a Diff snapshot needs dirty page tracking, "
                                                "which this Firecracker does not have on")));
            params.snapshotType = SnapshotCreateParams::Type::Diff;
        } else if (type.isEmpty() || type == QLatin1String("Full")) {
            params.snapshotType = SnapshotCreateParams::Type::Full;
        } else {
            return done(
                fail(ErrorKind::InvalidParams, QStringLiteral("snapshot type is Full or Diff")));
        }
        return m_api.createSnapshot(params, doneVoid);
    }
    done(fail(ErrorKind::MethodNotFound, QStringLiteral("unknown command '%1'").arg(op.left(64))));
}

void FcctlController::waitForApi(QDeadlineTimer deadline, int waitMs,
                                 std::function<void(const Result<FirecrackerVersion> &)> done)
{
    // Firecracker gives no signal when its API socket exists: GET /version is tried until it
    // answers, from timers.
    m_api.getVersion([this, deadline, waitMs,
                      done = std::move(done)](const Result<FirecrackerVersion> &version) mutable {
        if (!version && version.error().kind == ErrorKind::NotFound) {
            if (deadline.hasExpired())
                return done(fail(ErrorKind::Timeout,
                                 QStringLiteral("Firecracker did not open its API socket in %1 ms")
                                     .arg(waitMs)));
            QTimer::singleShot(kSocketPollMs, this,
                               [this, deadline, waitMs, done = std::move(done)] {
                                   waitForApi(deadline, waitMs, done);
                               });
            return;
        }
        if (!version)
            return done(
                std::unexpected(withEndpoint(version.error(), QStringLiteral("GET /version"))));
        if (!version->supported())
            return done(fail(ErrorKind::BackendUnavailable,
                             QStringLiteral("Firecracker %1 is too old; Airlock needs 1.8 or later "
                                            "(its guests find their devices through ACPI)")
                                 .arg(version->text)));
        done(*version);
    });
}

void FcctlController::runSteps(std::vector<Step> steps, std::size_t index,
                               std::function<void()> finished, Done done)
{
    if (index == steps.size())
        return finished();
    Step step = steps[index];
    step([this, steps = std::move(steps), index, finished = std::move(finished),
          done](const Result<void> &result) mutable {
        if (!result)
            return done(std::unexpected(result.error()));
        runSteps(std::move(steps), index + 1, std::move(finished), std::move(done));
    });
}

void FcctlController::configure(const QJsonObject &command, Done done)
{
    Fields fields(command);
    const int waitMs = fields.integer("waitMs", 0, kMaxWaitMs);
    Logger logger;
    logger.logPath = fields.string("logPath");
    MachineConfig machine;
    machine.vcpuCount = fields.integer("vcpus", 1, 32);
    machine.memSizeMib = fields.integer("memoryMib", 1, 1024 * 1024);
    BootSource boot;
    boot.kernelImagePath = fields.string("kernel");
    boot.initrdPath = fields.string("initrd");
    boot.bootArgs = fields.string("bootArgs");
    const QString rootDisk = fields.string("rootDisk");
    const QString seedDisk = fields.string("seedDisk");
    NetworkInterface net {kNetIfaceId, fields.string("tap"), fields.string("mac")};
    Vsock vsock {3, fields.string("vsockPath")};
    vsock.guestCid = fields.integer("guestCid", 3, 1 << 30);
    if (auto error = fields.error())
        return done(std::unexpected(*error));
    waitForApi(
        QDeadlineTimer(waitMs), waitMs, [=, this](const Result<FirecrackerVersion> &version) {
            if (!version)
                return done(std::unexpected(version.error()));
            const bool dirtyPages = version->hasDiffSnapshots();
            MachineConfig tracked = machine;
            if (dirtyPages)
                tracked.trackDirtyPages = true;
            std::vector<Step> steps;
            if (!logger.logPath.isEmpty())
                steps.push_back([this, logger](auto next) { m_api.putLogger(logger, next); });
            steps.push_back([this, tracked](auto next) { m_api.putMachineConfig(tracked, next); });
            steps.push_back([this, boot](auto next) { m_api.putBootSource(boot, next); });
            if (!rootDisk.isEmpty()) {
                Drive root {kRootDriveId, rootDisk, false, false};
                steps.push_back([this, root](auto next) { m_api.putDrive(root, next); });
            }
            if (!seedDisk.isEmpty()) {
                Drive seed {kSeedDriveId, seedDisk, false, true};
                steps.push_back([this, seed](auto next) { m_api.putDrive(seed, next); });
            }
            if (!net.hostDevName.isEmpty())
                steps.push_back([this, net](auto next) { m_api.putNetworkInterface(net, next); });
            if (!vsock.udsPath.isEmpty())
                steps.push_back([this, vsock](auto next) { m_api.putVsock(vsock, next); });
            if (version->hasEntropy())
                steps.push_back([this](auto next) { m_api.putEntropy(EntropyDevice {}, next); });
            const FirecrackerVersion reported = *version;
            runSteps(
                std::move(steps), 0,
                [this, done, reported, dirtyPages] {
                    m_dirtyPages = dirtyPages;
                    done(startResult(reported, dirtyPages));
                },
                done);
        });
}

void FcctlController::load(const QJsonObject &command, Done done)
{
    Fields fields(command);
    const int waitMs = fields.integer("waitMs", 0, kMaxWaitMs);
    Logger logger;
    logger.logPath = fields.string("logPath");
    SnapshotLoadParams params;
    params.snapshotPath = fields.string("snapshotPath");
    params.memBackendPath = fields.string("memPath");
    params.resumeVm = false;
    const QString tap = fields.string("tap");
    const QString vsockPath = fields.string("vsockPath");
    if (auto error = fields.error())
        return done(std::unexpected(*error));
    if (params.snapshotPath.isEmpty() || params.memBackendPath.isEmpty())
        return done(
            fail(ErrorKind::InvalidParams, QStringLiteral("load needs snapshotPath and memPath")));
    waitForApi(
        QDeadlineTimer(waitMs), waitMs,
        [=, this](const Result<FirecrackerVersion> &version) mutable {
            if (!version)
                return done(std::unexpected(version.error()));
            // Only the logger may come before a load (Firecracker refuses the rest on a
            // fresh process); the devices, their disks and the tap are the snapshot's.
            if (version->hasLoadOverrides()) {
                if (!tap.isEmpty()) {
                    params.networkOverrideIfaceId = kNetIfaceId;
                    params.networkOverrideHostDevName = tap;
                }
                params.vsockOverrideUdsPath = vsockPath;
            }
            // The log is not part of a snapshot: asked for again at every load.
            const bool dirtyPages = version->hasDiffSnapshots();
            if (dirtyPages)
                params.trackDirtyPages = true;
            std::vector<Step> steps;
            if (!logger.logPath.isEmpty())
                steps.push_back([this, logger](auto next) { m_api.putLogger(logger, next); });
            steps.push_back([this, params](auto next) { m_api.loadSnapshot(params, next); });
            steps.push_back(
                [this](auto next) { m_api.patchVm(VmState {VmState::State::Resumed}, next); });
            const FirecrackerVersion reported = *version;
            runSteps(
                std::move(steps), 0,
                [this, done, reported, dirtyPages] {
                    m_dirtyPages = dirtyPages;
                    done(startResult(reported, dirtyPages));
                },
                done);
        });
}

} // namespace airlock

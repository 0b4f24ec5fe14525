#pragma once

#include "core/fcctl/firecrackerapitypes.h"
#include "core/model/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>

namespace airlock {

/// A client of Firecracker's API server: HTTP/1.1 with JSON bodies on the Unix socket named by
/// `--api-sock` (the endpoints of tests/firecracker/firecracker-api-v1.yaml). One request
/// function per endpoint Airlock uses, each body built from its typed struct
/// (firecrackerapitypes.h).
///
/// Every request is a connection of its own (QLocalSocket, asynchronous), so a VMM that stops
/// answering costs only that request: it times out. It runs in airlock-fcctl only, as the VMM's
/// own uid (never in airlockd: root parses no HTTP, docs/vmm.md). Answers are parsed by
/// Boost.Beast's response parser with small limits (8 KiB of head, 64 KiB of body: Firecracker's
/// answers are a few hundred bytes); the peer is the VMM process, which a guest that escaped into
/// it controls, so an answer is believed only for its status and, on error, a printable fault
/// message.
///
/// Callbacks always run from the event loop (never inside the call), and never once this object
/// is destroyed.
class FirecrackerApiClient : public QObject
{
    Q_OBJECT
public:
    static constexpr int kDefaultTimeoutMs = 5000;
    /// Firecracker writes a full snapshot (all guest memory) before it answers.
    static constexpr int kSnapshotTimeoutMs = 60000;

    explicit FirecrackerApiClient(QString socketPath, QObject *parent = nullptr);
    ~FirecrackerApiClient() override;

    /// The outcome of a request: its JSON answer (empty for 204), or the error.
    using Reply = std::function<void(const Result<QJsonObject> &)>;
    using Done = std::function<void(const Result<void> &)>;

    /// GET /version. OperationFailed when the answer is no FirecrackerVersion.
    void getVersion(std::function<void(const Result<firecracker::FirecrackerVersion> &)> done);
    /// GET /: the instance's state ("Not started", "Running", "Paused").
    void getInstanceState(std::function<void(const Result<QString> &)> done);
    void putLogger(const firecracker::Logger &logger, Done done);
    void putMachineConfig(const firecracker::MachineConfig &config, Done done);
    void putBootSource(const firecracker::BootSource &source, Done done);
    /// PUT /drives/{drive_id}.
    void putDrive(const firecracker::Drive &drive, Done done);
    /// PUT /network-interfaces/{iface_id}.
    void putNetworkInterface(const firecracker::NetworkInterface &interface, Done done);
    void putVsock(const firecracker::Vsock &vsock, Done done);
    void putEntropy(const firecracker::EntropyDevice &entropy, Done done);
    /// PUT /actions (InstanceStart, SendCtrlAltDel).
    void putAction(const firecracker::InstanceActionInfo &action, Done done);
    /// PATCH /vm (Paused, Resumed).
    void patchVm(const firecracker::VmState &state, Done done);
    /// PUT /snapshot/create, with kSnapshotTimeoutMs.
    void createSnapshot(const firecracker::SnapshotCreateParams &params, Done done);
    /// PUT /snapshot/load, with kSnapshotTimeoutMs.
    void loadSnapshot(const firecracker::SnapshotLoadParams &params, Done done);

    /// One request. `body` is sent when `hasBody`. Errors: NotFound while the socket does not
    /// exist or nothing listens on it yet (nothing was sent); OperationFailed for a refused
    /// connection, an answer that is not HTTP, or any status but 200 and 204: "Firecracker refused
    /// PUT /machine-config (400): FAULT MESSAGE"; Timeout after `timeoutMs`; Disconnected when the
    /// VMM closed the connection before answering.
    void send(const QByteArray &method, const QString &path, const QJsonObject &body, bool hasBody,
              int timeoutMs, Reply reply);

    /// Ends every request under way with Disconnected (the VMM exited), from the event loop.
    void abortAll();

private:
    class Request;
    void finished(Request *request);

    QString m_socketPath;
    std::vector<Request *> m_requests;
};

} // namespace airlock

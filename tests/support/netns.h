#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <thread>

namespace airlock::test {

// NETWORK SAFETY (docs/architecture.md): the helpers below only create, enter and delete network
// namespaces the calling test names itself (a prefix plus its pid), so a test's packets stay
// inside namespaces it created, and a crashed run's leftovers can be told apart and removed.

/// Runs `ip ARGS...` (iproute2), waits up to 10 s. Returns true on exit code 0; the merged
/// stdout/stderr goes to `output` when given, and to qWarning on failure.
bool runIp(const QStringList &arguments, QString *output = nullptr);

/// A named network namespace (`ip netns add NAME`) with an open fd for setns(2); deleted (with
/// every device and nftables table in it) by the destructor. Move-only.
class NetworkNamespace final
{
public:
    NetworkNamespace() = default;
    /// Creates the namespace `name` (brings its lo up); nullopt (with a qWarning) on failure.
    static std::optional<NetworkNamespace> create(const QString &name);
    NetworkNamespace(NetworkNamespace &&other) noexcept;
    NetworkNamespace &operator=(NetworkNamespace &&other) noexcept;
    NetworkNamespace(const NetworkNamespace &) = delete;
    NetworkNamespace &operator=(const NetworkNamespace &) = delete;
    ~NetworkNamespace();

    const QString &name() const { return m_name; }
    /// An O_CLOEXEC fd of /run/netns/NAME, for setns(fd, CLONE_NEWNET); -1 when empty.
    int fd() const { return m_fd; }
    /// Deletes the namespace now (idempotent).
    void remove();

private:
    QString m_name;
    int m_fd = -1;
};

/// Deletes /run/netns entries named `prefix` + "...-<pid>" whose pid no longer exists: what a
/// crashed test run left behind (destructors never ran).
void removeStaleNamespaces(const QString &prefix);

/// setns(nsFd, CLONE_NEWNET) for the calling thread; false (with a qWarning) on failure.
bool enterNamespace(int nsFd);

/// Runs `function` on a new thread that first enters the network namespace `nsFd`
/// (setns(2) changes only the calling thread) and returns its result; a failed setns returns
/// a value-initialized result. Sockets created inside keep their namespace when used later
/// from other threads.
template<typename F>
auto inNamespace(int nsFd, F function) -> decltype(function())
{
    using R = decltype(function());
    if constexpr (std::is_void_v<R>) {
        std::thread thread([&] {
            if (enterNamespace(nsFd))
                function();
        });
        thread.join();
    } else {
        R result {};
        std::thread thread([&] {
            if (enterNamespace(nsFd))
                result = function();
        });
        thread.join();
        return result;
    }
}

/// The hardware address of interface `ifname` in namespace `nsFd` (6 bytes; empty on failure).
QByteArray interfaceMac(int nsFd, const QString &ifname);

/// Sends one raw Ethernet frame (destination MAC first) on `ifname` in namespace `nsFd`
/// through an AF_PACKET socket. `repeat` sends the same frame that many times.
bool sendFrame(int nsFd, const QString &ifname, const QByteArray &frame, int repeat = 1);
/// Sends every frame of `frames` in order through one AF_PACKET socket (sprays).
bool sendFrames(int nsFd, const QString &ifname, const QList<QByteArray> &frames);

} // namespace airlock::test

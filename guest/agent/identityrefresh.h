#pragma once

#include "core/agentwire/messages.h"

#include <optional>
#include <string>
#include <vector>

namespace airlock::guest {

/// Where the identity refresh writes, and with what (tests point it at a temporary folder and
/// a recording `ip`).
struct IdentityTargets
{
    /// Prefix of every file written: /etc/hostname, /etc/resolv.conf, /run/airlock,
    /// /etc/ssl/certs/ca-certificates.crt, /usr/local/share/ca-certificates, /dev/urandom.
    /// Only with "/" does the refresh also set the kernel's hostname and write the console.
    std::string sysroot = "/";
    /// The `ip` program (iproute2 or busybox).
    std::string ipCommand = "ip";
    std::string interface = "eth0";
};

/// Applies a restored guest's new identity, the job of the shell agent of protocol 1 with the
/// same steps and their names (docs/snapshots.md, "Guest agent"): entropy (into
/// /dev/urandom), name (hostname and /etc/hostname), files (the seed set replaces
/// /run/airlock; its ca.pem replaces the block between `# airlock sandbox CA {` and `# }` in
/// the trust bundle, and on Debian the copy update-ca-certificates keeps), network (flush
/// eth0's addresses and neighbours, new MAC, address and default route with `ip`, then
/// resolv.conf). Each step runs even when an earlier one failed (a name that cannot be set
/// must not keep the old network).
class IdentityRefresh
{
public:
    explicit IdentityRefresh(IdentityTargets targets) : m_targets(std::move(targets)) { }

    /// The first failed step's name, or std::nullopt when all succeeded.
    std::optional<std::string> apply(const agentwire::IdentityRequest &request,
                                     const std::vector<agentwire::IdentityFile> &files);

private:
    bool applyEntropy(const agentwire::IdentityRequest &request);
    bool applyName(const agentwire::IdentityRequest &request);
    bool applyFiles(const std::vector<agentwire::IdentityFile> &files);
    bool applyNetwork(const agentwire::IdentityRequest &request);
    bool replaceCa(const std::string &pem);
    /// Runs the ip command with `args`; true when it exited 0.
    bool ip(std::vector<std::string> args);
    std::string path(std::string_view absolute) const;

    IdentityTargets m_targets;
};

} // namespace airlock::guest

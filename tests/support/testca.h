#pragma once

#include "core/pki/sandboxca.h"

#include <QByteArray>
#include <QString>

#include <mutex>

namespace airlock::test {

/// The test "public" CA that signs the upstream servers' certificates (the gateway's
/// trustStore in tests), and mints a leaf per SNI on demand, like a CDN holding a certificate
/// for every name it serves. Built on SandboxCa (the same minting code, a different key);
/// thread-safe, since every upstream connection thread may ask for a leaf.
class TestCa final
{
public:
    /// Generates the CA; nullopt (with a qWarning) when OpenSSL fails.
    static std::unique_ptr<TestCa> generate(const QString &label);

    /// The CA certificate (PEM), what a trust store needs.
    QByteArray certificatePem() const;
    /// A leaf for `name` (canonicalized by SandboxCa), or nullptr when the name is refused.
    std::shared_ptr<const pki::TlsLeaf> leaf(const QString &name);

private:
    explicit TestCa(airlock::pki::SandboxCa ca) : m_ca(std::move(ca)) { }

    mutable std::mutex m_mutex;
    airlock::pki::SandboxCa m_ca;
};

} // namespace airlock::test

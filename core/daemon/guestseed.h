#pragma once

#include "core/model/error.h"
#include "core/vmm/seedimage.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace airlock {

class BindingStore;

/// The files of a guest's seed disk, extracted into /run/airlock in the guest
/// (installers/guest/README.md): `ca.pem` (the sandbox CA the guest trusts) and `env`, one
/// `AIRLOCK_SECRET_<NAME>=<placeholder>` line per secret the sandbox's bindings use, sorted
/// (docs/credentials.md; the guest's profile exports them). Never a secret value.
class GuestSeed
{
public:
    explicit GuestSeed(BindingStore &bindings) : m_bindings(bindings) { }

    /// The seed of sandbox `name` whose network's CA is `caCertificatePem`. OperationFailed
    /// when the registry cannot be read.
    Result<QList<SeedFile>> files(const QString &name, const QByteArray &caCertificatePem) const;

private:
    BindingStore &m_bindings;
};

} // namespace airlock

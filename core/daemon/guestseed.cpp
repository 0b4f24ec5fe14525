#include "core/daemon/guestseed.h"

#include "core/daemon/bindingstore.h"

#include <QStringList>

namespace airlock {

Result<QList<SeedFile>> GuestSeed::files(const QString &name,
                                         const QByteArray &caCertificatePem) const
{
    AIRLOCK_TRY_INIT(bindings, m_bindings.list(name));
    QStringList secrets;
    for (const CredentialBinding &binding : std::as_const(*bindings)) {
        if (!secrets.contains(binding.secret))
            secrets.append(binding.secret);
    }
    QStringList lines;
    for (const QString &secret : std::as_const(secrets)) {
        AIRLOCK_TRY_INIT(placeholder, m_bindings.placeholder(name, secret));
        lines.append(placeholderVariable(secret) + u'=' + *placeholder);
    }
    lines.sort();
    QByteArray env;
    for (const QString &line : std::as_const(lines))
        env += line.toLatin1() + '\n';
    return QList<SeedFile> {
        SeedFile {QStringLiteral("ca.pem"), caCertificatePem, 0644},
        SeedFile {QStringLiteral("env"), env, 0644},
    };
}

} // namespace airlock

#include "core/daemon/identityrefresh.h"

#include "core/net/addresspool.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QRandomGenerator>

#include <memory>

namespace airlock {

namespace {
Q_LOGGING_CATEGORY(lcIdentity, "airlock.daemon.sandbox")
constexpr qsizetype kEntropyBytes = 64;
} // namespace

GuestIdentity IdentityRefresh::identityFor(const QString &name, const LinkAllocation *link,
                                           const QList<SeedFile> &files)
{
    GuestIdentity identity;
    identity.hostname = name;
    if (link) {
        identity.mac = link->macText();
        identity.address = link->guest.toString();
        identity.prefixLength = link->prefixLength;
        identity.gateway = link->gateway.toString();
        identity.dns = identity.gateway;
    }
    identity.files = files;
    identity.entropy.resize(kEntropyBytes);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(identity.entropy.data()),
                                          kEntropyBytes / 4);
    return identity;
}

void IdentityRefresh::send(GuestAgent *agent, const GuestIdentity &identity, int timeoutMs,
                           Done done)
{
    if (!agent) {
        done(
            fail(ErrorKind::OperationFailed, QStringLiteral("the VMM has no guest agent channel")));
        return;
    }
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    agent->refresh(identity, timeoutMs,
                   [name = identity.hostname, timer, done](const Result<void> &answer) {
                       if (answer)
                           qCInfo(lcIdentity, "%s: the guest confirmed its new identity in %lld ms",
                                  qPrintable(name), static_cast<long long>(timer->elapsed()));
                       done(answer);
                   });
}

QString IdentityRefresh::warningFor(const Error &error)
{
    return QStringLiteral("the guest did not confirm its new identity (%1): its hostname, "
                          "addresses and CA may still be those of the snapshot, so its network "
                          "may not work until it is restarted")
        .arg(error.message);
}

} // namespace airlock

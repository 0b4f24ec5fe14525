#include "ui/hoststore.h"

#include <QSettings>

namespace airlock {

namespace {

const QString kGroup = QStringLiteral("hosts");
const QString kUser = QStringLiteral("user");
const QString kHost = QStringLiteral("host");
const QString kPort = QStringLiteral("port");
const QString kSocket = QStringLiteral("socketPath");
const QString kIdentity = QStringLiteral("identityFile");

} // namespace

QList<SshEndpoint> HostStore::load(QSettings &settings)
{
    QList<SshEndpoint> hosts;
    const int count = settings.beginReadArray(kGroup);
    for (int i = 0; i < count; ++i) {
        settings.setArrayIndex(i);
        SshEndpoint endpoint;
        endpoint.user = settings.value(kUser).toString();
        endpoint.host = settings.value(kHost).toString();
        const int port = settings.value(kPort, 22).toInt();
        endpoint.port = quint16(port > 0 && port < 65536 ? port : 22);
        endpoint.socketPath = settings.value(kSocket, endpoint.socketPath).toString();
        endpoint.identityFile = settings.value(kIdentity).toString();
        if (!endpoint.host.isEmpty())
            hosts.append(endpoint);
    }
    settings.endArray();
    return hosts;
}

void HostStore::save(QSettings &settings, const QList<SshEndpoint> &hosts)
{
    settings.remove(kGroup);
    settings.beginWriteArray(kGroup, int(hosts.size()));
    for (int i = 0; i < hosts.size(); ++i) {
        settings.setArrayIndex(i);
        const SshEndpoint &endpoint = hosts[i];
        settings.setValue(kUser, endpoint.user);
        settings.setValue(kHost, endpoint.host);
        settings.setValue(kPort, endpoint.port);
        settings.setValue(kSocket, endpoint.socketPath);
        settings.setValue(kIdentity, endpoint.identityFile);
    }
    settings.endArray();
    settings.sync();
}

} // namespace airlock

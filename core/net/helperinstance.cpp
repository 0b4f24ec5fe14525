#include "core/net/helperinstance.h"

#include <QCryptographicHash>
#include <QFile>

namespace airlock {

QString HelperInstance::tagFor(const QString &stateDir)
{
    if (stateDir.isEmpty())
        return {};
    // A different salt than the RAM directory's hash: the two are unrelated names.
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(QByteArrayView("airlock-instance\n"));
    hash.addData(QFile::encodeName(stateDir));
    return QString::fromLatin1(hash.result().toHex().left(kTagLength));
}

} // namespace airlock

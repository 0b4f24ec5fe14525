#include "core/gateway/credentials/wipe.h"

#include <openssl/crypto.h>

namespace airlock::gateway {

void wipe(QByteArray &bytes)
{
    if (!bytes.isEmpty() && bytes.isDetached())
        OPENSSL_cleanse(bytes.data(), std::size_t(bytes.size()));
    bytes.clear();
}

void wipe(void *data, std::size_t size)
{
    if (size > 0)
        OPENSSL_cleanse(data, size);
}

void appendWiping(QByteArray &buffer, QByteArrayView bytes)
{
    if (bytes.isEmpty())
        return;
    if (buffer.isEmpty()) {
        buffer = bytes.toByteArray();
        return;
    }
    if (buffer.isDetached() && buffer.capacity() - buffer.size() >= bytes.size()) {
        buffer.append(bytes);
        return;
    }
    QByteArray grown;
    grown.reserve(2 * (buffer.size() + bytes.size()));
    grown.append(buffer);
    grown.append(bytes);
    wipe(buffer);
    buffer = std::move(grown);
}

void dropFrontWiping(QByteArray &buffer, qsizetype count)
{
    if (count <= 0)
        return;
    QByteArray rest = QByteArrayView(buffer).sliced(qMin(count, buffer.size())).toByteArray();
    wipe(buffer);
    buffer = std::move(rest);
}

} // namespace airlock::gateway

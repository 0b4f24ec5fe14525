#pragma once

#include <QByteArray>

#include <openssl/crypto.h>

namespace airlock::gateway {

/// Wipes a buffer that may have held an injected request head before it is freed. A buffer
/// shared with another QByteArray (a socket's queue) is only released: that copy is in use.
inline void wipe(QByteArray &bytes)
{
    if (!bytes.isEmpty() && bytes.isDetached())
        OPENSSL_cleanse(bytes.data(), std::size_t(bytes.size()));
    bytes.clear();
}

} // namespace airlock::gateway

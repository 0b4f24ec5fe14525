#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <cstddef>

namespace airlock::gateway {

// Buffers that may hold a secret value (an injected request head, a response that reflects a
// credential before it is scrubbed, an encoding of a value) are wiped before they are freed, so
// that a deleted secret does not stay in the gateway's memory (docs/credentials.md;
// tst_redteam_credentialleaks `deletedSecretLeavesTheGatewaysMemory`).

/// Wipes `bytes` and empties it. A buffer shared with another QByteArray (a socket's queue) is
/// only released: that copy is in use, and its last owner wipes it.
void wipe(QByteArray &bytes);
/// Wipes `size` bytes at `data` (OPENSSL_cleanse: not optimised away).
void wipe(void *data, std::size_t size);
/// Appends `bytes` to `buffer` without leaving a copy behind: when the buffer must grow, a new
/// one (twice as large) is filled and the old one wiped, where QByteArray's own reallocation
/// would free it as it is.
void appendWiping(QByteArray &buffer, QByteArrayView bytes);
/// `buffer` without its first `count` bytes, the old buffer wiped. (QByteArray::remove(0, n)
/// only moves its start, leaving the removed bytes in the allocation.)
void dropFrontWiping(QByteArray &buffer, qsizetype count);

} // namespace airlock::gateway

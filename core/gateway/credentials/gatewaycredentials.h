#pragma once

#include "core/gateway/credentials/credentialinjector.h"
#include "core/model/error.h"
#include "core/model/secretvalue.h"

#include <QJsonObject>
#include <QList>

namespace airlock::gateway {

/// Reads the `credentials` control message (docs/gateway.md) with its raw payload: every
/// binding of the sandbox with its placeholder and, in `payload`, the values one after the
/// other (`valueBytes` each, 0 when airlockd could not read the secret; their sum must be the
/// payload's size). Each entry is validated as a binding is at binding.add (canonical exact
/// host, path prefix, methods, placement), the placeholder must be "airlock-placeholder-" and 32
/// lower-case hex digits, and each value 8..65536 bytes without control characters but tab. Unknown
/// keys are errors. Values are copied from the payload into SecretValues of their own; the caller
/// wipes the payload by destroying it. Errors: InvalidParams "credentials[i].field: why".
Result<QList<GatewayCredential>> credentialsFromMessage(const QJsonObject &message,
                                                        const QString &sandbox,
                                                        const SecretValue &payload);

} // namespace airlock::gateway

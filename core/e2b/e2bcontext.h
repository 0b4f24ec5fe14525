#pragma once

#include "core/e2b/httpconnection.h"
#include "core/model/error.h"

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QPointer>
#include <QString>

#include <functional>

namespace airlock {
class HelperClient;
}

namespace airlock::e2b {

class SandboxRegistry;

/// What the control API and the envd service share: the helper connection (one, as the
/// window's: the processes it starts are followed on it), the registry of this user's E2B
/// sandboxes, and the version of envd airlock-e2b answers as.
struct E2bContext
{
    HelperClient *helper = nullptr;
    SandboxRegistry *registry = nullptr;
    /// The envd version the SDK is told (`envdVersion`): the SDK enables features by it
    /// (stdin close from 0.5.2, octet-stream uploads from 0.5.7); see docs/e2b.md.
    static constexpr const char *kEnvdVersion = "0.5.7";

    using Done = std::function<void(const Result<QJsonObject> &)>;
    /// helper->call() with the result as an object.
    void call(const QString &method, const QJsonObject &params, Done done,
              int timeoutMs = 30000) const;
};

/// A JSON answer.
HttpResponse jsonResponse(int status, const QJsonValue &body);
/// An answer with an empty body (204 and friends).
HttpResponse emptyResponse(int status);

} // namespace airlock::e2b

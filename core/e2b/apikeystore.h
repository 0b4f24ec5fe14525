#pragma once

#include "core/model/error.h"

#include <QByteArray>
#include <QString>

namespace airlock::e2b {

/// The user's airlock-e2b API key: `e2b_` and 40 random hex digits in `DIR/e2b-api-key`, the file
/// made 0600 (and DIR 0700) on first use, so only the user (and root) can read it. The E2B SDK
/// sends it as `X-API-KEY` (ConnectionConfig.apiKey, `E2B_API_KEY`); any other value is 401.
class ApiKeyStore
{
public:
    /// The key file's folder for this user: $XDG_CONFIG_HOME/airlock (~/.config/airlock).
    static QString defaultDirectory();
    /// Reads the key, creating it first when the file does not exist. Refuses a key file that
    /// others can read or that is not a regular file.
    static Result<QByteArray> loadOrCreate(const QString &directory);
    /// A fresh random token of `bytes` random bytes as hex, with `prefix` (envd access tokens).
    static QByteArray randomToken(const QByteArray &prefix, int bytes = 20);
    /// Compares in time independent of where the first difference is.
    static bool equalKeys(const QByteArray &a, const QByteArray &b);
};

} // namespace airlock::e2b

#pragma once

#include <QByteArray>
#include <QList>

namespace airlock::test {

/// The forms a careless log line, encoder or client would leave a secret in: raw, base64,
/// base64url (RFC 4648 §4, §5), percent-encoded (RFC 3986 §2.1) and hex.
inline QList<QByteArray> secretForms(const QByteArray &secret)
{
    return {secret, secret.toBase64(), secret.toBase64(QByteArray::Base64UrlEncoding),
            secret.toPercentEncoding(), secret.toHex()};
}

/// True when `haystack` holds `secret` in any of secretForms().
inline bool containsAnySecretForm(const QByteArray &haystack, const QByteArray &secret)
{
    for (const QByteArray &form : secretForms(secret)) {
        if (haystack.contains(form))
            return true;
    }
    return false;
}

} // namespace airlock::test

#include "core/gateway/credentialpatterns.h"

#include <openssl/crypto.h>

#include <algorithm>

namespace airlock::gateway {

namespace {

// The base64 characters of `value` that are independent of the bytes around it when it starts
// `offset` bytes (0..2) into an encoded stream. Character i covers bits [6i, 6i + 6) of the
// stream; the value occupies bits [8 * offset, 8 * (offset + n)).
// Wipes a temporary that held (an encoding of) a secret value before it is freed.
void wipe(QByteArray &bytes)
{
    if (!bytes.isEmpty() && bytes.isDetached())
        OPENSSL_cleanse(bytes.data(), std::size_t(bytes.size()));
    bytes.clear();
}

QByteArray alignedBase64(const QByteArray &value, int offset, QByteArray::Base64Options options)
{
    QByteArray padded = QByteArray(offset, '\0') + value;
    QByteArray encoded = padded.toBase64(options | QByteArray::OmitTrailingEquals);
    wipe(padded);
    const qsizetype firstBit = 8 * qsizetype(offset);
    const qsizetype endBit = 8 * (qsizetype(offset) + value.size());
    const qsizetype first = (firstBit + 5) / 6; // first character starting inside the value
    const qsizetype last = endBit / 6; // characters ending at or before endBit
    QByteArray form = last > first ? encoded.mid(first, last - first) : QByteArray();
    wipe(encoded);
    return form;
}

} // namespace

QList<QByteArray> credentialForms(const QByteArray &value)
{
    QList<QByteArray> forms;
    if (value.isEmpty())
        return forms;
    forms.append(value);
    QByteArray upper = value.toPercentEncoding();
    forms.append(upper);
    // Lower-case hex digits after each '%' (RFC 3986 §2.1: equivalent, and some encoders emit
    // them).
    QByteArray lower = upper;
    for (qsizetype i = 0; i + 2 < lower.size(); ++i) {
        if (lower.at(i) == '%') {
            lower[i + 1] = char(std::tolower(static_cast<unsigned char>(lower.at(i + 1))));
            lower[i + 2] = char(std::tolower(static_cast<unsigned char>(lower.at(i + 2))));
        }
    }
    forms.append(lower);
    for (int offset = 0; offset < 3; ++offset) {
        forms.append(alignedBase64(value, offset, QByteArray::Base64Encoding));
        forms.append(alignedBase64(value, offset, QByteArray::Base64UrlEncoding));
    }
    for (QByteArray &form : forms) {
        if (form.size() < kMinFormBytes)
            wipe(form);
    }
    forms.removeIf([](const QByteArray &form) { return form.isEmpty(); });
    std::sort(forms.begin(), forms.end(), [](const QByteArray &a, const QByteArray &b) {
        return a.size() != b.size() ? a.size() > b.size() : a < b;
    });
    const auto duplicates = std::unique(forms.begin(), forms.end());
    for (auto it = duplicates; it != forms.end(); ++it)
        wipe(*it);
    forms.erase(duplicates, forms.end());
    return forms;
}

} // namespace airlock::gateway

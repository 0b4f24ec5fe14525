#include "core/pki/openssl.h"

#include <openssl/err.h>
#include <openssl/pem.h>

namespace airlock::pki {

QString takeOpenSslErrors()
{
    QString text;
    while (const unsigned long code = ERR_get_error()) {
        char buffer[256] = {};
        ERR_error_string_n(code, buffer, sizeof buffer);
        if (!text.isEmpty())
            text += QStringLiteral("; ");
        text += QString::fromLatin1(buffer);
    }
    return text.isEmpty() ? QStringLiteral("no OpenSSL error") : text;
}

std::unexpected<Error> failOpenSsl(const QString &what)
{
    return fail(ErrorKind::OperationFailed, what + QStringLiteral(": ") + takeOpenSslErrors());
}

QByteArray certificateToPem(X509 *certificate)
{
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_X509(bio.get(), certificate) != 1)
        return {};
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return QByteArray(data, size);
}

Result<X509Ptr> certificateFromPem(const QByteArray &pem)
{
    BioPtr bio(BIO_new_mem_buf(pem.constData(), int(pem.size())));
    if (!bio)
        return failOpenSsl(QStringLiteral("BIO_new_mem_buf"));
    X509Ptr certificate(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!certificate)
        return failOpenSsl(QStringLiteral("no PEM certificate"));
    return certificate;
}

} // namespace airlock::pki

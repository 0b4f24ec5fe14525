#include "core/e2b/multipartform.h"

namespace airlock::e2b {

namespace {

QByteArray boundaryOf(const QByteArray &contentType)
{
    const QList<QByteArray> parts = contentType.split(';');
    if (parts.isEmpty() || parts.first().trimmed().toLower() != "multipart/form-data")
        return {};
    for (qsizetype i = 1; i < parts.size(); ++i) {
        const QByteArray param = parts[i].trimmed();
        if (param.toLower().startsWith("boundary=")) {
            QByteArray value = param.mid(9);
            if (value.size() >= 2 && value.startsWith('"') && value.endsWith('"'))
                value = value.mid(1, value.size() - 2);
            // RFC 2046: 1 to 70 characters.
            return value.size() >= 1 && value.size() <= 70 ? value : QByteArray();
        }
    }
    return {};
}

// The value of `key="..."` in a Content-Disposition; empty when absent.
QString dispositionParameter(const QByteArray &disposition, const QByteArray &key)
{
    const QByteArray needle = key + "=\"";
    qsizetype at = 0;
    while ((at = disposition.indexOf(needle, at)) >= 0) {
        if (at == 0 || disposition[at - 1] == ' ' || disposition[at - 1] == ';')
            break;
        at += needle.size();
    }
    if (at < 0)
        return {};
    const qsizetype start = at + needle.size();
    const qsizetype end = disposition.indexOf('"', start);
    if (end < 0)
        return {};
    // undici escapes '"' as %22 and CR/LF as %0D%0A in names (the WHATWG form encoding).
    QByteArray value = disposition.mid(start, end - start);
    value.replace("%22", "\"").replace("%0D", "\r").replace("%0A", "\n");
    return QString::fromUtf8(value);
}

} // namespace

Result<QList<FormFile>> parseMultipartForm(const QByteArray &contentType, const QByteArray &body)
{
    const QByteArray boundary = boundaryOf(contentType);
    if (boundary.isEmpty())
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("expected Content-Type multipart/form-data with a boundary"));
    const QByteArray delimiter = "--" + boundary;
    if (!body.startsWith(delimiter + "\r\n"))
        return fail(ErrorKind::InvalidParams,
                    QStringLiteral("multipart body does not start with its boundary"));
    QList<FormFile> files;
    qsizetype at = delimiter.size() + 2;
    const QByteArray next = "\r\n" + delimiter;
    while (true) {
        const qsizetype headEnd = body.indexOf("\r\n\r\n", at);
        if (headEnd < 0)
            return fail(ErrorKind::InvalidParams, QStringLiteral("multipart part without head"));
        FormFile file;
        bool formData = false;
        for (const QByteArray &line : body.mid(at, headEnd - at).split('\n')) {
            const QByteArray field = line.endsWith('\r') ? line.chopped(1) : line;
            const qsizetype colon = field.indexOf(':');
            if (colon <= 0)
                return fail(ErrorKind::InvalidParams,
                            QStringLiteral("multipart part head line without a name"));
            if (field.left(colon).trimmed().toLower() != "content-disposition")
                continue;
            const QByteArray value = field.mid(colon + 1).trimmed();
            formData = value.toLower().startsWith("form-data");
            file.fieldName = dispositionParameter(value, "name");
            file.fileName = dispositionParameter(value, "filename");
        }
        if (!formData)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("multipart part without Content-Disposition: form-data"));
        const qsizetype contentStart = headEnd + 4;
        const qsizetype contentEnd = body.indexOf(next, contentStart);
        if (contentEnd < 0)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("multipart body without its closing boundary"));
        file.content = body.mid(contentStart, contentEnd - contentStart);
        files.append(std::move(file));
        at = contentEnd + next.size();
        if (body.mid(at, 2) == "--")
            return files;
        if (body.mid(at, 2) != "\r\n")
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("multipart boundary not followed by CRLF"));
        at += 2;
    }
}

} // namespace airlock::e2b

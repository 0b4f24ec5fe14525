#include "core/e2b/connectenvelope.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtEndian>

namespace airlock::e2b::connectenvelope {

QByteArray encode(const QByteArray &message, quint8 flags)
{
    QByteArray out(5, Qt::Uninitialized);
    out[0] = char(flags);
    qToBigEndian<quint32>(quint32(message.size()), out.data() + 1);
    out.append(message);
    return out;
}

QByteArray endStream(const QString &code, const QString &message)
{
    QJsonObject end;
    if (!code.isEmpty()) {
        end.insert(
            QStringLiteral("error"),
            QJsonObject {{QStringLiteral("code"), code}, {QStringLiteral("message"), message}});
    }
    return encode(QJsonDocument(end).toJson(QJsonDocument::Compact), kEndStream);
}

Result<QList<QByteArray>> decodeAll(const QByteArray &body)
{
    QList<QByteArray> messages;
    qsizetype at = 0;
    while (at < body.size()) {
        if (body.size() - at < 5)
            return fail(ErrorKind::InvalidParams, QStringLiteral("Connect envelope cut off"));
        const quint8 flags = quint8(body[at]);
        const quint32 length = qFromBigEndian<quint32>(body.constData() + at + 1);
        if (flags & kCompressed)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("compressed Connect messages are not supported"));
        if (length > kMaxMessageBytes)
            return fail(ErrorKind::InvalidParams,
                        QStringLiteral("Connect message over %1 bytes").arg(kMaxMessageBytes));
        if (quint64(body.size() - at - 5) < length)
            return fail(ErrorKind::InvalidParams, QStringLiteral("Connect message cut off"));
        messages.append(body.mid(at + 5, qsizetype(length)));
        at += 5 + qsizetype(length);
    }
    return messages;
}

} // namespace airlock::e2b::connectenvelope

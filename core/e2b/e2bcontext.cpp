#include "core/e2b/e2bcontext.h"

#include "core/client/helperclient.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace airlock::e2b {

void E2bContext::call(const QString &method, const QJsonObject &params, Done done,
                      int timeoutMs) const
{
    helper->call(
        method, params,
        [done = std::move(done)](const Result<QJsonValue> &result) {
            if (!result)
                done(std::unexpected(result.error()));
            else
                done(result->toObject());
        },
        timeoutMs);
}

HttpResponse jsonResponse(int status, const QJsonValue &body)
{
    HttpResponse response;
    response.status = status;
    response.body = body.isArray() ? QJsonDocument(body.toArray()).toJson(QJsonDocument::Compact)
                                   : QJsonDocument(body.toObject()).toJson(QJsonDocument::Compact);
    return response;
}

HttpResponse emptyResponse(int status)
{
    HttpResponse response;
    response.status = status;
    response.contentType.clear();
    return response;
}

} // namespace airlock::e2b

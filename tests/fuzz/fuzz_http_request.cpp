// libFuzzer target: HttpRequestGuard::feed (docs/redteam-cases.md principle 5, A, B, G). The first
// input byte picks the connection (https to pkg.test, plain port 80, explicit proxy) and where the
// bytes are split; the rest is what a guest sends. Checks the guard's promises, not just "no
// crash": every forwarded head is the guard's own serialization for an allowed host, nothing
// follows a denial or a tunnel, and a denial carries a ready response.
#include "core/gateway/http/httprequestguard.h"

#include <cstdint>
#include <cstdlib>

using namespace airlock;
using namespace airlock::gateway;
using namespace airlock::policy;

namespace {

PolicyMatcher fuzzedPolicy()
{
    EgressRule pkg;
    pkg.host = QStringLiteral("pkg.test");
    pkg.ports = {443, 80};
    EgressRule api;
    api.host = QStringLiteral("*.api.test");
    api.methods = {QStringLiteral("GET"), QStringLiteral("POST")};
    api.pathPrefixes = {QStringLiteral("/v1")};
    EgressPolicy p;
    p.rules = {pkg, api};
    return *PolicyMatcher::create(p);
}

void check(bool condition)
{
    if (!condition)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const PolicyMatcher matcher = fuzzedPolicy();
    HttpConnectionContext context;
    switch (data[0] % 3) {
    case 0:
        context.tls = true;
        context.sni = QStringLiteral("pkg.test");
        context.port = 443;
        break;
    case 1:
        context.tls = false;
        context.port = 80;
        break;
    default:
        context.tls = false;
        context.port = 3128;
        context.explicitProxy = true;
        break;
    }
    context.maxHeaderBytes = 4096;
    context.maxBodyBytes = (data[0] & 0x80) ? 64 : 0;
    const QByteArrayView input(reinterpret_cast<const char *>(data + 1), qsizetype(size - 1));
    const qsizetype split = input.isEmpty() ? 0 : qsizetype(data[0] >> 2) % (input.size() + 1);

    HttpRequestGuard guard(context, matcher);
    bool ended = false;
    bool inRequest = false;
    for (const QByteArrayView piece : {input.first(split), input.sliced(split)}) {
        const QList<HttpEvent> events = guard.feed(piece);
        for (const HttpEvent &event : events) {
            check(!ended); // nothing after a denial or a tunnel
            if (const auto *forward = std::get_if<HttpForward>(&event)) {
                check(!inRequest);
                inRequest = true;
                check(forward->head.endsWith("\r\n\r\n"));
                check(forward->target.startsWith(QLatin1Char('/')));
                check(forward->policyRule >= 0);
                check(matcher
                          .checkRequest(forward->authority.host, forward->authority.port,
                                        forward->method, forward->target)
                          .allowed());
                if (context.tls)
                    check(forward->authority.host == context.sni);
            } else if (std::holds_alternative<HttpBody>(event)) {
                check(inRequest);
            } else if (std::holds_alternative<HttpRequestEnd>(event)) {
                check(inRequest);
                inRequest = false;
            } else if (const auto *deny = std::get_if<HttpDeny>(&event)) {
                check(deny->status >= 400 && deny->status < 600);
                check(deny->response.startsWith("HTTP/1.1 "));
                check(!wireName(deny->reason).isEmpty());
                ended = true;
            } else if (std::holds_alternative<HttpTunnel>(event)) {
                check(context.explicitProxy);
                ended = true;
            }
        }
    }
    check(guard.finished() == ended);
    return 0;
}

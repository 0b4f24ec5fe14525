#include "core/gateway/http/steeringfields.h"

#include <array>

namespace airlock {

namespace {

using enum SteeringAction;

// Sources are the stacks that read the field as what `steers` says; docs/http.md shows this
// table. New entries go here and into that table (tst_httprequestguard checks both).
constexpr std::array kFields {
    // The request's method and target (docs/reviews/2026-12-01-gateway-round3.md#f6).
    SteeringField {"x-http-method-override", Refuse, "method",
                   "Google APIs, ASP.NET, Express method-override, Symfony, Laravel"},
    SteeringField {"x-http-method", Refuse, "method", "ASP.NET, Symfony, Laravel"},
    SteeringField {"x-method-override", Refuse, "method", "Express method-override, Symfony"},
    SteeringField {"x-original-url", Refuse, "url", "IIS URL Rewrite, Symfony (IIS support)"},
    SteeringField {"x-rewrite-url", Refuse, "url", "IIS (ISAPI_Rewrite), Symfony, Zend"},
    SteeringField {"x-original-uri", Refuse, "url",
                   "nginx auth_request setups, ingress-nginx external auth"},
    SteeringField {"x-envoy-original-path", Refuse, "url",
                   "Envoy (the path before a rewrite), read back by filters and apps"},
    // The request's host: one tenant of a shared upstream standing in for another (the
    // domain-fronting class one layer up).
    SteeringField {"x-host", Refuse, "host",
                   "the host override fields of PortSwigger's Host header attack research; "
                   "apps that build URLs from it"},
    SteeringField {"x-original-host", Refuse, "host",
                   "ASP.NET Core ForwardedHeaders, Azure Application Gateway and Front Door"},
    SteeringField {"x-http-host-override", Refuse, "host",
                   "the host override fields of PortSwigger's Host header attack research"},
    // The upstream or proxy the next hop uses.
    SteeringField {"x-envoy-original-dst-host", Refuse, "proxy",
                   "Envoy ORIGINAL_DST clusters with use_http_header route to the host:port "
                   "it names"},
    SteeringField {"proxy", Refuse, "proxy",
                   "CGI-style stacks map it to HTTP_PROXY, the outbound proxy of their HTTP "
                   "clients (httpoxy, CVE-2016-5385)"},
    // Routing fields every proxy sets for itself (RFC 7239, RFC 9110 §7.6.3, the de-facto
    // X-Forwarded-* family: For, Host, Proto, Port, Prefix, Server, Scheme, Ssl, Uri).
    SteeringField {"forwarded", Strip, "route",
                   "RFC 7239: ASP.NET Core, Spring ForwardedHeaderFilter, Werkzeug"},
    SteeringField {"via", Strip, "route", "RFC 9110 §7.6.3"},
    SteeringField {"x-forwarded-", Strip, "route",
                   "Express trust proxy, Django USE_X_FORWARDED_HOST, Rails, Spring, Werkzeug "
                   "ProxyFix, nginx, Apache mod_proxy, HAProxy, Traefik"},
    // The scheme (https or not), as a front proxy tells the origin.
    SteeringField {"front-end-https", Strip, "scheme", "Microsoft IIS ARR and Outlook Web Access"},
    SteeringField {"x-url-scheme", Strip, "scheme",
                   "Rack-based and Python apps behind some proxies"},
    SteeringField {"x-scheme", Strip, "scheme", "ingress-nginx (sets it), apps behind it"},
    SteeringField {"x-arr-ssl", Strip, "scheme", "IIS Application Request Routing"},
    SteeringField {"cf-visitor", Strip, "scheme", "Cloudflare ({\"scheme\":\"https\"})"},
    SteeringField {"cloudfront-forwarded-proto", Strip, "scheme", "Amazon CloudFront"},
    // The client's address, which origins trust for rate limits and allowlists.
    SteeringField {"x-real-ip", Strip, "client", "nginx realip, ingress-nginx"},
    SteeringField {"true-client-ip", Strip, "client", "Akamai, Cloudflare Enterprise"},
    SteeringField {"x-client-ip", Strip, "client", "Express request-ip"},
    SteeringField {"cf-connecting-ip", Strip, "client", "Cloudflare"},
    SteeringField {"fastly-client-ip", Strip, "client", "Fastly"},
    SteeringField {"x-cluster-client-ip", Strip, "client",
                   "Rackspace and Riverbed load balancers, request-ip"},
    SteeringField {"client-ip", Strip, "client", "Rails (HTTP_CLIENT_IP), PHP apps"},
    SteeringField {"x-originating-ip", Strip, "client",
                   "IP allowlist bypass lists (PortSwigger, HackTricks)"},
    SteeringField {"x-remote-ip", Strip, "client", "IP allowlist bypass lists"},
    SteeringField {"x-remote-addr", Strip, "client", "IP allowlist bypass lists"},
    SteeringField {"x-original-forwarded-for", Strip, "client", "ingress-nginx"},
    SteeringField {"x-envoy-external-address", Strip, "client",
                   "Envoy (the trusted client address)"},
};

} // namespace

std::span<const SteeringField> steeringFields()
{
    return kFields;
}

const SteeringField *findSteeringField(QByteArrayView name)
{
    for (const SteeringField &field : kFields) {
        const QByteArrayView entry(field.name.data(), qsizetype(field.name.size()));
        if (entry.endsWith('-') ? name.size() > entry.size()
                    && name.first(entry.size()).compare(entry, Qt::CaseInsensitive) == 0
                                : name.compare(entry, Qt::CaseInsensitive) == 0)
            return &field;
    }
    return nullptr;
}

} // namespace airlock

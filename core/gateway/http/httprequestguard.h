#pragma once

#include "core/model/hostname.h"
#include "core/policy/policymatcher.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <memory>
#include <variant>

namespace airlock::gateway {

/// The connection one guard checks: fixed for its lifetime (docs/redteam-cases.md principle 1).
struct HttpConnectionContext
{
    /// https: TLS terminated by the gateway; `sni` is the ClientHello's server name. http: plain
    /// HTTP (transparent port 80, or an explicit proxy); `sni` is ignored.
    bool tls = true;
    QString sni; ///< canonicalized again by checkRequestAuthority; compared to every Host
    quint16 port = 443; ///< the connection's original destination port
    /// Explicit proxy mode (plain http only): requests must use absolute-form "http://..."
    /// targets, whose port is then the request's port; CONNECT is allowed and yields a tunnel.
    bool explicitProxy = false;
    qsizetype maxHeaderBytes = 64 * 1024; ///< request line + fields + CRLF (431 above)
    quint64 maxBodyBytes = 0; ///< per request; 0: unlimited (bodies are streamed)
};

/// How the forwarded request's body is framed towards the upstream.
enum class HttpFraming {
    None, ///< no body (no Content-Length, no Transfer-Encoding)
    ContentLength, ///< exactly contentLength bytes follow
    Chunked, ///< re-chunked by the guard from the chunks it parsed (principle 5)
};

/// A request that passed every check. `head` is re-serialized by the guard (never the guest's
/// bytes): request line with an origin-form target, `Host` with the canonical name, the
/// remaining fields without hop-by-hop (RFC 9110 §7.6.1), routing (RFC 7239, X-Forwarded-*,
/// Via) and client-address (X-Real-IP, ...) fields and without names holding a byte other than
/// letters, digits and '-', then the framing field of `framing` (docs/http.md).
struct HttpForward
{
    QString method;
    QString target; ///< origin-form, e.g. "/simple/?q=1"
    Authority authority; ///< canonical host and port this request is for
    int policyRule = -1; ///< the rule that allowed it
    QByteArray head;
    HttpFraming framing = HttpFraming::None;
    quint64 contentLength = 0; ///< with HttpFraming::ContentLength
    bool keepAlive = true; ///< the guest wants the connection kept after this request
    int version = 11; ///< 10 or 11: HTTP/1.0 or HTTP/1.1 (the head's request line says the same)
};

/// Body bytes of the current request, already framed for the upstream (with Chunked: chunk
/// headers the guard wrote around data it parsed, and the last chunk at the end).
struct HttpBody
{
    QByteArray bytes;
    /// Where the body's data (without chunk framing) lies in `bytes`: what the upstream
    /// reassembles, for scanning (a placeholder split across chunks is still one placeholder).
    qsizetype dataOffset = 0;
    qsizetype dataLength = 0;
};

/// The current request is complete; the next event (if any) starts another request.
struct HttpRequestEnd
{
};

/// The request is refused. The connection is finished: nothing after it is forwarded
/// (docs/redteam-cases.md A6, G1). `response` is ready to send to the guest. When it follows an
/// HttpForward without its HttpRequestEnd (a bad chunk, a body over the limit), the request in
/// progress must also be aborted upstream (close that upstream connection).
struct HttpDeny
{
    int status = 400;
    EgressReason reason = EgressReason::MalformedRequest; ///< of layer Http, Authority or Policy
    QString detail; ///< English, for logs and the GUI
    QByteArray response; ///< status line, JSON body {"error":"<reason>"}, Connection: close
    /// When the refused request's head parsed: its method, target (with the query: redact
    /// before logging) and single Host field value as received; empty otherwise.
    QString method;
    QString target;
    QString host;
    /// The refused head as received, when it parsed (wiped after use): a denied request that
    /// carries a credential placeholder still raises the credential alert.
    QByteArray head;
};

/// An explicit proxy's CONNECT that passed checkConnectTarget and the policy's connection check.
/// The caller answers "200" (connectEstablishedResponse), then runs TLS over the tunnel and must
/// require the ClientHello's SNI to equal authority.host (docs/redteam-cases.md A5). `leftover` is
/// what the guest sent after the CONNECT head; it belongs to the tunnel's TLS layer, not to the
/// upstream.
struct HttpTunnel
{
    Authority authority;
    int policyRule = -1;
    QByteArray leftover;
};

using HttpEvent = std::variant<HttpForward, HttpBody, HttpRequestEnd, HttpDeny, HttpTunnel>;

/// Strict request-by-request checker for one guest connection (docs/redteam-cases.md principles 1
/// and 5; classes A1, A6-A8, B3, B4, C3, D1, D4, G1). Feed it the guest's bytes, split anywhere; it
/// returns, in order, for each request either HttpForward, HttpBody*, HttpRequestEnd, or one
/// HttpDeny (or HttpTunnel) after which it is finished and ignores further input.
///
/// Memory is bounded by maxHeaderBytes plus the bytes of one feed() call: body bytes leave in the
/// returned events as soon as they are parsed. Heads are parsed with Boost.Beast's
/// request_parser (header_limit, body_limit, eager off) after a stricter scan of the raw head;
/// bodies are parsed by the same parser and re-framed, so no unparsed byte reaches the upstream.
/// Never throws.
class HttpRequestGuard final
{
public:
    /// `matcher` is copied: a policy change applies to new connections (docs/policy.md).
    HttpRequestGuard(HttpConnectionContext context, policy::PolicyMatcher matcher);
    ~HttpRequestGuard();
    HttpRequestGuard(const HttpRequestGuard &) = delete;
    HttpRequestGuard &operator=(const HttpRequestGuard &) = delete;

    /// Consumes `bytes` from the guest and returns what to do with them.
    QList<HttpEvent> feed(QByteArrayView bytes);
    /// The policy for every request from now on (a policy change while the connection is
    /// open: each request is checked against the policy in force when it arrives).
    void setMatcher(policy::PolicyMatcher matcher);

    /// True after an HttpDeny or HttpTunnel: the guard takes no more input.
    bool finished() const;
    /// True between requests with nothing buffered: an EOF from the guest here is clean; anywhere
    /// else the request in progress is truncated and the upstream exchange must be aborted.
    bool atMessageBoundary() const;

    /// The denial the gateway sends: "HTTP/1.1 <status> <phrase>", Content-Type:
    /// application/json, Content-Length, Connection: close, body {"error":"<reason>"}.
    static QByteArray denialResponse(int status, EgressReason reason);
    /// "HTTP/1.1 200 Connection Established" for a tunnel (RFC 9110 §9.3.6).
    static QByteArray connectEstablishedResponse();

private:
    struct Private;
    std::unique_ptr<Private> m_d;
};

} // namespace airlock::gateway

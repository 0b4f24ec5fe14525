#include "core/gateway/http/httprequestguard.h"

#include "core/gateway/http/steeringfields.h"

#include "core/gateway/http/hostheader.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

#include <array>
#include <limits>
#include <optional>

namespace airlock::gateway {

namespace http = boost::beast::http;

namespace {

constexpr qsizetype kBodyScratch = 64 * 1024;
// A chunk header or trailer section larger than this without progress is refused (RFC 9112
// §7.1.1 gives no limit; Beast holds no bound of its own on chunk extensions).
constexpr qsizetype kMaxChunkMeta = 16 * 1024;

QString reasonPhrase(int status)
{
    switch (status) {
    case 400:
        return QStringLiteral("Bad Request");
    case 403:
        return QStringLiteral("Forbidden");
    case 413:
        return QStringLiteral("Content Too Large");
    case 421:
        return QStringLiteral("Misdirected Request");
    case 431:
        return QStringLiteral("Request Header Fields Too Large");
    case 502:
        return QStringLiteral("Bad Gateway");
    case 505:
        return QStringLiteral("HTTP Version Not Supported");
    default:
        return QStringLiteral("Error");
    }
}

bool iequals(QByteArrayView a, QByteArrayView b)
{
    return a.compare(b, Qt::CaseInsensitive) == 0;
}

QByteArrayView trimmedOws(QByteArrayView v)
{
    while (!v.isEmpty() && (v.front() == ' ' || v.front() == '\t'))
        v = v.sliced(1);
    while (!v.isEmpty() && (v.back() == ' ' || v.back() == '\t'))
        v.chop(1);
    return v;
}

// Hop-by-hop fields (RFC 9110 §7.6.1, RFC 9112 §9.6 Keep-Alive, Proxy-Connection as sent by old
// clients, Proxy-Authorization: meant for the gateway, never the origin), the framing fields and
// Host, which the guard rewrites itself, and the steering fields a proxy sets for itself
// (steeringfields.h: Forwarded, Via, X-Forwarded-*, scheme and client-address fields): the guest
// must not speak for the gateway.
bool isStrippedField(QByteArrayView name)
{
    static constexpr std::array<const char *, 11> names {"connection",
                                                         "keep-alive",
                                                         "proxy-connection",
                                                         "proxy-authorization",
                                                         "te",
                                                         "trailer",
                                                         "upgrade",
                                                         "host",
                                                         "content-length",
                                                         "transfer-encoding",
                                                         "proxy-authenticate"};
    for (const char *n : names) {
        if (iequals(name, QByteArrayView(n)))
            return true;
    }
    const SteeringField *steering = findSteeringField(name);
    return steering && steering->action == SteeringAction::Strip;
}

// Fields that stacks honour as the "real" method, target, host or upstream of a request
// (steeringfields.h). An upstream that honours them acts on another request than the one the
// policy and the credential bindings checked (docs/reviews/2026-12-01-gateway-round3.md#f6):
// refused, not stripped, so a client that relies on one learns it instead of having its request
// silently turned into another.
const SteeringField *overrideField(QByteArrayView name)
{
    const SteeringField *steering = findSteeringField(name);
    return steering && steering->action == SteeringAction::Refuse ? steering : nullptr;
}

bool isOverrideField(QByteArrayView name)
{
    return overrideField(name) != nullptr;
}

// A field name of letters, digits and '-' only: what CGI (RFC 3875 §4.1.18), WSGI, Rack, PHP and
// lighttpd-style stacks map to HTTP_* variables without folding another name onto it. They turn
// '-' (and, lighttpd, every other non-alphanumeric byte) into '_', so `X_Forwarded_For` and
// `X.Forwarded.For` become the X-Forwarded-For the gateway strips
// (docs/reviews/2026-12-01-gateway-round3.md#f4).
bool isPlainFieldName(QByteArrayView name)
{
    for (char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '-'))
            return false;
    }
    return true;
}

// The name such a stack sees, spelled with '-': lower case, every other byte but letters and
// digits turned into '-'.
QByteArray foldedFieldName(QByteArrayView name)
{
    QByteArray folded = name.toByteArray().toLower();
    for (char &c : folded) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            c = '-';
    }
    return folded;
}

// True when the query of `target` ("/path?query") has a parameter named `_method` (any letter
// case, percent-encoded or not): Symfony and Laravel (httpMethodParameterOverride) read it from
// the query of a POST as the method (Rails' Rack::MethodOverride from the form body only).
bool hasMethodOverrideParameter(QStringView target)
{
    const qsizetype question = target.indexOf(u'?');
    if (question < 0)
        return false;
    // '&' and ';' both separate parameters for some parsers (HTML 4.01 §B.2.2, Rack before 3).
    const QByteArray query = target.sliced(question + 1).toLatin1().replace(';', '&');
    for (const QByteArray &pair : query.split('&')) {
        const qsizetype equals = pair.indexOf('=');
        const QByteArray key = QByteArray::fromPercentEncoding(
            QByteArray(equals < 0 ? pair : pair.first(equals)).replace('+', ' '));
        if (iequals(key.trimmed(), "_method"))
            return true;
    }
    return false;
}

// What the raw scan of one head found (copies: the guard's buffer may move while it grows).
struct RawHead
{
    int hostLines = 0;
    QList<QByteArray> contentLengths;
    QList<QByteArray> transferEncodings;
};

// The incremental scan of the head being received: each byte is looked at once, however the
// guest splits its writes, and the first fault found is the same for every split.
struct HeadScan
{
    qsizetype pos = 0; // start of the first line not scanned yet
    qsizetype searched = 0; // bytes before this hold no CR or LF after pos
    bool first = true; // the next line is the request line
    bool previousWasHost = false; // for obs-fold continuing a Host line
    bool done = false; // the empty line was seen; pos is then the size of the head
    RawHead raw;
};

struct Refusal
{
    int status = 400;
    EgressReason reason = EgressReason::MalformedRequest;
    QString detail;
    // What the refused request asked for, when its head parsed (for the egress event).
    QString method;
    QString target;
    QString host;
    QByteArray head; ///< the head as received (for the credential check of a denial)
};

// A refusal with the status the reason table gives.
Refusal httpRefusal(EgressReason reason, QString detail)
{
    return Refusal {denialStatus(reason), reason, std::move(detail)};
}

// The stricter checks of one line of the head, before Beast sees it: RFC 9112 §5.1 (no
// whitespace between a field name and ':'), §5.2 (obs-fold refused), RFC 9110 §5.5 (no CTL in
// field values but HTAB). Faults on a Host line are malformed_host (docs/redteam-cases.md A8).
std::optional<Refusal> scanLine(QByteArrayView line, HeadScan &scan)
{
    if (line.isEmpty()) {
        if (scan.first)
            return httpRefusal(EgressReason::MalformedRequest,
                               QStringLiteral("empty line before the request line"));
        scan.done = true;
        return std::nullopt;
    }
    if (scan.first) {
        scan.first = false;
        for (char c : line) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7f)
                return httpRefusal(EgressReason::MalformedRequest,
                                   QStringLiteral("control byte in the request line"));
        }
        return std::nullopt;
    }
    if (line.front() == ' ' || line.front() == '\t') {
        const EgressReason r =
            scan.previousWasHost ? EgressReason::MalformedHost : EgressReason::MalformedHeader;
        return httpRefusal(r, QStringLiteral("obsolete line folding (RFC 9112 §5.2)"));
    }
    const qsizetype colon = line.indexOf(':');
    const QByteArrayView name = colon < 0 ? line : line.first(colon);
    const QByteArrayView trimmedName = trimmedOws(name);
    const bool isHost = iequals(trimmedName, "host");
    const EgressReason fault = isHost ? EgressReason::MalformedHost : EgressReason::MalformedHeader;
    if (colon <= 0)
        return httpRefusal(fault, QStringLiteral("a field line without a name and ':'"));
    if (trimmedName.size() != name.size())
        return httpRefusal(fault, QStringLiteral("whitespace in a field name (RFC 9112 §5.1)"));
    for (char c : line) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t') || u == 0x7f)
            return httpRefusal(
                fault,
                QStringLiteral("control byte in field %1").arg(QString::fromLatin1(trimmedName)));
    }
    const QByteArrayView value = trimmedOws(line.sliced(colon + 1));
    scan.previousWasHost = isHost;
    if (isHost)
        ++scan.raw.hostLines;
    else if (iequals(name, "content-length"))
        scan.raw.contentLengths.append(value.toByteArray());
    else if (iequals(name, "transfer-encoding"))
        scan.raw.transferEncodings.append(value.toByteArray());
    return std::nullopt;
}

// Scans the complete lines of `window` not scanned yet. RFC 9112 §2.2: lines end in CRLF; a
// bare CR or bare LF is refused, never treated as a line end.
std::optional<Refusal> scanLines(QByteArrayView window, HeadScan &scan)
{
    while (!scan.done) {
        qsizetype i = qMax(scan.pos, scan.searched);
        while (i < window.size() && window[i] != '\r' && window[i] != '\n')
            ++i;
        scan.searched = i;
        if (i == window.size())
            return std::nullopt; // the line is not complete yet
        if (window[i] == '\n')
            return httpRefusal(EgressReason::MalformedHeader, QStringLiteral("bare LF"));
        if (i + 1 == window.size())
            return std::nullopt; // a CR at the end: wait for its LF
        if (window[i + 1] != '\n')
            return httpRefusal(EgressReason::MalformedHeader, QStringLiteral("bare CR"));
        const QByteArrayView line = window.sliced(scan.pos, i - scan.pos);
        scan.pos = i + 2;
        scan.searched = scan.pos;
        if (auto fault = scanLine(line, scan))
            return fault;
    }
    return std::nullopt;
}

// RFC 9112 §6.1-§6.3 and docs/redteam-cases.md G1: exactly one way to find the end of the body.
std::optional<Refusal> checkFraming(const RawHead &raw)
{
    if (!raw.contentLengths.isEmpty() && !raw.transferEncodings.isEmpty())
        return httpRefusal(EgressReason::ConflictingFraming,
                           QStringLiteral("both Content-Length and Transfer-Encoding"));
    if (raw.contentLengths.size() > 1)
        return httpRefusal(
            EgressReason::BadContentLength,
            QStringLiteral("%1 Content-Length fields").arg(raw.contentLengths.size()));
    if (raw.contentLengths.size() == 1) {
        const QByteArrayView v = raw.contentLengths.first();
        bool digits = !v.isEmpty() && v.size() <= 18;
        for (char c : v)
            digits = digits && c >= '0' && c <= '9';
        if (!digits || (v.size() > 1 && v.front() == '0'))
            return httpRefusal(
                EgressReason::BadContentLength,
                QStringLiteral("Content-Length is not 1*DIGIT without leading zeros"));
    }
    if (raw.transferEncodings.size() > 1)
        return httpRefusal(
            EgressReason::BadTransferEncoding,
            QStringLiteral("%1 Transfer-Encoding fields").arg(raw.transferEncodings.size()));
    // Transfer-coding names are case-insensitive (RFC 9112 §7); only "chunked" alone is accepted.
    if (raw.transferEncodings.size() == 1 && !iequals(raw.transferEncodings.first(), "chunked"))
        return httpRefusal(EgressReason::BadTransferEncoding,
                           QStringLiteral("Transfer-Encoding other than exactly chunked"));
    return std::nullopt;
}

Refusal fromBeastHeadError(const boost::system::error_code &ec)
{
    if (ec == http::error::header_limit)
        return httpRefusal(EgressReason::HeaderTooLarge, QStringLiteral("header limit exceeded"));
    if (ec == http::error::body_limit)
        return httpRefusal(EgressReason::BodyTooLarge, QStringLiteral("body limit exceeded"));
    if (ec == http::error::bad_content_length)
        return httpRefusal(EgressReason::BadContentLength, QStringLiteral("Content-Length"));
    if (ec == http::error::bad_transfer_encoding)
        return httpRefusal(EgressReason::BadTransferEncoding, QStringLiteral("Transfer-Encoding"));
    if (ec == http::error::bad_version)
        return httpRefusal(EgressReason::UnsupportedVersion, QStringLiteral("not HTTP/1.x"));
    if (ec == http::error::bad_field || ec == http::error::bad_value)
        return httpRefusal(EgressReason::MalformedHeader,
                           QStringLiteral("field: %1").arg(QString::fromStdString(ec.message())));
    return httpRefusal(EgressReason::MalformedRequest,
                       QStringLiteral("request: %1").arg(QString::fromStdString(ec.message())));
}

// A request target split per RFC 9112 §3.2.
struct Target
{
    std::optional<QString> scheme; // absolute-form only
    std::optional<QString> authority; // absolute-form only
    QString path; // origin-form path and query
};

std::optional<Target> splitTarget(QStringView target)
{
    if (target.contains(u'#'))
        return std::nullopt; // a fragment is never sent (RFC 9110 §7.1)
    if (target.startsWith(u'/'))
        return Target {std::nullopt, std::nullopt, target.toString()};
    const qsizetype sep = target.indexOf(QStringLiteral("://"));
    if (sep <= 0)
        return std::nullopt; // asterisk-form, authority-form or garbage
    const QStringView scheme = target.first(sep);
    for (QChar c : scheme) {
        if (!((c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z')))
            return std::nullopt;
    }
    const QStringView rest = target.sliced(sep + 3);
    qsizetype end = 0;
    while (end < rest.size() && rest[end] != u'/' && rest[end] != u'?')
        ++end;
    QString path = rest.sliced(end).toString();
    if (!path.startsWith(u'/'))
        path.prepend(u'/');
    return Target {scheme.toString(), rest.first(end).toString(), path};
}

} // namespace

struct HttpRequestGuard::Private
{
    enum class State { Head, Body, Finished };

    HttpConnectionContext m_context;
    policy::PolicyMatcher m_matcher;
    State m_state = State::Head;
    QByteArray m_in; // unparsed guest bytes: at most one head or one chunk header
    std::optional<http::request_parser<http::buffer_body>> m_parser;
    bool m_chunked = false;
    HeadScan m_scan; // of the head at the start of m_in
    // Where the parser decodes a body: allocated when a body starts and freed when it ends,
    // so the many connections without an upload in progress hold none (issue 16, memory per
    // connection).
    QByteArray m_scratch;

    Private(HttpConnectionContext context, policy::PolicyMatcher matcher)
        : m_context(std::move(context)), m_matcher(std::move(matcher))
    { }

    void deny(QList<HttpEvent> &out, const Refusal &r)
    {
        out.append(HttpDeny {r.status, r.reason, r.detail, denialResponse(r.status, r.reason),
                             r.method, r.target, r.host, r.head});
        m_state = State::Finished;
        m_parser.reset();
        m_in.clear();
    }

    void parseHead(QList<HttpEvent> &out);
    void parseBody(QList<HttpEvent> &out, bool &progress);
    std::expected<HttpEvent, Refusal> checkRequest(const RawHead &raw);
};

void HttpRequestGuard::Private::parseHead(QList<HttpEvent> &out)
{
    // Only the first maxHeaderBytes can be a head; past them without its end the answer is 431
    // (RFC 6585 §5). Scanning the same window whatever the split keeps verdicts split-proof.
    const QByteArrayView window =
        QByteArrayView(m_in).first(qMin(m_in.size(), m_context.maxHeaderBytes));
    if (auto fault = scanLines(window, m_scan))
        return deny(out, *fault);
    if (!m_scan.done) {
        if (m_in.size() > m_context.maxHeaderBytes)
            deny(out,
                 httpRefusal(
                     EgressReason::HeaderTooLarge,
                     QStringLiteral("the head exceeds %1 bytes").arg(m_context.maxHeaderBytes)));
        return;
    }
    const qsizetype headSize = m_scan.pos;
    const RawHead raw = std::exchange(m_scan, {}).raw;
    const QByteArrayView head = QByteArrayView(m_in).first(headSize);
    if (auto framing = checkFraming(raw))
        return deny(out, *framing);

    m_parser.emplace();
    m_parser->eager(false);
    m_parser->header_limit(static_cast<std::uint32_t>(m_context.maxHeaderBytes));
    // Not body_limit(boost::none): Beast 1.74 compares Content-Length against the optional, and
    // any length compares greater than none.
    m_parser->body_limit(m_context.maxBodyBytes > 0 ? m_context.maxBodyBytes
                                                    : std::numeric_limits<std::uint64_t>::max());
    boost::system::error_code ec;
    const std::size_t used =
        m_parser->put(boost::asio::buffer(head.data(), static_cast<std::size_t>(head.size())), ec);
    if (ec)
        return deny(out, fromBeastHeadError(ec));
    if (!m_parser->is_header_done() || used != static_cast<std::size_t>(head.size()))
        return deny(out,
                    httpRefusal(EgressReason::MalformedRequest,
                                QStringLiteral("the head did not parse as one unit")));

    auto verdict = checkRequest(raw);
    if (!verdict) {
        Refusal refusal = verdict.error();
        const auto &request = m_parser->get();
        refusal.method = QString::fromLatin1(request.method_string().data(),
                                             qsizetype(request.method_string().size()));
        refusal.target =
            QString::fromLatin1(request.target().data(), qsizetype(request.target().size()));
        if (raw.hostLines == 1) {
            const auto host = request[boost::beast::http::field::host];
            refusal.host = QString::fromLatin1(host.data(), qsizetype(host.size()));
        }
        refusal.head = head.toByteArray();
        return deny(out, refusal);
    }
    m_in.remove(0, headSize);
    if (auto *tunnel = std::get_if<HttpTunnel>(&*verdict)) {
        tunnel->leftover = std::exchange(m_in, {});
        out.append(std::move(*verdict));
        m_state = State::Finished;
        m_parser.reset();
        return;
    }
    out.append(std::move(*verdict));
    if (m_parser->is_done()) {
        out.append(HttpRequestEnd {});
        m_parser.reset();
        return;
    }
    m_state = State::Body;
}

void HttpRequestGuard::Private::parseBody(QList<HttpEvent> &out, bool &progress)
{
    progress = false;
    auto &body = m_parser->get().body();
    if (m_scratch.isEmpty())
        m_scratch.resize(kBodyScratch);
    body.data = m_scratch.data();
    body.size = static_cast<std::size_t>(m_scratch.size());
    body.more = true;
    boost::system::error_code ec;
    const std::size_t used = m_parser->put(
        boost::asio::buffer(m_in.constData(), static_cast<std::size_t>(m_in.size())), ec);
    if (ec == http::error::need_buffer || ec == http::error::need_more)
        ec = {};
    const auto produced = static_cast<qsizetype>(m_scratch.size() - qsizetype(body.size));
    body.data = nullptr;
    if (ec) {
        if (ec == http::error::body_limit)
            return deny(
                out,
                httpRefusal(EgressReason::BodyTooLarge, QStringLiteral("body limit exceeded")));
        return deny(out, httpRefusal(EgressReason::BadChunk, QString::fromStdString(ec.message())));
    }
    m_in.remove(0, static_cast<qsizetype>(used));
    if (produced > 0) {
        QByteArray bytes;
        qsizetype offset = 0;
        const QByteArrayView data(m_scratch.constData(), produced);
        if (m_chunked) {
            // RFC 9112 §7.1: our own chunk around parsed data; extensions are dropped.
            bytes = QByteArray::number(produced, 16) + "\r\n";
            offset = bytes.size();
            bytes += data.toByteArray() + "\r\n";
        } else {
            bytes = data.toByteArray();
        }
        out.append(HttpBody {std::move(bytes), offset, produced});
    }
    progress = used > 0 || produced > 0;
    if (m_parser->is_done()) {
        // Trailer fields (RFC 9112 §7.1.2) were parsed and are dropped.
        if (m_chunked)
            out.append(HttpBody {QByteArrayLiteral("0\r\n\r\n")});
        out.append(HttpRequestEnd {});
        m_parser.reset();
        m_scratch = QByteArray();
        m_state = State::Head;
        progress = true;
        return;
    }
    if (!progress && m_in.size() > kMaxChunkMeta)
        deny(out,
             httpRefusal(EgressReason::BadChunk,
                         QStringLiteral("chunk header or trailers too large")));
}

std::expected<HttpEvent, Refusal> HttpRequestGuard::Private::checkRequest(const RawHead &raw)
{
    const auto &request = m_parser->get();
    if (request.version() != 10 && request.version() != 11)
        return std::unexpected(httpRefusal(
            EgressReason::UnsupportedVersion,
            QStringLiteral("HTTP/%1.%2").arg(request.version() / 10).arg(request.version() % 10)));
    if (request.version() == 10 && !raw.transferEncodings.isEmpty())
        return std::unexpected(httpRefusal(EgressReason::BadTransferEncoding,
                                           QStringLiteral("Transfer-Encoding on HTTP/1.0")));

    const auto methodText = request.method_string();
    const QString method = QString::fromLatin1(methodText.data(), qsizetype(methodText.size()));
    const auto targetText = request.target();
    const QString target = QString::fromLatin1(targetText.data(), qsizetype(targetText.size()));

    QStringList hostFields;
    for (const auto &field : request) {
        const auto name = field.name_string();
        if (iequals(QByteArrayView(name.data(), qsizetype(name.size())), "host")) {
            const auto value = field.value();
            hostFields.append(QString::fromLatin1(value.data(), qsizetype(value.size())));
        }
    }
    if (hostFields.size() != raw.hostLines)
        return std::unexpected(httpRefusal(EgressReason::MalformedHost,
                                           QStringLiteral("Host lines and fields disagree")));

    // Methods are case-sensitive (RFC 9110 §9.1), but a lenient upstream may not be: "trace" is
    // refused like TRACE (and IIS's TRACK), and only the exact "CONNECT" opens a tunnel.
    for (const auto *forbidden : {u"TRACE", u"TRACK"}) {
        if (method.compare(QStringView(forbidden), Qt::CaseInsensitive) == 0)
            return std::unexpected(httpRefusal(
                EgressReason::MethodForbidden,
                QStringLiteral("%1 reflects request headers").arg(QStringView(forbidden))));
    }
    if (method != u"CONNECT" && method.compare(u"CONNECT", Qt::CaseInsensitive) == 0)
        return std::unexpected(httpRefusal(EgressReason::MethodForbidden,
                                           QStringLiteral("CONNECT in other letter case")));

    if (method == u"CONNECT") {
        if (!m_context.explicitProxy || m_context.tls)
            return std::unexpected(
                httpRefusal(EgressReason::MethodForbidden,
                            QStringLiteral("CONNECT outside an explicit proxy connection")));
        if (!raw.contentLengths.isEmpty() || !raw.transferEncodings.isEmpty())
            return std::unexpected(httpRefusal(EgressReason::ConflictingFraming,
                                               QStringLiteral("CONNECT with a body")));
        const AuthorityCheck connect = checkConnectTarget(target);
        if (!connect.ok())
            return std::unexpected(httpRefusal(connect.reason, connect.detail));
        // HTTP/1.1 requires Host on every request, CONNECT included (RFC 9112 §3.2); the
        // gateway refuses a missing Host everywhere else too
        // (docs/reviews/2026-11-30-redteam-pass.md#f8).
        if (hostFields.isEmpty())
            return std::unexpected(
                httpRefusal(EgressReason::MissingHost, QStringLiteral("CONNECT without Host")));
        for (const QString &host : hostFields) {
            const auto parsed = parseAuthority(host, connect.authority.port);
            if (!parsed || parsed->host != connect.authority.host
                || parsed->port != connect.authority.port)
                return std::unexpected(
                    httpRefusal(EgressReason::AuthorityMismatch,
                                QStringLiteral("Host differs from the CONNECT target")));
        }
        const policy::Verdict verdict =
            m_matcher.checkConnection(connect.authority.host, connect.authority.port);
        if (!verdict.allowed())
            return std::unexpected(Refusal {403, verdict.reason, verdict.detail});
        return HttpTunnel {connect.authority, verdict.rule, {}};
    }

    const auto split = splitTarget(target);
    if (!split)
        return std::unexpected(httpRefusal(
            EgressReason::BadTarget, QStringLiteral("neither origin-form nor absolute-form")));

    RequestAuthority authority;
    authority.tls = m_context.tls;
    authority.sni = m_context.sni;
    authority.connectionPort = m_context.port;
    authority.hostFields = hostFields;
    authority.absoluteScheme = split->scheme;
    authority.absoluteAuthority = split->authority;
    if (m_context.explicitProxy && !m_context.tls) {
        // RFC 9112 §3.2.2: requests to a proxy use absolute-form; its port is the request's.
        if (!split->authority)
            return std::unexpected(httpRefusal(
                EgressReason::BadTarget, QStringLiteral("a proxy request needs absolute-form")));
        if (auto parsed = parseAuthority(*split->authority, quint16(80)))
            authority.connectionPort = parsed->port;
    }
    const AuthorityCheck check = checkRequestAuthority(authority);
    if (!check.ok())
        return std::unexpected(httpRefusal(check.reason, check.detail));

    // Before the policy: what it checks must be the method and path the upstream acts on.
    for (const auto &field : request) {
        const auto nameText = field.name_string();
        const QByteArrayView name(nameText.data(), qsizetype(nameText.size()));
        if (!isPlainFieldName(name)) {
            const QByteArray folded = foldedFieldName(name);
            if (isStrippedField(folded) || isOverrideField(folded))
                return std::unexpected(
                    httpRefusal(EgressReason::AmbiguousFieldName,
                                QStringLiteral("field name %1 reads as %2 on CGI-style upstreams")
                                    .arg(QString::fromLatin1(name.toByteArray()),
                                         QString::fromLatin1(folded))));
        } else if (const SteeringField *steering = overrideField(name)) {
            return std::unexpected(
                httpRefusal(EgressReason::RequestOverride,
                            QStringLiteral("%1 would override the checked %2 (%3)")
                                .arg(QString::fromLatin1(name.toByteArray()),
                                     QString::fromLatin1(steering->steers.data(),
                                                         qsizetype(steering->steers.size())),
                                     QString::fromLatin1(steering->source.data(),
                                                         qsizetype(steering->source.size())))));
        }
    }
    if (hasMethodOverrideParameter(split->path))
        return std::unexpected(
            httpRefusal(EgressReason::RequestOverride,
                        QStringLiteral("a _method query parameter would override the method")));

    if (m_context.explicitProxy && !m_context.tls && check.authority.port != 80)
        return std::unexpected(httpRefusal(
            EgressReason::PlainHttpPort,
            QStringLiteral("plain HTTP goes only to port 80; port %1 is reached with https "
                           "(CONNECT through the proxy)")
                .arg(check.authority.port)));
    const policy::Verdict verdict =
        m_matcher.checkRequest(check.authority.host, check.authority.port, method, split->path);
    if (!verdict.allowed()) // 400 for the malformed_* reasons, 403 for the others
        return std::unexpected(httpRefusal(verdict.reason, verdict.detail));

    HttpForward forward;
    forward.method = method;
    forward.target = split->path;
    forward.authority = check.authority;
    forward.policyRule = verdict.rule;
    forward.keepAlive = m_parser->keep_alive();
    forward.version = request.version() == 10 ? 10 : 11;
    m_chunked = m_parser->chunked();
    if (m_chunked) {
        forward.framing = HttpFraming::Chunked;
    } else if (const auto length = m_parser->content_length()) {
        forward.framing = HttpFraming::ContentLength;
        forward.contentLength = *length;
    }

    // The head, written by us (principle 5): request line, Host, kept fields, framing.
    QByteArray &head = forward.head;
    head += method.toLatin1() + ' ' + split->path.toLatin1()
        + (request.version() == 10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
    const quint16 defaultPort = m_context.tls ? 443 : 80;
    head += "Host: " + check.authority.host.toLatin1();
    if (check.authority.port != defaultPort)
        head += ':' + QByteArray::number(check.authority.port);
    head += "\r\n";

    // Field names listed in Connection are hop-by-hop too (RFC 9110 §7.6.1).
    QList<QByteArray> connectionOptions;
    for (const auto &field : request) {
        const auto name = field.name_string();
        if (!iequals(QByteArrayView(name.data(), qsizetype(name.size())), "connection"))
            continue;
        const auto value = field.value();
        for (const QByteArray &option :
             QByteArray(value.data(), qsizetype(value.size())).split(',')) {
            const QByteArray trimmed = option.trimmed();
            if (!trimmed.isEmpty())
                connectionOptions.append(trimmed);
        }
    }
    for (const auto &field : request) {
        const auto nameText = field.name_string();
        const QByteArrayView name(nameText.data(), qsizetype(nameText.size()));
        // Other names outside letters, digits and '-' are dropped (as nginx and Apache do by
        // default): the names the upstream sees are then exactly those the gateway reasons
        // about, also for the credential placement's field (credentialinjector.h).
        if (isStrippedField(name) || !isPlainFieldName(name))
            continue;
        bool named = false;
        for (const QByteArray &option : connectionOptions)
            named = named || iequals(name, option);
        if (named)
            continue;
        const auto value = field.value();
        head +=
            name.toByteArray() + ": " + QByteArray(value.data(), qsizetype(value.size())) + "\r\n";
    }
    // The guest's close goes on to the upstream (RFC 9112 §9.6), which then closes its leg.
    if (!forward.keepAlive)
        head += "Connection: close\r\n";
    if (forward.framing == HttpFraming::Chunked)
        head += "Transfer-Encoding: chunked\r\n";
    else if (forward.framing == HttpFraming::ContentLength)
        head += "Content-Length: " + QByteArray::number(forward.contentLength) + "\r\n";
    head += "\r\n";
    return forward;
}

HttpRequestGuard::HttpRequestGuard(HttpConnectionContext context, policy::PolicyMatcher matcher)
    : m_d(std::make_unique<Private>(std::move(context), std::move(matcher)))
{ }

HttpRequestGuard::~HttpRequestGuard() = default;

QList<HttpEvent> HttpRequestGuard::feed(QByteArrayView bytes)
{
    QList<HttpEvent> out;
    if (m_d->m_state == Private::State::Finished)
        return out;
    m_d->m_in.append(bytes);
    for (;;) {
        if (m_d->m_state == Private::State::Head) {
            if (m_d->m_in.isEmpty())
                break;
            const qsizetype before = out.size();
            m_d->parseHead(out);
            if (out.size() == before)
                break; // need more bytes
        } else if (m_d->m_state == Private::State::Body) {
            if (m_d->m_in.isEmpty())
                break;
            bool progress = false;
            m_d->parseBody(out, progress);
            if (!progress)
                break;
        } else {
            break;
        }
    }
    return out;
}

void HttpRequestGuard::setMatcher(policy::PolicyMatcher matcher)
{
    m_d->m_matcher = std::move(matcher);
}

bool HttpRequestGuard::finished() const
{
    return m_d->m_state == Private::State::Finished;
}

bool HttpRequestGuard::atMessageBoundary() const
{
    return m_d->m_state == Private::State::Head && m_d->m_in.isEmpty();
}

QByteArray HttpRequestGuard::denialResponse(int status, EgressReason reason)
{
    // Wire names are snake_case ASCII (checked with the reason table): no JSON escaping needed.
    const QByteArray body = "{\"error\":\"" + wireName(reason).toLatin1() + "\"}";
    return "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status).toLatin1()
        + "\r\nContent-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size())
        + "\r\nConnection: close\r\n\r\n" + body;
}

QByteArray HttpRequestGuard::connectEstablishedResponse()
{
    return QByteArrayLiteral("HTTP/1.1 200 Connection Established\r\n\r\n");
}

} // namespace airlock::gateway

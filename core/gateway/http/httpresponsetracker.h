#pragma once

#include "core/gateway/credentials/streamreplacer.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <memory>

namespace airlock::gateway {

/// Follows the upstream's responses on one connection without changing a byte
/// (docs/redteam-cases.md principle 6: responses, redirects included, go to the guest as they are),
/// to learn each response's status and where it ends (RFC 9112 §6.3), so the gateway can finish a
/// request's egress event, keep-alive stays in step with the requests, and a response that ends the
/// connection (close-delimited, Connection: close) closes the guest's connection too.
/// Parsed with Boost.Beast's response parser. Not thread-safe.
///
/// Scrubbing (issue 4, docs/redteam-cases.md I3): expect() with replacement rules rewrites the
/// response instead of passing it through. The head is held until complete (at most 256 KiB), then
/// re-serialized from the parsed fields with every rule applied to it; the body's data (after
/// de-chunking) runs through a StreamReplacer, so memory stays bounded by the longest pattern
/// and the whole body is scrubbed however long it is. Because replacements change lengths the
/// body is re-framed: to an HTTP/1.1 request as chunked (Content-Length and Transfer-Encoding
/// removed, "Transfer-Encoding: chunked" added, status line HTTP/1.1), to an HTTP/1.0 request
/// as close-delimited ("Connection: close", the connection ends after it; RFC 9112 §6.3).
/// Responses without a body (HEAD, 1xx, 204, 304, Content-Length 0) keep their fields, and a
/// close-delimited body stays close-delimited. Trailer fields of a chunked body are dropped.
/// A body whose codings (Transfer-Encoding other than chunked, Content-Encoding) are gzip or
/// deflate is decoded with ContentDecoder before scrubbing and sent without them; any other
/// coding, and a 206 partial response, is refused (Progress::refused): a secret inside either
/// would match no form (docs/reviews/2026-12-01-credentials-redteam.md#f1 and #f3).
class HttpResponseTracker final
{
public:
    /// How expect() should treat the next response.
    struct Rewrite
    {
        QList<StreamReplacer::Rule> rules; ///< empty: pass the response through unchanged
        bool http10 = false; ///< the request was HTTP/1.0: no chunked re-framing
    };

    /// What one feed() found.
    struct Progress
    {
        /// Bytes of the input that belong to the current response (parsed, or kept as part of
        /// an incomplete head): all of it unless a final response ended inside the input.
        qsizetype consumed = 0;
        int status = 0; ///< status of a head completed in this call (0: none)
        /// `status` is of a 1xx other than 101 (the final head follows in a later call)
        bool interim = false;
        bool finished = false; ///< a final response ended at `consumed`
        bool keepAlive = true; ///< with finished: the upstream keeps the connection
        bool error = false; ///< the bytes are not an HTTP/1.x response (or do not decode)
        /// Rewriting: the final head says the body cannot be scrubbed (a 206, or a coding
        /// other than gzip/deflate/identity); nothing of it was output. The caller answers 502
        /// `unscrubbable_response` (docs/credentials.md). errorText says why.
        bool refused = false;
        QString errorText;
        /// Rewriting: the bytes to send to the guest for the consumed input (else send the
        /// consumed input itself).
        QByteArray output;
        qsizetype replacements = 0; ///< rewriting: matches replaced in this call
    };

    HttpResponseTracker();
    ~HttpResponseTracker();
    HttpResponseTracker(const HttpResponseTracker &) = delete;
    HttpResponseTracker &operator=(const HttpResponseTracker &) = delete;

    /// Starts the response to the next request; `head` for HEAD requests (no body follows
    /// whatever the fields say, RFC 9110 §9.3.2).
    void expect(bool head);
    /// The same, rewriting the response with `rewrite` (see the class comment).
    void expect(bool head, Rewrite rewrite);
    /// True when the current response is being rewritten (Progress::output is what to send).
    bool rewriting() const;
    /// True between expect() and the end of that request's final response.
    bool active() const;
    /// Parses `bytes` (stops at the end of a final response: the caller feeds the rest after
    /// the next expect()). Never throws.
    Progress feed(QByteArrayView bytes);
    /// The upstream closed: true when that ends the current response cleanly (close-delimited
    /// body, RFC 9112 §6.3 rule 8). Rewriting: `output` gets the last bytes to send.
    bool finishOnEof(QByteArray *output = nullptr);

private:
    struct Private;
    std::unique_ptr<Private> m_d;
};

} // namespace airlock::gateway

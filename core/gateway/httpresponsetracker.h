#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <memory>

namespace airlock::gateway {

/// Follows the upstream's responses on one connection without changing a byte (CASES.md
/// principle 6: responses, redirects included, go to the guest as they are), to learn each
/// response's status and where it ends (RFC 9112 §6.3), so the gateway can finish a request's
/// egress event, keep-alive stays in step with the requests, and a response that ends the
/// connection (close-delimited, Connection: close) closes the guest's connection too.
/// Parsed with Boost.Beast's response parser. Not thread-safe.
class HttpResponseTracker final
{
public:
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
        bool error = false; ///< the bytes are not an HTTP/1.x response
        QString errorText;
    };

    HttpResponseTracker();
    ~HttpResponseTracker();
    HttpResponseTracker(const HttpResponseTracker &) = delete;
    HttpResponseTracker &operator=(const HttpResponseTracker &) = delete;

    /// Starts the response to the next request; `head` for HEAD requests (no body follows
    /// whatever the fields say, RFC 9110 §9.3.2).
    void expect(bool head);
    /// True between expect() and the end of that request's final response.
    bool active() const;
    /// Parses `bytes` (stops at the end of a final response: the caller feeds the rest after
    /// the next expect()). Never throws.
    Progress feed(QByteArrayView bytes);
    /// The upstream closed: true when that ends the current response cleanly (close-delimited
    /// body, RFC 9112 §6.3 rule 8).
    bool finishOnEof();

private:
    struct Private;
    std::unique_ptr<Private> m_d;
};

} // namespace airlock::gateway

#include "core/gateway/httpresponsetracker.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

#include <limits>
#include <optional>

namespace airlock::gateway {

namespace http = boost::beast::http;

namespace {
constexpr std::uint32_t kMaxResponseHead = 256 * 1024;
constexpr std::size_t kScratch = 64 * 1024;
} // namespace

struct HttpResponseTracker::Private
{
    std::optional<http::response_parser<http::buffer_body>> parser;
    bool head = false;
    bool active = false;
    char scratch[kScratch];

    void start()
    {
        parser.emplace();
        parser->eager(true);
        parser->header_limit(kMaxResponseHead);
        parser->body_limit(std::numeric_limits<std::uint64_t>::max());
        parser->skip(head);
    }
};

HttpResponseTracker::HttpResponseTracker() : m_d(std::make_unique<Private>()) { }

HttpResponseTracker::~HttpResponseTracker() = default;

void HttpResponseTracker::expect(bool head)
{
    m_d->head = head;
    m_d->active = true;
    m_d->start();
}

bool HttpResponseTracker::active() const
{
    return m_d->active;
}

HttpResponseTracker::Progress HttpResponseTracker::feed(QByteArrayView bytes)
{
    Progress progress;
    if (!m_d->active) {
        if (!bytes.isEmpty()) {
            progress.error = true;
            progress.errorText = QStringLiteral("the upstream sent bytes no request asked for");
        }
        return progress;
    }
    auto &parser = *m_d->parser;
    while (progress.consumed < bytes.size()) {
        const bool headerDoneBefore = parser.is_header_done();
        if (headerDoneBefore) {
            auto &body = parser.get().body();
            body.data = m_d->scratch;
            body.size = kScratch;
            body.more = true;
        }
        boost::system::error_code ec;
        const std::size_t used =
            parser.put(boost::asio::buffer(bytes.data() + progress.consumed,
                                           std::size_t(bytes.size() - progress.consumed)),
                       ec);
        if (ec == http::error::need_buffer)
            ec = {};
        progress.consumed += qsizetype(used);
        if (ec == http::error::need_more)
            break;
        if (ec) {
            progress.error = true;
            progress.errorText = QString::fromStdString(ec.message());
            m_d->active = false;
            return progress;
        }
        if (!headerDoneBefore && parser.is_header_done()) {
            const int status = int(parser.get().result_int());
            progress.status = status;
            if (status / 100 == 1 && status != 101) {
                // An interim response ends at its head; the final one follows (RFC 9110 §15.2).
                progress.interim = true;
                m_d->start();
                continue;
            }
        }
        if (parser.is_done()) {
            progress.finished = true;
            progress.keepAlive = parser.keep_alive() && parser.get().result_int() != 101;
            m_d->active = false;
            return progress;
        }
        if (used == 0)
            break;
    }
    return progress;
}

bool HttpResponseTracker::finishOnEof()
{
    if (!m_d->active || !m_d->parser->is_header_done())
        return false;
    boost::system::error_code ec;
    m_d->parser->put_eof(ec);
    const bool clean = !ec && m_d->parser->is_done();
    m_d->active = false;
    return clean;
}

} // namespace airlock::gateway

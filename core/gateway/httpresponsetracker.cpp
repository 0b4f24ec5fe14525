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
    QByteArray pending; // an incomplete head (or chunk header) not parsed yet
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
    m_d->pending.clear();
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
    // Beast parses a head only when all of it is in one buffer; a head split across reads is
    // kept here until it is complete (bounded by the header limit).
    QByteArray joined;
    QByteArrayView data = bytes;
    const qsizetype before = m_d->pending.size();
    if (before > 0) {
        joined = m_d->pending + bytes.toByteArray();
        data = joined;
    }
    qsizetype parsed = 0;
    while (parsed < data.size()) {
        const bool headerDoneBefore = m_d->parser->is_header_done();
        if (headerDoneBefore) {
            auto &body = m_d->parser->get().body();
            body.data = m_d->scratch;
            body.size = kScratch;
            body.more = true;
        }
        boost::system::error_code ec;
        const std::size_t used = m_d->parser->put(
            boost::asio::buffer(data.data() + parsed, std::size_t(data.size() - parsed)), ec);
        if (ec == http::error::need_buffer)
            ec = {};
        parsed += qsizetype(used);
        const bool needMore = ec == http::error::need_more;
        if (needMore)
            ec = {};
        if (ec) {
            progress.error = true;
            progress.errorText = QString::fromStdString(ec.message());
            progress.consumed = qMax<qsizetype>(0, parsed - before);
            m_d->pending.clear();
            m_d->active = false;
            return progress;
        }
        if (!headerDoneBefore && m_d->parser->is_header_done()) {
            const int status = int(m_d->parser->get().result_int());
            progress.status = status;
            progress.interim = status / 100 == 1 && status != 101;
            if (progress.interim) {
                // An interim response ends at its head; the final one follows (RFC 9110 §15.2).
                m_d->start();
                continue;
            }
        }
        if (needMore)
            break;
        if (m_d->parser->is_done()) {
            progress.finished = true;
            progress.keepAlive =
                m_d->parser->keep_alive() && m_d->parser->get().result_int() != 101;
            progress.consumed = parsed - before;
            m_d->pending.clear();
            m_d->active = false;
            return progress;
        }
        if (used == 0)
            break;
    }
    m_d->pending = data.sliced(parsed).toByteArray();
    progress.consumed = bytes.size();
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

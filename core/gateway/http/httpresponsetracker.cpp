#include "core/gateway/http/httpresponsetracker.h"

#include "core/gateway/credentials/contentdecoder.h"
#include "core/gateway/credentials/wipe.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

#include <QScopeGuard>

#include <limits>
#include <optional>

namespace airlock::gateway {

namespace http = boost::beast::http;

namespace {
constexpr std::uint32_t kMaxResponseHead = 256 * 1024;
constexpr std::size_t kScratch = 64 * 1024;

bool iequals(boost::beast::string_view a, const char *b)
{
    return boost::beast::iequals(a, boost::beast::string_view(b));
}

QByteArray bytesOf(boost::beast::string_view text)
{
    return QByteArray(text.data(), qsizetype(text.size()));
}

} // namespace

struct HttpResponseTracker::Private
{
    enum class Framing {
        Unchanged, ///< no body, or a close-delimited one: fields kept
        Chunked, ///< re-framed as chunked
        Close, ///< re-framed as close-delimited (HTTP/1.0 request)
    };

    std::optional<http::response_parser<http::buffer_body>> parser;
    bool head = false;
    bool active = false;
    QByteArray pending; // an incomplete head (or chunk header) not parsed yet
    char scratch[kScratch];

    ~Private() { wipe(pending); }
    // Rewriting (expect() with rules).
    QList<StreamReplacer::Rule> rules;
    bool http10 = false;
    std::optional<StreamReplacer> body;
    Framing framing = Framing::Unchanged;
    qsizetype replacements = 0;
    /// Undoes gzip/deflate before the replacer sees the body; unset: identity.
    std::optional<ContentDecoder> decoder;
    QString refusal; ///< finalHead(): why this response cannot be scrubbed (then refused)
    QString bodyError; ///< bodyData(): the decoder failed

    bool rewriting() const { return !rules.isEmpty(); }

    QByteArray scrub(QByteArrayView bytes)
    {
        StreamReplacer replacer(rules);
        QByteArray out = replacer.feed(bytes);
        out += replacer.finish();
        replacements += replacer.matches();
        return out;
    }

    // The final head, re-serialized from the parsed fields and scrubbed; decides the framing.
    QByteArray finalHead()
    {
        const auto &response = parser->get();
        const bool hasBody = !parser->is_done();
        const bool sized = parser->chunked() || parser->content_length().has_value();
        framing = !hasBody || !sized ? Framing::Unchanged
            : http10                 ? Framing::Close
                                     : Framing::Chunked;
        // A body the replacer cannot see whole is refused or decoded
        // (docs/reviews/2026-12-01-credentials-redteam.md#f1 and #f3): a slice of a secret matches
        // no form, neither does a gzip stream.
        decoder.reset();
        bool decoding = false;
        if (hasBody) {
            if (response.result_int() == 206) {
                refusal = QStringLiteral("the upstream sent a partial response (206), which "
                                         "could carry a slice of a secret no form matches");
                return {};
            }
            QList<QByteArray> codings;
            for (const auto &field : response) {
                if (iequals(field.name_string(), "transfer-encoding"))
                    codings += ContentDecoder::parseCodings(
                        QByteArrayView(field.value().data(), qsizetype(field.value().size())));
            }
            // Beast de-chunks when chunked is the last transfer-coding (RFC 9112 §6.3).
            if (parser->chunked() && !codings.isEmpty() && codings.last() == "chunked")
                codings.removeLast();
            if (codings.contains("chunked")) {
                refusal = QStringLiteral("the response's Transfer-Encoding applies chunked "
                                         "before another coding");
                return {};
            }
            for (const auto &field : response) {
                if (iequals(field.name_string(), "content-encoding"))
                    codings += ContentDecoder::parseCodings(
                        QByteArrayView(field.value().data(), qsizetype(field.value().size())));
            }
            QString why;
            decoder = ContentDecoder::forCodings(codings, &why);
            if (!decoder) {
                refusal = why;
                return {};
            }
            decoding = !decoder->isIdentity();
            if (!decoding)
                decoder.reset();
        }
        const bool closeAfter =
            framing == Framing::Close || (framing == Framing::Chunked && !parser->keep_alive());
        QByteArray out = framing == Framing::Chunked || response.version() == 11
            ? QByteArrayLiteral("HTTP/1.1 ")
            : QByteArrayLiteral("HTTP/1.0 ");
        out +=
            QByteArray::number(response.result_int()) + ' ' + bytesOf(response.reason()) + "\r\n";
        for (const auto &field : response) {
            const auto name = field.name_string();
            if ((framing != Framing::Unchanged || decoding)
                && (iequals(name, "content-length") || iequals(name, "transfer-encoding")))
                continue;
            if (decoding && iequals(name, "content-encoding"))
                continue;
            if (closeAfter && (iequals(name, "connection") || iequals(name, "keep-alive")))
                continue;
            out += bytesOf(name) + ": " + bytesOf(field.value()) + "\r\n";
        }
        if (framing == Framing::Chunked)
            out += "Transfer-Encoding: chunked\r\n";
        if (closeAfter)
            out += "Connection: close\r\n";
        out += "\r\n";
        body.emplace(rules);
        return scrub(out);
    }

    QByteArray interimHead()
    {
        const auto &response = parser->get();
        QByteArray out = "HTTP/1.1 " + QByteArray::number(response.result_int()) + ' '
            + bytesOf(response.reason()) + "\r\n";
        for (const auto &field : response)
            out += bytesOf(field.name_string()) + ": " + bytesOf(field.value()) + "\r\n";
        return scrub(out + "\r\n");
    }

    QByteArray frame(const QByteArray &data) const
    {
        if (framing != Framing::Chunked || data.isEmpty())
            return data;
        return QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n";
    }

    /// The scrubbed, framed bytes of a piece of body data; false (bodyError set) when it does
    /// not decode.
    bool bodyData(QByteArrayView data, QByteArray *output)
    {
        if (decoder) {
            QByteArray decoded;
            const bool fed = decoder->feed(data, &decoded, &bodyError);
            if (fed)
                *output += frame(body->feed(decoded));
            wipe(decoded);
            return fed;
        }
        *output += frame(body->feed(data));
        return true;
    }

    QByteArray bodyEnd()
    {
        if (!body)
            return {};
        QByteArray out = frame(body->finish());
        replacements += body->matches();
        body.reset();
        if (framing == Framing::Chunked)
            out += "0\r\n\r\n";
        return out;
    }

    /// Forgets the current response (an error or a refusal ends the connection).
    void reset()
    {
        wipe(pending);
        active = false;
        body.reset();
        decoder.reset();
        rules.clear();
    }

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
    expect(head, Rewrite());
}

void HttpResponseTracker::expect(bool head, Rewrite rewrite)
{
    m_d->head = head;
    m_d->active = true;
    wipe(m_d->pending);
    m_d->rules = std::move(rewrite.rules);
    m_d->http10 = rewrite.http10;
    m_d->body.reset();
    m_d->decoder.reset();
    m_d->refusal.clear();
    m_d->framing = Private::Framing::Unchanged;
    m_d->start();
}

bool HttpResponseTracker::rewriting() const
{
    return m_d->active && m_d->rewriting();
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
    const bool rewriting = m_d->rewriting();
    const qsizetype replacementsBefore = m_d->replacements;
    // Beast parses a head only when all of it is in one buffer; a head split across reads is
    // kept here until it is complete (bounded by the header limit).
    QByteArray joined;
    // A head may reflect a credential: the joined copy goes on every way out.
    const auto wipeJoined = qScopeGuard([&joined] { wipe(joined); });
    QByteArrayView data = bytes;
    const qsizetype before = m_d->pending.size();
    if (before > 0) {
        joined = std::exchange(m_d->pending, {});
        appendWiping(joined, bytes);
        data = joined;
    }
    auto finishProgress = [&] {
        progress.replacements = m_d->replacements - replacementsBefore;
        return progress;
    };
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
        if (headerDoneBefore && rewriting) {
            const auto produced = qsizetype(kScratch - m_d->parser->get().body().size);
            const bool scrubbed = produced <= 0
                || m_d->bodyData(QByteArrayView(m_d->scratch, produced), &progress.output);
            // The plaintext may hold a credential the upstream reflected: gone once scrubbed.
            wipe(m_d->scratch, std::size_t(qMax<qsizetype>(0, produced)));
            if (!scrubbed) {
                // What was held back is dropped: it may be the start of a secret's form.
                progress.error = true;
                progress.errorText = m_d->bodyError;
                progress.consumed = qMax<qsizetype>(0, parsed - before);
                m_d->reset();
                return finishProgress();
            }
        }
        const bool needMore = ec == http::error::need_more;
        if (needMore)
            ec = {};
        if (ec) {
            progress.error = true;
            progress.errorText = QString::fromStdString(ec.message());
            progress.consumed = qMax<qsizetype>(0, parsed - before);
            m_d->reset();
            return finishProgress();
        }
        if (!headerDoneBefore && m_d->parser->is_header_done()) {
            const int status = int(m_d->parser->get().result_int());
            progress.status = status;
            progress.interim = status / 100 == 1 && status != 101;
            if (progress.interim) {
                if (rewriting)
                    progress.output += m_d->interimHead();
                // An interim response ends at its head; the final one follows (RFC 9110 §15.2).
                m_d->start();
                continue;
            }
            if (rewriting) {
                QByteArray head = m_d->finalHead();
                if (!m_d->refusal.isEmpty()) {
                    progress.refused = true;
                    progress.errorText = std::exchange(m_d->refusal, QString());
                    progress.consumed = qMax<qsizetype>(0, parsed - before);
                    m_d->reset();
                    return finishProgress();
                }
                progress.output += head;
            }
        }
        if (needMore)
            break;
        if (m_d->parser->is_done()) {
            progress.finished = true;
            progress.keepAlive = m_d->parser->keep_alive() && m_d->parser->get().result_int() != 101
                && m_d->framing != Private::Framing::Close;
            progress.consumed = parsed - before;
            if (rewriting)
                progress.output += m_d->bodyEnd();
            // The rules are views of the request's credentials, which may go with the request.
            m_d->reset();
            return finishProgress();
        }
        if (used == 0)
            break;
    }
    m_d->pending = data.sliced(parsed).toByteArray();
    progress.consumed = bytes.size();
    return finishProgress();
}

bool HttpResponseTracker::finishOnEof(QByteArray *output)
{
    if (!m_d->active || !m_d->parser->is_header_done())
        return false;
    boost::system::error_code ec;
    m_d->parser->put_eof(ec);
    const bool clean = !ec && m_d->parser->is_done();
    m_d->active = false;
    // The held-back tail of a scrubbed close-delimited body; a truncated one is dropped (it
    // could be the start of a secret's form).
    if (clean && m_d->rewriting() && output)
        *output = m_d->bodyEnd();
    m_d->reset();
    return clean;
}

} // namespace airlock::gateway

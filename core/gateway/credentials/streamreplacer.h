#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

namespace airlock::gateway {

/// Finds byte patterns in a stream that arrives in arbitrary pieces and replaces each match,
/// also across piece boundaries: feed() holds back the last (longest pattern - 1) bytes, which
/// could be the start of a match, until more bytes or finish() decide. Used to scrub
/// credentials from responses (docs/redteam-cases.md I3) and to detect placeholders in request
/// bodies (I2). Patterns are tried longest first at each position; matches do not overlap.
class StreamReplacer final
{
public:
    struct Rule
    {
        QByteArray pattern; ///< non-empty
        QByteArray replacement; ///< may differ in length (the caller fixes framing)
    };

    explicit StreamReplacer(QList<Rule> rules = {});
    /// Wipes the held-back bytes.
    ~StreamReplacer();
    StreamReplacer(const StreamReplacer &) = default;
    StreamReplacer(StreamReplacer &&) noexcept = default;
    StreamReplacer &operator=(const StreamReplacer &) = default;
    StreamReplacer &operator=(StreamReplacer &&) noexcept = default;

    /// Returns the bytes that are final: input before any possible partial match, with
    /// replacements applied.
    QByteArray feed(QByteArrayView bytes);
    /// The held-back tail, with replacements applied; the stream ends here.
    QByteArray finish();
    /// Matches replaced so far.
    qsizetype matches() const { return m_matches; }
    /// The pattern of the last match (empty before the first): which form was found.
    QByteArray lastMatch() const { return m_lastMatch; }
    /// Bytes held back right now (never more than the longest pattern - 1).
    qsizetype pending() const { return m_pending.size(); }
    bool isEmpty() const { return m_rules.isEmpty(); }

    /// Same-length masking rules for `patterns`: each match becomes as many 'X' as it is long,
    /// so a Content-Length or chunk size stays right.
    static QList<Rule> maskRules(const QList<QByteArray> &patterns);

private:
    QByteArray process(bool final);

    QList<Rule> m_rules; ///< longest pattern first
    bool m_first[256] = {}; ///< bytes that start some pattern: other positions are skipped fast
    /// The rules (indices into m_rules, longest first) whose pattern starts with each byte: a
    /// position is compared only with those, second byte first
    /// (docs/reviews/2026-12-01-credentials-redteam.md#f9: a body made of bytes that start patterns
    /// cost every rule at every byte).
    QList<int> m_byStart[256];
    qsizetype m_hold = 0;
    QByteArray m_pending;
    qsizetype m_matches = 0;
    QByteArray m_lastMatch;
};

} // namespace airlock::gateway

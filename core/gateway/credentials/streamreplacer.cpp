#include "core/gateway/credentials/streamreplacer.h"

#include "core/gateway/credentials/wipe.h"

#include <algorithm>

namespace airlock::gateway {

StreamReplacer::StreamReplacer(QList<Rule> rules) : m_rules(std::move(rules))
{
    m_rules.erase(std::remove_if(m_rules.begin(), m_rules.end(),
                                 [](const Rule &rule) { return rule.pattern.isEmpty(); }),
                  m_rules.end());
    std::stable_sort(m_rules.begin(), m_rules.end(), [](const Rule &a, const Rule &b) {
        return a.pattern.size() > b.pattern.size();
    });
    if (!m_rules.isEmpty())
        m_hold = m_rules.first().pattern.size() - 1;
    for (qsizetype i = 0; i < m_rules.size(); ++i) {
        const auto first = static_cast<unsigned char>(m_rules.at(i).pattern.at(0));
        m_first[first] = true;
        m_byStart[first].append(int(i));
    }
}

QList<StreamReplacer::Rule> StreamReplacer::maskRules(const QList<QByteArray> &patterns)
{
    QList<Rule> rules;
    for (const QByteArray &pattern : patterns)
        rules.append({pattern, QByteArray(pattern.size(), 'X')});
    return rules;
}

StreamReplacer::~StreamReplacer()
{
    wipe(m_pending);
}

QByteArray StreamReplacer::feed(QByteArrayView bytes)
{
    // What is held back may be part of a secret (a reflected credential not yet scrubbed).
    appendWiping(m_pending, bytes);
    return process(false);
}

QByteArray StreamReplacer::finish()
{
    return process(true);
}

QByteArray StreamReplacer::process(bool final)
{
    if (m_rules.isEmpty()) {
        QByteArray out;
        out.swap(m_pending);
        return out;
    }
    QByteArray out;
    out.reserve(m_pending.size());
    qsizetype i = 0;
    const qsizetype size = m_pending.size();
    // Positions from which a whole longest pattern could still fit are decided now; the rest
    // waits unless the stream ends.
    const qsizetype decidable = final ? size : size - m_hold;
    while (i < decidable) {
        if (!m_first[static_cast<unsigned char>(m_pending.at(i))]) {
            // Most bytes start no pattern: copy the run up to the next candidate at once.
            qsizetype run = i + 1;
            while (run < decidable && !m_first[static_cast<unsigned char>(m_pending.at(run))])
                ++run;
            out.append(QByteArrayView(m_pending).sliced(i, run - i));
            i = run;
            continue;
        }
        bool replaced = false;
        for (const int index : m_byStart[static_cast<unsigned char>(m_pending.at(i))]) {
            const Rule &rule = m_rules.at(index);
            const qsizetype length = rule.pattern.size();
            if (i + length > size)
                continue;
            // The second byte first: most candidates end there without a call.
            if (length > 1 && m_pending.at(i + 1) != rule.pattern.at(1))
                continue;
            if (QByteArrayView(m_pending).sliced(i, length) == QByteArrayView(rule.pattern)) {
                out.append(rule.replacement);
                i += length;
                ++m_matches;
                m_lastMatch = rule.pattern;
                replaced = true;
                break;
            }
        }
        if (!replaced)
            out.append(m_pending.at(i++));
    }
    dropFrontWiping(m_pending, i);
    return out;
}

} // namespace airlock::gateway

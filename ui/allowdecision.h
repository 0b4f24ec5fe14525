#pragma once

#include "core/model/egresspolicy.h"
#include "ui/denieddestination.h"

#include <QObject>
#include <QTimer>

namespace airlock {

/// The answer to one "Allow?" prompt, without widgets. It fails closed: until the person
/// allows, the destination stays denied, and every way a prompt can end without that answer
/// (Keep Denied, closing it, its timeout) is KeepDenied. The first answer is final. Unlike
/// OpenSnitch (#1017, #878), there is no default action that allows.
class AllowDecision final : public QObject
{
    Q_OBJECT
public:
    enum class Answer {
        Pending, ///< the person has not answered; the destination is denied
        KeepDenied, ///< Keep Denied, closed, or timed out
        AllowName, ///< a rule for the name on the ports seen (DeniedDestination::nameRule)
        AllowSeen, ///< a rule for exactly what was seen (DeniedDestination::seenRule)
    };
    Q_ENUM(Answer)

    explicit AllowDecision(DeniedDestination destination, QObject *parent = nullptr);

    const DeniedDestination &destination() const { return m_destination; }
    Answer answer() const { return m_answer; }
    bool isPending() const { return m_answer == Answer::Pending; }
    /// The rule AllowName or AllowSeen adds; its comment records when it was allowed, by whom
    /// and why. `at` is the time of the answer (UTC).
    EgressRule ruleFor(Answer answer, const QDateTime &at) const;
    /// Ends the prompt as KeepDenied after `milliseconds` without an answer (0: never).
    void setTimeout(int milliseconds);

public Q_SLOTS:
    /// The rule of `answer` (AllowName or AllowSeen) was applied; any other value is ignored.
    void allowed(airlock::AllowDecision::Answer answer);
    void keepDenied();
    /// The prompt was closed without an answer: the destination stays denied.
    void closed();

Q_SIGNALS:
    /// Emitted once, with the final answer.
    void answered(airlock::AllowDecision::Answer answer);

private:
    void finish(Answer answer);

    DeniedDestination m_destination;
    Answer m_answer = Answer::Pending;
    QTimer m_timeout;
};

} // namespace airlock

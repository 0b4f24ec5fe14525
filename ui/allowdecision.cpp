#include "ui/allowdecision.h"

#include "core/model/egressreason.h"

#include <QLocale>

namespace airlock {

AllowDecision::AllowDecision(DeniedDestination destination, QObject *parent)
    : QObject(parent), m_destination(std::move(destination))
{
    m_timeout.setSingleShot(true);
    // A prompt nobody answered denies: the request was denied and stays so.
    connect(&m_timeout, &QTimer::timeout, this, &AllowDecision::keepDenied);
}

EgressRule AllowDecision::ruleFor(Answer answer, const QDateTime &at) const
{
    const QString user = qEnvironmentVariable("USER");
    const QString when = at.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
    // Counted first: lupdate reads tr() calls, and a template argument inside one confuses it.
    const int count = int(std::min<qint64>(m_destination.count, INT_MAX));
    const QString comment = user.isEmpty()
        ? tr("allowed at the Allow? prompt on %1 after %n denied request(s)", "", count).arg(when)
        : tr("allowed by %2 at the Allow? prompt on %1 after %n denied request(s)", "", count)
              .arg(when, user);
    return answer == Answer::AllowSeen ? m_destination.seenRule(comment)
                                       : m_destination.nameRule(comment);
}

void AllowDecision::setTimeout(int milliseconds)
{
    if (!isPending())
        return;
    if (milliseconds <= 0)
        m_timeout.stop();
    else
        m_timeout.start(milliseconds);
}

void AllowDecision::allowed(Answer answer)
{
    if (answer == Answer::AllowName || answer == Answer::AllowSeen)
        finish(answer);
}

void AllowDecision::keepDenied()
{
    finish(Answer::KeepDenied);
}

void AllowDecision::closed()
{
    finish(Answer::KeepDenied);
}

void AllowDecision::finish(Answer answer)
{
    if (!isPending())
        return;
    m_timeout.stop();
    m_answer = answer;
    Q_EMIT answered(answer);
}

} // namespace airlock

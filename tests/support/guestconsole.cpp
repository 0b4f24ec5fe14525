#include "guestconsole.h"

#include <QDeadlineTimer>
#include <QJsonObject>

namespace airlock::test {

GuestConsole::GuestConsole(const QString &socketPath, const QString &sandbox)
    : m_client(socketPath), m_sandbox(sandbox)
{
    const QJsonObject result = RpcTestClient::result(m_client.call(
        QStringLiteral("console.attach"), QJsonObject {{QStringLiteral("name"), sandbox}}));
    m_text = QByteArray::fromBase64(result.value(QStringLiteral("data")).toString().toLatin1());
}

qsizetype GuestConsole::waitFor(const QByteArray &needle, qsizetype from, int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        const qsizetype at = m_text.indexOf(needle, from);
        if (at >= 0)
            return at + needle.size();
        if (deadline.hasExpired()) {
            qWarning("console of %s so far:\n%s", qPrintable(m_sandbox),
                     m_text.right(1500).constData());
            return -1;
        }
        auto notification = m_client.waitForNotification(
            QStringLiteral("console.output"),
            [this](const QJsonObject &p) {
                return p.value(QStringLiteral("sandbox")).toString() == m_sandbox;
            },
            int(qMax<qint64>(1, deadline.remainingTime())));
        if (notification)
            m_text += QByteArray::fromBase64(notification->value(QStringLiteral("params"))
                                                 .toObject()
                                                 .value(QStringLiteral("data"))
                                                 .toString()
                                                 .toLatin1());
    }
}

QByteArray GuestConsole::run(const QByteArray &command, int timeoutMs)
{
    const QByteArray id = QByteArray::number(++m_commands * 1000);
    const QByteArray begin = "BEGIN" + QByteArray::number(m_commands * 1000 + 1) + "\r\n";
    const QByteArray end = "END" + QByteArray::number(m_commands * 1000 + 2) + "\r\n";
    const qsizetype from = m_text.size();
    const QByteArray line =
        "\necho BEGIN$((" + id + "+1)); " + command + "; echo END$((" + id + "+2))\n";
    m_client.call(QStringLiteral("console.write"),
                  {{QStringLiteral("name"), m_sandbox},
                   {QStringLiteral("data"), QString::fromLatin1(line.toBase64())}});
    const qsizetype stop = waitFor(end, from, timeoutMs);
    const qsizetype start = m_text.indexOf(begin, from);
    if (stop < 0 || start < 0)
        return {};
    return m_text.mid(start + begin.size(), stop - end.size() - start - begin.size());
}

} // namespace airlock::test

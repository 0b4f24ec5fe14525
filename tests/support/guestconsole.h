#pragma once

#include "rpctestclient.h"

#include <QByteArray>
#include <QString>

namespace airlock::test {

/// The serial console of one sandbox through a real airlockd: attaches on construction (the
/// scrollback becomes text()), types commands and waits for their output.
///
///     GuestConsole console(helper.socketPath(), "demo");
///     QVERIFY(console.waitFor("airlock-guest ready", 0, 90000) >= 0);
///     QCOMPARE(console.run("hostname").trimmed(), QByteArray("demo"));
class GuestConsole
{
public:
    GuestConsole(const QString &socketPath, const QString &sandbox);

    /// Waits until `needle` appears after offset `from`; the offset after it, or -1 (the
    /// console so far then goes to qWarning).
    qsizetype waitFor(const QByteArray &needle, qsizetype from, int timeoutMs);
    /// Runs a shell command and returns what it printed between two markers, or a null
    /// QByteArray on timeout. The markers are computed by the shell, so the echo of the typed
    /// line never matches them.
    QByteArray run(const QByteArray &command, int timeoutMs = 60000);
    /// Everything received so far (scrollback first).
    const QByteArray &text() const { return m_text; }

private:
    RpcTestClient m_client;
    QString m_sandbox;
    QByteArray m_text;
    int m_commands = 0;
};

} // namespace airlock::test

#pragma once

#include <QIcon>
#include <QObject>
#include <QPointer>

class QMenu;
class QSystemTrayIcon;

namespace airlock {

class DenialNotifier;

/// The window's system tray icon, where the desktop has a tray: desktop notifications (probing,
/// credential alerts, new denied destinations), and a menu with one "Allow NAME for SANDBOX?…"
/// entry per denied destination that waits for an answer. Clicking a denial's notification
/// opens its prompt. Without a tray (offscreen, bare X servers) nothing is created and
/// isAvailable() is false: the window shows a DenialBar instead.
class DenialTray final : public QObject
{
    Q_OBJECT
public:
    /// At most this many destinations get a menu entry.
    static constexpr int kMenuEntries = 10;

    DenialTray(DenialNotifier *notifier, const QIcon &icon, QObject *parent = nullptr);
    ~DenialTray() override;

    bool isAvailable() const { return m_tray != nullptr; }
    /// Shows a desktop notification; when `sandbox` and `name` are given, clicking it asks
    /// for that prompt. Returns false (nothing shown) without a tray.
    bool showMessage(const QString &title, const QString &text, const QString &sandbox = {},
                     const QString &name = {});

Q_SIGNALS:
    void promptRequested(const QString &sandbox, const QString &name);
    /// The icon was clicked or "Show Airlock" chosen.
    void showWindowRequested();

private:
    void updateMenu();

    QPointer<DenialNotifier> m_notifier;
    QSystemTrayIcon *m_tray = nullptr;
    QMenu *m_menu = nullptr;
    QString m_messageSandbox;
    QString m_messageName;
};

} // namespace airlock

#include "ui/denialtray.h"

#include "ui/denialnotifier.h"

#include <QMenu>
#include <QSystemTrayIcon>

namespace airlock {

DenialTray::DenialTray(DenialNotifier *notifier, const QIcon &icon, QObject *parent)
    : QObject(parent), m_notifier(notifier)
{
    if (!QSystemTrayIcon::isSystemTrayAvailable())
        return;
    m_menu = new QMenu;
    m_tray = new QSystemTrayIcon(icon, this);
    m_tray->setContextMenu(m_menu);
    connect(m_tray, &QSystemTrayIcon::activated, this,
            [this](QSystemTrayIcon::ActivationReason reason) {
                if (reason == QSystemTrayIcon::Trigger || reason == QSystemTrayIcon::DoubleClick)
                    Q_EMIT showWindowRequested();
            });
    connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] {
        if (!m_messageName.isEmpty() && m_notifier
            && m_notifier->isOpen(m_messageSandbox, m_messageName))
            Q_EMIT promptRequested(m_messageSandbox, m_messageName);
        else
            Q_EMIT showWindowRequested();
    });
    if (notifier)
        connect(notifier, &DenialNotifier::openChanged, this, &DenialTray::updateMenu);
    updateMenu();
    m_tray->show();
}

DenialTray::~DenialTray()
{
    delete m_menu; // a context menu has no parent widget
}

bool DenialTray::showMessage(const QString &title, const QString &text, const QString &sandbox,
                             const QString &name)
{
    if (!m_tray || !QSystemTrayIcon::supportsMessages())
        return false;
    m_messageSandbox = sandbox;
    m_messageName = name;
    m_tray->showMessage(title, text, QSystemTrayIcon::Warning, 10000);
    return true;
}

void DenialTray::updateMenu()
{
    if (!m_menu)
        return;
    m_menu->clear();
    const QList<DeniedDestination> open =
        m_notifier ? m_notifier->open() : QList<DeniedDestination> {};
    for (const DeniedDestination &destination :
         open.first(std::min<qsizetype>(open.size(), kMenuEntries))) {
        const QString sandbox = destination.sandbox;
        const QString name = destination.name;
        m_menu->addAction(tr("Allow %1 for %2?…").arg(name, sandbox), this,
                          [this, sandbox, name] { Q_EMIT promptRequested(sandbox, name); });
    }
    if (open.size() > kMenuEntries)
        m_menu->addAction(tr("%n more in the window", "", int(open.size() - kMenuEntries)), this,
                          &DenialTray::showWindowRequested);
    if (!open.isEmpty())
        m_menu->addSeparator();
    m_menu->addAction(tr("Show Airlock"), this, &DenialTray::showWindowRequested);
    m_tray->setToolTip(open.isEmpty() ? tr("Airlock")
                                      : tr("Airlock: %n denied destination(s) wait for an answer",
                                           "", int(open.size())));
}

} // namespace airlock

#pragma once

#include <QTreeWidget>

namespace airlock {

class HostConnection;

/// The sidebar tree: one top-level item per host (its title and state, e.g. "alice@build —
/// Host key changed", with the last error as tooltip) and its sandboxes below. Selecting a
/// host or a sandbox makes that host current.
class HostSidebar final : public QTreeWidget
{
    Q_OBJECT
public:
    explicit HostSidebar(QWidget *parent = nullptr);

    void addHost(HostConnection *host);
    void removeHost(HostConnection *host);
    /// The top-level item of `host`, or nullptr.
    QTreeWidgetItem *itemFor(HostConnection *host) const;
    /// The host of the current item (a host or one of its sandboxes), or nullptr.
    HostConnection *currentHost() const;

Q_SIGNALS:
    void hostActivated(airlock::HostConnection *host);
    void sandboxActivated(airlock::HostConnection *host, const QString &sandbox);

private:
    void refresh(HostConnection *host);
    HostConnection *hostOf(QTreeWidgetItem *item) const;

    QList<HostConnection *> m_hosts;
};

} // namespace airlock

#pragma once

#include <QFrame>
#include <QPointer>

class QLabel;
class QPushButton;

namespace airlock {

class DenialNotifier;

/// The in-window equivalent of the tray icon, for desktops without a system tray: a bar above
/// the sections naming the denied destinations that wait for an answer ("Denied, waiting for
/// your answer: pkg.test (agent)"), with **Allow?…** (the prompt of the oldest one) and
/// **Keep All Denied**. Hidden while nothing waits, or while the window says it has a tray.
class DenialBar final : public QFrame
{
    Q_OBJECT
public:
    /// At most this many names are spelled out; the rest are counted.
    static constexpr int kNamesShown = 3;

    explicit DenialBar(DenialNotifier *notifier, QWidget *parent = nullptr);

    /// With a system tray the tray icon does this bar's job, and the bar stays hidden.
    void setTrayAvailable(bool available);
    /// The bar's text as shown (empty while nothing waits).
    QString text() const;
    QPushButton *promptButton() const { return m_prompt; }
    QPushButton *keepAllButton() const { return m_keepAll; }

Q_SIGNALS:
    /// Open the "Allow?" prompt of `sandbox`'s denied `name`.
    void promptRequested(const QString &sandbox, const QString &name);

private:
    void update();

    QPointer<DenialNotifier> m_notifier;
    QLabel *m_icon;
    QLabel *m_text;
    QPushButton *m_prompt;
    QPushButton *m_keepAll;
    bool m_trayAvailable = false;
};

} // namespace airlock

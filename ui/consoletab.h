#pragma once

#include "core/model/error.h"

#include <QWidget>

class QLabel;

namespace airlock {

class ConsoleController;
class HelperClient;
class TerminalView;

/// One console tab: a TerminalView on a ConsoleController, plus a one-line notice when the
/// console is not live (not attached, keys not delivered) or the sandbox is not running:
/// rewritten on every state the helper reports, so it never outlives the state it describes.
class ConsoleTab final : public QWidget
{
    Q_OBJECT
public:
    ConsoleTab(HelperClient *client, const QString &sandbox, QWidget *parent = nullptr);

    QString sandbox() const;
    TerminalView *view() const { return m_view; }
    ConsoleController *controller() const { return m_controller; }
    /// Shows (or with an empty text hides) the notice above the terminal.
    void setNotice(const QString &text);
    QString notice() const;

    /// The notice for a sandbox state: empty while it runs, else what typing does then.
    QString stateNotice(const QString &state) const;

private:
    void showError(const Error &error);

    ConsoleController *m_controller;
    TerminalView *m_view;
    QLabel *m_notice;
};

} // namespace airlock

#pragma once

#include "core/model/error.h"

#include <QWidget>

class QLabel;

namespace airlock {

class ConsoleController;
class HelperClient;
class TerminalView;

/// One console tab: a TerminalView on a ConsoleController, plus a one-line notice when the
/// console is not live (not attached, sandbox not running, keys not delivered).
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

private:
    void showError(const Error &error);

    ConsoleController *m_controller;
    TerminalView *m_view;
    QLabel *m_notice;
};

} // namespace airlock

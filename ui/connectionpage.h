#pragma once

#include "core/model/error.h"

#include <QFrame>

class QLabel;
class QPushButton;

namespace airlock {

/// Explains a helper connection problem: a headline, the fix, the helper's or socket's own
/// message, and a Retry button. Used full-size as the window's placeholder page before the
/// first connection, and compact as a banner above the table after a connection dropped.
class ConnectionPage final : public QFrame
{
    Q_OBJECT
public:
    enum class Style { Page, Banner };

    explicit ConnectionPage(Style style, QWidget *parent = nullptr);

    /// Shows "connecting to <where>" without a Retry button.
    void showConnecting(const QString &where);
    /// Shows the problem described by `error` with its fix.
    void showError(const Error &error);
    /// Title, fix and detail as plain text (for tests and screen readers).
    QString text() const;

Q_SIGNALS:
    void retryRequested();

private:
    QLabel *m_icon = nullptr;
    QLabel *m_title;
    QLabel *m_fix;
    QLabel *m_detail;
    QPushButton *m_retry;
};

} // namespace airlock

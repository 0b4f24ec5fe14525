#include "ui/connectionpage.h"

#include "ui/errortext.h"

#include <QBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QPushButton>
#include <QTextDocument>

namespace airlock {

ConnectionPage::ConnectionPage(Style style, QWidget *parent)
    : QFrame(parent)
    , m_title(new QLabel(this))
    , m_fix(new QLabel(this))
    , m_detail(new QLabel(this))
    , m_retry(new QPushButton(tr("&Retry"), this))
{
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    m_fix->setTextFormat(Qt::RichText);
    m_fix->setWordWrap(true);
    m_fix->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_detail->setTextFormat(Qt::PlainText);
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_retry->setAccessibleName(tr("Retry connecting to the helper"));
    setAccessibleName(tr("Helper connection problem"));
    connect(m_retry, &QPushButton::clicked, this, &ConnectionPage::retryRequested);

    QFont titleFont = m_title->font();
    titleFont.setBold(true);
    if (style == Style::Page) {
        titleFont.setPointSizeF(titleFont.pointSizeF() * 1.5);
        m_title->setAlignment(Qt::AlignHCenter);
        m_fix->setAlignment(Qt::AlignHCenter);
        m_detail->setAlignment(Qt::AlignHCenter);
        m_detail->setForegroundRole(QPalette::PlaceholderText);
        m_icon = new QLabel(this);
        m_icon->setPixmap(QIcon(QStringLiteral(":/icons/airlock.svg")).pixmap(96, 96));
        m_icon->setAlignment(Qt::AlignHCenter);

        auto *column = new QVBoxLayout;
        column->addStretch(2);
        column->addWidget(m_icon);
        column->addSpacing(12);
        column->addWidget(m_title);
        column->addWidget(m_fix);
        column->addWidget(m_detail);
        column->addSpacing(12);
        column->addWidget(m_retry, 0, Qt::AlignHCenter);
        column->addStretch(3);
        auto *row = new QHBoxLayout(this);
        row->addStretch(1);
        row->addLayout(column, 4);
        row->addStretch(1);
    } else {
        setFrameShape(QFrame::StyledPanel);
        setAutoFillBackground(true);
        setBackgroundRole(QPalette::ToolTipBase);
        setForegroundRole(QPalette::ToolTipText);
        auto *text = new QVBoxLayout;
        text->setSpacing(2);
        text->addWidget(m_title);
        text->addWidget(m_fix);
        text->addWidget(m_detail);
        auto *row = new QHBoxLayout(this);
        row->setContentsMargins(8, 6, 8, 6);
        row->addLayout(text, 1);
        row->addWidget(m_retry, 0, Qt::AlignVCenter);
    }
    m_title->setFont(titleFont);
}

void ConnectionPage::showConnecting(const QString &where)
{
    m_title->setText(tr("Connecting to the %1…").arg(where));
    m_fix->clear();
    m_detail->clear();
    m_fix->setVisible(false);
    m_detail->setVisible(false);
    m_retry->setVisible(false);
}

void ConnectionPage::showError(const Error &error)
{
    m_title->setText(ErrorText::connectionTitle(error));
    m_fix->setText(ErrorText::connectionFix(error));
    m_detail->setText(error.message);
    m_fix->setVisible(true);
    m_detail->setVisible(!error.message.isEmpty());
    m_retry->setVisible(true);
}

QString ConnectionPage::text() const
{
    QTextDocument fix;
    fix.setHtml(m_fix->text());
    QStringList parts {m_title->text(), fix.toPlainText(), m_detail->text()};
    parts.removeAll(QString());
    return parts.join(QLatin1Char('\n'));
}

} // namespace airlock

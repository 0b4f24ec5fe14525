#include "ui/consoletab.h"

#include "ui/consolecontroller.h"
#include "ui/errortext.h"
#include "ui/terminalview.h"

#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

namespace airlock {

ConsoleTab::ConsoleTab(HelperClient *client, const QString &sandbox, QWidget *parent)
    : QWidget(parent)
    , m_controller(new ConsoleController(client, sandbox, this))
    , m_view(new TerminalView(m_controller->session(), this))
    , m_notice(new QLabel(this))
{
    m_notice->setWordWrap(true);
    m_notice->setTextFormat(Qt::PlainText);
    m_notice->setVisible(false);
    m_notice->setAccessibleName(tr("Console notice"));
    m_notice->setStyleSheet(
        QStringLiteral("QLabel { background: palette(tool-tip-base); color: palette(tool-tip-text);"
                       " padding: 4px 8px; }"));
    m_view->setAccessibleName(tr("Console of %1").arg(sandbox));

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_notice);
    layout->addWidget(m_view, 1);
    setFocusProxy(m_view);
    // The guest's shell wraps and redraws at the size it is told (stty size shows it).
    connect(m_view, &TerminalView::terminalSizeChanged, m_controller,
            &ConsoleController::requestGuestSize);

    connect(m_controller, &ConsoleController::attached, this,
            [this] { setNotice(stateNotice(m_controller->sandboxState())); });
    connect(m_controller, &ConsoleController::sandboxStateChanged, this,
            [this](const QString &state) { setNotice(stateNotice(state)); });
    connect(m_controller, &ConsoleController::attachFailed, this, &ConsoleTab::showError);
    connect(m_controller, &ConsoleController::writeFailed, this, &ConsoleTab::showError);
    connect(m_controller, &ConsoleController::outputSkipped, this, [this](qint64 bytes) {
        setNotice(tr("%1 wrote faster than this console can draw; %2 of its output were "
                     "skipped.")
                      .arg(this->sandbox(), QLocale().formattedDataSize(bytes)));
    });
    connect(m_controller, &ConsoleController::detached, this, [this] {
        setNotice(tr("The connection to the helper was lost; the console reattaches when it "
                     "is back."));
    });
}

QString ConsoleTab::sandbox() const
{
    return m_controller->sandbox();
}

void ConsoleTab::setNotice(const QString &text)
{
    m_notice->setText(text);
    m_notice->setVisible(!text.isEmpty());
}

QString ConsoleTab::notice() const
{
    return m_notice->text();
}

QString ConsoleTab::stateNotice(const QString &state) const
{
    if (state == QLatin1String("stopped"))
        return tr("Sandbox %1 is not running; start it to type here.").arg(sandbox());
    if (state == QLatin1String("starting"))
        return tr("Sandbox %1 is starting; its console follows.").arg(sandbox());
    if (state == QLatin1String("stopping"))
        return tr("Sandbox %1 is stopping.").arg(sandbox());
    if (state == QLatin1String("paused"))
        return tr("Sandbox %1 is paused; what you type reaches it when it resumes.").arg(sandbox());
    return {}; // running (or not known yet): nothing to say
}

void ConsoleTab::showError(const Error &error)
{
    if (error.kind == ErrorKind::InvalidState) {
        // The keys were refused because it is not running; the next state change says more.
        setNotice(tr("Sandbox %1 is not running; start it to type here.").arg(sandbox()));
        return;
    }
    setNotice(ErrorText::summary(error) + QLatin1Char(' ') + error.message);
}

} // namespace airlock

#include "ui/bringprojectdialog.h"

#include "ui/errortext.h"
#include "ui/guesttext.h"
#include "ui/refusaltext.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace airlock {

BringProjectDialog::BringProjectDialog(HelperClient *client, const QString &sandbox,
                                       const QString &guestUser, QWidget *parent)
    : QDialog(parent)
    , m_client(client)
    , m_sandbox(sandbox)
    , m_user(guestUser)
    , m_host(new QLineEdit(this))
    , m_guest(new QLineEdit(QStringLiteral("/workspace"), this))
    , m_progress(new QProgressBar(this))
    , m_status(new QLabel(this))
    , m_refusals(new QPlainTextEdit(this))
    , m_send(new QPushButton(tr("&Send"), this))
    , m_cancel(new QPushButton(tr("Stop"), this))
{
    setWindowTitle(tr("Bring a Project Folder into %1").arg(sandbox));
    auto *intro = new QLabel(tr("Copies a folder of this computer into the sandbox over its "
                                "guest agent (no network needed). Links, devices and anything "
                                "that would leave the guest folder are refused by the guest."),
                             this);
    intro->setWordWrap(true);
    auto *browse = new QPushButton(tr("&Browse…"), this);
    auto *hostRow = new QHBoxLayout;
    hostRow->addWidget(m_host, 1);
    hostRow->addWidget(browse);
    // A label of its own for the host row: QFormLayout gives a row label its buddy only for
    // a widget field.
    auto *hostLabel = new QLabel(tr("&Host folder:"), this);
    hostLabel->setBuddy(m_host);
    auto *form = new QFormLayout;
    form->addRow(hostLabel, hostRow);
    form->addRow(tr("&Guest folder:"), m_guest);
    m_host->setAccessibleName(tr("Host folder"));
    m_guest->setAccessibleName(tr("Guest folder"));
    m_progress->setRange(0, 0);
    m_progress->setTextVisible(false);
    m_progress->setVisible(false);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_refusals->setReadOnly(true);
    m_refusals->setVisible(false);
    m_refusals->setAccessibleName(tr("Refused entries"));
    m_cancel->setEnabled(false);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_send, QDialogButtonBox::AcceptRole);
    buttons->addButton(m_cancel, QDialogButtonBox::ActionRole);
    // Accept would close the dialog: Send starts the push and the dialog stays to report it.
    disconnect(buttons, &QDialogButtonBox::accepted, this, nullptr);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);
    layout->addWidget(m_refusals, 1);
    layout->addWidget(buttons);
    resize(620, 320);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString folder =
            QFileDialog::getExistingDirectory(this, tr("Project Folder"), m_host->text());
        if (!folder.isEmpty())
            m_host->setText(folder);
    });
    connect(m_send, &QPushButton::clicked, this, &BringProjectDialog::push);
    connect(m_cancel, &QPushButton::clicked, this, &BringProjectDialog::cancelPush);
    connect(buttons, &QDialogButtonBox::rejected, this, [this] {
        cancelPush();
        reject();
    });
}

void BringProjectDialog::push()
{
    if (m_upload)
        return;
    const QString host = m_host->text();
    const QString guest = m_guest->text().trimmed();
    if (!QFileInfo(host).isDir()) {
        m_status->setText(tr("Choose a folder of this computer to send."));
        return;
    }
    if (!guest.startsWith(u'/')) {
        m_status->setText(tr("The guest folder must be an absolute path, e.g. /workspace."));
        return;
    }
    m_refusals->clear();
    m_refusals->setVisible(false);
    m_upload = new workspace::WorkspaceUpload(m_client, m_sandbox, host, guest, m_user, this);
    m_status->setText(tr("Sending %1 to %2…").arg(host, guest));
    connect(m_upload, &workspace::WorkspaceUpload::progress, this, [this, host, guest](quint64 n) {
        m_status->setText(
            tr("Sending %1 to %2… %3").arg(host, guest, QLocale().formattedDataSize(qint64(n))));
    });
    connect(m_upload, &workspace::WorkspaceUpload::finished, this,
            [this, guest](const workspace::PushResult &result) {
                m_upload->deleteLater();
                m_upload = nullptr;
                setBusy(false);
                QString text =
                    tr("Sent to %1: %n item(s), ", nullptr, int(result.entries)).arg(guest)
                    + QLocale().formattedDataSize(qint64(result.bytes));
                if (result.refusedCount > 0) {
                    text +=
                        u' ' + tr("%n refused by the guest:", nullptr, int(result.refusedCount));
                    QStringList lines;
                    for (const auto &[path, reason] : result.refused)
                        lines << tr("%1: %2").arg(path, RefusalText::describe(reason));
                    if (result.refusedCount > quint64(result.refused.size()))
                        lines << tr("… and %n more", nullptr,
                                    int(result.refusedCount - result.refused.size()));
                    m_refusals->setPlainText(GuestText::shown(lines.join(u'\n')));
                    m_refusals->setVisible(true);
                }
                m_status->setText(text);
                emit pushed(result);
            });
    connect(m_upload, &workspace::WorkspaceUpload::failed, this, [this](const Error &error) {
        m_upload->deleteLater();
        m_upload = nullptr;
        setBusy(false);
        m_status->setText(
            tr("Could not send the folder: %1 %2").arg(ErrorText::summary(error), error.message));
        emit failed(error);
    });
    setBusy(true);
    m_upload->start();
}

void BringProjectDialog::cancelPush()
{
    if (!m_upload)
        return;
    m_upload->cancel();
    m_upload->deleteLater();
    m_upload = nullptr;
    setBusy(false);
    m_status->setText(tr("Stopped; the guest folder may hold part of the project."));
}

QString BringProjectDialog::statusText() const
{
    return m_status->text();
}

QString BringProjectDialog::refusalsText() const
{
    return m_refusals->toPlainText();
}

void BringProjectDialog::setBusy(bool busy)
{
    m_progress->setVisible(busy);
    m_send->setEnabled(!busy);
    m_cancel->setEnabled(busy);
    m_host->setEnabled(!busy);
    m_guest->setEnabled(!busy);
}

} // namespace airlock

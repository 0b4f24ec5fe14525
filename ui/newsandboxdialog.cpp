#include "ui/newsandboxdialog.h"

#include "core/client/helperclient.h"
#include "core/model/names.h"
#include "core/protocol/methods.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace airlock {

NewSandboxDialog::NewSandboxDialog(HelperClient *client, const QStringList &existingNames,
                                   QWidget *parent)
    : QDialog(parent)
    , m_existingNames(existingNames)
    , m_name(new QLineEdit(this))
    , m_nameProblem(new QLabel(this))
    , m_vcpus(new QSpinBox(this))
    , m_memory(new QSpinBox(this))
    , m_image(new QComboBox(this))
    , m_imageProblem(new QLabel(this))
    , m_start(new QCheckBox(tr("&Start after creating"), this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("New Sandbox"));

    m_name->setPlaceholderText(tr("e.g. agent-1"));
    m_name->setMaxLength(63);
    m_name->setAccessibleName(tr("Sandbox name"));
    m_nameProblem->setWordWrap(true);
    m_nameProblem->setTextFormat(Qt::PlainText);
    m_nameProblem->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_nameProblem->setAccessibleName(tr("Name problem"));

    m_vcpus->setRange(1, SandboxSpec::kMaxVcpus);
    m_vcpus->setValue(SandboxSpec::kDefaultVcpus);
    m_vcpus->setAccessibleName(tr("Virtual CPUs"));

    m_memory->setRange(SandboxSpec::kMinMemoryMib, SandboxSpec::kMaxMemoryMib);
    m_memory->setSingleStep(64);
    m_memory->setValue(SandboxSpec::kDefaultMemoryMib);
    m_memory->setSuffix(tr(" MiB"));
    m_memory->setAccessibleName(tr("Memory in MiB"));

    m_image->addItem(QStringLiteral("default"), QStringLiteral("default"));
    m_image->setAccessibleName(tr("Guest image"));
    m_imageProblem->setWordWrap(true);
    m_imageProblem->setTextFormat(Qt::PlainText);
    m_imageProblem->setVisible(false);

    m_start->setChecked(true);

    auto *form = new QFormLayout;
    form->addRow(tr("&Name:"), m_name);
    form->addRow(QString(), m_nameProblem);
    form->addRow(tr("&vCPUs:"), m_vcpus);
    form->addRow(tr("&Memory:"), m_memory);
    form->addRow(tr("&Image:"), m_image);
    form->addRow(QString(), m_imageProblem);
    form->addRow(QString(), m_start);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_name, &QLineEdit::textChanged, this, &NewSandboxDialog::validate);

    validate();
    // An empty field is not an error yet; only say why once the user has typed something.
    m_nameProblem->clear();
    loadImages(client);
    setMinimumWidth(420);
}

SandboxSpec NewSandboxDialog::spec() const
{
    SandboxSpec spec;
    spec.name = m_name->text();
    spec.vcpus = m_vcpus->value();
    spec.memoryMib = m_memory->value();
    spec.image = m_image->currentData().toString();
    return spec;
}

bool NewSandboxDialog::startAfterCreate() const
{
    return m_start->isChecked();
}

QString NewSandboxDialog::nameProblem() const
{
    const QString name = m_name->text();
    if (const auto valid = validateName(name); !valid)
        return valid.error().message;
    if (m_existingNames.contains(name))
        return tr("A sandbox named “%1” already exists.").arg(name);
    return {};
}

void NewSandboxDialog::validate()
{
    const QString problem = nameProblem();
    m_nameProblem->setText(problem);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

void NewSandboxDialog::loadImages(HelperClient *client)
{
    if (!client)
        return;
    QPointer<NewSandboxDialog> self(this);
    client->call(QString::fromLatin1(protocol::method::ImageList), {},
                 [self](const Result<QJsonValue> &result) {
                     if (!self)
                         return;
                     if (!result) {
                         self->m_imageProblem->setText(
                             tr("Could not list images: %1").arg(result.error().message));
                         self->m_imageProblem->setVisible(true);
                         return;
                     }
                     const QJsonArray images =
                         result->toObject().value(QStringLiteral("images")).toArray();
                     if (images.isEmpty()) {
                         self->m_imageProblem->setText(
                             tr("The helper has no guest images yet; build one with "
                                "installers/guest/build-image.sh."));
                         self->m_imageProblem->setVisible(true);
                         return;
                     }
                     self->m_image->clear();
                     for (const QJsonValue &value : images) {
                         const QJsonObject image = value.toObject();
                         const QString id = image.value(QStringLiteral("id")).toString();
                         const QString description =
                             image.value(QStringLiteral("description")).toString();
                         self->m_image->addItem(
                             description.isEmpty() ? id : tr("%1 — %2").arg(id, description), id);
                     }
                     const int preferred = self->m_image->findData(QStringLiteral("default"));
                     self->m_image->setCurrentIndex(std::max(preferred, 0));
                 });
}

} // namespace airlock

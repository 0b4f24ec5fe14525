#include "ui/newsandboxdialog.h"

#include "core/client/helperclient.h"
#include "core/protocol/methods.h"
#include "ui/nametext.h"
#include "ui/sandboxtablemodel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace airlock {

namespace {

constexpr int kDiskRole = Qt::UserRole + 1; // bool: the image has a root disk
constexpr int kVmmsRole = Qt::UserRole + 2; // QStringList: Image `vmms`; empty: not said

} // namespace

NewSandboxDialog::NewSandboxDialog(HelperClient *client, const QStringList &existingNames,
                                   QWidget *parent)
    : QDialog(parent)
    , m_existingNames(existingNames)
    , m_name(new QLineEdit(this))
    , m_nameProblem(new QLabel(this))
    , m_vcpus(new QSpinBox(this))
    , m_memory(new QSpinBox(this))
    , m_hostMemory(new QLabel(this))
    , m_memoryProblem(new QLabel(this))
    , m_vmm(new QComboBox(this))
    , m_vmmNote(new QLabel(this))
    , m_image(new QComboBox(this))
    , m_imageProblem(new QLabel(this))
    , m_start(new QCheckBox(tr("&Start after creating"), this))
    , m_fromTemplate(new QCheckBox(tr("Start from a &template (fast)"), this))
    , m_templateNote(new QLabel(this))
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
    // Room for two lines from the start, so the dialog does not jump while a name is typed.
    m_nameProblem->setMinimumHeight(2 * m_nameProblem->fontMetrics().lineSpacing());
    m_nameProblem->setAlignment(Qt::AlignLeft | Qt::AlignTop);

    m_vcpus->setRange(1, SandboxSpec::kMaxVcpus);
    m_vcpus->setValue(SandboxSpec::kDefaultVcpus);
    m_vcpus->setAccessibleName(tr("Virtual CPUs"));

    // The spin box's own range would clip a typed 100000 to 65536 without a word, or refuse
    // the last digit: it takes any figure, and validate() says what is wrong with it.
    m_memory->setRange(0, std::numeric_limits<int>::max());
    m_memory->setSingleStep(64);
    m_memory->setValue(SandboxSpec::kDefaultMemoryMib);
    m_memory->setSuffix(tr(" MiB"));
    m_memory->setAccessibleName(tr("Memory in MiB"));

    const QJsonObject hello = client ? client->helloResult() : QJsonObject();
    setUpVmmChoice(hello);
    if (client) {
        m_hostMemoryMib = hello.value(QStringLiteral("hostMemoryMib")).toInteger(-1);
        m_hostAvailableMib = hello.value(QStringLiteral("hostMemoryAvailableMib")).toInteger(-1);
    }
    m_hostMemory->setTextFormat(Qt::PlainText);
    m_hostMemory->setWordWrap(true);
    m_hostMemory->setForegroundRole(QPalette::PlaceholderText);
    m_hostMemory->setAccessibleName(tr("Host memory"));
    m_hostMemory->setText(hostMemoryText());
    m_hostMemory->setVisible(!m_hostMemory->text().isEmpty());
    m_memoryProblem->setWordWrap(true);
    m_memoryProblem->setTextFormat(Qt::PlainText);
    m_memoryProblem->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_memoryProblem->setAccessibleName(tr("Memory problem"));
    m_memoryProblem->setVisible(false);

    m_image->addItem(QStringLiteral("default"), QStringLiteral("default"));
    m_image->setAccessibleName(tr("Guest image"));
    m_imageProblem->setWordWrap(true);
    m_imageProblem->setTextFormat(Qt::PlainText);
    m_imageProblem->setVisible(false);

    m_start->setChecked(true);
    m_fromTemplate->setChecked(true);
    m_fromTemplate->setAccessibleName(tr("Start from the image's template"));
    m_fromTemplate->setToolTip(tr("Restore a snapshot of the already booted image instead of "
                                  "booting the kernel; the guest gets its own name, addresses "
                                  "and keys right after."));
    m_templateNote->setWordWrap(true);
    m_templateNote->setTextFormat(Qt::PlainText);
    m_templateNote->setAccessibleName(tr("Template availability"));
    m_templateNote->setForegroundRole(QPalette::PlaceholderText);
    m_templateNote->setMinimumHeight(2 * m_templateNote->fontMetrics().lineSpacing());
    m_templateNote->setAlignment(Qt::AlignLeft | Qt::AlignTop);

    auto *form = new QFormLayout;
    form->addRow(tr("&Name:"), m_name);
    form->addRow(QString(), m_nameProblem);
    form->addRow(tr("&vCPUs:"), m_vcpus);
    form->addRow(tr("&Memory:"), m_memory);
    form->addRow(QString(), m_hostMemory);
    form->addRow(QString(), m_memoryProblem);
    form->addRow(tr("V&MM:"), m_vmm);
    form->addRow(QString(), m_vmmNote);
    form->addRow(tr("&Image:"), m_image);
    form->addRow(QString(), m_imageProblem);
    form->addRow(QString(), m_start);
    form->addRow(QString(), m_fromTemplate);
    form->addRow(QString(), m_templateNote);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_name, &QLineEdit::textChanged, this, &NewSandboxDialog::validate);
    connect(m_memory, &QSpinBox::valueChanged, this, &NewSandboxDialog::validate);

    validate();
    // An empty field is not an error yet; only say why once the user has typed something.
    m_nameProblem->clear();
    connect(m_image, &QComboBox::currentIndexChanged, this, [this] {
        updateVmmNote();
        updateTemplateNote();
    });
    connect(m_vcpus, &QSpinBox::valueChanged, this, &NewSandboxDialog::updateTemplateNote);
    connect(m_vmm, &QComboBox::currentIndexChanged, this, [this] {
        updateVmmNote();
        updateTemplateNote();
    });
    connect(m_memory, &QSpinBox::valueChanged, this, &NewSandboxDialog::updateTemplateNote);
    connect(m_fromTemplate, &QCheckBox::toggled, this, [this](bool checked) {
        // Only the person's own choice is remembered, not the one a root-disk image forces.
        if (m_fromTemplate->isEnabled())
            m_wantsTemplate = checked;
        updateTemplateNote();
    });
    loadImages(client);
    loadTemplates(client);
    setMinimumWidth(420);
}

SandboxSpec NewSandboxDialog::spec() const
{
    SandboxSpec spec;
    spec.name = m_name->text();
    spec.vcpus = m_vcpus->value();
    spec.memoryMib = m_memory->value();
    spec.image = m_image->currentData().toString();
    // The host's default stays unnamed, so the helper's --vmm decides (and the registry says
    // what it chose).
    spec.vmm = vmmKindFromName(m_vmm->currentData().toString());
    return spec;
}

void NewSandboxDialog::setUpVmmChoice(const QJsonObject &hello)
{
    m_defaultVmm = vmmKindFromName(hello.value(QStringLiteral("vmm")).toString());
    const QJsonObject vmms = hello.value(QStringLiteral("vmms")).toObject();
    const QString defaultText = m_defaultVmm
        ? tr("Host default (%1)").arg(SandboxTableModel::vmmText(m_defaultVmm))
        : tr("Host default");
    m_vmm->addItem(defaultText, QString());
    m_vmm->setAccessibleName(tr("Virtual machine monitor"));
    m_vmmNote->setWordWrap(true);
    m_vmmNote->setTextFormat(Qt::PlainText);
    m_vmmNote->setForegroundRole(QPalette::PlaceholderText);
    m_vmmNote->setAccessibleName(tr("VMM note"));
    if (vmms.isEmpty()) {
        // A helper from before the backends were selectable: it runs QEMU, and a vmm field in
        // sandbox.create would be refused as unknown.
        m_vmm->setEnabled(false);
        updateVmmNote();
        return;
    }
    m_vmm->addItem(SandboxTableModel::vmmText(VmmKind::Qemu), vmmKindName(VmmKind::Qemu));
    m_vmm->addItem(SandboxTableModel::vmmText(VmmKind::Firecracker),
                   vmmKindName(VmmKind::Firecracker));
    const QJsonObject firecracker = vmms.value(QStringLiteral("firecracker")).toObject();
    if (!firecracker.value(QStringLiteral("available")).toBool()) {
        m_firecrackerUnavailable = firecracker.value(QStringLiteral("reason")).toString();
        if (m_firecrackerUnavailable.isEmpty())
            m_firecrackerUnavailable = tr("the helper does not say why");
        if (auto *items = qobject_cast<QStandardItemModel *>(m_vmm->model()))
            items->item(m_vmm->count() - 1)->setEnabled(false);
        m_vmm->setItemData(m_vmm->count() - 1, m_firecrackerUnavailable, Qt::ToolTipRole);
    }
    updateVmmNote();
}

std::optional<VmmKind> NewSandboxDialog::effectiveVmm() const
{
    if (const auto chosen = vmmKindFromName(m_vmm->currentData().toString()))
        return chosen;
    return m_defaultVmm;
}

QString NewSandboxDialog::vmmNote() const
{
    return m_vmmNote->text();
}

QString NewSandboxDialog::vmmProblem() const
{
    const QStringList vmms = m_image->currentData(kVmmsRole).toStringList();
    const auto vmm = effectiveVmm();
    if (vmms.isEmpty() || !vmm || vmms.contains(vmmKindName(*vmm)))
        return {};
    QStringList names;
    for (const QString &name : vmms) {
        if (const auto kind = vmmKindFromName(name))
            names.append(SandboxTableModel::vmmText(kind));
    }
    return tr("Image “%1” does not boot in %2; it boots in: %3.")
        .arg(m_image->currentData().toString(), SandboxTableModel::vmmText(vmm),
             QLocale().createSeparatedList(names));
}

void NewSandboxDialog::updateVmmNote()
{
    QString note = vmmProblem();
    if (note.isEmpty() && effectiveVmm() == VmmKind::Firecracker)
        note = tr("Firecracker: KVM only, raw root disks.");
    else if (note.isEmpty() && !m_firecrackerUnavailable.isEmpty())
        note = tr("Firecracker cannot run on this host: %1").arg(m_firecrackerUnavailable);
    m_vmmNote->setText(note);
    m_vmmNote->setVisible(!note.isEmpty());
    updateAcceptable();
    growToFit();
}

bool NewSandboxDialog::startAfterCreate() const
{
    return m_start->isChecked();
}

QString NewSandboxDialog::nameProblem() const
{
    const QString name = m_name->text();
    if (const QString problem = NameText::problem(name); !problem.isEmpty())
        return problem;
    if (m_existingNames.contains(name))
        return tr("A sandbox named “%1” already exists.").arg(name);
    return {};
}

QString NewSandboxDialog::hostMemoryText() const
{
    if (m_hostMemoryMib < 0)
        return {};
    if (m_hostAvailableMib < 0)
        return tr("This host: at most %1 MiB for a sandbox.").arg(m_hostMemoryMib);
    return tr("This host: at most %1 MiB for a sandbox, %2 MiB available now.")
        .arg(m_hostMemoryMib)
        .arg(m_hostAvailableMib);
}

QString NewSandboxDialog::memoryProblem() const
{
    const int mib = m_memory->value();
    if (mib < SandboxSpec::kMinMemoryMib)
        return tr("%1 MiB is too little: a sandbox needs at least %2 MiB.")
            .arg(mib)
            .arg(SandboxSpec::kMinMemoryMib);
    if (mib > SandboxSpec::kMaxMemoryMib)
        return tr("%1 MiB is too much: a sandbox may have at most %2 MiB.")
            .arg(mib)
            .arg(SandboxSpec::kMaxMemoryMib);
    if (m_hostMemoryMib >= 0 && mib > m_hostMemoryMib)
        return tr("%1 MiB is more than this host can back (at most %2 MiB).")
            .arg(mib)
            .arg(m_hostMemoryMib);
    if (m_hostAvailableMib >= 0 && mib > m_hostAvailableMib)
        return tr("More than the %1 MiB available now: starting it fails until other "
                  "sandboxes or programs free memory.")
            .arg(m_hostAvailableMib);
    return {};
}

bool NewSandboxDialog::memoryAcceptable() const
{
    const int mib = m_memory->value();
    return mib >= SandboxSpec::kMinMemoryMib && mib <= SandboxSpec::kMaxMemoryMib
        && (m_hostMemoryMib < 0 || mib <= m_hostMemoryMib);
}

void NewSandboxDialog::validate()
{
    const QString problem = nameProblem();
    m_nameProblem->setText(problem);
    const QString memory = memoryProblem();
    m_memoryProblem->setText(memory);
    m_memoryProblem->setVisible(!memory.isEmpty());
    updateAcceptable();
    growToFit();
}

void NewSandboxDialog::updateAcceptable()
{
    m_buttons->button(QDialogButtonBox::Ok)
        ->setEnabled(nameProblem().isEmpty() && memoryAcceptable() && vmmProblem().isEmpty());
}

void NewSandboxDialog::growToFit()
{
    // The notes wrap, and their text changes after the dialog is shown (typing, the helper's
    // answers). A shown dialog keeps its height by itself, so the last lines would be cut off
    // by the rows below; grow it to what the layout needs at the current width instead.
    if (!isVisible())
        return;
    QLayout *box = layout();
    box->activate();
    const int needed = box->hasHeightForWidth() ? box->totalHeightForWidth(width())
                                                : box->totalSizeHint().height();
    setMinimumHeight(needed);
    if (height() < needed)
        resize(width(), needed);
}

void NewSandboxDialog::showEvent(QShowEvent *event)
{
    QDialog::showEvent(event);
    growToFit();
}

QString NewSandboxDialog::bootMode() const
{
    return m_fromTemplate->isChecked() && m_fromTemplate->isEnabled() ? QStringLiteral("template")
                                                                      : QStringLiteral("cold");
}

QString NewSandboxDialog::templateNote() const
{
    return m_templateNote->text();
}

void NewSandboxDialog::loadTemplates(HelperClient *client)
{
    if (!client)
        return;
    QPointer<NewSandboxDialog> self(this);
    const QString method = QString::fromLatin1(protocol::method::TemplateList);
    client->call(method, {}, [self](const Result<QJsonValue> &result) {
        if (!self)
            return;
        if (!result && result.error().kind == ErrorKind::MethodNotFound) {
            // A helper from before templates: every start is a cold boot.
            self->m_templatesSupported = false;
            self->m_fromTemplate->setChecked(false);
            self->m_fromTemplate->setEnabled(false);
            self->m_templateNote->setText(
                tr("This helper cannot start sandboxes from a template; they "
                   "boot cold."));
            self->growToFit();
            return;
        }
        if (!result) {
            self->m_templateNote->setText(
                tr("Could not list templates: %1").arg(result.error().message));
            self->growToFit();
            return;
        }
        self->m_templates = result->toObject().value(QStringLiteral("templates")).toArray();
        self->m_templatesKnown = true;
        self->updateTemplateNote();
    });
}

void NewSandboxDialog::updateTemplateNote()
{
    updateTemplateText();
    growToFit();
}

void NewSandboxDialog::updateTemplateText()
{
    if (!m_templatesSupported)
        return;
    // The helper boots every sandbox of an image with a root disk cold and makes no template
    // of one: a template (a memory snapshot) would not match the sandbox's own disk (sandbox.start
    // and template.prepare in docs/protocol.md). So the choice is off, and unticked, there.
    const bool disk = m_image->currentData(kDiskRole).toBool();
    {
        const QSignalBlocker blocker(m_fromTemplate);
        m_fromTemplate->setEnabled(!disk);
        m_fromTemplate->setChecked(!disk && m_wantsTemplate);
    }
    if (disk) {
        m_templateNote->setText(tr("Images with a root disk always boot cold (no template): "
                                   "the guest boots its kernel from its own disk."));
        return;
    }
    if (!m_templatesKnown)
        return;
    if (!m_fromTemplate->isChecked()) {
        m_templateNote->setText(tr("The guest boots its kernel (a few seconds)."));
        return;
    }
    // A template serves one image, shape and VMM (its device state is the VMM's own;
    // templates in docs/protocol.md). A helper from before the VMMs says none: QEMU.
    const SandboxSpec wanted = spec();
    const QString vmm = vmmKindName(effectiveVmm().value_or(VmmKind::Qemu));
    const bool ready = std::any_of(
        m_templates.cbegin(), m_templates.cend(), [&wanted, &vmm](const QJsonValue &value) {
            const QJsonObject t = value.toObject();
            return t.value(QStringLiteral("current")).toBool()
                && t.value(QStringLiteral("vmm")).toString(QStringLiteral("qemu")) == vmm
                && t.value(QStringLiteral("image")).toString() == wanted.image
                && t.value(QStringLiteral("vcpus")).toInt() == wanted.vcpus
                && t.value(QStringLiteral("memoryMib")).toInt() == wanted.memoryMib;
        });
    m_templateNote->setText(
        ready ? tr("A template of this image and size is ready: the guest starts in about a "
                   "second instead of booting.")
              : tr("No template of this image and size yet: the guest boots cold (the helper "
                   "makes one with “%1”).")
                    .arg(vmm == vmmKindName(VmmKind::Firecracker)
                             ? QStringLiteral("airlockctl template prepare --vmm firecracker")
                             : QStringLiteral("airlockctl template prepare")));
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
                         self->growToFit();
                         return;
                     }
                     const QJsonArray images =
                         result->toObject().value(QStringLiteral("images")).toArray();
                     if (images.isEmpty()) {
                         self->m_imageProblem->setText(
                             tr("The helper has no guest images yet; build one with "
                                "installers/guest/build-image.sh."));
                         self->m_imageProblem->setVisible(true);
                         self->growToFit();
                         return;
                     }
                     const QSignalBlocker blocker(self->m_image);
                     self->m_image->clear();
                     for (const QJsonValue &value : images) {
                         const QJsonObject image = value.toObject();
                         const QString id = image.value(QStringLiteral("id")).toString();
                         const QString description =
                             image.value(QStringLiteral("description")).toString();
                         const bool disk = image.value(QStringLiteral("disk")).isString()
                             && !image.value(QStringLiteral("disk")).toString().isEmpty();
                         self->m_image->addItem(disk ? tr("%1 — root disk").arg(id) : id, id);
                         const int row = self->m_image->count() - 1;
                         self->m_image->setItemData(row, disk, kDiskRole);
                         QStringList vmms;
                         for (const QJsonValue &vmm : image.value(QStringLiteral("vmms")).toArray())
                             vmms.append(vmm.toString());
                         self->m_image->setItemData(row, vmms, kVmmsRole);
                         self->m_image->setItemData(row, description, Qt::ToolTipRole);
                     }
                     const int preferred = self->m_image->findData(QStringLiteral("default"));
                     self->m_image->setCurrentIndex(std::max(preferred, 0));
                     self->updateTemplateNote();
                     self->updateVmmNote();
                 });
}

} // namespace airlock

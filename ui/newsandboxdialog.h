#pragma once

#include "core/model/sandbox.h"

#include <QDialog>
#include <QJsonArray>
#include <QStringList>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace airlock {

class HelperClient;

/// Asks for a new sandbox's name, vCPUs, memory and image. The name is checked as it is typed
/// (validateName and the existing names) and the reason shows under the field; OK stays
/// disabled until the input is valid. Images come from the helper's `image.list`.
/// "Start from a template" asks the helper to restore the image's template (a snapshot of the
/// booted image) instead of booting the kernel (`sandbox.create` param `boot`); the note under
/// it says whether `template.list` has a current template for the chosen image and shape. A
/// helper without templates (no `template.list`) gets the choice disabled: it boots cold; so
/// does an image with a root disk (unticked too, back to the person's choice for another image).
/// Memory is checked, never clipped: a typed value outside 64 MiB … 64 GiB or above what the
/// host can back (`hello`'s hostMemoryMib) is kept as typed, the reason shows under the field
/// and OK stays disabled; the host's figures show beside it (more than is available now is
/// allowed, with a note: start checks that).
/// The VMM choice (docs/vmm.md) offers the host's default (`hello`'s `vmm`), QEMU microvm and
/// Firecracker; Firecracker is greyed out with `hello`'s reason when it cannot run on this host,
/// and a Firecracker sandbox boots cold (templates are QEMU device state). A helper whose
/// `hello` names no backends gets the choice disabled on its default.
/// The dialog grows when a wrapped note needs more lines than it has room for.
class NewSandboxDialog final : public QDialog
{
    Q_OBJECT
public:
    NewSandboxDialog(HelperClient *client, const QStringList &existingNames,
                     QWidget *parent = nullptr);

    SandboxSpec spec() const;
    /// Whether the user wants the sandbox started right after it is created.
    bool startAfterCreate() const;
    /// `sandbox.create`'s `boot`: "template" (start from the image's template when there is
    /// one) or "cold".
    QString bootMode() const;
    QCheckBox *templateBox() const { return m_fromTemplate; }
    /// The note about templates under the choice (empty before template.list answered).
    QString templateNote() const;
    /// The image choice: "id" or "id — root disk" (Image `disk`); the description is the
    /// item's tooltip. Images with a root disk always boot cold: the template choice is off.
    QComboBox *imageBox() const { return m_image; }
    /// The reason the current name is rejected; empty when it is acceptable.
    QString nameProblem() const;
    /// The reason the typed memory is rejected (or, not blocking, that it is more than the host
    /// has available now); empty when there is nothing to say.
    QString memoryProblem() const;
    /// "This host: N MiB for guests, M MiB available now" (empty without those figures).
    QString hostMemoryText() const;
    QSpinBox *memoryBox() const { return m_memory; }
    /// The VMM choice; item data is "" (the host's default), "qemu" or "firecracker".
    QComboBox *vmmBox() const { return m_vmm; }
    /// The note under the VMM choice (why Firecracker is unavailable, what it implies).
    QString vmmNote() const;
    /// Why the chosen image cannot boot in the chosen VMM (Image `vmms`); empty when it can or
    /// the helper does not say. OK stays disabled meanwhile.
    QString vmmProblem() const;

protected:
    void showEvent(QShowEvent *event) override;

private:
    void validate();
    /// Within the spec's range and what the host can back (OK may be pressed).
    bool memoryAcceptable() const;
    /// Makes the shown dialog tall enough for its wrapped notes at its current width.
    void growToFit();
    void updateTemplateText();
    void loadImages(HelperClient *client);
    void loadTemplates(HelperClient *client);
    void updateTemplateNote();
    void setUpVmmChoice(const QJsonObject &hello);
    void updateVmmNote();
    /// OK is enabled only for a valid name and memory and an image that boots in the VMM.
    void updateAcceptable();
    /// The backend the sandbox gets: the chosen one, else the host's default.
    std::optional<VmmKind> effectiveVmm() const;

    QStringList m_existingNames;
    QLineEdit *m_name;
    QLabel *m_nameProblem;
    QSpinBox *m_vcpus;
    QSpinBox *m_memory;
    QLabel *m_hostMemory;
    QLabel *m_memoryProblem;
    qint64 m_hostMemoryMib = -1; // hello's hostMemoryMib; -1: unknown
    qint64 m_hostAvailableMib = -1; // hello's hostMemoryAvailableMib
    QComboBox *m_vmm;
    QLabel *m_vmmNote;
    std::optional<VmmKind> m_defaultVmm; // hello's vmm; nullopt: the helper does not say
    QString m_firecrackerUnavailable; // hello's vmms.firecracker.reason when not available
    QComboBox *m_image;
    QLabel *m_imageProblem;
    QCheckBox *m_start;
    QCheckBox *m_fromTemplate;
    QLabel *m_templateNote;
    QJsonArray m_templates; // template.list's `templates`
    bool m_templatesKnown = false; // template.list answered
    bool m_templatesSupported = true; // false for a helper without template.list
    bool m_wantsTemplate = true; // the person's choice, kept while a root-disk image is chosen
    QDialogButtonBox *m_buttons;
};

} // namespace airlock

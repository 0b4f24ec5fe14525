#pragma once

#include "core/model/sandbox.h"

#include <QDialog>
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
class NewSandboxDialog final : public QDialog
{
    Q_OBJECT
public:
    NewSandboxDialog(HelperClient *client, const QStringList &existingNames,
                     QWidget *parent = nullptr);

    SandboxSpec spec() const;
    /// Whether the user wants the sandbox started right after it is created.
    bool startAfterCreate() const;
    /// The reason the current name is rejected; empty when it is acceptable.
    QString nameProblem() const;

private:
    void validate();
    void loadImages(HelperClient *client);

    QStringList m_existingNames;
    QLineEdit *m_name;
    QLabel *m_nameProblem;
    QSpinBox *m_vcpus;
    QSpinBox *m_memory;
    QComboBox *m_image;
    QLabel *m_imageProblem;
    QCheckBox *m_start;
    QDialogButtonBox *m_buttons;
};

} // namespace airlock

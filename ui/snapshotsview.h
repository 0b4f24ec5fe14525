#pragma once

#include "core/model/error.h"
#include "core/model/sandbox.h"
#include "core/model/snapshot.h"

#include <QPointer>
#include <QWidget>

class QAction;
class QComboBox;
class QDialog;
class QItemSelectionModel;
class QLabel;
class QPushButton;
class QTreeView;

namespace airlock {

class HelperClient;
class SandboxTableModel;
class SnapshotTimelineModel;
class SnapshotTimelineView;

/// The Snapshots section: one sandbox's snapshot timeline (SnapshotTimelineView) over a tree
/// list of the same model, a details pane for the current snapshot, and the snapshot actions:
/// Take Snapshot, Automatic Snapshots (schedule and retention), and per snapshot Restore (asks
/// first; the helper takes a safety snapshot of the current state before), Fork (asks for the
/// name; bindings only copied when asked), Rename, Pin/Unpin and Delete (asks first). Every
/// action is one helper call; the timeline follows `snapshot.changed`, so other clients'
/// changes show too. Confirmations and dialogs are window-modal and non-blocking
/// (pendingDialog() for tests).
class SnapshotsView final : public QWidget
{
    Q_OBJECT
public:
    SnapshotsView(HelperClient *client, SandboxTableModel *sandboxes, QWidget *parent = nullptr);
    ~SnapshotsView() override;

    /// Why `sandbox`'s current state does not descend from its `head` snapshot, or an empty
    /// string when it does (or when it is not running): started from its image's template
    /// after the head was taken (e.g. a template start after a restore), its state is the
    /// template's, whatever head the helper keeps.
    static QString detachedState(const Sandbox *sandbox, const Snapshot *head);

    /// Follows another host's helper and sandbox list.
    void setClient(HelperClient *client, SandboxTableModel *sandboxes);
    /// Shows `sandbox`'s timeline ("" = none).
    void setSandbox(const QString &sandbox);
    QString sandbox() const;

    SnapshotTimelineModel *model() const { return m_model; }
    SnapshotTimelineView *timeline() const { return m_timeline; }
    QTreeView *tree() const { return m_tree; }
    QItemSelectionModel *selection() const { return m_selection; }
    /// The current snapshot's id ("" when none).
    QString currentSnapshot() const;
    void selectSnapshot(const QString &id);
    /// The details pane as lines "Field: value".
    QString detailsText() const;
    /// The status line under the timeline: the last action's result or error.
    QString statusText() const;
    /// The confirmation or dialog waiting for an answer, or nullptr.
    QDialog *pendingDialog() const { return m_pending; }

    QAction *takeSnapshotAction() const { return m_takeAction; }
    QAction *scheduleAction() const { return m_scheduleAction; }
    QAction *restoreAction() const { return m_restoreAction; }
    QAction *forkAction() const { return m_forkAction; }
    QAction *renameAction() const { return m_renameAction; }
    QAction *pinAction() const { return m_pinAction; }
    QAction *deleteAction() const { return m_deleteAction; }

public Q_SLOTS:
    /// Asks for an optional label, then snapshot.create.
    void requestTakeSnapshot();
    void takeSnapshot(const QString &label);
    /// Asks first (naming the safety snapshot), then snapshot.restore of the current snapshot.
    void requestRestore();
    void restore(const QString &id);
    /// Asks for the name (and whether to copy bindings), then snapshot.fork.
    void requestFork();
    void fork(const QString &id, const QString &name, bool copyBindings);
    void requestRename();
    void rename(const QString &id, const QString &label);
    /// Pins an unpinned current snapshot, unpins a pinned one.
    void togglePinned();
    void setPinned(const QString &id, bool pinned);
    void requestDelete();
    void remove(const QString &id);
    void requestSchedule();
    void setSchedule(const airlock::SnapshotSchedule &schedule);

Q_SIGNALS:
    /// An action's call succeeded; `method` is the RPC method name.
    void actionFinished(const QString &method);
    /// An action failed; the same text is on the status line and in a message box.
    void actionFailed(const QString &text, const airlock::Error &error);
    /// The fork `name` exists (snapshot.fork answered).
    void forked(const QString &name);
    /// The person chose "Restart Now" for a sandbox whose guest did not confirm its new
    /// identity (the main window stops and starts it).
    void restartRequested(const QString &sandbox);

private:
    void buildActions();
    void updateActions();
    /// Tells the timeline whether the current state descends from the head (detachedState).
    void updateCurrentState();
    void updateDetails();
    void updateSandboxChoices();
    void fitColumns();
    /// The context menu: the current snapshot's actions when it was asked for on a snapshot,
    /// then the sandbox's own (Take Snapshot, Automatic Snapshots); only those on empty space.
    void showMenu(const QPoint &globalPos, bool forSnapshot);
    void setStatus(const QString &text, bool error = false);
    void fail(const QString &text, const Error &error);
    void setPending(QDialog *dialog);
    void checkCopiedBindings(const QString &source, const QString &fork);
    /// After a restore or fork: shows the answer's sandbox in the table at once and, when its
    /// guest did not confirm its new identity (`identityWarning`), says so in the status line
    /// and in a message box with what to do (restart the sandbox).
    void reportStartedSandbox(const QJsonObject &sandboxJson, bool fork);
    /// "“label” of 2026-12-01 10:42:05" for questions.
    QString describe(const Snapshot &snapshot) const;
    const Snapshot *current() const;
    void call(const QString &method, const QJsonObject &params, const QString &failureText,
              std::function<void(const QJsonValue &)> onSuccess = {}, int timeoutMs = 30000);

    QPointer<HelperClient> m_client;
    QPointer<SandboxTableModel> m_sandboxes;
    SnapshotTimelineModel *m_model;
    QItemSelectionModel *m_selection;
    QComboBox *m_sandboxBox;
    SnapshotTimelineView *m_timeline;
    QTreeView *m_tree;
    QLabel *m_details;
    QLabel *m_status;
    QLabel *m_state;
    QPushButton *m_takeButton;
    QPushButton *m_scheduleButton;
    QPushButton *m_restoreButton;
    QPushButton *m_forkButton;
    QPointer<QDialog> m_pending;
    QAction *m_takeAction = nullptr;
    QAction *m_scheduleAction = nullptr;
    QAction *m_restoreAction = nullptr;
    QAction *m_forkAction = nullptr;
    QAction *m_renameAction = nullptr;
    QAction *m_pinAction = nullptr;
    QAction *m_deleteAction = nullptr;
    int m_busy = 0;
};

} // namespace airlock

#pragma once

#include "core/model/error.h"
#include "core/model/sandbox.h"

#include <QObject>
#include <QPointer>

#include <functional>
#include <optional>

namespace airlock {

class HelperClient;

/// What the window asks a helper to do with its sandboxes: create, start, stop, force-stop,
/// pause, resume, delete, and restart (stop, then start once the helper reports it stopped).
/// No widgets: results, progress and errors are signals the window turns into dialogs, status
/// text and table updates. Each request goes to the client current when it was made, and its
/// result is reported even when the window switched hosts in the meantime (as before).
class SandboxActions final : public QObject
{
    Q_OBJECT
public:
    enum class Action { Create, Start, Stop, Kill, Pause, Resume, Delete };
    Q_ENUM(Action)

    /// Which of the window's sandbox actions apply, from the connection and the selected
    /// sandbox's state (the helper answers `invalid_state` or `busy` for the others).
    struct Enablement
    {
        bool create = false; ///< New Sandbox: only a connection is needed
        bool start = false; ///< stopped
        bool stop = false; ///< running or paused
        bool kill = false; ///< a VMM may be there: starting, running, stopping, paused
        bool pause = false; ///< running
        bool resume = false; ///< paused
        bool remove = false; ///< stopped (`sandbox.delete` answers `busy` otherwise)
        bool openConsole = false; ///< any selected sandbox
        bool editPolicy = false; ///< any selected sandbox, whatever its state

        friend bool operator==(const Enablement &, const Enablement &) = default;
    };

    /// How long restart() waits for `stopped` after `sandbox.stop` answered.
    static constexpr int kRestartTimeoutMs = 120000;

    explicit SandboxActions(QObject *parent = nullptr);
    ~SandboxActions() override;

    /// The helper later requests go to; not owned (may be null: requests are then ignored).
    void setClient(HelperClient *client);
    HelperClient *client() const;

    /// `selected` is the selected sandbox's state, nullopt when none is selected.
    static Enablement enablement(bool connected, std::optional<SandboxState> selected);
    /// The headline of a failed action, e.g. "Could not start sandbox “a”.".
    static QString failureText(Action action, const QString &sandbox);

    /// sandbox.create with `spec` (then sandbox.start when `start`); `boot` is its `boot`
    /// param ("template" or "cold"; empty: the helper's default).
    void create(const SandboxSpec &spec, bool start, const QString &boot = {});
    void start(const QString &sandbox);
    void stop(const QString &sandbox);
    /// sandbox.kill: the VMM is killed at once.
    void kill(const QString &sandbox);
    /// vm.pause / vm.resume: the guest's CPUs stop or run on.
    void pause(const QString &sandbox);
    void resume(const QString &sandbox);
    /// sandbox.delete; asking first is the window's job.
    void remove(const QString &sandbox);
    /// sandbox.stop, then sandbox.start once the helper's `sandbox.changed` says it is stopped:
    /// a cold boot gives a guest that did not confirm its new identity its own (or a template
    /// start that confirms it). Gives up, saying so in progress(), when it is not stopped
    /// within kRestartTimeoutMs. Needs a client subscribed to events (SandboxTableModel
    /// subscribes the window's).
    void restart(const QString &sandbox);

Q_SIGNALS:
    /// The helper answered `action` on `sandbox` with success. Create is reported before the
    /// start it may be followed by.
    void succeeded(airlock::SandboxActions::Action action, const QString &sandbox);
    /// The helper refused or failed `action`: `text` is failureText(), `error` the helper's.
    void failed(airlock::SandboxActions::Action action, const QString &sandbox, const QString &text,
                const airlock::Error &error);
    /// The helper's answer to create: the sandbox as it is now, before its `sandbox.changed`.
    void sandboxReported(const airlock::Sandbox &sandbox);
    /// A step of a longer workflow (restart) for a status bar, e.g. "Restarting a…".
    void progress(const QString &sandbox, const QString &text);

private:
    /// Calls `action`'s method on `client` with `{name: sandbox}`, reports the answer, then
    /// runs `then` with whether it succeeded.
    void request(HelperClient *client, Action action, const QString &sandbox,
                 std::function<void(bool succeeded)> then = {});

    QPointer<HelperClient> m_client;
};

} // namespace airlock

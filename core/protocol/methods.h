#pragma once

// The one list of JSON-RPC method and notification names. docs/protocol.md documents each;
// both change together.

namespace airlock::protocol {

/// Version spoken in `hello`; a helper refuses other versions with invalid_request.
inline constexpr int kProtocolVersion = 1;

/// Largest message body in bytes, excluding the terminating '\n' (1 MiB). A larger message is
/// answered with a message_too_large error and the connection is closed.
inline constexpr qsizetype kMaxMessageBytes = 1024 * 1024;

namespace method {
inline constexpr char Hello[] = "hello";
inline constexpr char SandboxCreate[] = "sandbox.create";
inline constexpr char SandboxList[] = "sandbox.list";
inline constexpr char SandboxGet[] = "sandbox.get";
inline constexpr char SandboxStart[] = "sandbox.start";
inline constexpr char SandboxStop[] = "sandbox.stop";
inline constexpr char SandboxKill[] = "sandbox.kill";
inline constexpr char SandboxDelete[] = "sandbox.delete";
inline constexpr char ImageList[] = "image.list";
inline constexpr char ConsoleAttach[] = "console.attach";
inline constexpr char ConsoleDetach[] = "console.detach";
inline constexpr char ConsoleWrite[] = "console.write";
inline constexpr char ConsoleResize[] = "console.resize";
inline constexpr char EventsSubscribe[] = "events.subscribe";
inline constexpr char PolicyGet[] = "policy.get";
inline constexpr char PolicySet[] = "policy.set";
inline constexpr char PolicyValidate[] = "policy.validate";
inline constexpr char PolicyDryRun[] = "policy.dryRun";
inline constexpr char SecretSet[] = "secret.set";
inline constexpr char SecretList[] = "secret.list";
inline constexpr char SecretDelete[] = "secret.delete";
inline constexpr char BindingAdd[] = "binding.add";
inline constexpr char BindingList[] = "binding.list";
inline constexpr char BindingRemove[] = "binding.remove";
inline constexpr char EgressHistory[] = "egress.history";
inline constexpr char VmPause[] = "vm.pause";
inline constexpr char VmResume[] = "vm.resume";
inline constexpr char SnapshotCreate[] = "snapshot.create";
inline constexpr char SnapshotList[] = "snapshot.list";
inline constexpr char SnapshotRestore[] = "snapshot.restore";
inline constexpr char SnapshotFork[] = "snapshot.fork";
inline constexpr char SnapshotDelete[] = "snapshot.delete";
inline constexpr char SnapshotPin[] = "snapshot.pin";
inline constexpr char SnapshotRename[] = "snapshot.rename";
inline constexpr char SnapshotSchedule[] = "snapshot.schedule";
inline constexpr char TemplateList[] = "template.list";
inline constexpr char TemplatePrepare[] = "template.prepare";
inline constexpr char ExecStart[] = "exec.start";
inline constexpr char ExecConnect[] = "exec.connect";
inline constexpr char ExecList[] = "exec.list";
inline constexpr char ExecInput[] = "exec.input";
inline constexpr char ExecSignal[] = "exec.signal";
inline constexpr char ExecResize[] = "exec.resize";
inline constexpr char ExecDetach[] = "exec.detach";
inline constexpr char FilesStat[] = "files.stat";
inline constexpr char FilesList[] = "files.list";
inline constexpr char FilesRead[] = "files.read";
inline constexpr char FilesWrite[] = "files.write";
inline constexpr char FilesMkdir[] = "files.mkdir";
inline constexpr char FilesRemove[] = "files.remove";
inline constexpr char FilesRename[] = "files.rename";
inline constexpr char FilesWatch[] = "files.watch";
inline constexpr char FilesUnwatch[] = "files.unwatch";
inline constexpr char WorkspacePushStart[] = "workspace.pushStart";
inline constexpr char WorkspacePushData[] = "workspace.pushData";
inline constexpr char WorkspacePushFinish[] = "workspace.pushFinish";
inline constexpr char WorkspacePullStart[] = "workspace.pullStart";
inline constexpr char WorkspacePullRead[] = "workspace.pullRead";
inline constexpr char WorkspaceCancel[] = "workspace.cancel";
} // namespace method

namespace notification {
inline constexpr char SandboxChanged[] = "sandbox.changed";
inline constexpr char SandboxRemoved[] = "sandbox.removed";
inline constexpr char ConsoleOutput[] = "console.output";
inline constexpr char PolicyChanged[] = "policy.changed";
inline constexpr char EgressEvent[] = "egress.event";
inline constexpr char SnapshotChanged[] = "snapshot.changed";
inline constexpr char ExecOutput[] = "exec.output";
inline constexpr char ExecExit[] = "exec.exit";
inline constexpr char FilesEvent[] = "files.event";
inline constexpr char FilesWatchEnd[] = "files.watchEnd";
} // namespace notification

} // namespace airlock::protocol

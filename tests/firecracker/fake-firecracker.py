#!/usr/bin/env python3
"""A Firecracker conformance server for Airlock's tests (no KVM, no guest).

Started like `firecracker --api-sock PATH --id NAME`, it serves Firecracker's API on PATH and
validates every request against the API description (firecracker-api-v1.yaml beside this
file, Swagger 2.0): the path (with its path parameters), the method, the body against its
definition (required fields, JSON types, enums, minimum/maximum, nested $refs, and no unknown
fields: Firecracker's request types are `deny_unknown_fields`, so a property the definition
does not name is refused unless it declares additionalProperties), and the order Firecracker
enforces: "Pre-boot only" operations (their summary says so) before InstanceStart,
"Post-boot only" ones and PATCH /vm after it, a snapshot only of a paused guest, a snapshot load
only on a fresh process (nothing but the logger and metrics configured before it).

It answers as Firecracker does: 204 without a body, 200 with a JSON body for GET /version and
GET /, 400 with {"fault_message": ...} for anything refused. Every refusal is also appended as
one JSON line to the --violations file, which the test reads: a request the description does
not allow fails the test unless the test planted it.

Serial console: Firecracker's stdout. After InstanceStart (or a resumed snapshot load) it
writes a fake boot banner, and echoes its stdin there. SendCtrlAltDel ends the process with
status 0, as a real guest's reboot does. The vsock device (PUT /vsock) is a Unix socket at
uds_path that answers `CONNECT <port>\\n` with `OK <n>\\n` once the fake guest "listens"
(--agent-delay-ms after the boot), then sends `guest-agent-hello\\n` and echoes; with --agent
the real airlock-agent serves the connection instead (natively, in a sysroot beside the API
socket).

Bundled as a zip application (python3 -m zipapp, with this file, the description and a
__main__ calling main()) it is one executable file, as a jailed Firecracker must be; its
violations then go to violations.jsonl beside the API socket.

Test knobs: --version, --die-after (exit 1 after answering that endpoint), --no-socket (never
listen), --fault METHOD:PATH (answer 400 with a fault message), --ignore-ctrl-alt-del,
--agent-delay-ms, --requests FILE (every request as a JSON line, for tests of what was sent).
A snapshot load opens the drives the snapshot recorded and logs the first bytes of each to
fake-drives.log beside the API socket.

Guest memory: a fake of it (4 KiB pages, only the non-zero ones kept). The boot writes
"FAKE-MEMORY" at offset 0, and every time the guest runs (InstanceStart, each PATCH /vm Resumed
of a paused guest) it writes --dirty-pages-per-run pages chosen from the run's number, so what
changes between two snapshots is deterministic and set by the test through pause and resume.
A snapshot load reads the memory file into it. PUT /snapshot/create Full writes all of it
(sparse, as large as the guest's memory, as Firecracker's file is); Diff writes, into an equally
large sparse file, only the pages written since the last snapshot or load, as Firecracker does
with `track_dirty_pages`. A Diff is refused without `track_dirty_pages` (in PUT /machine-config
or PUT /snapshot/load): Firecracker before 1.13 refuses it, later ones guess the pages with
mincore(2), which the fake does not model. It is also refused before any snapshot or load of
this process: Firecracker would write the pages written since the boot, a diff over zeroes that
Airlock must never ask for (its first snapshot of a cold boot is Full). After every snapshot
the whole fake memory is also written to fake-memory.expected beside the API socket, for the
test to compare with what Airlock merged. --hostile-diff symlink|large|replaced makes a Diff's
memory file a symlink, larger than the guest's memory, or a new file in place of the one given;
--refuse-diff answers every Diff with a fault message, as Firecracker may.
"""

import argparse
import json
import os
import re
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


def read_description(path):
    """The API description: the file, or the copy inside the zip application this runs from
    (a single executable file, which a jail shows as its /firecracker)."""
    if os.path.isfile(path):
        with open(path) as f:
            return f.read()
    import zipfile
    with zipfile.ZipFile(sys.argv[0]) as bundle:
        return bundle.read(os.path.basename(path)).decode()


class Spec:
    def __init__(self, path):
        self.doc = yaml.safe_load(read_description(path))
        self.definitions = self.doc.get("definitions", {})
        self.routes = []
        for template, operations in (self.doc.get("paths") or {}).items():
            if not operations:
                continue
            names = re.findall(r"\{([^}]+)\}", template)
            pattern = "^" + re.sub(r"\{[^}]+\}", "([^/]+)", template) + "$"
            self.routes.append((re.compile(pattern), template, names, operations))

    def route(self, path):
        for pattern, template, names, operations in self.routes:
            match = pattern.match(path)
            if match:
                return template, dict(zip(names, match.groups())), operations
        return None, None, None

    def resolve(self, schema):
        while "$ref" in schema:
            schema = self.definitions[schema["$ref"].split("/")[-1]]
        return schema

    def validate(self, value, schema, where):
        """Problems of `value` against `schema`, as sentences naming the field."""
        schema = self.resolve(schema)
        problems = []
        kind = schema.get("type", "object" if "properties" in schema else None)
        if kind == "object":
            if not isinstance(value, dict):
                return [f"{where} must be an object"]
            for name in schema.get("required", []):
                if name not in value:
                    problems.append(f"{where}.{name} is required")
            properties = schema.get("properties", {})
            extra = schema.get("additionalProperties", False)
            for name, item in value.items():
                if name in properties:
                    problems += self.validate(item, properties[name], f"{where}.{name}")
                elif extra is False:
                    problems.append(f"{where}.{name} is not a field of this request")
                elif isinstance(extra, dict):
                    problems += self.validate(item, extra, f"{where}.{name}")
        elif kind == "array":
            if not isinstance(value, list):
                return [f"{where} must be an array"]
            for i, item in enumerate(value):
                problems += self.validate(item, schema.get("items", {}), f"{where}[{i}]")
        elif kind == "string":
            if not isinstance(value, str):
                return [f"{where} must be a string, not {json.dumps(value)}"]
        elif kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                return [f"{where} must be an integer, not {json.dumps(value)}"]
        elif kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return [f"{where} must be a number, not {json.dumps(value)}"]
        elif kind == "boolean":
            if not isinstance(value, bool):
                return [f"{where} must be a boolean, not {json.dumps(value)}"]
        if "enum" in schema and value not in schema["enum"]:
            problems.append(f"{where} must be one of {schema['enum']}, not {json.dumps(value)}")
        if "minimum" in schema and isinstance(value, int) and value < schema["minimum"]:
            problems.append(f"{where} must be at least {schema['minimum']}")
        if "maximum" in schema and isinstance(value, int) and value > schema["maximum"]:
            problems.append(f"{where} must be at most {schema['maximum']}")
        return problems


class Fault(Exception):
    pass


class Vm:
    """What Firecracker's state machine allows, as far as the description and its docs say."""

    def __init__(self, options):
        self.options = options
        self.lock = threading.Lock()
        self.state = "Not started"
        self.configured = set()  # templates of the pre-boot resources set
        self.machine = {"vcpu_count": 1, "mem_size_mib": 128}
        self.vsock_path = None
        self.drives = {}  # drive_id -> path_on_host, as a snapshot records them
        self.agent_listening_at = None
        self.booted = False
        self.memory = {}  # page index -> bytes: the fake guest memory, non-zero pages only
        self.dirty = set()  # pages written since the boot, the last snapshot or the load
        self.track_dirty_pages = False
        self.has_base = False  # a snapshot was taken or loaded: a Diff has something to add to
        self.runs = 0

    PAGE = 4096

    def memory_bytes(self):
        return self.machine["mem_size_mib"] * 1024 * 1024

    def write_page(self, index, data):
        self.memory[index] = data[:self.PAGE].ljust(self.PAGE, b"\0")
        self.dirty.add(index)

    def guest_runs(self):
        """The guest ran: it wrote pages chosen from the run's number (deterministic)."""
        self.runs += 1
        pages = self.memory_bytes() // self.PAGE
        for i in range(self.options.dirty_pages_per_run):
            index = (self.runs * 7919 + i * 104729) % pages
            self.write_page(index, f"run {self.runs} page {index}".encode())

    def read_memory(self, path):
        """The memory file of a load: its data extents, page by page."""
        self.memory = {}
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            offset = 0
            while offset < size:
                try:
                    data = os.lseek(f.fileno(), offset, os.SEEK_DATA)
                except OSError:
                    break
                hole = os.lseek(f.fileno(), data, os.SEEK_HOLE)
                start = data - data % self.PAGE
                f.seek(start)
                for index in range(start // self.PAGE, (hole + self.PAGE - 1) // self.PAGE):
                    page = f.read(self.PAGE)
                    if page.strip(b"\0"):
                        self.memory[index] = page.ljust(self.PAGE, b"\0")
                offset = hole

    def write_memory(self, path, pages):
        with open(path, "wb") as f:
            f.truncate(self.memory_bytes())
            for index in sorted(pages):
                f.seek(index * self.PAGE)
                f.write(self.memory[index])

    def create_snapshot(self, body):
        path = body["mem_file_path"]
        if body.get("snapshot_type", "Full") == "Diff":
            if not self.track_dirty_pages:
                raise Fault("Create snapshot error: Diff snapshots are not allowed on uVMs with "
                            "dirty page tracking disabled")
            if not self.has_base:
                raise Fault("Create snapshot error: a Diff before any snapshot or load (the "
                            "conformance server is stricter than Firecracker here)")
            self.write_memory(path, self.dirty & self.memory.keys())
            hostile = self.options.hostile_diff
            if hostile == "symlink":
                os.unlink(path)
                os.symlink(os.path.join(os.path.dirname(self.options.api_sock),
                                        "fake-memory.expected"), path)
            elif hostile == "large":
                with open(path, "r+b") as f:
                    f.truncate(self.memory_bytes() + self.PAGE)
                    f.seek(self.memory_bytes())
                    f.write(b"beyond the guest's memory".ljust(self.PAGE, b"\0"))
            elif hostile == "replaced":
                os.unlink(path)
                self.write_memory(path, self.memory.keys())
        else:
            self.write_memory(path, self.memory.keys())
            hostile = self.options.hostile_full
            if hostile == "large":
                # Sparse, so free: what a compromised Firecracker could make the store chew on
                # (it could go to the file system's limit).
                with open(path, "r+b") as f:
                    f.truncate(self.memory_bytes() + (1 << 30))
            elif hostile == "replaced":
                os.unlink(path)
                self.write_memory(path, self.memory.keys())
            elif hostile == "symlink":
                os.unlink(path)
                os.symlink("/etc/hostname", path)
        self.write_memory(os.path.join(os.path.dirname(self.options.api_sock),
                                       "fake-memory.expected"), self.memory.keys())
        self.dirty = set()
        self.has_base = True

    def apply(self, method, template, params, body, operation):
        summary = operation.get("summary", "")
        if "Pre-boot only" in summary and self.booted:
            raise Fault(f"{method} {template} is pre-boot only and the microVM is running")
        if "Post-boot only" in summary and not self.booted:
            raise Fault(f"{method} {template} is post-boot only and the microVM is not started")
        if template == "/snapshot/load":
            if self.configured - {"/logger", "/metrics"}:
                raise Fault("Loading a microVM snapshot not allowed after configuring boot-specific "
                            "resources: " + ", ".join(sorted(self.configured)))
            state = body["snapshot_path"]
            if not os.path.isfile(state) or not open(state).read().startswith("FAKE-VMSTATE"):
                raise Fault(f"Cannot read the snapshot state file {state}")
            memory = body.get("mem_backend", {}).get("backend_path") or body.get("mem_file_path")
            if not memory or not os.path.isfile(memory):
                raise Fault(f"Cannot open the memory file {memory}")
            saved = json.loads(open(state).read()[len("FAKE-VMSTATE"):])
            self.machine = saved["machine"]
            # The load's memory is the base of the next Diff; the dirty page log starts clean.
            self.read_memory(memory)
            self.runs = saved.get("runs", 0)  # the guest goes on from where it was saved
            self.dirty = set()
            self.has_base = True
            self.track_dirty_pages = bool(body.get("track_dirty_pages")
                                          or body.get("enable_diff_snapshots"))
            # As Firecracker does: the drives are opened again by the paths the snapshot
            # recorded (the API has no override for them). Which file each path reached goes
            # to fake-drives.log beside the API socket (the runtime directory).
            self.drives = saved.get("drives", {})
            opened = {}
            for drive, path in sorted(self.drives.items()):
                try:
                    with open(path, "rb") as disk:
                        head = disk.read(64).rstrip(b"\0").decode(errors="replace")
                        opened[drive] = {"head": head, "inode": os.fstat(disk.fileno()).st_ino}
                except OSError as error:
                    raise Fault(f"Cannot open the drive {drive} at {path}: {error.strerror}")
            log_path = os.path.join(os.path.dirname(self.options.api_sock), "fake-drives.log")
            with open(log_path, "a") as log:
                log.write(json.dumps(opened) + "\n")
            self.vsock_path = (body.get("vsock_override") or {}).get("uds_path", saved["vsock"])
            self.booted = True
            self.state = "Paused"
            if body.get("resume_vm"):
                self.resumed()
            return
        if template == "/vm":
            if not self.booted:
                raise Fault("The microVM is not started; PATCH /vm is post-boot only")
            if body["state"] == "Paused":
                self.state = "Paused"
            else:
                self.resumed()
            return
        if template == "/snapshot/create":
            if self.state != "Paused":
                raise Fault("Create snapshot error: the microVM must be paused")
            self.create_snapshot(body)
            with open(body["snapshot_path"], "w") as f:
                f.write("FAKE-VMSTATE" + json.dumps({"machine": self.machine, "runs": self.runs,
                                                     "vsock": self.vsock_path,
                                                     "drives": self.drives}))
            return
        if template == "/actions":
            action = body["action_type"]
            if action == "InstanceStart":
                if self.booted:
                    raise Fault("The microVM is already running")
                if "/boot-source" not in self.configured:
                    raise Fault("Cannot start microvm without kernel configuration")
                self.booted = True
                self.write_page(0, b"FAKE-MEMORY")
                self.resumed()
            elif action == "SendCtrlAltDel":
                if not self.booted:
                    raise Fault("SendCtrlAltDel is post-boot only")
                if not self.options.ignore_ctrl_alt_del:
                    threading.Timer(0.05, lambda: os._exit(0)).start()
            return
        if template == "/machine-config" and method == "PUT":
            self.machine = {"vcpu_count": body["vcpu_count"], "mem_size_mib": body["mem_size_mib"]}
            self.track_dirty_pages = body.get("track_dirty_pages", False)
        if template == "/vsock":
            self.vsock_path = body["uds_path"]
        if template == "/drives/{drive_id}":
            self.drives[body["drive_id"]] = body["path_on_host"]
        if template == "/logger":
            if not os.path.exists(body["log_path"]):
                raise Fault(f"Logger error: cannot open {body['log_path']}")
        for field in ("kernel_image_path", "initrd_path", "path_on_host"):
            if field in body and not os.path.isfile(body[field]):
                raise Fault(f"{field} {body[field]} does not exist")
        self.configured.add(template)

    def resumed(self):
        first = self.state != "Running" and self.agent_listening_at is None
        if self.state != "Running":
            self.guest_runs()
        self.state = "Running"
        if first:
            self.agent_listening_at = time.monotonic() + self.options.agent_delay_ms / 1000
            if self.vsock_path:
                start_vsock(self)
            serial_write(b"Linux version 6.1.0-fake (fake-firecracker) #1 SMP\r\n"
                         b"airlock-guest: console ready\r\n")


serial_lock = threading.Lock()


def serial_write(data):
    with serial_lock:
        os.write(1, data)


def start_vsock(vm):
    path = vm.vsock_path
    if os.path.exists(path):
        os.unlink(path)

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            line = self.rfile.readline(64)
            match = re.match(rb"^CONNECT ([0-9]+)\n$", line)
            if not match or time.monotonic() < vm.agent_listening_at:
                return  # nothing listens in the guest yet: Firecracker closes the connection
            if vm.options.agent:
                # The real guest agent, run natively on the accepted connection (as tests/agent
                # does): its identity refresh writes under a sysroot beside the API socket and
                # runs /bin/true for `ip`, so airlockd's refreshes are answered for real.
                self.wfile.write(b"OK 1073741824\n")
                self.wfile.flush()
                run_agent(vm.options, self.request)
                return
            self.wfile.write(b"OK 1073741824\n" + b"guest-agent-hello\n")
            self.wfile.flush()
            while True:
                data = self.request.recv(4096)
                if not data:
                    return
                self.request.sendall(data)

    server = socketserver.ThreadingUnixStreamServer(path, Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()


def probe_abstract(options):
    """What a guest that took over Firecracker could reach: an abstract Unix socket of the
    host's network namespace (a chroot does not hide those)."""
    import errno
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect("\0" + options.probe_abstract)
        outcome = "connected"
    except OSError as error:
        outcome = "refused " + errno.errorcode.get(error.errno, str(error.errno))
    finally:
        probe.close()
    with open(os.path.join(os.path.dirname(options.api_sock), "abstract-probe"), "w") as f:
        f.write(outcome + "\n")


def agent_program(options):
    """--agent PATH, or with --agent bundled the airlock-agent inside this zip application,
    extracted once beside the API socket (a jail shows nothing else)."""
    if options.agent != "bundled":
        return options.agent
    path = os.path.join(os.path.dirname(options.api_sock), "airlock-agent")
    with agent_lock:
        if not os.path.exists(path):
            import zipfile
            with zipfile.ZipFile(sys.argv[0]) as bundle:
                data = bundle.read("airlock-agent")
            with open(path + ".tmp", "wb") as f:
                f.write(data)
            os.chmod(path + ".tmp", 0o755)
            os.rename(path + ".tmp", path)
    return path


agent_lock = threading.Lock()


def run_agent(options, connection):
    import subprocess
    sysroot = os.path.join(os.path.dirname(options.api_sock), "agent-sysroot")
    # Its entropy goes to SYSROOT/dev/urandom, a file the agent creates in an existing /dev.
    os.makedirs(os.path.join(sysroot, "dev"), exist_ok=True)
    fd = connection.fileno()
    with open(os.path.join(os.path.dirname(options.api_sock), "agent.log"), "ab") as log:
        subprocess.run([agent_program(options), "--fd", str(fd), "--sysroot", sysroot,
                        "--ip", "/bin/true"], pass_fds=[fd], stdin=subprocess.DEVNULL,
                       stdout=log, stderr=log)


def record(options, entry):
    with open(options.violations, "a") as f:
        f.write(json.dumps(entry) + "\n")


def make_handler(spec, vm, options):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, body=None):
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            try:
                self.end_headers()
                # A client that has read a 204's head may close at once: the empty body is not
                # written, and a peer gone after a full answer is no error of the server.
                if data:
                    self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def refuse(self, why):
            record(options, {"method": self.command, "path": self.path, "fault": why})
            self.answer(400, {"fault_message": why})

        def handle_any(self):
            method = self.command.lower()
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if options.requests:
                with open(options.requests, "a") as f:
                    f.write(json.dumps({"method": self.command, "path": self.path,
                                        "body": raw.decode(errors="replace")}) + "\n")
            template, params, operations = spec.route(self.path)
            if template is None:
                return self.refuse(f"Invalid request: no path {self.path} in the API")
            operation = operations.get(method)
            if operation is None:
                return self.refuse(f"Invalid request method {self.command} for {template}")
            body_param = None
            for param in operation.get("parameters", []):
                if param.get("in") == "path" and param["name"] not in params:
                    return self.refuse(f"Missing path parameter {param['name']}")
                if param.get("in") == "body":
                    body_param = param
            body = None
            if body_param is not None:
                if not raw and body_param.get("required"):
                    return self.refuse(f"{self.command} {template} needs a body")
                if raw:
                    if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
                        return self.refuse("The body must be application/json")
                    try:
                        body = json.loads(raw)
                    except ValueError as error:
                        return self.refuse(f"The body is not JSON: {error}")
                    problems = spec.validate(body, body_param["schema"], "body")
                    if problems:
                        return self.refuse("; ".join(problems))
                    # A path parameter names the resource its body describes.
                    for name, value in params.items():
                        if name in body and body[name] != value:
                            return self.refuse(f"The id in the path ({value}) does not match "
                                               f"body.{name} ({body[name]})")
            elif raw:
                return self.refuse(f"{self.command} {template} takes no body")
            if f"{self.command}:{template}" in options.fault:
                # Planted by the test: an answer Firecracker could give, not a violation.
                return self.answer(400, {"fault_message": f"Injected fault for {template}"})
            if (options.refuse_diff and template == "/snapshot/create"
                    and body.get("snapshot_type") == "Diff"):
                return self.answer(400, {"fault_message": "Injected fault for a Diff snapshot"})
            with vm.lock:
                try:
                    if method == "get":
                        result = self.get(template)
                    else:
                        vm.apply(self.command, template, params, body, operation)
                        result = None
                except Fault as fault:
                    return self.refuse(str(fault))
            self.answer(200 if result is not None else 204, result)
            if template == options.die_after:
                sys.stderr.write(f"fake-firecracker: dying after {template} as asked\n")
                sys.stderr.flush()
                os._exit(1)

        def get(self, template):
            if template == "/version":
                return {"firecracker_version": options.version}
            if template == "/":
                return {"app_name": "Firecracker", "id": options.id, "state": vm.state,
                        "vmm_version": options.version}
            if template == "/machine-config":
                return dict(vm.machine, smt=False)
            raise Fault(f"GET {template} is not served by the conformance server")

        do_GET = do_PUT = do_PATCH = do_POST = do_DELETE = handle_any

    return Handler


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--api-sock", required=True)
    parser.add_argument("--id", default="anonymous-instance")
    parser.add_argument("--spec", default=os.path.join(HERE, "firecracker-api-v1.yaml"))
    parser.add_argument("--violations", default="",
                        help="default: violations.jsonl beside the API socket")
    parser.add_argument("--version", default="1.17.0-dev")
    parser.add_argument("--die-after", default="")
    parser.add_argument("--no-socket", action="store_true")
    parser.add_argument("--fault", action="append", default=[])
    parser.add_argument("--ignore-ctrl-alt-del", action="store_true")
    parser.add_argument("--agent-delay-ms", type=int, default=300)
    parser.add_argument("--probe-abstract", default="",
                        help="try to connect to this abstract Unix socket at start; the outcome "
                             "goes to abstract-probe beside the API socket")
    parser.add_argument("--agent", default="",
                        help="serve vsock port 1024 with this airlock-agent (or 'bundled')")
    parser.add_argument("--requests", default="", help="append every request here as JSON")
    parser.add_argument("--dirty-pages-per-run", type=int, default=3)
    parser.add_argument("--refuse-diff", action="store_true")
    parser.add_argument("--hostile-full", choices=["", "symlink", "large", "replaced"],
                        default="", help="what a Full snapshot leaves at mem_file_path")
    parser.add_argument("--hostile-diff", choices=["", "symlink", "large", "replaced"],
                        default="")
    options = parser.parse_args(argv)
    if not options.violations:
        options.violations = os.path.join(os.path.dirname(options.api_sock), "violations.jsonl")
    if options.probe_abstract:
        probe_abstract(options)
    spec = Spec(options.spec)
    vm = Vm(options)
    if options.no_socket:
        while True:
            time.sleep(3600)

    def echo_stdin():
        while True:
            data = os.read(0, 4096)
            if not data:
                return
            serial_write(data)

    threading.Thread(target=echo_stdin, daemon=True).start()
    if os.path.exists(options.api_sock):
        sys.stderr.write(f"Error: the API socket {options.api_sock} already exists\n")
        sys.exit(1)
    server = socketserver.UnixStreamServer(options.api_sock, make_handler(spec, vm, options))
    server.serve_forever()


if __name__ == "__main__":
    main()

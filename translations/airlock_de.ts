<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>ErrorText</name>
    <message>
        <source>The sandbox or image does not exist.</source>
        <translation>Die Sandbox oder das Abbild existiert nicht.</translation>
    </message>
    <message>
        <source>The name is not valid.</source>
        <translation>Der Name ist ungültig.</translation>
    </message>
    <message>
        <source>The helper refused the request: permission denied.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sandbox is in use.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The helper cannot run virtual machines right now.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A sandbox with that name already exists.</source>
        <translation>Eine Sandbox mit diesem Namen existiert bereits.</translation>
    </message>
    <message>
        <source>That is not possible in the sandbox&apos;s current state.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The operation failed on the host.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The helper did not answer in time.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The connection to the helper was lost.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The request had an invalid value.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The message was too large.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The helper reported an internal error.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You may not use the Airlock helper</source>
        <translation>Sie dürfen den Airlock-Helfer nicht verwenden</translation>
    </message>
    <message>
        <source>The Airlock helper speaks another protocol version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The Airlock helper is not reachable</source>
        <translation>Der Airlock-Helfer ist nicht erreichbar</translation>
    </message>
    <message>
        <source>The connection to the Airlock helper failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only root and members of the group “airlock” may manage sandboxes. Add your user with &lt;code&gt;sudo usermod -aG airlock %1&lt;/code&gt;, then log out and in again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Install the same Airlock version for the window and the helper.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start the helper with &lt;code&gt;sudo systemctl start airlockd&lt;/code&gt; (or run &lt;code&gt;airlockd&lt;/code&gt; as root), then press Retry.</source>
        <translation>Starten Sie den Helfer mit &lt;code&gt;sudo systemctl start airlockd&lt;/code&gt; (oder führen Sie &lt;code&gt;airlockd&lt;/code&gt; als root aus) und klicken Sie dann auf „Erneut versuchen“.</translation>
    </message>
</context>
<context>
    <name>SshDialogPrompter</name>
    <message>
        <source>Unknown Host Key</source>
        <translation>Unbekannter Host-Schlüssel</translation>
    </message>
    <message>
        <source>The authenticity of host “%1” cannot be established.</source>
        <translation>Die Echtheit des Hosts „%1“ kann nicht festgestellt werden.</translation>
    </message>
    <message>
        <source>Its %1 key fingerprint is:
%2

Compare it with the fingerprint the host&apos;s administrator gives you (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub). If you connect, the key is added to %3.</source>
        <translation>Der Fingerabdruck seines %1-Schlüssels ist:
%2

Vergleichen Sie ihn mit dem Fingerabdruck, den Ihnen die Administration des Hosts nennt (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub). Wenn Sie sich verbinden, wird der Schlüssel zu %3 hinzugefügt.</translation>
    </message>
    <message>
        <source>&amp;Connect</source>
        <translation>&amp;Verbinden</translation>
    </message>
    <message>
        <source>Passphrase for the key %1:</source>
        <translation>Passphrase für den Schlüssel %1:</translation>
    </message>
    <message>
        <source>Password for %1:</source>
        <translation>Passwort für %1:</translation>
    </message>
    <message>
        <source>That was not accepted. Try again.</source>
        <translation>Das wurde nicht angenommen. Versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>SSH Login – %1</source>
        <translation>SSH-Anmeldung – %1</translation>
    </message>
</context>
<context>
    <name>airlock::ConnectionPage</name>
    <message>
        <source>&amp;Retry</source>
        <translation>&amp;Erneut versuchen</translation>
    </message>
    <message>
        <source>Retry connecting to the helper</source>
        <translation>Erneut mit dem Helfer verbinden</translation>
    </message>
    <message>
        <source>Helper connection problem</source>
        <translation>Problem mit der Helfer-Verbindung</translation>
    </message>
    <message>
        <source>Connecting to the %1…</source>
        <translation>Verbinde mit dem %1 …</translation>
    </message>
</context>
<context>
    <name>airlock::ConnectionsDialog</name>
    <message>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <source>&amp;Remove</source>
        <translation>&amp;Entfernen</translation>
    </message>
    <message>
        <source>Connections</source>
        <translation>Verbindungen</translation>
    </message>
    <message>
        <source>Remote hosts</source>
        <translation>Entfernte Hosts</translation>
    </message>
    <message>
        <source>your login name</source>
        <translation>Ihr Anmeldename</translation>
    </message>
    <message>
        <source>build.example.org</source>
        <translation>build.example.org</translation>
    </message>
    <message>
        <source>ssh-agent and ~/.ssh/id_*</source>
        <translation>ssh-agent und ~/.ssh/id_*</translation>
    </message>
    <message>
        <source>&amp;Add</source>
        <translation>&amp;Hinzufügen</translation>
    </message>
    <message>
        <source>&amp;User:</source>
        <translation>&amp;Benutzer:</translation>
    </message>
    <message>
        <source>&amp;Host:</source>
        <translation>&amp;Host:</translation>
    </message>
    <message>
        <source>&amp;Port:</source>
        <translation>&amp;Port:</translation>
    </message>
    <message>
        <source>Helper &amp;socket:</source>
        <translation>Helfer-&amp;Socket:</translation>
    </message>
    <message>
        <source>&amp;Identity file:</source>
        <translation>&amp;Schlüsseldatei:</translation>
    </message>
    <message>
        <source>Passwords and passphrases are asked when connecting and never stored. Host keys are checked against ~/.ssh/known_hosts.</source>
        <translation>Passwörter und Passphrasen werden beim Verbinden abgefragt und nie gespeichert. Host-Schlüssel werden mit ~/.ssh/known_hosts abgeglichen.</translation>
    </message>
    <message>
        <source>Identity File</source>
        <translation>Schlüsseldatei</translation>
    </message>
    <message>
        <source>(new host)</source>
        <translation>(neuer Host)</translation>
    </message>
    <message>
        <source>Enter a valid host name or address.</source>
        <translation>Geben Sie einen gültigen Hostnamen oder eine gültige Adresse ein.</translation>
    </message>
</context>
<context>
    <name>airlock::ConsoleTab</name>
    <message>
        <source>Console notice</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Console of %1</source>
        <translation>Konsole von %1</translation>
    </message>
    <message>
        <source>The connection to the helper was lost; the console reattaches when it is back.</source>
        <translation>Die Verbindung zum Helfer ist unterbrochen; die Konsole verbindet sich neu, sobald er zurück ist.</translation>
    </message>
    <message>
        <source>Sandbox %1 is not running; start it to type here.</source>
        <translation>Sandbox %1 läuft nicht; starten Sie sie, um hier zu tippen.</translation>
    </message>
</context>
<context>
    <name>airlock::HostConnection</name>
    <message>
        <source>This computer</source>
        <translation>Dieser Computer</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>Verbinde…</translation>
    </message>
    <message>
        <source>Connected</source>
        <translation>Verbunden</translation>
    </message>
    <message>
        <source>Authentication failed</source>
        <translation>Anmeldung fehlgeschlagen</translation>
    </message>
    <message>
        <source>Host key changed</source>
        <translation>Host-Schlüssel geändert</translation>
    </message>
    <message>
        <source>Disconnected</source>
        <translation>Getrennt</translation>
    </message>
</context>
<context>
    <name>airlock::HostSidebar</name>
    <message>
        <source>Hosts and sandboxes</source>
        <translation>Hosts und Sandboxen</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
</context>
<context>
    <name>airlock::MainWindow</name>
    <message>
        <source>Airlock</source>
        <translation>Airlock</translation>
    </message>
    <message>
        <source>Sandboxes</source>
        <translation>Sandboxen</translation>
    </message>
    <message>
        <source>Consoles</source>
        <translation>Konsolen</translation>
    </message>
    <message>
        <source>Select a sandbox and choose &lt;b&gt;Open Console&lt;/b&gt; (Ctrl+O) or double-click it to see its console here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Helper connection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not read the sandbox list: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>helper</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connecting to %1…</source>
        <translation>Verbinde mit %1 …</translation>
    </message>
    <message>
        <source>&amp;New Sandbox…</source>
        <translation>&amp;Neue Sandbox …</translation>
    </message>
    <message>
        <source>Create a new sandbox</source>
        <translation>Eine neue Sandbox anlegen</translation>
    </message>
    <message>
        <source>&amp;Start</source>
        <translation>&amp;Starten</translation>
    </message>
    <message>
        <source>Ctrl+R</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Boot the selected sandbox</source>
        <translation>Die ausgewählte Sandbox starten</translation>
    </message>
    <message>
        <source>St&amp;op</source>
        <translation>St&amp;oppen</translation>
    </message>
    <message>
        <source>Ctrl+T</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask the selected sandbox to power off</source>
        <translation>Die ausgewählte Sandbox herunterfahren</translation>
    </message>
    <message>
        <source>&amp;Force Stop</source>
        <translation>&amp;Sofort beenden</translation>
    </message>
    <message>
        <source>Ctrl+Shift+K</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kill the selected sandbox&apos;s virtual machine at once</source>
        <translation>Die virtuelle Maschine der ausgewählten Sandbox sofort beenden</translation>
    </message>
    <message>
        <source>&amp;Delete…</source>
        <translation>&amp;Löschen …</translation>
    </message>
    <message>
        <source>Delete the selected sandbox</source>
        <translation>Die ausgewählte Sandbox löschen</translation>
    </message>
    <message>
        <source>Open &amp;Console</source>
        <translation>&amp;Konsole öffnen</translation>
    </message>
    <message>
        <source>Ctrl+O</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the selected sandbox&apos;s console</source>
        <translation>Die Konsole der ausgewählten Sandbox zeigen</translation>
    </message>
    <message>
        <source>&amp;Close Console</source>
        <translation>Konsole &amp;schließen</translation>
    </message>
    <message>
        <source>Ctrl+Shift+W</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close the current console tab</source>
        <translation>Den aktuellen Konsolen-Reiter schließen</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <source>Quit Airlock</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About Airlock</source>
        <translation>Ü&amp;ber Airlock</translation>
    </message>
    <message>
        <source>Version and license</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <source>&amp;Sandbox</source>
        <translation>&amp;Sandbox</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No sandbox named “%1”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not create sandbox “%1”.</source>
        <translation>Sandbox „%1“ konnte nicht angelegt werden.</translation>
    </message>
    <message>
        <source>Could not start sandbox “%1”.</source>
        <translation>Sandbox „%1“ konnte nicht gestartet werden.</translation>
    </message>
    <message>
        <source>Could not stop sandbox “%1”.</source>
        <translation>Sandbox „%1“ konnte nicht gestoppt werden.</translation>
    </message>
    <message>
        <source>Could not force-stop sandbox “%1”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete Sandbox</source>
        <translation>Sandbox löschen</translation>
    </message>
    <message>
        <source>Delete sandbox “%1”?</source>
        <translation>Sandbox „%1“ löschen?</translation>
    </message>
    <message>
        <source>Its disk and console history are removed. This cannot be undone.</source>
        <translation>Ihre Festplatte und der Konsolenverlauf werden entfernt. Das lässt sich nicht rückgängig machen.</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>&amp;Löschen</translation>
    </message>
    <message>
        <source>Could not delete sandbox “%1”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KVM: hardware virtualisation</source>
        <translation>KVM: Hardware-Virtualisierung</translation>
    </message>
    <message>
        <source>TCG: software emulation</source>
        <translation>TCG: Software-Emulation</translation>
    </message>
    <message>
        <source>Connected to %1 (%2)</source>
        <translation>Verbunden mit %1 (%2)</translation>
    </message>
    <message>
        <source>Not connected to %1</source>
        <translation>Nicht verbunden mit %1</translation>
    </message>
    <message>
        <source>About Airlock</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;h3&gt;Airlock %1&lt;/h3&gt;&lt;p&gt;Runs untrusted coding agents in QEMU microVM sandboxes managed by a privileged helper.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No sandboxes yet. Create one with &lt;b&gt;New Sandbox&lt;/b&gt; (Ctrl+N).</source>
        <translation>Noch keine Sandboxen. Legen Sie eine mit &lt;b&gt;Neue Sandbox&lt;/b&gt; an (Strg+N).</translation>
    </message>
    <message>
        <source>&amp;Connections…</source>
        <translation>&amp;Verbindungen…</translation>
    </message>
    <message>
        <source>Ctrl+Shift+H</source>
        <translation>Ctrl+Shift+H</translation>
    </message>
    <message>
        <source>Add, edit or remove remote hosts reached over SSH</source>
        <translation>Über SSH erreichte entfernte Hosts hinzufügen, bearbeiten oder entfernen</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
</context>
<context>
    <name>airlock::NewSandboxDialog</name>
    <message>
        <source>&amp;Start after creating</source>
        <translation>Nach dem Anlegen &amp;starten</translation>
    </message>
    <message>
        <source>New Sandbox</source>
        <translation>Neue Sandbox</translation>
    </message>
    <message>
        <source>e.g. agent-1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sandbox name</source>
        <translation>Name der Sandbox</translation>
    </message>
    <message>
        <source>Name problem</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Virtual CPUs</source>
        <translation>Virtuelle CPUs</translation>
    </message>
    <message>
        <source> MiB</source>
        <translation> MiB</translation>
    </message>
    <message>
        <source>Memory in MiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Guest image</source>
        <translation>Gast-Abbild</translation>
    </message>
    <message>
        <source>&amp;Name:</source>
        <translation>&amp;Name:</translation>
    </message>
    <message>
        <source>&amp;vCPUs:</source>
        <translation>&amp;vCPUs:</translation>
    </message>
    <message>
        <source>&amp;Memory:</source>
        <translation>&amp;Speicher:</translation>
    </message>
    <message>
        <source>&amp;Image:</source>
        <translation>&amp;Abbild:</translation>
    </message>
    <message>
        <source>A sandbox named “%1” already exists.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not list images: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The helper has no guest images yet; build one with installers/guest/build-image.sh.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
</context>
<context>
    <name>airlock::SandboxTableModel</name>
    <message>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Zustand</translation>
    </message>
    <message>
        <source>Acceleration</source>
        <translation>Beschleunigung</translation>
    </message>
    <message>
        <source>vCPUs</source>
        <translation>vCPUs</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <source>Uptime</source>
        <translation>Laufzeit</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Gestoppt</translation>
    </message>
    <message>
        <source>Starting</source>
        <translation>Startet</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>Läuft</translation>
    </message>
    <message>
        <source>Stopping</source>
        <translation>Stoppt</translation>
    </message>
    <message>
        <source>KVM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TCG (software)</source>
        <translation>TCG (Software)</translation>
    </message>
    <message>
        <source>—</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>airlock::TerminalView</name>
    <message>
        <source>Terminal</source>
        <translation>Terminal</translation>
    </message>
    <message>
        <source>Console of the sandbox. Ctrl+Shift+C copies, Ctrl+Shift+V pastes, Shift+Page Up/Down scrolls the history.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Manage microVM sandboxes for untrusted coding agents.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Helper socket (default: $AIRLOCK_SOCKET or %1).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PATH</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select sandbox NAME and open its console.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>NAME</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open the connections manager (remote hosts) at start.</source>
        <translation>Beim Start die Verbindungsverwaltung (entfernte Hosts) öffnen.</translation>
    </message>
</context>
</TS>

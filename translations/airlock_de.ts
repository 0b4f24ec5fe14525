<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>DenialNotifier</name>
    <message>
        <source>%1 was denied %2.</source>
        <translation>Zugriff von %1 auf %2 abgelehnt.</translation>
    </message>
    <message>
        <source>%1 was denied %2 new destinations: %3.</source>
        <translation>%1 wurden %2 neue Ziele abgelehnt: %3.</translation>
    </message>
</context>
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
        <source>A sandbox with that name already exists.</source>
        <translation>Eine Sandbox mit diesem Namen existiert bereits.</translation>
    </message>
    <message>
        <source>You may not use the Airlock helper</source>
        <translation>Sie dürfen den Airlock-Helfer nicht verwenden</translation>
    </message>
    <message>
        <source>The Airlock helper is not reachable</source>
        <translation>Der Airlock-Helfer ist nicht erreichbar</translation>
    </message>
    <message>
        <source>The helper refused the request: permission denied.</source>
        <translation>Der Helfer hat die Anfrage abgelehnt: keine Berechtigung.</translation>
    </message>
    <message>
        <source>The sandbox is in use.</source>
        <translation>Die Sandbox wird gerade verwendet.</translation>
    </message>
    <message>
        <source>The helper cannot run virtual machines right now.</source>
        <translation>Der Helfer kann gerade keine virtuellen Maschinen ausführen.</translation>
    </message>
    <message>
        <source>That is not possible in the sandbox&apos;s current state.</source>
        <translation>Das ist im aktuellen Zustand der Sandbox nicht möglich.</translation>
    </message>
    <message>
        <source>The operation failed on the host.</source>
        <translation>Der Vorgang ist auf dem Host fehlgeschlagen.</translation>
    </message>
    <message>
        <source>The helper did not answer in time.</source>
        <translation>Der Helfer hat nicht rechtzeitig geantwortet.</translation>
    </message>
    <message>
        <source>The connection to the helper was lost.</source>
        <translation>Die Verbindung zum Helfer wurde unterbrochen.</translation>
    </message>
    <message>
        <source>The request had an invalid value.</source>
        <translation>Die Anfrage enthielt einen ungültigen Wert.</translation>
    </message>
    <message>
        <source>The message was too large.</source>
        <translation>Die Nachricht war zu groß.</translation>
    </message>
    <message>
        <source>The helper reported an internal error.</source>
        <translation>Der Helfer hat einen internen Fehler gemeldet.</translation>
    </message>
    <message>
        <source>The Airlock helper speaks another protocol version</source>
        <translation>Der Airlock-Helfer spricht eine andere Protokollversion</translation>
    </message>
    <message>
        <source>The connection to the Airlock helper failed</source>
        <translation>Die Verbindung zum Airlock-Helfer ist fehlgeschlagen</translation>
    </message>
    <message>
        <source>Only root and members of the group “airlock” may manage sandboxes. Add your user with &lt;code&gt;sudo usermod -aG airlock %1&lt;/code&gt;, then log out and in again.</source>
        <translation>Nur root und Mitglieder der Gruppe „airlock“ dürfen Sandboxen verwalten. Fügen Sie Ihren Benutzer mit &lt;code&gt;sudo usermod -aG airlock %1&lt;/code&gt; hinzu und melden Sie sich dann ab und wieder an.</translation>
    </message>
    <message>
        <source>Install the same Airlock version for the window and the helper.</source>
        <translation>Installieren Sie für Fenster und Helfer dieselbe Airlock-Version.</translation>
    </message>
    <message>
        <source>The sandbox&apos;s guest agent is not reachable; is the sandbox running?</source>
        <translation>Der Gastagent der Sandbox ist nicht erreichbar; läuft die Sandbox?</translation>
    </message>
    <message>
        <source>The sandbox&apos;s guest agent sent garbage; its channel was closed.</source>
        <translation>Der Gastagent der Sandbox hat Unsinn gesendet; sein Kanal wurde geschlossen.</translation>
    </message>
    <message>
        <source>The path in the sandbox is a folder, not a file.</source>
        <translation>Der Pfad in der Sandbox ist ein Ordner, keine Datei.</translation>
    </message>
    <message>
        <source>The path in the sandbox is a file, not a folder.</source>
        <translation>Der Pfad in der Sandbox ist eine Datei, kein Ordner.</translation>
    </message>
    <message>
        <source>The folder in the sandbox is not empty.</source>
        <translation>Der Ordner in der Sandbox ist nicht leer.</translation>
    </message>
    <message>
        <source>The sandbox&apos;s disk is full.</source>
        <translation>Die Festplatte der Sandbox ist voll.</translation>
    </message>
    <message>
        <source>The path does not exist in the sandbox.</source>
        <translation>Der Pfad existiert in der Sandbox nicht.</translation>
    </message>
    <message>
        <source>The sandbox refused it: permission denied.</source>
        <translation>Die Sandbox hat es abgelehnt: Zugriff verweigert.</translation>
    </message>
    <message>
        <source>Something with that name already exists in the sandbox.</source>
        <translation>In der Sandbox gibt es bereits etwas mit diesem Namen.</translation>
    </message>
    <message>
        <source>The path in the sandbox is in use.</source>
        <translation>Der Pfad in der Sandbox wird verwendet.</translation>
    </message>
    <message>
        <source>The sandbox is not running; start it to work with its files.</source>
        <translation>Die Sandbox läuft nicht; starten Sie sie, um mit ihren Dateien zu arbeiten.</translation>
    </message>
    <message>
        <source>The operation failed on this computer.</source>
        <translation>Der Vorgang ist auf diesem Computer fehlgeschlagen.</translation>
    </message>
    <message>
        <source>Start the helper with &lt;code&gt;sudo systemctl start airlockd&lt;/code&gt;, then press Retry.</source>
        <translation>Starten Sie den Helfer mit &lt;code&gt;sudo systemctl start airlockd&lt;/code&gt; und drücken Sie dann „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>There is no airlockd.service on this computer, so the helper was started by hand (a build tree). Start it again as root: &lt;code&gt;sudo installers/dev/run-demo.sh&lt;/code&gt; from the source tree, or &lt;code&gt;sudo build/app/airlockd/airlockd&lt;/code&gt;, then press Retry.</source>
        <translation>Auf diesem Computer gibt es keinen airlockd.service, der Helfer wurde also von Hand gestartet (ein Build-Verzeichnis). Starten Sie ihn erneut als root: &lt;code&gt;sudo installers/dev/run-demo.sh&lt;/code&gt; im Quellverzeichnis oder &lt;code&gt;sudo build/app/airlockd/airlockd&lt;/code&gt;, und drücken Sie dann „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>Someone else changed it meanwhile; look at it again and retry.</source>
        <translation>Jemand anderes hat es inzwischen geändert; sehen Sie es sich erneut an und versuchen Sie es noch einmal.</translation>
    </message>
</context>
<context>
    <name>NameText</name>
    <message>
        <source>a space</source>
        <translation>ein Leerzeichen</translation>
    </message>
    <message>
        <source>a tab</source>
        <translation>ein Tabulator</translation>
    </message>
    <message>
        <source>an invisible character (%1)</source>
        <translation>ein unsichtbares Zeichen (%1)</translation>
    </message>
    <message>
        <source>“%1” (%2)</source>
        <translation>„%1“ (%2)</translation>
    </message>
    <message>
        <source>“%1”</source>
        <translation>„%1“</translation>
    </message>
    <message>
        <source>A name may only contain a–z, 0–9 and “-”.</source>
        <translation>Ein Name darf nur a–z, 0–9 und „-“ enthalten.</translation>
    </message>
    <message>
        <source>Enter a name.</source>
        <translation>Geben Sie einen Namen ein.</translation>
    </message>
    <message>
        <source>The name is %1 characters long; at most 63 are allowed.</source>
        <translation>Der Name ist %1 Zeichen lang; höchstens 63 sind erlaubt.</translation>
    </message>
    <message>
        <source>The name must start with a lower-case letter or a digit, not “-”.</source>
        <translation>Der Name muss mit einem Kleinbuchstaben oder einer Ziffer beginnen, nicht mit „-“.</translation>
    </message>
    <message>
        <source>%1 at position %2: upper case is not allowed (use “%3”).</source>
        <translation>%1 an Stelle %2: Großbuchstaben sind nicht erlaubt (nehmen Sie „%3“).</translation>
    </message>
    <message>
        <source>%1 at position %2 is not allowed.</source>
        <translation>%1 an Stelle %2 ist nicht erlaubt.</translation>
    </message>
</context>
<context>
    <name>PolicyDiff</name>
    <message>
        <source>any</source>
        <translation>alle</translation>
    </message>
    <message>
        <source>%1  ports %2  methods %3  paths %4</source>
        <translation>%1  Ports %2  Methoden %3  Pfade %4</translation>
    </message>
    <message>
        <source>+ rule %1: %2</source>
        <translation>+ Regel %1: %2</translation>
    </message>
    <message>
        <source>− rule %1: %2</source>
        <translation>− Regel %1: %2</translation>
    </message>
    <message>
        <source>ports %1 → %2</source>
        <translation>Ports %1 → %2</translation>
    </message>
    <message>
        <source>methods %1 → %2</source>
        <translation>Methoden %1 → %2</translation>
    </message>
    <message>
        <source>paths %1 → %2</source>
        <translation>Pfade %1 → %2</translation>
    </message>
    <message>
        <source>comment changed</source>
        <translation>Kommentar geändert</translation>
    </message>
    <message>
        <source>moved from rule %1</source>
        <translation>verschoben von Regel %1</translation>
    </message>
    <message>
        <source>~ rule %1: %2: %3</source>
        <translation>~ Regel %1: %2: %3</translation>
    </message>
</context>
<context>
    <name>PolicyText</name>
    <message>
        <source>Enter a host name, e.g. pypi.org or *.example.com.</source>
        <translation>Geben Sie einen Hostnamen ein, z. B. pypi.org oder *.example.com.</translation>
    </message>
    <message>
        <source>Only ASCII letters, digits, &apos;-&apos; and &apos;.&apos; are allowed; write an international name in its xn-- form.</source>
        <translation>Nur ASCII-Buchstaben, Ziffern, &apos;-&apos; und &apos;.&apos; sind erlaubt; schreiben Sie internationale Namen in ihrer xn---Form.</translation>
    </message>
    <message>
        <source>Spaces and control characters are not allowed in a host name.</source>
        <translation>Leer- und Steuerzeichen sind in einem Hostnamen nicht erlaubt.</translation>
    </message>
    <message>
        <source>&apos;@&apos; is not allowed: enter the host name only, without a user name.</source>
        <translation>&apos;@&apos; ist nicht erlaubt: Geben Sie nur den Hostnamen ein, ohne Benutzernamen.</translation>
    </message>
    <message>
        <source>An IP address cannot be allowed: name the host instead (the gateway only connects to names it resolved itself).</source>
        <translation>Eine IP-Adresse kann nicht erlaubt werden: Nennen Sie stattdessen den Host (das Gateway verbindet sich nur mit Namen, die es selbst aufgelöst hat).</translation>
    </message>
    <message>
        <source>&apos;%&apos; is not allowed in a host name.</source>
        <translation>&apos;%&apos; ist in einem Hostnamen nicht erlaubt.</translation>
    </message>
    <message>
        <source>&apos;\&apos; is not allowed in a host name.</source>
        <translation>&apos;\&apos; ist in einem Hostnamen nicht erlaubt.</translation>
    </message>
    <message>
        <source>Enter the port in the Ports column, not after the host name.</source>
        <translation>Geben Sie den Port in der Spalte „Ports“ ein, nicht hinter dem Hostnamen.</translation>
    </message>
    <message>
        <source>A wildcard may only be a leading &quot;*.&quot;, as in *.example.com.</source>
        <translation>Ein Platzhalter ist nur als führendes „*.“ erlaubt, wie in *.example.com.</translation>
    </message>
    <message>
        <source>Only letters, digits, &apos;-&apos; and &apos;.&apos; are allowed in a host name (&apos;_&apos; too is refused).</source>
        <translation>In einem Hostnamen sind nur Buchstaben, Ziffern, &apos;-&apos; und &apos;.&apos; erlaubt (auch &apos;_&apos; wird abgelehnt).</translation>
    </message>
    <message>
        <source>At most one trailing dot is allowed.</source>
        <translation>Höchstens ein abschließender Punkt ist erlaubt.</translation>
    </message>
    <message>
        <source>The name has an empty part: a leading dot or two dots in a row.</source>
        <translation>Der Name hat einen leeren Teil: einen führenden Punkt oder zwei Punkte hintereinander.</translation>
    </message>
    <message>
        <source>A part between dots may have at most 63 characters.</source>
        <translation>Ein Teil zwischen Punkten darf höchstens 63 Zeichen haben.</translation>
    </message>
    <message>
        <source>A host name may have at most 253 characters.</source>
        <translation>Ein Hostname darf höchstens 253 Zeichen haben.</translation>
    </message>
    <message>
        <source>A part between dots may not start or end with &apos;-&apos;.</source>
        <translation>Ein Teil zwischen Punkten darf nicht mit &apos;-&apos; beginnen oder enden.</translation>
    </message>
    <message>
        <source>The port is not a number between 1 and 65535.</source>
        <translation>Der Port ist keine Zahl zwischen 1 und 65535.</translation>
    </message>
    <message>
        <source>This wildcard covers a whole top-level domain; name at least two parts after &quot;*.&quot;, as in *.example.com.</source>
        <translation>Dieser Platzhalter umfasst eine ganze Top-Level-Domain; nennen Sie mindestens zwei Teile nach „*.“, wie in *.example.com.</translation>
    </message>
    <message>
        <source>Enter at least one port, e.g. 443.</source>
        <translation>Geben Sie mindestens einen Port ein, z. B. 443.</translation>
    </message>
    <message>
        <source>“%1” is not a port between 1 and 65535.</source>
        <translation>„%1“ ist kein Port zwischen 1 und 65535.</translation>
    </message>
    <message>
        <source>Port %1 is listed twice.</source>
        <translation>Port %1 ist doppelt aufgeführt.</translation>
    </message>
    <message>
        <source>Methods are case-sensitive: write “%1”.</source>
        <translation>Bei Methoden zählt die Groß-/Kleinschreibung: Schreiben Sie „%1“.</translation>
    </message>
    <message>
        <source>“%1” is not an HTTP method such as GET or POST.</source>
        <translation>„%1“ ist keine HTTP-Methode wie GET oder POST.</translation>
    </message>
    <message>
        <source>%1 is listed twice.</source>
        <translation>%1 ist doppelt aufgeführt.</translation>
    </message>
    <message>
        <source>“%1” must start with &apos;/&apos;.</source>
        <translation>„%1“ muss mit &apos;/&apos; beginnen.</translation>
    </message>
    <message>
        <source>“%1”: write the path without &apos;%&apos;, &apos;?&apos; or &apos;#&apos; (no percent-encoding, no query).</source>
        <translation>„%1“: Schreiben Sie den Pfad ohne &apos;%&apos;, &apos;?&apos; oder &apos;#&apos; (keine Prozentkodierung, keine Query).</translation>
    </message>
    <message>
        <source>“%1”: &quot;.&quot; and &quot;..&quot; segments are not allowed.</source>
        <translation>„%1“: Segmente „.“ und „..“ sind nicht erlaubt.</translation>
    </message>
    <message>
        <source>“%1” is not a plain path: %2</source>
        <translation>„%1“ ist kein einfacher Pfad: %2</translation>
    </message>
    <message>
        <source>“%1” is listed twice.</source>
        <translation>„%1“ ist doppelt aufgeführt.</translation>
    </message>
    <message>
        <source>Allowed by rule</source>
        <translation>Durch Regel erlaubt</translation>
    </message>
    <message>
        <source>Host not allowed</source>
        <translation>Host nicht erlaubt</translation>
    </message>
    <message>
        <source>Port not allowed</source>
        <translation>Port nicht erlaubt</translation>
    </message>
    <message>
        <source>Method not allowed</source>
        <translation>Methode nicht erlaubt</translation>
    </message>
    <message>
        <source>Path not allowed</source>
        <translation>Pfad nicht erlaubt</translation>
    </message>
    <message>
        <source>Malformed host name</source>
        <translation>Fehlerhafter Hostname</translation>
    </message>
    <message>
        <source>Malformed method</source>
        <translation>Fehlerhafte Methode</translation>
    </message>
    <message>
        <source>Malformed path</source>
        <translation>Fehlerhafter Pfad</translation>
    </message>
    <message>
        <source>Not TLS</source>
        <translation>Kein TLS</translation>
    </message>
    <message>
        <source>Credential sent where its binding does not allow it</source>
        <translation>Zugangsdatum an ein Ziel gesendet, das seine Bindung nicht erlaubt</translation>
    </message>
    <message>
        <source>Credential value not available to the gateway</source>
        <translation>Wert des Zugangsdatums dem Gateway nicht verfügbar</translation>
    </message>
    <message>
        <source>Plain HTTP only to port 80</source>
        <translation>Unverschlüsseltes HTTP nur an Port 80</translation>
    </message>
    <message>
        <source>Header name disguises a gateway header</source>
        <translation>Header-Name tarnt einen Gateway-Header</translation>
    </message>
    <message>
        <source>Method or path override</source>
        <translation>Überschreiben von Methode oder Pfad</translation>
    </message>
    <message>
        <source>DNS query type not allowed</source>
        <translation>DNS-Abfragetyp nicht erlaubt</translation>
    </message>
    <message>
        <source>DNS class not allowed</source>
        <translation>DNS-Klasse nicht erlaubt</translation>
    </message>
    <message>
        <source>DNS opcode not supported</source>
        <translation>DNS-Opcode nicht unterstützt</translation>
    </message>
    <message>
        <source>Malformed DNS query</source>
        <translation>Fehlerhafte DNS-Abfrage</translation>
    </message>
    <message>
        <source>Not a DNS query</source>
        <translation>Keine DNS-Abfrage</translation>
    </message>
    <message>
        <source>Resolves to a private address</source>
        <translation>Löst in eine private Adresse auf</translation>
    </message>
    <message>
        <source>Name does not exist</source>
        <translation>Name existiert nicht</translation>
    </message>
    <message>
        <source>No IPv4 address for the name</source>
        <translation>Keine IPv4-Adresse für den Namen</translation>
    </message>
    <message>
        <source>Upstream DNS failed</source>
        <translation>Upstream-DNS fehlgeschlagen</translation>
    </message>
    <message>
        <source>Upstream DNS timed out</source>
        <translation>Upstream-DNS antwortet nicht</translation>
    </message>
    <message>
        <source>No synthetic address left</source>
        <translation>Keine synthetische Adresse mehr frei</translation>
    </message>
    <message>
        <source>DNS resolver overloaded</source>
        <translation>DNS-Resolver überlastet</translation>
    </message>
    <message>
        <source>Too many connections</source>
        <translation>Zu viele Verbindungen</translation>
    </message>
    <message>
        <source>Idle too long</source>
        <translation>Zu lange untätig</translation>
    </message>
    <message>
        <source>Closed before a decision</source>
        <translation>Vor einer Entscheidung geschlossen</translation>
    </message>
    <message>
        <source>No server name (SNI)</source>
        <translation>Kein Servername (SNI)</translation>
    </message>
    <message>
        <source>Malformed server name (SNI)</source>
        <translation>Fehlerhafter Servername (SNI)</translation>
    </message>
    <message>
        <source>HTTP/1.1 not offered (ALPN)</source>
        <translation>HTTP/1.1 nicht angeboten (ALPN)</translation>
    </message>
    <message>
        <source>Certificate could not be made</source>
        <translation>Zertifikat nicht erstellbar</translation>
    </message>
    <message>
        <source>TLS handshake failed</source>
        <translation>TLS-Handshake fehlgeschlagen</translation>
    </message>
    <message>
        <source>Dialed another name&apos;s address</source>
        <translation>Adresse eines anderen Namens gewählt</translation>
    </message>
    <message>
        <source>SNI differs from CONNECT host</source>
        <translation>SNI weicht vom CONNECT-Host ab</translation>
    </message>
    <message>
        <source>Malformed request</source>
        <translation>Fehlerhafte Anfrage</translation>
    </message>
    <message>
        <source>Malformed header</source>
        <translation>Fehlerhafter Header</translation>
    </message>
    <message>
        <source>Header too large</source>
        <translation>Header zu groß</translation>
    </message>
    <message>
        <source>HTTP version not supported</source>
        <translation>HTTP-Version nicht unterstützt</translation>
    </message>
    <message>
        <source>Conflicting body length</source>
        <translation>Widersprüchliche Body-Länge</translation>
    </message>
    <message>
        <source>Bad Content-Length</source>
        <translation>Ungültige Content-Length</translation>
    </message>
    <message>
        <source>Bad Transfer-Encoding</source>
        <translation>Ungültiges Transfer-Encoding</translation>
    </message>
    <message>
        <source>Malformed chunked body</source>
        <translation>Fehlerhafter Chunked-Body</translation>
    </message>
    <message>
        <source>Body too large</source>
        <translation>Body zu groß</translation>
    </message>
    <message>
        <source>Bad request target</source>
        <translation>Ungültiges Anfrageziel</translation>
    </message>
    <message>
        <source>Method forbidden</source>
        <translation>Methode verboten</translation>
    </message>
    <message>
        <source>Host header missing</source>
        <translation>Host-Header fehlt</translation>
    </message>
    <message>
        <source>User name in the address</source>
        <translation>Benutzername in der Adresse</translation>
    </message>
    <message>
        <source>IP address instead of a name</source>
        <translation>IP-Adresse statt Name</translation>
    </message>
    <message>
        <source>Target and Host differ</source>
        <translation>Ziel und Host weichen ab</translation>
    </message>
    <message>
        <source>Host differs from SNI</source>
        <translation>Host weicht vom SNI ab</translation>
    </message>
    <message>
        <source>Other port in Host</source>
        <translation>Anderer Port im Host</translation>
    </message>
    <message>
        <source>Other host on the same connection</source>
        <translation>Anderer Host auf derselben Verbindung</translation>
    </message>
    <message>
        <source>Upstream unreachable</source>
        <translation>Upstream nicht erreichbar</translation>
    </message>
    <message>
        <source>Upstream certificate not trusted</source>
        <translation>Upstream-Zertifikat nicht vertrauenswürdig</translation>
    </message>
    <message>
        <source>Response could not be scrubbed</source>
        <translation>Antwort konnte nicht bereinigt werden</translation>
    </message>
    <message>
        <source>Gateway restarted</source>
        <translation>Gateway neu gestartet</translation>
    </message>
    <message>
        <source>Firewall table restored</source>
        <translation>Firewall-Tabelle wiederhergestellt</translation>
    </message>
    <message>
        <source>Firewall table lost; guest stopped</source>
        <translation>Firewall-Tabelle verloren; Gast gestoppt</translation>
    </message>
    <message>
        <source>Open connection closed by a policy change</source>
        <translation>Offene Verbindung durch eine Richtlinienänderung geschlossen</translation>
    </message>
    <message>
        <source>%1 sent the placeholder of %2 to %3 (%4 %5), where the binding does not allow it: the gateway refused the request. Something in the sandbox may be trying to leak the credential.</source>
        <translation>%1 hat den Platzhalter von %2 an %3 (%4 %5) gesendet, wo die Bindung ihn nicht erlaubt: Das Gateway hat die Anfrage abgelehnt. Möglicherweise versucht etwas in der Sandbox, das Zugangsdatum abfließen zu lassen.</translation>
    </message>
    <message numerus="yes">
        <source>A response from %1 to %2 carried the secret of %3: the gateway replaced it with the placeholder (%n time(s)) before the guest saw it.</source>
        <translation>
            <numerusform>Eine Antwort von %1 an %2 enthielt das Geheimnis von %3: Das Gateway hat es durch den Platzhalter ersetzt (%n-mal), bevor der Gast es sah.</numerusform>
            <numerusform>Eine Antwort von %1 an %2 enthielt das Geheimnis von %3: Das Gateway hat es durch den Platzhalter ersetzt (%n-mal), bevor der Gast es sah.</numerusform>
        </translation>
    </message>
    <message>
        <source>The gateway of %1 raised an alert for %2 (%3): %4</source>
        <translation>Das Gateway von %1 hat eine Warnung für %2 (%3) ausgelöst: %4</translation>
    </message>
</context>
<context>
    <name>RefusalText</name>
    <message>
        <source>an absolute path</source>
        <translation>ein absoluter Pfad</translation>
    </message>
    <message>
        <source>a path through “..”</source>
        <translation>ein Pfad über „..“</translation>
    </message>
    <message>
        <source>an empty or “.” path component</source>
        <translation>ein leerer oder „.“-Pfadbestandteil</translation>
    </message>
    <message>
        <source>a link</source>
        <translation>ein Link</translation>
    </message>
    <message>
        <source>a link pointing outside the folder</source>
        <translation>ein Link, der aus dem Ordner hinaus zeigt</translation>
    </message>
    <message>
        <source>a hard link</source>
        <translation>ein harter Link</translation>
    </message>
    <message>
        <source>a named pipe</source>
        <translation>eine benannte Pipe</translation>
    </message>
    <message>
        <source>a socket</source>
        <translation>ein Socket</translation>
    </message>
    <message>
        <source>a device</source>
        <translation>ein Gerät</translation>
    </message>
    <message>
        <source>a setuid file</source>
        <translation>eine setuid-Datei</translation>
    </message>
    <message>
        <source>a setgid file</source>
        <translation>eine setgid-Datei</translation>
    </message>
    <message>
        <source>a link inside its path</source>
        <translation>ein Link in seinem Pfad</translation>
    </message>
    <message>
        <source>a file where a folder is needed</source>
        <translation>eine Datei, wo ein Ordner nötig ist</translation>
    </message>
    <message>
        <source>something of another kind is already there</source>
        <translation>dort ist schon etwas anderer Art</translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation>Zugriff verweigert</translation>
    </message>
    <message>
        <source>an input/output error</source>
        <translation>ein Ein-/Ausgabefehler</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
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
    <name>airlock::AllowDecision</name>
    <message numerus="yes">
        <source>allowed at the Allow? prompt on %1 after %n denied request(s)</source>
        <translation>
            <numerusform>erlaubt in der Frage „Erlauben?“ am %1 nach %n abgelehnten Anfrage</numerusform>
            <numerusform>erlaubt in der Frage „Erlauben?“ am %1 nach %n abgelehnten Anfragen</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>allowed by %2 at the Allow? prompt on %1 after %n denied request(s)</source>
        <translation>
            <numerusform>von %2 erlaubt in der Frage „Erlauben?“ am %1 nach %n abgelehnten Anfrage</numerusform>
            <numerusform>von %2 erlaubt in der Frage „Erlauben?“ am %1 nach %n abgelehnten Anfragen</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>airlock::BindingDialog</name>
    <message>
        <source>Add Credential Binding</source>
        <translation>Zugangsdaten-Bindung hinzufügen</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation>Sandbox</translation>
    </message>
    <message>
        <source>Secret</source>
        <translation>Geheimnis</translation>
    </message>
    <message>
        <source>e.g. api.github.com</source>
        <translation>z. B. api.github.com</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>Host</translation>
    </message>
    <message>
        <source>optional, e.g. /repos/</source>
        <translation>optional, z. B. /repos/</translation>
    </message>
    <message>
        <source>Path prefix</source>
        <translation>Pfadpräfix</translation>
    </message>
    <message>
        <source>optional, e.g. GET, POST</source>
        <translation>optional, z. B. GET, POST</translation>
    </message>
    <message>
        <source>Methods</source>
        <translation>Methoden</translation>
    </message>
    <message>
        <source>Header</source>
        <translation>Header</translation>
    </message>
    <message>
        <source>HTTP Basic</source>
        <translation>HTTP Basic</translation>
    </message>
    <message>
        <source>Placement</source>
        <translation>Platzierung</translation>
    </message>
    <message>
        <source>Header name</source>
        <translation>Header-Name</translation>
    </message>
    <message>
        <source>Header template</source>
        <translation>Header-Vorlage</translation>
    </message>
    <message>
        <source>{secret} is replaced by the value at the gateway</source>
        <translation>{secret} wird am Gateway durch den Wert ersetzt</translation>
    </message>
    <message>
        <source>Basic user name</source>
        <translation>Basic-Benutzername</translation>
    </message>
    <message>
        <source>Binding problem</source>
        <translation>Problem der Bindung</translation>
    </message>
    <message>
        <source>Policy warning</source>
        <translation>Richtlinienwarnung</translation>
    </message>
    <message>
        <source>Sand&amp;box:</source>
        <translation>Sand&amp;box:</translation>
    </message>
    <message>
        <source>&amp;Secret:</source>
        <translation>&amp;Geheimnis:</translation>
    </message>
    <message>
        <source>&amp;Host:</source>
        <translation>&amp;Host:</translation>
    </message>
    <message>
        <source>&amp;Path prefix:</source>
        <translation>&amp;Pfadpräfix:</translation>
    </message>
    <message>
        <source>&amp;Methods:</source>
        <translation>&amp;Methoden:</translation>
    </message>
    <message>
        <source>P&amp;lacement:</source>
        <translation>P&amp;latzierung:</translation>
    </message>
    <message>
        <source>Header &amp;name:</source>
        <translation>Header-&amp;Name:</translation>
    </message>
    <message>
        <source>&amp;Template:</source>
        <translation>&amp;Vorlage:</translation>
    </message>
    <message>
        <source>&amp;User name:</source>
        <translation>&amp;Benutzername:</translation>
    </message>
    <message>
        <source>Create a sandbox first.</source>
        <translation>Legen Sie zuerst eine Sandbox an.</translation>
    </message>
    <message>
        <source>Store a secret first.</source>
        <translation>Speichern Sie zuerst ein Geheimnis.</translation>
    </message>
    <message>
        <source>A binding names one exact host; wildcards are not allowed.</source>
        <translation>Eine Bindung nennt genau einen Host; Platzhalter sind nicht erlaubt.</translation>
    </message>
</context>
<context>
    <name>airlock::BindingTableModel</name>
    <message>
        <source>The policy of %1 does not allow %2 %3%4 on port 443 (%5): the gateway denies these requests before the secret is injected.</source>
        <translation>Die Richtlinie von %1 erlaubt %2 %3%4 auf Port 443 nicht (%5): Das Gateway lehnt diese Anfragen ab, bevor das Geheimnis eingesetzt wird.</translation>
    </message>
    <message>
        <source>Basic, user %1</source>
        <translation>Basic, Benutzer %1</translation>
    </message>
    <message>
        <source>any</source>
        <translation>alle</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation>Sandbox</translation>
    </message>
    <message>
        <source>Secret</source>
        <translation>Geheimnis</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>Host</translation>
    </message>
    <message>
        <source>Path prefix</source>
        <translation>Pfadpräfix</translation>
    </message>
    <message>
        <source>Header template</source>
        <translation>Header-Vorlage</translation>
    </message>
    <message>
        <source>Warning</source>
        <translation>Warnung</translation>
    </message>
    <message>
        <source>an unnamed binding</source>
        <translation>eine unbenannte Bindung</translation>
    </message>
    <message>
        <source>binding %1</source>
        <translation>Bindung %1</translation>
    </message>
    <message>
        <source>binding %1 (secret “%2” for %3%4)</source>
        <translation>Bindung %1 (Geheimnis „%2“ für %3%4)</translation>
    </message>
    <message>
        <source>never</source>
        <translation>nie</translation>
    </message>
    <message>
        <source>Requests the gateway injected the secret into</source>
        <translation>Anfragen, in die das Gateway das Geheimnis eingesetzt hat</translation>
    </message>
    <message>
        <source>No request misused this binding&apos;s placeholder</source>
        <translation>Keine Anfrage hat den Platzhalter dieser Bindung missbraucht</translation>
    </message>
    <message numerus="yes">
        <source>%n request(s) carried this binding&apos;s placeholder where the binding does not allow it, or matched it while the gateway had no value: refused</source>
        <translation>
            <numerusform>%n Anfrage trug den Platzhalter dieser Bindung dorthin, wo die Bindung ihn nicht erlaubt, oder passte, während das Gateway keinen Wert hatte: abgelehnt</numerusform>
            <numerusform>%n Anfragen trugen den Platzhalter dieser Bindung dorthin, wo die Bindung ihn nicht erlaubt, oder passten, während das Gateway keinen Wert hatte: abgelehnt</numerusform>
        </translation>
    </message>
    <message>
        <source>Injections</source>
        <translation>Einsetzungen</translation>
    </message>
    <message>
        <source>Last use</source>
        <translation>Letzte Verwendung</translation>
    </message>
    <message>
        <source>Denied</source>
        <translation>Abgelehnt</translation>
    </message>
</context>
<context>
    <name>airlock::BringProjectDialog</name>
    <message>
        <source>&amp;Send</source>
        <translation>&amp;Senden</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stopp</translation>
    </message>
    <message>
        <source>Bring a Project Folder into %1</source>
        <translation>Projektordner nach %1 bringen</translation>
    </message>
    <message>
        <source>Copies a folder of this computer into the sandbox over its guest agent (no network needed). Links, devices and anything that would leave the guest folder are refused by the guest.</source>
        <translation>Kopiert einen Ordner dieses Computers über den Gastagenten in die Sandbox (kein Netzwerk nötig). Links, Geräte und alles, was den Gastordner verlassen würde, lehnt der Gast ab.</translation>
    </message>
    <message>
        <source>&amp;Browse…</source>
        <translation>&amp;Durchsuchen…</translation>
    </message>
    <message>
        <source>&amp;Host folder:</source>
        <translation>&amp;Hostordner:</translation>
    </message>
    <message>
        <source>&amp;Guest folder:</source>
        <translation>&amp;Gastordner:</translation>
    </message>
    <message>
        <source>Host folder</source>
        <translation>Hostordner</translation>
    </message>
    <message>
        <source>Guest folder</source>
        <translation>Gastordner</translation>
    </message>
    <message>
        <source>Refused entries</source>
        <translation>Abgelehnte Einträge</translation>
    </message>
    <message>
        <source>Project Folder</source>
        <translation>Projektordner</translation>
    </message>
    <message>
        <source>Choose a folder of this computer to send.</source>
        <translation>Wählen Sie einen Ordner dieses Computers zum Senden.</translation>
    </message>
    <message>
        <source>The guest folder must be an absolute path, e.g. /workspace.</source>
        <translation>Der Gastordner muss ein absoluter Pfad sein, z. B. /workspace.</translation>
    </message>
    <message>
        <source>Sending %1 to %2…</source>
        <translation>Sende %1 nach %2…</translation>
    </message>
    <message>
        <source>Sending %1 to %2… %3</source>
        <translation>Sende %1 nach %2… %3</translation>
    </message>
    <message numerus="yes">
        <source>Sent to %1: %n item(s), </source>
        <translation>
            <numerusform>Nach %1 gesendet: %n Eintrag, </numerusform>
            <numerusform>Nach %1 gesendet: %n Einträge, </numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n refused by the guest:</source>
        <translation>
            <numerusform>%n vom Gast abgelehnt:</numerusform>
            <numerusform>%n vom Gast abgelehnt:</numerusform>
        </translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message numerus="yes">
        <source>… and %n more</source>
        <translation>
            <numerusform>… und %n weiterer</numerusform>
            <numerusform>… und %n weitere</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not send the folder: %1 %2</source>
        <translation>Der Ordner konnte nicht gesendet werden: %1 %2</translation>
    </message>
    <message>
        <source>Stopped; the guest folder may hold part of the project.</source>
        <translation>Gestoppt; der Gastordner kann einen Teil des Projekts enthalten.</translation>
    </message>
</context>
<context>
    <name>airlock::CommandOutputView</name>
    <message>
        <source>The command&apos;s output appears here.</source>
        <translation>Die Ausgabe des Befehls erscheint hier.</translation>
    </message>
</context>
<context>
    <name>airlock::CommandPanel</name>
    <message>
        <source>&amp;Run</source>
        <translation>&amp;Ausführen</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>S&amp;topp</translation>
    </message>
    <message>
        <source>Run co&amp;mmand:</source>
        <translation>Be&amp;fehl ausführen:</translation>
    </message>
    <message>
        <source>A shell command line, e.g. ls -la /workspace</source>
        <translation>Eine Shell-Befehlszeile, z. B. ls -la /workspace</translation>
    </message>
    <message>
        <source>Command line</source>
        <translation>Befehlszeile</translation>
    </message>
    <message>
        <source>Send the command SIGTERM; a second Stop sends SIGKILL</source>
        <translation>Sendet dem Befehl SIGTERM; ein zweites Stopp sendet SIGKILL</translation>
    </message>
    <message>
        <source>Command output</source>
        <translation>Befehlsausgabe</translation>
    </message>
    <message>
        <source>Command status</source>
        <translation>Befehlsstatus</translation>
    </message>
    <message>
        <source>Running (pid %1)…</source>
        <translation>Läuft (PID %1)…</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>Startet…</translation>
    </message>
    <message>
        <source>Stopping (pid %1)…</source>
        <translation>Wird gestoppt (PID %1)…</translation>
    </message>
    <message>
        <source>Exited with code 0 (success).</source>
        <translation>Beendet mit Code 0 (Erfolg).</translation>
    </message>
    <message>
        <source>Exited with code %1.</source>
        <translation>Beendet mit Code %1.</translation>
    </message>
    <message>
        <source>%1 (SIG%2)</source>
        <translation>%1 (SIG%2)</translation>
    </message>
    <message>
        <source>Timed out: killed by signal %1.</source>
        <translation>Zeit überschritten: durch Signal %1 beendet.</translation>
    </message>
    <message>
        <source>Killed by signal %1.</source>
        <translation>Durch Signal %1 beendet.</translation>
    </message>
    <message>
        <source>Its end is unknown: %1</source>
        <translation>Sein Ende ist unbekannt: %1</translation>
    </message>
    <message>
        <source>Could not run the command: %1</source>
        <translation>Der Befehl konnte nicht ausgeführt werden: %1</translation>
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
    <name>airlock::ConsoleController</name>
    <message>
        <source>── %1: the guest was restored from a snapshot; what follows is its state then ──</source>
        <translation>── %1: Der Gast wurde aus einem Snapshot wiederhergestellt; was folgt, ist sein damaliger Zustand ──</translation>
    </message>
    <message>
        <source>── %1: the sandbox started from its image&apos;s template ──</source>
        <translation>── %1: Die Sandbox wurde aus der Vorlage ihres Abbilds gestartet ──</translation>
    </message>
    <message>
        <source>── %1: the sandbox started ──</source>
        <translation>── %1: Die Sandbox wurde gestartet ──</translation>
    </message>
</context>
<context>
    <name>airlock::ConsoleTab</name>
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
    <message>
        <source>Console notice</source>
        <translation>Konsolenhinweis</translation>
    </message>
    <message>
        <source>%1 wrote faster than this console can draw; %2 of its output were skipped.</source>
        <translation>%1 hat schneller geschrieben, als diese Konsole zeichnen kann; %2 der Ausgabe wurden übersprungen.</translation>
    </message>
    <message>
        <source>Sandbox %1 is starting; its console follows.</source>
        <translation>Sandbox %1 startet; ihre Konsole folgt.</translation>
    </message>
    <message>
        <source>Sandbox %1 is stopping.</source>
        <translation>Sandbox %1 wird gestoppt.</translation>
    </message>
    <message>
        <source>Sandbox %1 is paused; what you type reaches it when it resumes.</source>
        <translation>Sandbox %1 ist angehalten; was Sie tippen, erreicht sie, wenn sie weiterläuft.</translation>
    </message>
</context>
<context>
    <name>airlock::CredentialsView</name>
    <message>
        <source>&amp;Set Secret…</source>
        <translation>Geheimnis &amp;festlegen…</translation>
    </message>
    <message>
        <source>R&amp;eplace Value…</source>
        <translation>Wert &amp;ersetzen…</translation>
    </message>
    <message>
        <source>&amp;Delete Secret</source>
        <translation>Geheimnis &amp;löschen</translation>
    </message>
    <message>
        <source>&amp;Add Binding…</source>
        <translation>Bindung &amp;hinzufügen…</translation>
    </message>
    <message>
        <source>&amp;Remove Binding</source>
        <translation>Bindung &amp;entfernen</translation>
    </message>
    <message>
        <source>Secrets</source>
        <translation>Geheimnisse</translation>
    </message>
    <message>
        <source>Credential bindings</source>
        <translation>Zugangsdaten-Bindungen</translation>
    </message>
    <message>
        <source>Set a new secret</source>
        <translation>Ein neues Geheimnis festlegen</translation>
    </message>
    <message>
        <source>Replace the selected secret&apos;s value</source>
        <translation>Den Wert des ausgewählten Geheimnisses ersetzen</translation>
    </message>
    <message>
        <source>Delete the selected secret</source>
        <translation>Das ausgewählte Geheimnis löschen</translation>
    </message>
    <message>
        <source>Add a credential binding</source>
        <translation>Eine Zugangsdaten-Bindung hinzufügen</translation>
    </message>
    <message>
        <source>Remove the selected binding</source>
        <translation>Die ausgewählte Bindung entfernen</translation>
    </message>
    <message>
        <source>Credentials status</source>
        <translation>Status der Zugangsdaten</translation>
    </message>
    <message>
        <source>Bindings</source>
        <translation>Bindungen</translation>
    </message>
    <message>
        <source>%1 The vault is not available: %2</source>
        <translation>%1 Der Tresor ist nicht verfügbar: %2</translation>
    </message>
    <message>
        <source>Could not list the secrets.</source>
        <translation>Die Geheimnisse konnten nicht aufgelistet werden.</translation>
    </message>
    <message>
        <source>Could not list the bindings.</source>
        <translation>Die Bindungen konnten nicht aufgelistet werden.</translation>
    </message>
    <message>
        <source>Could not read the bindings.</source>
        <translation>Die Bindungen konnten nicht gelesen werden.</translation>
    </message>
    <message>
        <source>Could not store secret “%1”.</source>
        <translation>Geheimnis „%1“ konnte nicht gespeichert werden.</translation>
    </message>
    <message>
        <source>Stored secret “%1”.</source>
        <translation>Geheimnis „%1“ gespeichert.</translation>
    </message>
    <message>
        <source>Delete Secret</source>
        <translation>Geheimnis löschen</translation>
    </message>
    <message>
        <source>Delete secret “%1”?</source>
        <translation>Geheimnis „%1“ löschen?</translation>
    </message>
    <message>
        <source>The encrypted value is removed from the helper. Remove its bindings first.</source>
        <translation>Der verschlüsselte Wert wird vom Helfer entfernt. Entfernen Sie zuerst seine Bindungen.</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>&amp;Löschen</translation>
    </message>
    <message>
        <source>Could not delete secret “%1”.</source>
        <translation>Geheimnis „%1“ konnte nicht gelöscht werden.</translation>
    </message>
    <message>
        <source>Deleted secret “%1”.</source>
        <translation>Geheimnis „%1“ gelöscht.</translation>
    </message>
    <message>
        <source>Could not add the binding.</source>
        <translation>Die Bindung konnte nicht hinzugefügt werden.</translation>
    </message>
    <message>
        <source>Binding added.</source>
        <translation>Bindung hinzugefügt.</translation>
    </message>
    <message>
        <source>Could not remove the binding.</source>
        <translation>Die Bindung konnte nicht entfernt werden.</translation>
    </message>
    <message>
        <source>Binding removed.</source>
        <translation>Bindung entfernt.</translation>
    </message>
    <message>
        <source>Values are stored encrypted by the helper and are never shown again or sent to a sandbox. A sandbox holds only a placeholder; its gateway swaps in the value on HTTPS requests that match a binding exactly, and replaces the value with the placeholder in every response.</source>
        <translation>Werte werden vom Helfer verschlüsselt gespeichert und nie wieder angezeigt oder an eine Sandbox gesendet. Eine Sandbox hat nur einen Platzhalter; ihr Gateway setzt den Wert in HTTPS-Anfragen ein, die genau zu einer Bindung passen, und ersetzt den Wert in jeder Antwort durch den Platzhalter.</translation>
    </message>
    <message>
        <source>The guest finds each bound secret&apos;s placeholder in /run/airlock/env (AIRLOCK_SECRET_NAME). A request that carries it anywhere else (another host, path, method or port, or plain HTTP) is refused, counted as denied and raises an alert.</source>
        <translation>Der Gast findet den Platzhalter jedes gebundenen Geheimnisses in /run/airlock/env (AIRLOCK_SECRET_NAME). Eine Anfrage, die ihn anderswohin trägt (anderer Host, Pfad, Methode oder Port, oder unverschlüsseltes HTTP), wird abgelehnt, als abgelehnt gezählt und löst eine Warnung aus.</translation>
    </message>
</context>
<context>
    <name>airlock::DenialBar</name>
    <message>
        <source>Allo&amp;w?…</source>
        <translation>Erla&amp;uben?…</translation>
    </message>
    <message>
        <source>Keep All &amp;Denied</source>
        <translation>Alle abgelehnt &amp;lassen</translation>
    </message>
    <message>
        <source>Denied destinations waiting for an answer</source>
        <translation>Abgelehnte Ziele, die auf eine Antwort warten</translation>
    </message>
    <message>
        <source>Answer the oldest denied destination</source>
        <translation>Das älteste abgelehnte Ziel beantworten</translation>
    </message>
    <message>
        <source>Decide whether the sandbox may reach it; it stays denied until you allow it</source>
        <translation>Entscheiden, ob die Sandbox es erreichen darf; es bleibt abgelehnt, bis Sie es erlauben</translation>
    </message>
    <message>
        <source>Stop asking about these destinations; they stay denied</source>
        <translation>Nicht mehr nach diesen Zielen fragen; sie bleiben abgelehnt</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message numerus="yes">
        <source>Denied, waiting for your answer: %1 and %n more.</source>
        <translation>
            <numerusform>Abgelehnt, wartet auf Ihre Antwort: %1 und %n weiteres.</numerusform>
            <numerusform>Abgelehnt, wartet auf Ihre Antwort: %1 und %n weitere.</numerusform>
        </translation>
    </message>
    <message>
        <source>Denied, waiting for your answer: %1.</source>
        <translation>Abgelehnt, wartet auf Ihre Antwort: %1.</translation>
    </message>
</context>
<context>
    <name>airlock::DenialPrompt</name>
    <message>
        <source>&amp;Allow</source>
        <translation>&amp;Erlauben</translation>
    </message>
    <message>
        <source>&amp;Keep Denied</source>
        <translation>Abgelehnt &amp;lassen</translation>
    </message>
    <message>
        <source>&amp;Edit in Policy Editor…</source>
        <translation>Im Richtlinien-&amp;Editor bearbeiten…</translation>
    </message>
    <message>
        <source>Allow %1 for %2?</source>
        <translation>%1 für %2 erlauben?</translation>
    </message>
    <message numerus="yes">
        <source>&lt;b&gt;%1&lt;/b&gt; was denied &lt;b&gt;%2&lt;/b&gt; %n time(s), first at %3, last at %4. It stays denied while you decide, and unless you allow it.</source>
        <translation>
            <numerusform>Für &lt;b&gt;%1&lt;/b&gt; wurde &lt;b&gt;%2&lt;/b&gt; %n-mal abgelehnt, zuerst um %3, zuletzt um %4. Es bleibt abgelehnt, während Sie entscheiden, und solange Sie es nicht erlauben.</numerusform>
            <numerusform>Für &lt;b&gt;%1&lt;/b&gt; wurde &lt;b&gt;%2&lt;/b&gt; %n-mal abgelehnt, zuerst um %3, zuletzt um %4. Es bleibt abgelehnt, während Sie entscheiden, und solange Sie es nicht erlauben.</numerusform>
        </translation>
    </message>
    <message>
        <source>Seen: ports %1; methods %2; paths %3</source>
        <translation>Gesehen: Ports %1; Methoden %2; Pfade %3</translation>
    </message>
    <message>
        <source>none (a lookup only)</source>
        <translation>keine (nur eine Namensauflösung)</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <source>Allow %1 for %2 (port %3, any method and path)</source>
        <translation>%1 für %2 erlauben (Port %3, jede Methode und jeder Pfad)</translation>
    </message>
    <message>
        <source>Allow only what was seen (port %1, methods %2, paths %3)</source>
        <translation>Nur das Gesehene erlauben (Port %1, Methoden %2, Pfade %3)</translation>
    </message>
    <message>
        <source>any</source>
        <translation>alle</translation>
    </message>
    <message>
        <source>Policy change</source>
        <translation>Richtlinienänderung</translation>
    </message>
    <message>
        <source>Prompt status</source>
        <translation>Status der Frage</translation>
    </message>
    <message>
        <source>Add the rule shown to the sandbox&apos;s policy now</source>
        <translation>Die gezeigte Regel jetzt zur Richtlinie der Sandbox hinzufügen</translation>
    </message>
    <message>
        <source>Leave the policy as it is; the destination stays denied</source>
        <translation>Die Richtlinie bleibt, wie sie ist; das Ziel bleibt abgelehnt</translation>
    </message>
    <message>
        <source>Change to the policy:</source>
        <translation>Änderung der Richtlinie:</translation>
    </message>
    <message>
        <source>+ %1 (in %2&apos;s policy)</source>
        <translation>+ %1 (in der Richtlinie von %2)</translation>
    </message>
    <message>
        <source>Applying…</source>
        <translation>Wird angewendet…</translation>
    </message>
</context>
<context>
    <name>airlock::DenialTray</name>
    <message>
        <source>Allow %1 for %2?…</source>
        <translation>%1 für %2 erlauben?…</translation>
    </message>
    <message numerus="yes">
        <source>%n more in the window</source>
        <translation>
            <numerusform>%n weiteres im Fenster</numerusform>
            <numerusform>%n weitere im Fenster</numerusform>
        </translation>
    </message>
    <message>
        <source>Show Airlock</source>
        <translation>Airlock zeigen</translation>
    </message>
    <message>
        <source>Airlock</source>
        <translation>Airlock</translation>
    </message>
    <message numerus="yes">
        <source>Airlock: %n denied destination(s) wait for an answer</source>
        <translation>
            <numerusform>Airlock: %n abgelehntes Ziel wartet auf eine Antwort</numerusform>
            <numerusform>Airlock: %n abgelehnte Ziele warten auf eine Antwort</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>airlock::DestinationCountModel</name>
    <message>
        <source>(none)</source>
        <translation>(keiner)</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation>Sandbox</translation>
    </message>
    <message>
        <source>Destination</source>
        <translation>Ziel</translation>
    </message>
    <message>
        <source>Allowed</source>
        <translation>Erlaubt</translation>
    </message>
    <message>
        <source>Denied</source>
        <translation>Abgelehnt</translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation>Zuletzt gesehen</translation>
    </message>
</context>
<context>
    <name>airlock::DryRunModel</name>
    <message>
        <source>%1 (rule %2)</source>
        <translation>%1 (Regel %2)</translation>
    </message>
    <message>
        <source>Newly allowed</source>
        <translation>Neu erlaubt</translation>
    </message>
    <message>
        <source>Newly denied</source>
        <translation>Neu abgelehnt</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>Zeit</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Method</source>
        <translation>Methode</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>Pfad</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>Änderung</translation>
    </message>
    <message>
        <source>Applied policy</source>
        <translation>Angewandte Richtlinie</translation>
    </message>
    <message>
        <source>Edited policy</source>
        <translation>Bearbeitete Richtlinie</translation>
    </message>
</context>
<context>
    <name>airlock::EgressEventModel</name>
    <message>
        <source>Allowed</source>
        <translation>Erlaubt</translation>
    </message>
    <message>
        <source>Denied</source>
        <translation>Abgelehnt</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>Zeit</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation>Sandbox</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>SNI / Host</source>
        <translation>SNI / Host</translation>
    </message>
    <message>
        <source>Method</source>
        <translation>Methode</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>Pfad</translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation>Entscheidung</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>Grund</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message numerus="yes">
        <source>%1 (%n times)</source>
        <translation>
            <numerusform>%1 (%n-mal)</numerusform>
            <numerusform>%1 (%n-mal)</numerusform>
        </translation>
    </message>
    <message>
        <source>First %1, last %2</source>
        <translation>Zuerst %1, zuletzt %2</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>Ebene</translation>
    </message>
</context>
<context>
    <name>airlock::EgressMapView</name>
    <message>
        <source>Egress map</source>
        <translation>Egress-Karte</translation>
    </message>
    <message>
        <source>No sandbox selected.</source>
        <translation>Keine Sandbox ausgewählt.</translation>
    </message>
    <message>
        <source>%1: %2 allowed, %3 denied</source>
        <translation>%1: %2 erlaubt, %3 abgelehnt</translation>
    </message>
    <message>
        <source>%1 has made no connections yet.</source>
        <translation>%1 hat noch keine Verbindungen aufgebaut.</translation>
    </message>
    <message>
        <source>Select a sandbox to see its egress map.</source>
        <translation>Wählen Sie eine Sandbox, um ihre Egress-Karte zu sehen.</translation>
    </message>
    <message>
        <source>No connections yet.</source>
        <translation>Noch keine Verbindungen.</translation>
    </message>
    <message>
        <source>allowed</source>
        <translation>erlaubt</translation>
    </message>
    <message>
        <source>denied</source>
        <translation>abgelehnt</translation>
    </message>
    <message>
        <source>both</source>
        <translation>beides</translation>
    </message>
    <message numerus="yes">
        <source>%n others</source>
        <translation>
            <numerusform>%n weiteres</numerusform>
            <numerusform>%n weitere</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>airlock::EgressView</name>
    <message>
        <source>&amp;Learn mode</source>
        <translation>&amp;Lernmodus</translation>
    </message>
    <message>
        <source>&amp;Allow This Host…</source>
        <translation>Diesen Host &amp;erlauben…</translation>
    </message>
    <message>
        <source>Add as &amp;Rules…</source>
        <translation>Als &amp;Regeln hinzufügen…</translation>
    </message>
    <message>
        <source>Dis&amp;miss</source>
        <translation>&amp;Verwerfen</translation>
    </message>
    <message>
        <source>All sandboxes</source>
        <translation>Alle Sandboxen</translation>
    </message>
    <message>
        <source>Sandbox filter</source>
        <translation>Sandbox-Filter</translation>
    </message>
    <message>
        <source>All verdicts</source>
        <translation>Alle Entscheidungen</translation>
    </message>
    <message>
        <source>Denied</source>
        <translation>Abgelehnt</translation>
    </message>
    <message>
        <source>Allowed</source>
        <translation>Erlaubt</translation>
    </message>
    <message>
        <source>Verdict filter</source>
        <translation>Entscheidungsfilter</translation>
    </message>
    <message>
        <source>Filter by name, path, reason…</source>
        <translation>Nach Name, Pfad, Grund filtern…</translation>
    </message>
    <message>
        <source>Text filter</source>
        <translation>Textfilter</translation>
    </message>
    <message>
        <source>Learn mode for the selected sandbox</source>
        <translation>Lernmodus für die ausgewählte Sandbox</translation>
    </message>
    <message>
        <source>Collect the destinations this sandbox is denied into a review list. They stay denied.</source>
        <translation>Die Ziele, die dieser Sandbox verweigert werden, in einer Prüfliste sammeln. Sie bleiben verweigert.</translation>
    </message>
    <message>
        <source> denials/min</source>
        <translation> Ablehnungen/min</translation>
    </message>
    <message>
        <source>Probing alert threshold in denials per minute</source>
        <translation>Schwelle für Sondierungsalarm in Ablehnungen pro Minute</translation>
    </message>
    <message>
        <source>Alert when a sandbox is denied this often within a minute</source>
        <translation>Alarm, wenn einer Sandbox so oft innerhalb einer Minute etwas verweigert wird</translation>
    </message>
    <message>
        <source>&amp;Sandbox:</source>
        <translation>&amp;Sandbox:</translation>
    </message>
    <message>
        <source>&amp;Verdict:</source>
        <translation>&amp;Entscheidung:</translation>
    </message>
    <message>
        <source>Probing &amp;alert at:</source>
        <translation>Sondierungs&amp;alarm ab:</translation>
    </message>
    <message>
        <source>Egress decisions</source>
        <translation>Egress-Entscheidungen</translation>
    </message>
    <message>
        <source>Allow This Host…</source>
        <translation>Diesen Host erlauben…</translation>
    </message>
    <message>
        <source>Ctrl+Shift+A</source>
        <translation>Ctrl+Shift+A</translation>
    </message>
    <message>
        <source>Allow the host of the selected denied request</source>
        <translation>Den Host der ausgewählten abgelehnten Anfrage erlauben</translation>
    </message>
    <message>
        <source>Open the policy editor with a rule for this host; nothing is allowed until you apply it</source>
        <translation>Den Richtlinien-Editor mit einer Regel für diesen Host öffnen; erlaubt wird erst, wenn Sie sie anwenden</translation>
    </message>
    <message>
        <source>Egress summary</source>
        <translation>Egress-Zusammenfassung</translation>
    </message>
    <message>
        <source>Requests per destination</source>
        <translation>Anfragen pro Ziel</translation>
    </message>
    <message>
        <source>Learned destinations</source>
        <translation>Gelernte Ziele</translation>
    </message>
    <message>
        <source>Add the selected learned destinations as rules</source>
        <translation>Die ausgewählten gelernten Ziele als Regeln hinzufügen</translation>
    </message>
    <message>
        <source>Open the policy editor with one rule per selected destination; apply there to allow them</source>
        <translation>Den Richtlinien-Editor mit einer Regel pro ausgewähltem Ziel öffnen; dort anwenden, um sie zu erlauben</translation>
    </message>
    <message>
        <source>Dismiss the selected learned destinations</source>
        <translation>Die ausgewählten gelernten Ziele verwerfen</translation>
    </message>
    <message>
        <source>With learn mode on, denied destinations of the sandbox are collected here. They stay denied until you add them as rules and apply.</source>
        <translation>Im Lernmodus werden abgelehnte Ziele der Sandbox hier gesammelt. Sie bleiben abgelehnt, bis Sie sie als Regeln hinzufügen und anwenden.</translation>
    </message>
    <message>
        <source>&amp;Map</source>
        <translation>&amp;Karte</translation>
    </message>
    <message>
        <source>D&amp;estinations</source>
        <translation>&amp;Ziele</translation>
    </message>
    <message>
        <source>&amp;Learned</source>
        <translation>&amp;Gelernt</translation>
    </message>
    <message>
        <source>Egress map, destinations and learned list</source>
        <translation>Egress-Karte, Ziele und gelernte Liste</translation>
    </message>
    <message>
        <source>allowed from a denied request at %1</source>
        <translation>erlaubt aus einer abgelehnten Anfrage vom %1</translation>
    </message>
    <message>
        <source>Decisions: %1, denied: %2</source>
        <translation>Entscheidungen: %1, abgelehnt: %2</translation>
    </message>
    <message>
        <source>Decisions shown: %1 of %2, denied: %3</source>
        <translation>Angezeigte Entscheidungen: %1 von %2, abgelehnt: %3</translation>
    </message>
</context>
<context>
    <name>airlock::FilesTab</name>
    <message>
        <source>Stop</source>
        <translation>Stopp</translation>
    </message>
    <message>
        <source>Guest folder</source>
        <translation>Gastordner</translation>
    </message>
    <message>
        <source>The folder in the sandbox; type a path and press Enter</source>
        <translation>Der Ordner in der Sandbox; Pfad eingeben und Enter drücken</translation>
    </message>
    <message>
        <source>Files of %1</source>
        <translation>Dateien von %1</translation>
    </message>
    <message>
        <source>Files error</source>
        <translation>Dateifehler</translation>
    </message>
    <message>
        <source>Files status</source>
        <translation>Dateistatus</translation>
    </message>
    <message>
        <source>Transfer progress</source>
        <translation>Übertragungsfortschritt</translation>
    </message>
    <message>
        <source>Stop the transfer and the ones waiting</source>
        <translation>Die Übertragung und die wartenden stoppen</translation>
    </message>
    <message>
        <source>&amp;Up</source>
        <translation>&amp;Hoch</translation>
    </message>
    <message>
        <source>Show the folder above</source>
        <translation>Den übergeordneten Ordner zeigen</translation>
    </message>
    <message>
        <source>Re&amp;fresh</source>
        <translation>A&amp;ktualisieren</translation>
    </message>
    <message>
        <source>List the folder again</source>
        <translation>Den Ordner neu auflisten</translation>
    </message>
    <message>
        <source>&amp;Upload…</source>
        <translation>Hoch&amp;laden…</translation>
    </message>
    <message>
        <source>Copy files of this computer into this folder (or drop them here)</source>
        <translation>Dateien dieses Computers in diesen Ordner kopieren (oder hier ablegen)</translation>
    </message>
    <message>
        <source>&amp;Download…</source>
        <translation>&amp;Herunterladen…</translation>
    </message>
    <message>
        <source>Copy the selected entries to this computer</source>
        <translation>Die ausgewählten Einträge auf diesen Computer kopieren</translation>
    </message>
    <message>
        <source>&amp;New Folder…</source>
        <translation>&amp;Neuer Ordner…</translation>
    </message>
    <message>
        <source>Make a folder here</source>
        <translation>Hier einen Ordner anlegen</translation>
    </message>
    <message>
        <source>De&amp;lete…</source>
        <translation>&amp;Löschen…</translation>
    </message>
    <message>
        <source>Remove the selected entries (folders with their content)</source>
        <translation>Die ausgewählten Einträge entfernen (Ordner mit ihrem Inhalt)</translation>
    </message>
    <message>
        <source>&amp;Bring Project Folder…</source>
        <translation>Projektordner &amp;bringen…</translation>
    </message>
    <message>
        <source>Copy a project folder of this computer into the sandbox</source>
        <translation>Einen Projektordner dieses Computers in die Sandbox kopieren</translation>
    </message>
    <message>
        <source>&amp;Review Changes…</source>
        <translation>Änderungen &amp;prüfen…</translation>
    </message>
    <message>
        <source>Compare a guest folder with a host folder and take the changes you accept</source>
        <translation>Einen Gastordner mit einem Hostordner vergleichen und die Änderungen übernehmen, die Sie annehmen</translation>
    </message>
    <message>
        <source>Cannot show “%1”.</source>
        <translation>„%1“ kann nicht angezeigt werden.</translation>
    </message>
    <message>
        <source>a guest path is absolute, e.g. /workspace</source>
        <translation>ein Gastpfad ist absolut, z. B. /workspace</translation>
    </message>
    <message>
        <source>Listing %1…</source>
        <translation>Liste %1 auf…</translation>
    </message>
    <message>
        <source>Cannot list %1.</source>
        <translation>%1 kann nicht aufgelistet werden.</translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) shown; the folder has more than can be listed.</source>
        <translation>
            <numerusform>%n Eintrag angezeigt; der Ordner hat mehr, als aufgelistet werden kann.</numerusform>
            <numerusform>%n Einträge angezeigt; der Ordner hat mehr, als aufgelistet werden kann.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n item(s)</source>
        <translation>
            <numerusform>%n Eintrag</numerusform>
            <numerusform>%n Einträge</numerusform>
        </translation>
    </message>
    <message>
        <source>Uploading folder %1</source>
        <translation>Lade Ordner %1 hoch</translation>
    </message>
    <message numerus="yes">
        <source>Uploaded %1: %n item(s)</source>
        <translation>
            <numerusform>%1 hochgeladen: %n Eintrag</numerusform>
            <numerusform>%1 hochgeladen: %n Einträge</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>(%n refused by the guest)</source>
        <translation>
            <numerusform>(%n vom Gast abgelehnt)</numerusform>
            <numerusform>(%n vom Gast abgelehnt)</numerusform>
        </translation>
    </message>
    <message>
        <source>Uploading %1</source>
        <translation>Lade %1 hoch</translation>
    </message>
    <message>
        <source>Uploaded %1</source>
        <translation>%1 hochgeladen</translation>
    </message>
    <message>
        <source>Downloading folder %1</source>
        <translation>Lade Ordner %1 herunter</translation>
    </message>
    <message numerus="yes">
        <source>Downloaded to %1: %n item(s)</source>
        <translation>
            <numerusform>Nach %1 heruntergeladen: %n Eintrag</numerusform>
            <numerusform>Nach %1 heruntergeladen: %n Einträge</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>(%n refused on this computer)</source>
        <translation>
            <numerusform>(%n auf diesem Computer abgelehnt)</numerusform>
            <numerusform>(%n auf diesem Computer abgelehnt)</numerusform>
        </translation>
    </message>
    <message>
        <source>Downloading %1</source>
        <translation>Lade %1 herunter</translation>
    </message>
    <message>
        <source>Downloaded %1</source>
        <translation>%1 heruntergeladen</translation>
    </message>
    <message>
        <source>Cannot delete %1.</source>
        <translation>%1 kann nicht gelöscht werden.</translation>
    </message>
    <message>
        <source>Deleted.</source>
        <translation>Gelöscht.</translation>
    </message>
    <message>
        <source>Cannot make the folder “%1”.</source>
        <translation>Der Ordner „%1“ kann nicht angelegt werden.</translation>
    </message>
    <message>
        <source>a folder name has no “/” and is not . or ..</source>
        <translation>ein Ordnername enthält kein „/“ und ist nicht . oder ..</translation>
    </message>
    <message>
        <source>Cannot make the folder %1.</source>
        <translation>Der Ordner %1 kann nicht angelegt werden.</translation>
    </message>
    <message>
        <source>Made %1.</source>
        <translation>%1 angelegt.</translation>
    </message>
    <message>
        <source>Transfer stopped.</source>
        <translation>Übertragung gestoppt.</translation>
    </message>
    <message>
        <source>Upload to %1 in %2</source>
        <translation>Hochladen nach %1 in %2</translation>
    </message>
    <message>
        <source>Download %1</source>
        <translation>%1 herunterladen</translation>
    </message>
    <message numerus="yes">
        <source>Download %n item(s) into</source>
        <translation>
            <numerusform>%n Eintrag herunterladen nach</numerusform>
            <numerusform>%n Einträge herunterladen nach</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete in %1</source>
        <translation>Löschen in %1</translation>
    </message>
    <message>
        <source>Delete “%1” in %2?</source>
        <translation>„%1“ in %2 löschen?</translation>
    </message>
    <message numerus="yes">
        <source>Delete %n item(s) in %1?</source>
        <translation>
            <numerusform>%n Eintrag in %1 löschen?</numerusform>
            <numerusform>%n Einträge in %1 löschen?</numerusform>
        </translation>
    </message>
    <message>
        <source>Folders are deleted with everything in them. This cannot be undone.</source>
        <translation>Ordner werden mit ihrem ganzen Inhalt gelöscht. Das kann nicht rückgängig gemacht werden.</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>&amp;Löschen</translation>
    </message>
    <message>
        <source>New Folder in %1</source>
        <translation>Neuer Ordner in %1</translation>
    </message>
    <message>
        <source>Folder name:</source>
        <translation>Ordnername:</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation>%1 von %2</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>%1 failed.</source>
        <translation>%1 fehlgeschlagen.</translation>
    </message>
    <message>
        <source>This folder is empty. Drop files here or use Upload…</source>
        <translation>Dieser Ordner ist leer. Legen Sie Dateien hier ab oder nutzen Sie Hochladen…</translation>
    </message>
</context>
<context>
    <name>airlock::ForkDialog</name>
    <message>
        <source>&amp;Copy credential bindings (with fresh placeholders)</source>
        <translation>Zugangsdaten-Bindungen &amp;kopieren (mit neuen Platzhaltern)</translation>
    </message>
    <message>
        <source>Fork Snapshot</source>
        <translation>Snapshot abzweigen</translation>
    </message>
    <message>
        <source>Start a new sandbox from the snapshot %1 of %2. %2 runs on unchanged; the fork gets its own name, addresses and gateway, and %2&apos;s egress policy.</source>
        <translation>Eine neue Sandbox aus dem Snapshot %1 von %2 starten. %2 läuft unverändert weiter; die Abzweigung bekommt einen eigenen Namen, eigene Adressen und ein eigenes Gateway sowie die Egress-Richtlinie von %2.</translation>
    </message>
    <message>
        <source>Name of the fork</source>
        <translation>Name der Abzweigung</translation>
    </message>
    <message>
        <source>e.g. %1-try</source>
        <translation>z. B. %1-try</translation>
    </message>
    <message>
        <source>Name problem</source>
        <translation>Problem mit dem Namen</translation>
    </message>
    <message>
        <source>Credential bindings are &lt;b&gt;not&lt;/b&gt; copied unless you check the box below: the fork cannot use %1&apos;s secrets. Copied bindings get fresh placeholders, so the fork never learns %1&apos;s.</source>
        <translation>Zugangsdaten-Bindungen werden &lt;b&gt;nicht&lt;/b&gt; kopiert, außer Sie wählen das Feld unten: Die Abzweigung kann die Geheimnisse von %1 nicht verwenden. Kopierte Bindungen bekommen neue Platzhalter, die Abzweigung erfährt die von %1 also nie.</translation>
    </message>
    <message>
        <source>Credential bindings</source>
        <translation>Zugangsdaten-Bindungen</translation>
    </message>
    <message>
        <source>Copy credential bindings into the fork</source>
        <translation>Zugangsdaten-Bindungen in die Abzweigung kopieren</translation>
    </message>
    <message>
        <source>&amp;Name:</source>
        <translation>&amp;Name:</translation>
    </message>
    <message>
        <source>&amp;Fork</source>
        <translation>&amp;Abzweigen</translation>
    </message>
    <message>
        <source>A sandbox named “%1” already exists.</source>
        <translation>Eine Sandbox namens „%1“ existiert bereits.</translation>
    </message>
</context>
<context>
    <name>airlock::GuestFileModel</name>
    <message>
        <source>File</source>
        <translation>Datei</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>Ordner</translation>
    </message>
    <message>
        <source>Link</source>
        <translation>Link</translation>
    </message>
    <message>
        <source>Other</source>
        <translation>Andere</translation>
    </message>
    <message>
        <source>Link to %1</source>
        <translation>Link auf %1</translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>Typ</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Größe</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>Modus</translation>
    </message>
    <message>
        <source>Modified</source>
        <translation>Geändert</translation>
    </message>
</context>
<context>
    <name>airlock::GuestFileTransfer</name>
    <message>
        <source>cannot open %1: %2</source>
        <translation>%1 kann nicht geöffnet werden: %2</translation>
    </message>
    <message>
        <source>%1 is a folder</source>
        <translation>%1 ist ein Ordner</translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <source>cannot read %1: %2</source>
        <translation>%1 kann nicht gelesen werden: %2</translation>
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
    <name>airlock::LearnListModel</name>
    <message>
        <source>any</source>
        <translation>alle</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation>Sandbox</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>Host</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <source>Methods</source>
        <translation>Methoden</translation>
    </message>
    <message>
        <source>Example path</source>
        <translation>Beispielpfad</translation>
    </message>
    <message>
        <source>Denied</source>
        <translation>Abgelehnt</translation>
    </message>
    <message numerus="yes">
        <source>learned: %n denied request(s)</source>
        <translation>
            <numerusform>gelernt: %n abgelehnte Anfrage</numerusform>
            <numerusform>gelernt: %n abgelehnte Anfragen</numerusform>
        </translation>
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
        <source>Boot the selected sandbox</source>
        <translation>Die ausgewählte Sandbox starten</translation>
    </message>
    <message>
        <source>St&amp;op</source>
        <translation>St&amp;oppen</translation>
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
        <source>Show the selected sandbox&apos;s console</source>
        <translation>Die Konsole der ausgewählten Sandbox zeigen</translation>
    </message>
    <message>
        <source>&amp;Close Console</source>
        <translation>Konsole &amp;schließen</translation>
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
        <source>&amp;About Airlock</source>
        <translation>Ü&amp;ber Airlock</translation>
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
    <message>
        <source>Helper connection</source>
        <translation>Verbindung zum Helfer</translation>
    </message>
    <message>
        <source>Could not read the sandbox list: %1</source>
        <translation>Die Sandbox-Liste konnte nicht gelesen werden: %1</translation>
    </message>
    <message>
        <source>helper</source>
        <translation>Helfer</translation>
    </message>
    <message>
        <source>Ctrl+R</source>
        <translation>Ctrl+R</translation>
    </message>
    <message>
        <source>Ctrl+T</source>
        <translation>Ctrl+T</translation>
    </message>
    <message>
        <source>Ctrl+Shift+K</source>
        <translation>Ctrl+Shift+K</translation>
    </message>
    <message>
        <source>Ctrl+O</source>
        <translation>Ctrl+O</translation>
    </message>
    <message>
        <source>Ctrl+Shift+W</source>
        <translation>Ctrl+Shift+W</translation>
    </message>
    <message>
        <source>Quit Airlock</source>
        <translation>Airlock beenden</translation>
    </message>
    <message>
        <source>Version and license</source>
        <translation>Version und Lizenz</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation>Sandbox</translation>
    </message>
    <message>
        <source>No sandbox named “%1”.</source>
        <translation>Keine Sandbox namens „%1“.</translation>
    </message>
    <message>
        <source>About Airlock</source>
        <translation>Über Airlock</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Airlock %1&lt;/h3&gt;&lt;p&gt;Runs untrusted coding agents in QEMU microVM sandboxes managed by a privileged helper.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Airlock %1&lt;/h3&gt;&lt;p&gt;Führt nicht vertrauenswürdige Coding-Agenten in QEMU-microVM-Sandboxen aus, die ein privilegierter Helfer verwaltet.&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Sections</source>
        <translation>Bereiche</translation>
    </message>
    <message>
        <source>Sand&amp;boxes</source>
        <translation>Sand&amp;boxen</translation>
    </message>
    <message>
        <source>&amp;Egress</source>
        <translation>&amp;Egress</translation>
    </message>
    <message>
        <source>C&amp;redentials</source>
        <translation>&amp;Zugangsdaten</translation>
    </message>
    <message>
        <source>%1 was denied %2 times in the last minute: it may be probing the network.</source>
        <translation>%1 wurde in der letzten Minute %2-mal abgelehnt: Die Sandbox sondiert möglicherweise das Netzwerk.</translation>
    </message>
    <message>
        <source>Airlock: possible probing by %1</source>
        <translation>Airlock: mögliche Sondierung durch %1</translation>
    </message>
    <message>
        <source>Edit &amp;Policy…</source>
        <translation>&amp;Richtlinie bearbeiten…</translation>
    </message>
    <message>
        <source>Ctrl+P</source>
        <translation>Ctrl+P</translation>
    </message>
    <message>
        <source>Edit what the selected sandbox may reach</source>
        <translation>Bearbeiten, was die ausgewählte Sandbox erreichen darf</translation>
    </message>
    <message>
        <source>&amp;Sandboxes</source>
        <translation>&amp;Sandboxen</translation>
    </message>
    <message>
        <source>Ctrl+%1</source>
        <translation>Ctrl+%1</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <source>Snapsho&amp;ts</source>
        <translation>Snapsho&amp;ts</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>&amp;Anhalten</translation>
    </message>
    <message>
        <source>Ctrl+Shift+P</source>
        <translation>Ctrl+Shift+P</translation>
    </message>
    <message>
        <source>Stop the selected sandbox&apos;s CPUs; it keeps its memory and resumes where it was</source>
        <translation>Die CPUs der gewählten Sandbox anhalten; sie behält ihren Speicher und macht dort weiter, wo sie war</translation>
    </message>
    <message>
        <source>Res&amp;ume</source>
        <translation>&amp;Fortsetzen</translation>
    </message>
    <message>
        <source>Ctrl+Shift+U</source>
        <translation>Ctrl+Shift+U</translation>
    </message>
    <message>
        <source>Let the paused sandbox run on</source>
        <translation>Die angehaltene Sandbox weiterlaufen lassen</translation>
    </message>
    <message>
        <source>Snapshot &amp;Timeline</source>
        <translation>Snapshot-&amp;Zeitleiste</translation>
    </message>
    <message>
        <source>Ctrl+4</source>
        <translation>Ctrl+4</translation>
    </message>
    <message>
        <source>Show the selected sandbox&apos;s snapshots</source>
        <translation>Die Snapshots der gewählten Sandbox zeigen</translation>
    </message>
    <message>
        <source>Dismiss Credential &amp;Alert</source>
        <translation>Zugangsdaten-&amp;Warnung verwerfen</translation>
    </message>
    <message>
        <source>Remove the credential alert badge from the selected sandbox (the binding&apos;s denied count stays in Credentials)</source>
        <translation>Das Warnsymbol für Zugangsdaten von der gewählten Sandbox entfernen (die Zahl der Ablehnungen der Bindung bleibt unter „Zugangsdaten“)</translation>
    </message>
    <message>
        <source>%1 (at %2)</source>
        <translation>%1 (um %2)</translation>
    </message>
    <message>
        <source>Airlock: credential alert in %1</source>
        <translation>Airlock: Zugangsdaten-Warnung in %1</translation>
    </message>
    <message>
        <source>Select a sandbox and choose &lt;b&gt;Open Console&lt;/b&gt; (Ctrl+O) or double-click it to see its console here, or &lt;b&gt;Open Files&lt;/b&gt; (Ctrl+Shift+O) to work with its files and run commands.</source>
        <translation>Wählen Sie eine Sandbox und dann &lt;b&gt;Konsole öffnen&lt;/b&gt; (Strg+O) oder doppelklicken Sie sie, um hier ihre Konsole zu sehen, oder &lt;b&gt;Dateien öffnen&lt;/b&gt; (Strg+Umschalt+O), um mit ihren Dateien zu arbeiten und Befehle auszuführen.</translation>
    </message>
    <message>
        <source>Open &amp;Files</source>
        <translation>&amp;Dateien öffnen</translation>
    </message>
    <message>
        <source>Ctrl+Shift+O</source>
        <translation>Ctrl+Shift+O</translation>
    </message>
    <message>
        <source>Browse the selected sandbox&apos;s files, run commands in it, bring a project in and review its changes</source>
        <translation>Die Dateien der ausgewählten Sandbox durchsuchen, Befehle darin ausführen, ein Projekt hineinbringen und seine Änderungen prüfen</translation>
    </message>
    <message>
        <source>%1 files (%2)</source>
        <translation>%1 Dateien (%2)</translation>
    </message>
    <message>
        <source>%1 files</source>
        <translation>%1 Dateien</translation>
    </message>
    <message>
        <source>%1. KVM is not usable: %2</source>
        <translation>%1. KVM ist nicht nutzbar: %2</translation>
    </message>
    <message>
        <source>Airlock: %1 was denied</source>
        <translation>Airlock: Zugriff von %1 abgelehnt</translation>
    </message>
    <message>
        <source>%1 stays denied for %2.</source>
        <translation>%1 bleibt für %2 abgelehnt.</translation>
    </message>
    <message>
        <source>%1 is allowed for %2 by a new rule of its policy.</source>
        <translation>%1 ist für %2 durch eine neue Regel seiner Richtlinie erlaubt.</translation>
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
        <source>Sandbox name</source>
        <translation>Name der Sandbox</translation>
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
        <source>e.g. agent-1</source>
        <translation>z. B. agent-1</translation>
    </message>
    <message>
        <source>Name problem</source>
        <translation>Problem mit dem Namen</translation>
    </message>
    <message>
        <source>Memory in MiB</source>
        <translation>Arbeitsspeicher in MiB</translation>
    </message>
    <message>
        <source>A sandbox named “%1” already exists.</source>
        <translation>Eine Sandbox namens „%1“ existiert bereits.</translation>
    </message>
    <message>
        <source>Could not list images: %1</source>
        <translation>Images konnten nicht aufgelistet werden: %1</translation>
    </message>
    <message>
        <source>The helper has no guest images yet; build one with installers/guest/build-image.sh.</source>
        <translation>Der Helfer hat noch keine Gast-Images; bauen Sie eines mit installers/guest/build-image.sh.</translation>
    </message>
    <message>
        <source>Start from a &amp;template (fast)</source>
        <translation>Aus einer &amp;Vorlage starten (schnell)</translation>
    </message>
    <message>
        <source>Start from the image&apos;s template</source>
        <translation>Aus der Vorlage des Abbilds starten</translation>
    </message>
    <message>
        <source>Restore a snapshot of the already booted image instead of booting the kernel; the guest gets its own name, addresses and keys right after.</source>
        <translation>Einen Snapshot des schon gestarteten Abbilds wiederherstellen, statt den Kernel zu booten; der Gast bekommt gleich danach seinen eigenen Namen, seine Adressen und Schlüssel.</translation>
    </message>
    <message>
        <source>Template availability</source>
        <translation>Verfügbarkeit der Vorlage</translation>
    </message>
    <message>
        <source>This helper cannot start sandboxes from a template; they boot cold.</source>
        <translation>Dieser Helfer kann Sandboxes nicht aus einer Vorlage starten; sie booten kalt.</translation>
    </message>
    <message>
        <source>Could not list templates: %1</source>
        <translation>Vorlagen konnten nicht aufgelistet werden: %1</translation>
    </message>
    <message>
        <source>The guest boots its kernel (a few seconds).</source>
        <translation>Der Gast bootet seinen Kernel (einige Sekunden).</translation>
    </message>
    <message>
        <source>A template of this image and size is ready: the guest starts in about a second instead of booting.</source>
        <translation>Eine Vorlage dieses Abbilds und dieser Größe ist bereit: Der Gast startet in etwa einer Sekunde, statt zu booten.</translation>
    </message>
    <message>
        <source>No template of this image and size yet: the guest boots cold (the helper makes one with “airlockctl template prepare”).</source>
        <translation>Noch keine Vorlage dieses Abbilds und dieser Größe: Der Gast bootet kalt (der Helfer erstellt eine mit „airlockctl template prepare“).</translation>
    </message>
    <message>
        <source>Images with a root disk always boot cold (no template): the guest boots its kernel from its own disk.</source>
        <translation>Abbilder mit Root-Festplatte starten immer kalt (keine Vorlage): Der Gast bootet seinen Kernel von seiner eigenen Festplatte.</translation>
    </message>
    <message>
        <source>%1 — root disk</source>
        <translation>%1 — Root-Festplatte</translation>
    </message>
    <message>
        <source>Host memory</source>
        <translation>Arbeitsspeicher des Hosts</translation>
    </message>
    <message>
        <source>Memory problem</source>
        <translation>Speicherproblem</translation>
    </message>
    <message>
        <source>This host: at most %1 MiB for a sandbox.</source>
        <translation>Dieser Host: höchstens %1 MiB für eine Sandbox.</translation>
    </message>
    <message>
        <source>This host: at most %1 MiB for a sandbox, %2 MiB available now.</source>
        <translation>Dieser Host: höchstens %1 MiB für eine Sandbox, %2 MiB sind jetzt frei.</translation>
    </message>
    <message>
        <source>%1 MiB is too little: a sandbox needs at least %2 MiB.</source>
        <translation>%1 MiB sind zu wenig: Eine Sandbox braucht mindestens %2 MiB.</translation>
    </message>
    <message>
        <source>%1 MiB is too much: a sandbox may have at most %2 MiB.</source>
        <translation>%1 MiB sind zu viel: Eine Sandbox darf höchstens %2 MiB haben.</translation>
    </message>
    <message>
        <source>%1 MiB is more than this host can back (at most %2 MiB).</source>
        <translation>%1 MiB sind mehr, als dieser Host bereitstellen kann (höchstens %2 MiB).</translation>
    </message>
    <message>
        <source>More than the %1 MiB available now: starting it fails until other sandboxes or programs free memory.</source>
        <translation>Mehr als die %1 MiB, die jetzt frei sind: Der Start schlägt fehl, bis andere Sandboxen oder Programme Speicher freigeben.</translation>
    </message>
</context>
<context>
    <name>airlock::PolicyAmendment</name>
    <message>
        <source>Not connected to the helper.</source>
        <translation>Nicht mit dem Helfer verbunden.</translation>
    </message>
    <message>
        <source>Could not read the policy: %1 %2</source>
        <translation>Die Richtlinie konnte nicht gelesen werden: %1 %2</translation>
    </message>
    <message>
        <source>%1 already has this rule.</source>
        <translation>%1 hat diese Regel schon.</translation>
    </message>
    <message>
        <source>Not applied: %1 %2</source>
        <translation>Nicht angewendet: %1 %2</translation>
    </message>
    <message>
        <source>Applied: %1 may now reach %2 as the new rule allows.</source>
        <translation>Angewendet: %1 darf %2 jetzt erreichen, wie die neue Regel es erlaubt.</translation>
    </message>
</context>
<context>
    <name>airlock::PolicyEditor</name>
    <message>
        <source>GitHub (git over HTTPS, API read-only)</source>
        <translation>GitHub (git über HTTPS, API nur lesend)</translation>
    </message>
    <message>
        <source>Python packages (PyPI)</source>
        <translation>Python-Pakete (PyPI)</translation>
    </message>
    <message>
        <source>npm registry</source>
        <translation>npm-Registry</translation>
    </message>
    <message>
        <source>Debian mirrors</source>
        <translation>Debian-Spiegel</translation>
    </message>
    <message>
        <source>Deny everything (no rules)</source>
        <translation>Alles ablehnen (keine Regeln)</translation>
    </message>
    <message>
        <source>&amp;Run Dry Run</source>
        <translation>Probelauf &amp;starten</translation>
    </message>
    <message>
        <source>&amp;Apply</source>
        <translation>&amp;Anwenden</translation>
    </message>
    <message>
        <source>Re&amp;vert</source>
        <translation>&amp;Zurücksetzen</translation>
    </message>
    <message>
        <source>Egress Policy — %1[*]</source>
        <translation>Egress-Richtlinie — %1[*]</translation>
    </message>
    <message>
        <source>Policy rules</source>
        <translation>Richtlinienregeln</translation>
    </message>
    <message>
        <source>Problem of the selected rule</source>
        <translation>Problem der ausgewählten Regel</translation>
    </message>
    <message>
        <source>Pending changes</source>
        <translation>Ausstehende Änderungen</translation>
    </message>
    <message>
        <source>Last hour</source>
        <translation>Letzte Stunde</translation>
    </message>
    <message>
        <source>Last 24 hours</source>
        <translation>Letzte 24 Stunden</translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation>Letzte 7 Tage</translation>
    </message>
    <message>
        <source>Everything recorded</source>
        <translation>Alles Aufgezeichnete</translation>
    </message>
    <message>
        <source>Dry run time window</source>
        <translation>Zeitfenster des Probelaufs</translation>
    </message>
    <message>
        <source>Run dry run</source>
        <translation>Probelauf starten</translation>
    </message>
    <message>
        <source>Replay the sandbox&apos;s recorded requests against the edited policy; nothing is applied</source>
        <translation>Die aufgezeichneten Anfragen der Sandbox gegen die bearbeitete Richtlinie prüfen; nichts wird angewendet</translation>
    </message>
    <message>
        <source>Dry run results</source>
        <translation>Ergebnisse des Probelaufs</translation>
    </message>
    <message>
        <source>Dry run summary</source>
        <translation>Zusammenfassung des Probelaufs</translation>
    </message>
    <message>
        <source>Choose a time window and run: the sandbox&apos;s recorded requests are checked against the edited policy.</source>
        <translation>Wählen Sie ein Zeitfenster und starten Sie: Die aufgezeichneten Anfragen der Sandbox werden gegen die bearbeitete Richtlinie geprüft.</translation>
    </message>
    <message>
        <source>&amp;Window:</source>
        <translation>&amp;Zeitfenster:</translation>
    </message>
    <message>
        <source>&amp;Pending Changes</source>
        <translation>&amp;Ausstehende Änderungen</translation>
    </message>
    <message>
        <source>&amp;Dry Run</source>
        <translation>&amp;Probelauf</translation>
    </message>
    <message>
        <source>Changes and dry run</source>
        <translation>Änderungen und Probelauf</translation>
    </message>
    <message>
        <source>Policy editor status</source>
        <translation>Status des Richtlinien-Editors</translation>
    </message>
    <message>
        <source>Apply policy</source>
        <translation>Richtlinie anwenden</translation>
    </message>
    <message>
        <source>Replace the sandbox&apos;s policy with the edited one (atomic)</source>
        <translation>Die Richtlinie der Sandbox durch die bearbeitete ersetzen (atomar)</translation>
    </message>
    <message>
        <source>Revert to the applied policy</source>
        <translation>Zur angewandten Richtlinie zurückkehren</translation>
    </message>
    <message>
        <source>Close policy editor</source>
        <translation>Richtlinien-Editor schließen</translation>
    </message>
    <message>
        <source>Policy editor tools</source>
        <translation>Werkzeuge des Richtlinien-Editors</translation>
    </message>
    <message>
        <source>&amp;Add Rule</source>
        <translation>Regel &amp;hinzufügen</translation>
    </message>
    <message>
        <source>Ctrl+Shift+N</source>
        <translation>Ctrl+Shift+N</translation>
    </message>
    <message>
        <source>Append an empty rule and edit its host</source>
        <translation>Eine leere Regel anhängen und ihren Host bearbeiten</translation>
    </message>
    <message>
        <source>Add from &amp;Template</source>
        <translation>Aus &amp;Vorlage hinzufügen</translation>
    </message>
    <message>
        <source>Add rules from a template</source>
        <translation>Regeln aus einer Vorlage hinzufügen</translation>
    </message>
    <message>
        <source>Append the rules of a policy template</source>
        <translation>Die Regeln einer Richtlinienvorlage anhängen</translation>
    </message>
    <message>
        <source>&amp;Remove Rule</source>
        <translation>Regel &amp;entfernen</translation>
    </message>
    <message>
        <source>Remove the selected rules</source>
        <translation>Die ausgewählten Regeln entfernen</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>&amp;Rückgängig</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>&amp;Wiederholen</translation>
    </message>
    <message>
        <source>&amp;Import…</source>
        <translation>&amp;Importieren…</translation>
    </message>
    <message>
        <source>Ctrl+I</source>
        <translation>Ctrl+I</translation>
    </message>
    <message>
        <source>Replace the rules with those of a policy file</source>
        <translation>Die Regeln durch die einer Richtliniendatei ersetzen</translation>
    </message>
    <message>
        <source>Import Policy</source>
        <translation>Richtlinie importieren</translation>
    </message>
    <message>
        <source>Policy files (*.json)</source>
        <translation>Richtliniendateien (*.json)</translation>
    </message>
    <message>
        <source>&amp;Export…</source>
        <translation>E&amp;xportieren…</translation>
    </message>
    <message>
        <source>Ctrl+E</source>
        <translation>Ctrl+E</translation>
    </message>
    <message>
        <source>Save the edited rules as a policy file</source>
        <translation>Die bearbeiteten Regeln als Richtliniendatei speichern</translation>
    </message>
    <message>
        <source>Export Policy</source>
        <translation>Richtlinie exportieren</translation>
    </message>
    <message>
        <source>Could not read the template %1.</source>
        <translation>Die Vorlage %1 konnte nicht gelesen werden.</translation>
    </message>
    <message>
        <source>The template is not a valid policy: %1</source>
        <translation>Die Vorlage ist keine gültige Richtlinie: %1</translation>
    </message>
    <message>
        <source>This template has no rules: it denies everything.</source>
        <translation>Diese Vorlage hat keine Regeln: Sie lehnt alles ab.</translation>
    </message>
    <message>
        <source>add template %1</source>
        <translation>Vorlage %1 hinzufügen</translation>
    </message>
    <message>
        <source>Could not open %1: %2</source>
        <translation>%1 konnte nicht geöffnet werden: %2</translation>
    </message>
    <message>
        <source>%1 is not a valid policy file: %2</source>
        <translation>%1 ist keine gültige Richtliniendatei: %2</translation>
    </message>
    <message>
        <source>import %1</source>
        <translation>%1 importieren</translation>
    </message>
    <message>
        <source>import</source>
        <translation>importieren</translation>
    </message>
    <message>
        <source>Fix the problems first: %1</source>
        <translation>Beheben Sie zuerst die Probleme: %1</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>%1 konnte nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <source>Could not read the policy: %1 %2</source>
        <translation>Die Richtlinie konnte nicht gelesen werden: %1 %2</translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation>Nicht angewandt: %1</translation>
    </message>
    <message>
        <source>The helper refused the policy; the problems are shown next to the rules.</source>
        <translation>Der Helfer hat die Richtlinie abgelehnt; die Probleme stehen neben den Regeln.</translation>
    </message>
    <message>
        <source>Not applied: %1 %2</source>
        <translation>Nicht angewandt: %1 %2</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>Läuft…</translation>
    </message>
    <message>
        <source>This helper cannot do dry runs; update airlockd.</source>
        <translation>Dieser Helfer kann keine Probeläufe; aktualisieren Sie airlockd.</translation>
    </message>
    <message>
        <source>Dry run failed: %1 %2</source>
        <translation>Probelauf fehlgeschlagen: %1 %2</translation>
    </message>
    <message>
        <source>Of %1 recorded requests, %2 would be newly allowed and %3 newly denied.</source>
        <translation>Von %1 aufgezeichneten Anfragen würden %2 neu erlaubt und %3 neu abgelehnt.</translation>
    </message>
    <message>
        <source>The policy of %1 was changed elsewhere; Revert shows it, Apply replaces it.</source>
        <translation>Die Richtlinie von %1 wurde anderswo geändert; „Zurücksetzen“ zeigt sie, „Anwenden“ ersetzt sie.</translation>
    </message>
    <message>
        <source>Rule %1: %2</source>
        <translation>Regel %1: %2</translation>
    </message>
    <message>
        <source>No pending changes.</source>
        <translation>Keine ausstehenden Änderungen.</translation>
    </message>
    <message>
        <source>&amp;Pending Changes (%1)</source>
        <translation>&amp;Ausstehende Änderungen (%1)</translation>
    </message>
    <message numerus="yes">
        <source>Added %n rule(s) from the template; they take effect when you apply.</source>
        <translation>
            <numerusform>%n Regel aus der Vorlage hinzugefügt; sie wirkt, sobald Sie anwenden.</numerusform>
            <numerusform>%n Regeln aus der Vorlage hinzugefügt; sie wirken, sobald Sie anwenden.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>add %n rule(s)</source>
        <translation>
            <numerusform>%n Regel hinzufügen</numerusform>
            <numerusform>%n Regeln hinzufügen</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Imported %n rule(s) from %1; they take effect when you apply.</source>
        <translation>
            <numerusform>%n Regel aus %1 importiert; sie wirkt, sobald Sie anwenden.</numerusform>
            <numerusform>%n Regeln aus %1 importiert; sie wirken, sobald Sie anwenden.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Exported %n rule(s) to %1.</source>
        <translation>
            <numerusform>%n Regel nach %1 exportiert.</numerusform>
            <numerusform>%n Regeln nach %1 exportiert.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n rule(s) applied.</source>
        <translation>
            <numerusform>%n Regel angewandt.</numerusform>
            <numerusform>%n Regeln angewandt.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Applied: %n rule(s). New connections of %1 follow the new policy.</source>
        <translation>
            <numerusform>Angewandt: %n Regel. Neue Verbindungen von %1 folgen der neuen Richtlinie.</numerusform>
            <numerusform>Angewandt: %n Regeln. Neue Verbindungen von %1 folgen der neuen Richtlinie.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>None of %n recorded request(s) would change verdict.</source>
        <translation>
            <numerusform>Die %n aufgezeichnete Anfrage würde ihre Entscheidung nicht ändern.</numerusform>
            <numerusform>Keine der %n aufgezeichneten Anfragen würde ihre Entscheidung ändern.</numerusform>
        </translation>
    </message>
    <message>
        <source>New rules pending: %1. Review them and Apply to allow.</source>
        <translation>Ausstehende neue Regeln: %1. Prüfen Sie sie und wenden Sie sie an, um zu erlauben.</translation>
    </message>
    <message>
        <source>(Rules with problems: %1. Fix them to see the changes.)</source>
        <translation>(Regeln mit Problemen: %1. Beheben Sie sie, um die Änderungen zu sehen.)</translation>
    </message>
</context>
<context>
    <name>airlock::PolicyRuleModel</name>
    <message>
        <source>edit rule %1</source>
        <translation>Regel %1 bearbeiten</translation>
    </message>
    <message>
        <source>A comment may have at most 1024 characters.</source>
        <translation>Ein Kommentar darf höchstens 1024 Zeichen haben.</translation>
    </message>
    <message>
        <source>The rule is not valid.</source>
        <translation>Die Regel ist ungültig.</translation>
    </message>
    <message>
        <source>rule %1: %2</source>
        <translation>Regel %1: %2</translation>
    </message>
    <message>
        <source>add rule</source>
        <translation>Regel hinzufügen</translation>
    </message>
    <message>
        <source>remove rule %1</source>
        <translation>Regel %1 entfernen</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>OK</translation>
    </message>
    <message>
        <source>any</source>
        <translation>alle</translation>
    </message>
    <message>
        <source>Stored as %1</source>
        <translation>Gespeichert als %1</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>Host</translation>
    </message>
    <message>
        <source>Ports</source>
        <translation>Ports</translation>
    </message>
    <message>
        <source>Methods</source>
        <translation>Methoden</translation>
    </message>
    <message>
        <source>Path prefixes</source>
        <translation>Pfadpräfixe</translation>
    </message>
    <message>
        <source>Comment</source>
        <translation>Kommentar</translation>
    </message>
    <message>
        <source>Problem</source>
        <translation>Problem</translation>
    </message>
    <message numerus="yes">
        <source>remove %n rules</source>
        <translation>
            <numerusform>%n Regel entfernen</numerusform>
            <numerusform>%n Regeln entfernen</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>airlock::ReviewDialog</name>
    <message>
        <source>&amp;Compare</source>
        <translation>&amp;Vergleichen</translation>
    </message>
    <message>
        <source>Select &amp;All</source>
        <translation>&amp;Alle auswählen</translation>
    </message>
    <message>
        <source>Select &amp;None</source>
        <translation>&amp;Keine auswählen</translation>
    </message>
    <message>
        <source>&amp;Take Selected</source>
        <translation>Ausgewählte &amp;übernehmen</translation>
    </message>
    <message>
        <source>Review Changes in %1</source>
        <translation>Änderungen in %1 prüfen</translation>
    </message>
    <message>
        <source>&amp;Browse…</source>
        <translation>&amp;Durchsuchen…</translation>
    </message>
    <message>
        <source>&amp;Host folder:</source>
        <translation>&amp;Hostordner:</translation>
    </message>
    <message>
        <source>&amp;Guest folder:</source>
        <translation>&amp;Gastordner:</translation>
    </message>
    <message>
        <source>Host folder</source>
        <translation>Hostordner</translation>
    </message>
    <message>
        <source>Guest folder</source>
        <translation>Gastordner</translation>
    </message>
    <message>
        <source>Review status</source>
        <translation>Prüfstatus</translation>
    </message>
    <message>
        <source>Changes</source>
        <translation>Änderungen</translation>
    </message>
    <message>
        <source>Patch</source>
        <translation>Patch</translation>
    </message>
    <message>
        <source>Select a change to see its patch.</source>
        <translation>Wählen Sie eine Änderung, um ihren Patch zu sehen.</translation>
    </message>
    <message>
        <source>Write the checked changes into the host folder</source>
        <translation>Die angekreuzten Änderungen in den Hostordner schreiben</translation>
    </message>
    <message>
        <source>Host Folder to Compare</source>
        <translation>Zu vergleichender Hostordner</translation>
    </message>
    <message>
        <source>Reading %1 from the sandbox…</source>
        <translation>Lese %1 aus der Sandbox…</translation>
    </message>
    <message>
        <source>Reading %1 from the sandbox… %2</source>
        <translation>Lese %1 aus der Sandbox… %2</translation>
    </message>
    <message>
        <source>No differences: the host folder has what the guest folder has.</source>
        <translation>Keine Unterschiede: der Hostordner enthält, was der Gastordner enthält.</translation>
    </message>
    <message numerus="yes">
        <source>%n change(s); </source>
        <translation>
            <numerusform>%n Änderung; </numerusform>
            <numerusform>%n Änderung(en); </numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n refused.</source>
        <translation>
            <numerusform>%n abgelehnt.</numerusform>
            <numerusform>%n abgelehnt.</numerusform>
        </translation>
    </message>
    <message>
        <source>Could not compare: %1 %2</source>
        <translation>Vergleich nicht möglich: %1 %2</translation>
    </message>
    <message>
        <source>Could not take the changes: %1</source>
        <translation>Die Änderungen konnten nicht übernommen werden: %1</translation>
    </message>
    <message numerus="yes">
        <source>Took the selected changes into %1: %n written, </source>
        <translation>
            <numerusform>Ausgewählte Änderungen nach %1 übernommen: %n geschrieben, </numerusform>
            <numerusform>Ausgewählte Änderungen nach %1 übernommen: %n geschrieben, </numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n removed</source>
        <translation>
            <numerusform>%n entfernt</numerusform>
            <numerusform>%n entfernt</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 refused: %2</source>
        <translation>%1 abgelehnt: %2</translation>
    </message>
    <message>
        <source>%1 not removed: %2</source>
        <translation>%1 nicht entfernt: %2</translation>
    </message>
    <message>
        <source>%1: binary content, no patch shown.</source>
        <translation>%1: binärer Inhalt, kein Patch angezeigt.</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
</context>
<context>
    <name>airlock::SandboxActions</name>
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
        <translation>Sandbox „%1“ konnte nicht hart gestoppt werden.</translation>
    </message>
    <message>
        <source>Could not pause sandbox “%1”.</source>
        <translation>Sandbox „%1“ konnte nicht angehalten werden.</translation>
    </message>
    <message>
        <source>Could not resume sandbox “%1”.</source>
        <translation>Sandbox „%1“ konnte nicht fortgesetzt werden.</translation>
    </message>
    <message>
        <source>Could not delete sandbox “%1”.</source>
        <translation>Sandbox „%1“ konnte nicht gelöscht werden.</translation>
    </message>
    <message>
        <source>Restarting %1…</source>
        <translation>%1 wird neu gestartet…</translation>
    </message>
    <message>
        <source>%1 did not stop within 2 minutes; it was not restarted.</source>
        <translation>%1 hat nicht innerhalb von 2 Minuten angehalten; sie wurde nicht neu gestartet.</translation>
    </message>
</context>
<context>
    <name>airlock::SandboxDetailsView</name>
    <message>
        <source>Sandbox details</source>
        <translation>Sandbox-Details</translation>
    </message>
    <message>
        <source>Identity warning</source>
        <translation>Identitätswarnung</translation>
    </message>
    <message>
        <source>Select a sandbox to see its details.</source>
        <translation>Wählen Sie eine Sandbox, um ihre Details zu sehen.</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
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
        <source>Image</source>
        <translation>Abbild</translation>
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
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>Acceleration</source>
        <translation>Beschleunigung</translation>
    </message>
    <message>
        <source>Started at</source>
        <translation>Gestartet um</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>Gestartet</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>Re&amp;start Sandbox</source>
        <translation>Sandbox neu &amp;starten</translation>
    </message>
    <message>
        <source>Restart the sandbox to give its guest its own identity</source>
        <translation>Die Sandbox neu starten, damit ihr Gast seine eigene Identität bekommt</translation>
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
        <source>Adopting</source>
        <translation>Wird übernommen</translation>
    </message>
    <message>
        <source>TCG (software)</source>
        <translation>TCG (Software)</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <source>KVM</source>
        <translation>KVM</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>%1 (alert: %2)</source>
        <translation>%1 (Alarm: %2)</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>Angehalten</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1, %2</translation>
    </message>
    <message>
        <source>booted</source>
        <translation>gebootet</translation>
    </message>
    <message>
        <source>from template</source>
        <translation>aus Vorlage</translation>
    </message>
    <message>
        <source>from snapshot</source>
        <translation>aus Snapshot</translation>
    </message>
    <message>
        <source>The guest did not confirm its new identity, so its network may not work. Restart the sandbox (Stop, then Start). The helper says: %1</source>
        <translation>Der Gast hat seine neue Identität nicht bestätigt, daher funktioniert sein Netzwerk möglicherweise nicht. Starten Sie die Sandbox neu (Stoppen, dann Starten). Der Helfer meldet: %1</translation>
    </message>
</context>
<context>
    <name>airlock::ScheduleDialog</name>
    <message>
        <source>&amp;Take automatic snapshots while %1 runs</source>
        <translation>&amp;Automatische Snapshots aufnehmen, während %1 läuft</translation>
    </message>
    <message>
        <source>Automatic Snapshots of %1</source>
        <translation>Automatische Snapshots von %1</translation>
    </message>
    <message>
        <source>Take automatic snapshots</source>
        <translation>Automatische Snapshots aufnehmen</translation>
    </message>
    <message>
        <source> min</source>
        <translation> min</translation>
    </message>
    <message>
        <source>Interval in minutes</source>
        <translation>Abstand in Minuten</translation>
    </message>
    <message>
        <source> h</source>
        <translation> h</translation>
    </message>
    <message>
        <source>Keep one per hour for this many hours</source>
        <translation>So viele Stunden lang einen pro Stunde behalten</translation>
    </message>
    <message>
        <source> d</source>
        <translation> d</translation>
    </message>
    <message>
        <source>Keep one per day for this many days</source>
        <translation>So viele Tage lang einen pro Tag behalten</translation>
    </message>
    <message>
        <source>&amp;Every:</source>
        <translation>A&amp;lle:</translation>
    </message>
    <message>
        <source>Keep one per &amp;hour for:</source>
        <translation>Einen pro &amp;Stunde behalten für:</translation>
    </message>
    <message>
        <source>Keep one per &amp;day for:</source>
        <translation>Einen pro &amp;Tag behalten für:</translation>
    </message>
    <message>
        <source>Older automatic snapshots are deleted; the newest one always stays. Manual, safety and pinned snapshots are never deleted by retention.</source>
        <translation>Ältere automatische Snapshots werden gelöscht; der neueste bleibt immer. Manuelle, Sicherungs- und angeheftete Snapshots löscht die Aufbewahrung nie.</translation>
    </message>
</context>
<context>
    <name>airlock::SecretListModel</name>
    <message>
        <source>damaged</source>
        <translation>beschädigt</translation>
    </message>
    <message>
        <source>never</source>
        <translation>nie</translation>
    </message>
    <message>
        <source>First 16 hex digits of the value&apos;s SHA-256: tells secrets apart, never shows the value.</source>
        <translation>Die ersten 16 Hexziffern des SHA-256 des Werts: unterscheidet Geheimnisse, zeigt nie den Wert.</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Fingerprint</source>
        <translation>Fingerabdruck</translation>
    </message>
    <message>
        <source>Last use</source>
        <translation>Letzte Verwendung</translation>
    </message>
    <message>
        <source>Uses</source>
        <translation>Verwendungen</translation>
    </message>
    <message>
        <source>Bindings</source>
        <translation>Bindungen</translation>
    </message>
    <message>
        <source>uid %1</source>
        <translation>UID %1</translation>
    </message>
    <message>
        <source>Stored by uid %1. Only its owner or root may replace, delete or bind it.</source>
        <translation>Gespeichert von UID %1. Nur der Besitzer oder root darf es ersetzen, löschen oder binden.</translation>
    </message>
    <message>
        <source>Owner</source>
        <translation>Besitzer</translation>
    </message>
</context>
<context>
    <name>airlock::SetSecretDialog</name>
    <message>
        <source>Set Secret</source>
        <translation>Geheimnis festlegen</translation>
    </message>
    <message>
        <source>Replace Secret “%1”</source>
        <translation>Geheimnis „%1“ ersetzen</translation>
    </message>
    <message>
        <source>e.g. github-token</source>
        <translation>z. B. github-token</translation>
    </message>
    <message>
        <source>Secret name</source>
        <translation>Name des Geheimnisses</translation>
    </message>
    <message>
        <source>paste the token or password</source>
        <translation>Token oder Passwort einfügen</translation>
    </message>
    <message>
        <source>Secret value</source>
        <translation>Wert des Geheimnisses</translation>
    </message>
    <message>
        <source>Secret problem</source>
        <translation>Problem mit dem Geheimnis</translation>
    </message>
    <message>
        <source>&amp;Store</source>
        <translation>&amp;Speichern</translation>
    </message>
    <message>
        <source>The value is sent once to the helper, stored encrypted, and never shown again — not here, not to the sandbox.</source>
        <translation>Der Wert wird einmal an den Helfer gesendet, verschlüsselt gespeichert und nie wieder angezeigt — weder hier noch der Sandbox.</translation>
    </message>
    <message>
        <source>&amp;Name:</source>
        <translation>&amp;Name:</translation>
    </message>
    <message>
        <source>&amp;Value:</source>
        <translation>&amp;Wert:</translation>
    </message>
    <message>
        <source>Names use a-z, 0-9 and &apos;-&apos; and start with a letter or digit.</source>
        <translation>Namen bestehen aus a-z, 0-9 und &apos;-&apos; und beginnen mit einem Buchstaben oder einer Ziffer.</translation>
    </message>
    <message>
        <source>The value may have at most 64 KiB.</source>
        <translation>Der Wert darf höchstens 64 KiB groß sein.</translation>
    </message>
</context>
<context>
    <name>airlock::SnapshotTimelineModel</name>
    <message>
        <source>fork: %1</source>
        <translation>Abzweigung: %1</translation>
    </message>
    <message>
        <source>branch</source>
        <translation>Zweig</translation>
    </message>
    <message>
        <source>from another sandbox</source>
        <translation>aus einer anderen Sandbox</translation>
    </message>
    <message>
        <source>Manual</source>
        <translation>Manuell</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>Automatisch</translation>
    </message>
    <message>
        <source>Safety</source>
        <translation>Sicherung</translation>
    </message>
    <message>
        <source>Template</source>
        <translation>Vorlage</translation>
    </message>
    <message>
        <source>%1 snapshot “%2” of %3, taken %4: %5 new of %6, paused %7 ms</source>
        <translation>Snapshot „%2“ (%1) von %3, aufgenommen %4: %5 neu von %6, %7 ms angehalten</translation>
    </message>
    <message>
        <source>(no label)</source>
        <translation>(ohne Bezeichnung)</translation>
    </message>
    <message>
        <source>; pinned</source>
        <translation>; angeheftet</translation>
    </message>
    <message>
        <source>; the current state descends from it</source>
        <translation>; der aktuelle Zustand stammt von ihm ab</translation>
    </message>
    <message>
        <source>%1 (%2 stored)</source>
        <translation>%1 (%2 gespeichert)</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <source>Pinned</source>
        <translation>Angeheftet</translation>
    </message>
    <message>
        <source>Label</source>
        <translation>Bezeichnung</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>Zeit</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>Art</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Größe</translation>
    </message>
    <message>
        <source>New bytes</source>
        <translation>Neue Bytes</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Pause</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation>Sandbox</translation>
    </message>
    <message>
        <source>“%1”</source>
        <translation>„%1“</translation>
    </message>
    <message>
        <source>the snapshot of %1</source>
        <translation>den Snapshot von %1</translation>
    </message>
    <message>
        <source>a snapshot since deleted</source>
        <translation>einen inzwischen gelöschten Snapshot</translation>
    </message>
    <message>
        <source>State kept before restoring %1</source>
        <translation>Zustand vor dem Wiederherstellen von %1</translation>
    </message>
</context>
<context>
    <name>airlock::SnapshotTimelineView</name>
    <message>
        <source>Snapshot timeline</source>
        <translation>Snapshot-Zeitleiste</translation>
    </message>
    <message>
        <source>No snapshots of %1 yet. Take one with Take Snapshot (Ctrl+Shift+S).</source>
        <translation>Noch keine Snapshots von %1. Nehmen Sie einen mit „Snapshot aufnehmen“ (Strg+Umschalt+S) auf.</translation>
    </message>
    <message>
        <source>Select a sandbox to see its snapshots.</source>
        <translation>Wählen Sie eine Sandbox, um ihre Snapshots zu sehen.</translation>
    </message>
    <message>
        <source>now</source>
        <translation>jetzt</translation>
    </message>
    <message>
        <source>Automatic snapshots are off.</source>
        <translation>Automatische Snapshots sind aus.</translation>
    </message>
    <message>
        <source>Every %1 min; shaded: retention window (newest per hour for %2 h, per day for %3 d; pinned kept)</source>
        <translation>Alle %1 min; schattiert: Aufbewahrungsfenster (neuester pro Stunde für %2 h, pro Tag für %3 d; angeheftete bleiben)</translation>
    </message>
    <message>
        <source>manual</source>
        <translation>manuell</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>automatisch</translation>
    </message>
    <message>
        <source>safety</source>
        <translation>Sicherung</translation>
    </message>
    <message>
        <source>pinned</source>
        <translation>angeheftet</translation>
    </message>
    <message>
        <source>size: new bytes stored; dashed: forks and the current state</source>
        <translation>Größe: neu gespeicherte Bytes; gestrichelt: Abzweigungen und der aktuelle Zustand</translation>
    </message>
    <message>
        <source>No sandbox selected.</source>
        <translation>Keine Sandbox ausgewählt.</translation>
    </message>
    <message numerus="yes">
        <source>%n snapshot(s) of %1</source>
        <translation>
            <numerusform>%n Snapshot von %1</numerusform>
            <numerusform>%n Snapshots von %1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n branch(es).</source>
        <translation>
            <numerusform>%n Zweig.</numerusform>
            <numerusform>%n Zweige.</numerusform>
        </translation>
    </message>
    <message>
        <source>Selected: %1.</source>
        <translation>Ausgewählt: %1.</translation>
    </message>
    <message>
        <source>%1 runs, no snapshot yet</source>
        <translation>%1 läuft, noch kein Snapshot</translation>
    </message>
    <message>
        <source>%1 was forked from “%2” and has no snapshot yet.</source>
        <translation>%1 wurde von „%2“ abgezweigt und hat noch keinen Snapshot.</translation>
    </message>
    <message>
        <source>The current state runs from “%1”.</source>
        <translation>Der aktuelle Zustand läuft ab „%1“.</translation>
    </message>
    <message>
        <source>current state</source>
        <translation>aktueller Zustand</translation>
    </message>
    <message>
        <source>The current state: %1.</source>
        <translation>Der aktuelle Zustand: %1.</translation>
    </message>
</context>
<context>
    <name>airlock::SnapshotsView</name>
    <message>
        <source>Sandbox whose snapshots are shown</source>
        <translation>Sandbox, deren Snapshots gezeigt werden</translation>
    </message>
    <message>
        <source>Sandbox state</source>
        <translation>Zustand der Sandbox</translation>
    </message>
    <message>
        <source>Snapshot list</source>
        <translation>Snapshot-Liste</translation>
    </message>
    <message>
        <source>Snapshot details</source>
        <translation>Snapshot-Details</translation>
    </message>
    <message>
        <source>Snapshot status</source>
        <translation>Snapshot-Status</translation>
    </message>
    <message>
        <source>&amp;Sandbox:</source>
        <translation>&amp;Sandbox:</translation>
    </message>
    <message>
        <source>Take Snapshot</source>
        <translation>Snapshot aufnehmen</translation>
    </message>
    <message>
        <source>Automatic snapshots</source>
        <translation>Automatische Snapshots</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
    <message>
        <source>&amp;Take Snapshot…</source>
        <translation>Snapshot auf&amp;nehmen …</translation>
    </message>
    <message>
        <source>Ctrl+Shift+S</source>
        <translation>Ctrl+Shift+S</translation>
    </message>
    <message>
        <source>Save the sandbox&apos;s whole running state (memory and devices)</source>
        <translation>Den ganzen laufenden Zustand der Sandbox sichern (Speicher und Geräte)</translation>
    </message>
    <message>
        <source>&amp;Automatic Snapshots…</source>
        <translation>&amp;Automatische Snapshots …</translation>
    </message>
    <message>
        <source>Take snapshots at an interval and choose how long they are kept</source>
        <translation>Snapshots in festen Abständen aufnehmen und wählen, wie lange sie bleiben</translation>
    </message>
    <message>
        <source>&amp;Restore…</source>
        <translation>&amp;Wiederherstellen …</translation>
    </message>
    <message>
        <source>Ctrl+Shift+R</source>
        <translation>Ctrl+Shift+R</translation>
    </message>
    <message>
        <source>Put the sandbox back into this snapshot&apos;s state (a safety snapshot is taken first)</source>
        <translation>Die Sandbox in den Zustand dieses Snapshots zurückversetzen (vorher wird ein Sicherungs-Snapshot aufgenommen)</translation>
    </message>
    <message>
        <source>&amp;Fork…</source>
        <translation>A&amp;bzweigen …</translation>
    </message>
    <message>
        <source>Ctrl+Shift+F</source>
        <translation>Ctrl+Shift+F</translation>
    </message>
    <message>
        <source>Start a new sandbox from this snapshot; the original runs on</source>
        <translation>Eine neue Sandbox aus diesem Snapshot starten; das Original läuft weiter</translation>
    </message>
    <message>
        <source>Re&amp;name…</source>
        <translation>&amp;Umbenennen …</translation>
    </message>
    <message>
        <source>Change the label</source>
        <translation>Die Bezeichnung ändern</translation>
    </message>
    <message>
        <source>&amp;Pin</source>
        <translation>An&amp;heften</translation>
    </message>
    <message>
        <source>Keep this snapshot whatever its age</source>
        <translation>Diesen Snapshot behalten, wie alt er auch wird</translation>
    </message>
    <message>
        <source>&amp;Delete…</source>
        <translation>&amp;Löschen …</translation>
    </message>
    <message>
        <source>Delete this snapshot; its children stay</source>
        <translation>Diesen Snapshot löschen; seine Nachfolger bleiben</translation>
    </message>
    <message>
        <source>Un&amp;pin</source>
        <translation>&amp;Lösen</translation>
    </message>
    <message>
        <source>(%1)</source>
        <translation>(%1)</translation>
    </message>
    <message>
        <source>of %1</source>
        <translation>von %1</translation>
    </message>
    <message>
        <source>“%1” of %2</source>
        <translation>„%1“ von %2</translation>
    </message>
    <message>
        <source>No sandbox selected.</source>
        <translation>Keine Sandbox ausgewählt.</translation>
    </message>
    <message>
        <source>Select a snapshot in the timeline or the list.</source>
        <translation>Wählen Sie einen Snapshot in der Zeitleiste oder der Liste.</translation>
    </message>
    <message>
        <source>none (the first state)</source>
        <translation>keiner (der erste Zustand)</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <source>%1 (another sandbox&apos;s)</source>
        <translation>%1 (einer anderen Sandbox)</translation>
    </message>
    <message>
        <source>Label</source>
        <translation>Bezeichnung</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>Zeit</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>Art</translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation>Sandbox</translation>
    </message>
    <message>
        <source>Logical size</source>
        <translation>Logische Größe</translation>
    </message>
    <message>
        <source>New bytes</source>
        <translation>Neue Bytes</translation>
    </message>
    <message>
        <source>%1 (%2 stored)</source>
        <translation>%1 (%2 gespeichert)</translation>
    </message>
    <message>
        <source>Pause time</source>
        <translation>Pausenzeit</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 ms</translation>
    </message>
    <message>
        <source>Pinned</source>
        <translation>Angeheftet</translation>
    </message>
    <message>
        <source>yes: kept whatever its age</source>
        <translation>ja: bleibt, wie alt er auch wird</translation>
    </message>
    <message>
        <source>no</source>
        <translation>nein</translation>
    </message>
    <message>
        <source>Parent</source>
        <translation>Vorgänger</translation>
    </message>
    <message>
        <source>Current state</source>
        <translation>Aktueller Zustand</translation>
    </message>
    <message>
        <source>descends from this snapshot</source>
        <translation>stammt von diesem Snapshot ab</translation>
    </message>
    <message>
        <source>Id</source>
        <translation>Kennung</translation>
    </message>
    <message>
        <source>Airlock</source>
        <translation>Airlock</translation>
    </message>
    <message>
        <source>Take Snapshot of %1</source>
        <translation>Snapshot von %1 aufnehmen</translation>
    </message>
    <message>
        <source>&amp;Label (optional):</source>
        <translation>&amp;Bezeichnung (optional):</translation>
    </message>
    <message>
        <source>&amp;Take Snapshot</source>
        <translation>Snapshot auf&amp;nehmen</translation>
    </message>
    <message>
        <source>That label cannot be used.</source>
        <translation>Diese Bezeichnung ist nicht möglich.</translation>
    </message>
    <message>
        <source>Taking a snapshot of %1…</source>
        <translation>Snapshot von %1 wird aufgenommen …</translation>
    </message>
    <message>
        <source>Could not take a snapshot of “%1”.</source>
        <translation>Von „%1“ konnte kein Snapshot aufgenommen werden.</translation>
    </message>
    <message>
        <source>Snapshot taken: %1 new (%2 stored), the guest paused %3 ms.</source>
        <translation>Snapshot aufgenommen: %1 neu (%2 gespeichert), der Gast war %3 ms angehalten.</translation>
    </message>
    <message>
        <source>Restore Snapshot</source>
        <translation>Snapshot wiederherstellen</translation>
    </message>
    <message>
        <source>Restore %1 to the snapshot %2?</source>
        <translation>%1 auf den Snapshot %2 zurücksetzen?</translation>
    </message>
    <message>
        <source>A safety snapshot of %1&apos;s current state is taken first, so you can go back to it. Then the running guest is replaced by the snapshot&apos;s state; what happened since is only in the safety snapshot.</source>
        <translation>Zuerst wird ein Sicherungs-Snapshot des aktuellen Zustands von %1 aufgenommen, zu dem Sie zurückkehren können. Dann ersetzt der Zustand des Snapshots den laufenden Gast; was seitdem geschah, steht nur im Sicherungs-Snapshot.</translation>
    </message>
    <message>
        <source>&amp;Restore</source>
        <translation>&amp;Wiederherstellen</translation>
    </message>
    <message>
        <source>Restoring %1 (taking a safety snapshot first)…</source>
        <translation>%1 wird wiederhergestellt (zuerst ein Sicherungs-Snapshot) …</translation>
    </message>
    <message>
        <source>Could not restore “%1”.</source>
        <translation>„%1“ konnte nicht wiederhergestellt werden.</translation>
    </message>
    <message>
        <source>Restored %1. The state before is kept in the safety snapshot of %2.</source>
        <translation>%1 wiederhergestellt. Der Zustand davor steht im Sicherungs-Snapshot von %2.</translation>
    </message>
    <message>
        <source>Restored %1 (it was stopped: no safety snapshot was needed).</source>
        <translation>%1 wiederhergestellt (sie war gestoppt: kein Sicherungs-Snapshot nötig).</translation>
    </message>
    <message>
        <source>Forking %1 into %2…</source>
        <translation>%1 wird nach %2 abgezweigt …</translation>
    </message>
    <message>
        <source>This helper cannot copy credential bindings into a fork (it is older than this window). Nothing was forked.</source>
        <translation>Dieser Helfer kann keine Zugangsdaten-Bindungen in eine Abzweigung kopieren (er ist älter als dieses Fenster). Es wurde nichts abgezweigt.</translation>
    </message>
    <message>
        <source>Fork Snapshot</source>
        <translation>Snapshot abzweigen</translation>
    </message>
    <message>
        <source>This helper cannot copy credential bindings into a fork.</source>
        <translation>Dieser Helfer kann keine Zugangsdaten-Bindungen in eine Abzweigung kopieren.</translation>
    </message>
    <message>
        <source>It is older than this window. Fork without the bindings and add them to %1 in Credentials afterwards?

%2</source>
        <translation>Er ist älter als dieses Fenster. Ohne die Bindungen abzweigen und sie danach unter „Zugangsdaten“ zu %1 hinzufügen?

%2</translation>
    </message>
    <message>
        <source>Fork &amp;Without Bindings</source>
        <translation>&amp;Ohne Bindungen abzweigen</translation>
    </message>
    <message>
        <source>Could not fork “%1”.</source>
        <translation>„%1“ konnte nicht abgezweigt werden.</translation>
    </message>
    <message>
        <source>Forked %1 into %2. Credential bindings were not copied.</source>
        <translation>%1 nach %2 abgezweigt. Zugangsdaten-Bindungen wurden nicht kopiert.</translation>
    </message>
    <message>
        <source>Forked %1 into %2, but the helper did not copy the credential bindings (it may be older than this window). Add them to %2 in Credentials.</source>
        <translation>%1 nach %2 abgezweigt, aber der Helfer hat die Zugangsdaten-Bindungen nicht kopiert (er ist vielleicht älter als dieses Fenster). Fügen Sie sie unter „Zugangsdaten“ zu %2 hinzu.</translation>
    </message>
    <message numerus="yes">
        <source>Forked %1 into %2 with %n credential binding(s) (fresh placeholders).</source>
        <translation>
            <numerusform>%1 nach %2 abgezweigt, mit %n Zugangsdaten-Bindung (neue Platzhalter).</numerusform>
            <numerusform>%1 nach %2 abgezweigt, mit %n Zugangsdaten-Bindungen (neue Platzhalter).</numerusform>
        </translation>
    </message>
    <message>
        <source>Rename Snapshot</source>
        <translation>Snapshot umbenennen</translation>
    </message>
    <message>
        <source>&amp;Label:</source>
        <translation>&amp;Bezeichnung:</translation>
    </message>
    <message>
        <source>Could not rename the snapshot.</source>
        <translation>Der Snapshot konnte nicht umbenannt werden.</translation>
    </message>
    <message>
        <source>Renamed.</source>
        <translation>Umbenannt.</translation>
    </message>
    <message>
        <source>Could not pin the snapshot.</source>
        <translation>Der Snapshot konnte nicht angeheftet werden.</translation>
    </message>
    <message>
        <source>Could not unpin the snapshot.</source>
        <translation>Der Snapshot konnte nicht gelöst werden.</translation>
    </message>
    <message>
        <source>Pinned: retention keeps it whatever its age.</source>
        <translation>Angeheftet: Die Aufbewahrung behält ihn, wie alt er auch wird.</translation>
    </message>
    <message>
        <source>Unpinned.</source>
        <translation>Gelöst.</translation>
    </message>
    <message>
        <source>Delete Snapshot</source>
        <translation>Snapshot löschen</translation>
    </message>
    <message>
        <source>Delete the snapshot %1?</source>
        <translation>Den Snapshot %1 löschen?</translation>
    </message>
    <message>
        <source>It is pinned. </source>
        <translation>Er ist angeheftet. </translation>
    </message>
    <message>
        <source>Snapshots taken after it stay (they take its parent). Its stored data is freed where no other snapshot shares it. This cannot be undone.</source>
        <translation>Spätere Snapshots bleiben (sie übernehmen seinen Vorgänger). Seine gespeicherten Daten werden frei, soweit kein anderer Snapshot sie teilt. Das lässt sich nicht rückgängig machen.</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>&amp;Löschen</translation>
    </message>
    <message>
        <source>Could not delete the snapshot.</source>
        <translation>Der Snapshot konnte nicht gelöscht werden.</translation>
    </message>
    <message>
        <source>Snapshot deleted.</source>
        <translation>Snapshot gelöscht.</translation>
    </message>
    <message>
        <source>Could not change the automatic snapshots of “%1”.</source>
        <translation>Die automatischen Snapshots von „%1“ konnten nicht geändert werden.</translation>
    </message>
    <message>
        <source>Automatic snapshots are off.</source>
        <translation>Automatische Snapshots sind aus.</translation>
    </message>
    <message>
        <source>An automatic snapshot every %1 min while it runs.</source>
        <translation>Alle %1 min ein automatischer Snapshot, solange sie läuft.</translation>
    </message>
    <message>
        <source>%1 is stopped: it is started from the snapshot&apos;s state.</source>
        <translation>%1 ist gestoppt: Sie wird aus dem Zustand des Snapshots gestartet.</translation>
    </message>
    <message>
        <source>But the guest of %1 did not confirm its new identity: its network may not work. Restart %1 (Stop, then Start).</source>
        <translation>Aber der Gast von %1 hat seine neue Identität nicht bestätigt: Sein Netzwerk funktioniert möglicherweise nicht. Starten Sie %1 neu (Stoppen, dann Starten).</translation>
    </message>
    <message>
        <source>The guest of %1 did not confirm its new identity.</source>
        <translation>Der Gast von %1 hat seine neue Identität nicht bestätigt.</translation>
    </message>
    <message>
        <source>%1 runs, but it may still use the name, addresses and CA of the snapshot it started from, so its network may not work and it may clash with the sandbox it came from. Restart %1 (Stop, then Start) to boot it with its own identity; what it holds in memory is then lost, so take what you need first.

The helper said: %2</source>
        <translation>%1 läuft, verwendet aber vielleicht noch Namen, Adressen und CA des Snapshots, aus dem sie gestartet wurde; ihr Netzwerk funktioniert dann möglicherweise nicht, und sie kann mit der Sandbox kollidieren, von der sie stammt. Starten Sie %1 neu (Stoppen, dann Starten), damit sie mit ihrer eigenen Identität bootet; was sie im Speicher hält, geht dabei verloren, sichern Sie also zuerst, was Sie brauchen.

Der Helfer meldete: %2</translation>
    </message>
    <message>
        <source>&amp;Restart Now</source>
        <translation>Jetzt &amp;neu starten</translation>
    </message>
    <message>
        <source>Restore the selected snapshot</source>
        <translation>Den ausgewählten Snapshot wiederherstellen</translation>
    </message>
    <message>
        <source>Fork the selected snapshot</source>
        <translation>Den ausgewählten Snapshot abzweigen</translation>
    </message>
    <message>
        <source>started from a template</source>
        <translation>aus einer Vorlage gestartet</translation>
    </message>
</context>
<context>
    <name>airlock::TerminalView</name>
    <message>
        <source>Terminal</source>
        <translation>Terminal</translation>
    </message>
    <message>
        <source>Console of the sandbox. Ctrl+Shift+C copies, Ctrl+Shift+V pastes, Shift+Page Up/Down scrolls the history, Ctrl+Page Up/Down switch tabs, %1 leaves the console.</source>
        <translation>Konsole der Sandbox. Strg+Umschalt+C kopiert, Strg+Umschalt+V fügt ein, Umschalt+Bild auf/ab blättert im Verlauf, Strg+Bild auf/ab wechselt den Reiter, %1 verlässt die Konsole.</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>&amp;Kopieren</translation>
    </message>
    <message>
        <source>Ctrl+Shift+C</source>
        <translation>Ctrl+Shift+C</translation>
    </message>
    <message>
        <source>&amp;Paste</source>
        <translation>&amp;Einfügen</translation>
    </message>
    <message>
        <source>Ctrl+Shift+V</source>
        <translation>Ctrl+Shift+V</translation>
    </message>
    <message>
        <source>Select &amp;All</source>
        <translation>&amp;Alles auswählen</translation>
    </message>
    <message>
        <source>&amp;Leave Console</source>
        <translation>Konsole &amp;verlassen</translation>
    </message>
    <message>
        <source>&amp;Next Tab</source>
        <translation>&amp;Nächster Reiter</translation>
    </message>
    <message>
        <source>P&amp;revious Tab</source>
        <translation>&amp;Vorheriger Reiter</translation>
    </message>
    <message>
        <source>Set Leave &amp;Shortcut…</source>
        <translation>&amp;Tastenkürzel zum Verlassen …</translation>
    </message>
    <message>
        <source>Leave Console Shortcut</source>
        <translation>Tastenkürzel zum Verlassen der Konsole</translation>
    </message>
    <message>
        <source>The key that moves the focus out of every console:</source>
        <translation>Die Taste, die den Fokus aus jeder Konsole nimmt:</translation>
    </message>
</context>
<context>
    <name>airlock::WorkspaceChangeModel</name>
    <message>
        <source>Added</source>
        <translation>Hinzugefügt</translation>
    </message>
    <message>
        <source>Modified</source>
        <translation>Geändert</translation>
    </message>
    <message>
        <source>Deleted</source>
        <translation>Gelöscht</translation>
    </message>
    <message>
        <source>Refused</source>
        <translation>Abgelehnt</translation>
    </message>
    <message>
        <source>Not taken: %1</source>
        <translation>Nicht übernommen: %1</translation>
    </message>
    <message>
        <source>binary</source>
        <translation>binär</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>Pfad</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>Änderung</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>Details</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Open the connections manager (remote hosts) at start.</source>
        <translation>Beim Start die Verbindungsverwaltung (entfernte Hosts) öffnen.</translation>
    </message>
    <message>
        <source>Manage microVM sandboxes for untrusted coding agents.</source>
        <translation>microVM-Sandboxen für nicht vertrauenswürdige Coding-Agenten verwalten.</translation>
    </message>
    <message>
        <source>Helper socket (default: $AIRLOCK_SOCKET or %1).</source>
        <translation>Socket des Helfers (Standard: $AIRLOCK_SOCKET oder %1).</translation>
    </message>
    <message>
        <source>PATH</source>
        <translation>PFAD</translation>
    </message>
    <message>
        <source>Select sandbox NAME and open its console.</source>
        <translation>Sandbox NAME auswählen und ihre Konsole öffnen.</translation>
    </message>
    <message>
        <source>NAME</source>
        <translation>NAME</translation>
    </message>
</context>
</TS>

// The e2b SDK (the pinned version of package-lock.json) against a real airlock-e2b in front of a
// real airlockd and real guests, written as the SDK's documentation shows it
// (https://e2b.dev/docs). tst_e2bsdk sets E2B_API_KEY, E2B_API_URL and E2B_SANDBOX_URL from
// `airlock-e2b --print-env` and runs this file with `node --test`.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'

import { Sandbox, CommandExitError, AuthenticationError, NotFoundError } from 'e2b'

// A cold boot on a slow machine takes longer than the SDK's 60 s default per request.
const slow = { requestTimeoutMs: 240_000 }
const metadata = { suite: `airlock-${process.pid}` }
let sandbox

// Polls `check` until it holds (a fact airlock-e2b reaches on its own, e.g. an expiry).
async function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

before(async () => {
  sandbox = await Sandbox.create({ metadata, ...slow })
})

after(async () => {
  if (sandbox) await Sandbox.kill(sandbox.sandboxId)
})

test('commands.run returns stdout and exit code 0', async () => {
  const result = await sandbox.commands.run('echo hi')
  assert.equal(result.stdout, 'hi\n')
  assert.equal(result.stderr, '')
  assert.equal(result.exitCode, 0)
})

test('stderr and environment variables of a command', async () => {
  const result = await sandbox.commands.run('echo "$GREETING" >&2', { envs: { GREETING: 'hello' } })
  assert.equal(result.stdout, '')
  assert.equal(result.stderr, 'hello\n')
})

test('users, home folders and cwd', async () => {
  // E2B's default user is the guest's unprivileged `agent`; `root` is root.
  const mine = await sandbox.commands.run('id -un; pwd')
  assert.equal(mine.stdout, 'agent\n/home/agent\n')
  const root = await sandbox.commands.run('id -u; pwd', { user: 'root', cwd: '/tmp' })
  assert.equal(root.stdout, '0\n/tmp\n')
})

test("a template is an Airlock image: 'debian' runs bash in the user's home", async () => {
  const debian = await Sandbox.create('debian', slow)
  try {
    const result = await debian.commands.run('echo "$0 $HOME"; id -un; pwd')
    assert.equal(result.stdout, '/bin/bash /home/agent\nagent\n/home/agent\n')
    assert.equal(result.stderr, '')
    assert.equal((await debian.getInfo()).templateId, 'debian')
  } finally {
    await debian.kill()
  }
  await assert.rejects(Sandbox.create('no-such-image'), (error) => {
    assert.match(error.message, /template 'no-such-image' not found/)
    return true
  })
})

test('a failing command raises CommandExitError with its exit code', async () => {
  await assert.rejects(sandbox.commands.run('echo broken >&2; exit 3'), (error) => {
    assert.ok(error instanceof CommandExitError, `not a CommandExitError: ${error}`)
    assert.equal(error.exitCode, 3)
    assert.equal(error.stderr, 'broken\n')
    return true
  })
})

test('onStdout streams before the command ends, and stdin reaches it', async () => {
  let ready
  const readySeen = new Promise((resolve) => { ready = resolve })
  const chunks = []
  const handle = await sandbox.commands.run('echo ready; read line; echo "got $line"', {
    background: true,
    stdin: true,
    onStdout: (data) => {
      chunks.push(data)
      if (chunks.join('').includes('ready\n')) ready()
    },
  })
  // The command waits for its input: "ready" arrived while it still runs.
  await readySeen
  assert.equal(handle.exitCode, undefined)
  await sandbox.commands.sendStdin(handle.pid, 'airlock\n')
  const result = await handle.wait()
  assert.equal(result.stdout, 'ready\ngot airlock\n')
})

test('a background command is listed and killed', async () => {
  const handle = await sandbox.commands.run('sleep 600', { background: true })
  const running = await sandbox.commands.list()
  assert.ok(running.some((p) => p.pid === handle.pid), JSON.stringify(running))
  assert.equal(await handle.kill(), true)
  await assert.rejects(handle.wait(), CommandExitError)
  const after = await sandbox.commands.list()
  assert.ok(!after.some((p) => p.pid === handle.pid), JSON.stringify(after))
})

test('pty: a shell on a terminal takes input and answers', async () => {
  let seen = ''
  let answered
  const answer = new Promise((resolve) => { answered = resolve })
  const decoder = new TextDecoder()
  const terminal = await sandbox.pty.create({
    cols: 80,
    rows: 24,
    onData: (data) => {
      seen += decoder.decode(data, { stream: true })
      // The echo of the typed line says $((40+2)); only the shell's answer says 42.
      if (seen.includes('pty-42')) answered()
    },
  })
  await sandbox.pty.resize(terminal.pid, { cols: 100, rows: 30 })
  await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode('echo pty-$((40+2)) $(stty size)\n'))
  await answer
  await waitFor(async () => seen.includes('pty-42 30 100'), 30_000, 'the resized terminal')
  assert.equal(await terminal.kill(), true)
})

test('files.write and files.read round trip text', async () => {
  const info = await sandbox.files.write('/tmp/hello.txt', 'hello from e2b\n')
  assert.equal(info.path, '/tmp/hello.txt')
  assert.equal(await sandbox.files.read('/tmp/hello.txt'), 'hello from e2b\n')
  // The guest sees the same file.
  const cat = await sandbox.commands.run('cat /tmp/hello.txt')
  assert.equal(cat.stdout, 'hello from e2b\n')
})

test('files.write and files.read round trip 5 MiB of binary', async () => {
  const data = randomBytes(5 * 1024 * 1024)
  await sandbox.files.write('/tmp/blob.bin', data.buffer.slice(data.byteOffset, data.byteOffset + data.length))
  const back = await sandbox.files.read('/tmp/blob.bin', { format: 'bytes' })
  assert.equal(back.length, data.length)
  assert.ok(Buffer.from(back).equals(data), 'the bytes read differ from the bytes written')
  const sum = await sandbox.commands.run('sha256sum /tmp/blob.bin')
  assert.equal(sum.stdout.split(' ')[0], createHash('sha256').update(data).digest('hex'))
})

test('files.list, exists, makeDir, rename and remove', async () => {
  assert.equal(await sandbox.files.makeDir('/tmp/tree/sub'), true)
  await sandbox.files.write('/tmp/tree/a.txt', 'a')
  const entries = await sandbox.files.list('/tmp/tree')
  assert.deepEqual(entries.map((e) => [e.name, e.type]).sort(), [['a.txt', 'file'], ['sub', 'dir']])
  assert.equal(entries.find((e) => e.name === 'a.txt').path, '/tmp/tree/a.txt')
  assert.equal(await sandbox.files.exists('/tmp/tree/a.txt'), true)
  const moved = await sandbox.files.rename('/tmp/tree/a.txt', '/tmp/tree/b.txt')
  assert.equal(moved.path, '/tmp/tree/b.txt')
  assert.equal(await sandbox.files.exists('/tmp/tree/a.txt'), false)
  await sandbox.files.remove('/tmp/tree')
  assert.equal(await sandbox.files.exists('/tmp/tree'), false)
  await assert.rejects(sandbox.files.read('/tmp/tree/b.txt'), NotFoundError)
})

test('files.watchDir sees files.write and a command write, recursive too', async () => {
  await sandbox.files.makeDir('/tmp/watched/deep')
  const seen = []
  let wake = () => {}
  // Resolves once an event matching `want` came (the watch is a fact of the guest: no sleeps).
  const until = (want) =>
    new Promise((resolve) => {
      const check = () => (seen.some(want) ? resolve() : (wake = check))
      check()
    })
  const handle = await sandbox.files.watchDir(
    '/tmp/watched',
    (event) => {
      seen.push(event)
      wake()
    },
    { recursive: true },
  )
  try {
    await sandbox.files.write('/tmp/watched/from-sdk.txt', 'x')
    await until((e) => e.name === 'from-sdk.txt' && e.type === 'write')
    // files.makeDir's folders belong to root (docs/e2b.md, "Known differences").
    await sandbox.commands.run('echo y > /tmp/watched/deep/from-command.txt', { user: 'root' })
    await until((e) => e.name === 'deep/from-command.txt' && e.type === 'create')
    await sandbox.commands.run('rm /tmp/watched/from-sdk.txt', { user: 'root' })
    await until((e) => e.name === 'from-sdk.txt' && e.type === 'remove')
  } finally {
    await handle.stop()
  }
  assert.ok(seen.some((e) => e.name === 'from-sdk.txt' && e.type === 'create'), JSON.stringify(seen))
  // A path that is not a folder is refused before any event.
  await assert.rejects(sandbox.files.watchDir('/tmp/no-such-folder', () => {}), NotFoundError)
})

test('commands see their user\'s HOME and start in it, through a login shell', async () => {
  const mine = await sandbox.commands.run('echo $HOME; pwd')
  assert.equal(mine.stdout, '/home/agent\n/home/agent\n')
  const root = await sandbox.commands.run('echo $HOME; pwd', { user: 'root' })
  assert.equal(root.stdout, '/root\n/root\n')
  const there = await sandbox.commands.run('echo $HOME; pwd', { user: 'root', cwd: '/tmp' })
  assert.equal(there.stdout, '/root\n/tmp\n')
})

test('Sandbox.list filters by metadata; getInfo; setTimeout', async () => {
  const mine = await Sandbox.list({ query: { metadata } }).nextItems()
  assert.deepEqual(mine.map((s) => s.sandboxId), [sandbox.sandboxId])
  assert.deepEqual(mine[0].metadata, metadata)
  assert.equal(mine[0].state, 'running')
  const none = await Sandbox.list({ query: { metadata: { suite: 'someone-else' } } }).nextItems()
  assert.deepEqual(none, [])
  // The metadata is the Airlock sandbox's labels: every client of the helper sees it.
  const shown = execFileSync(process.env.AIRLOCK_AIRLOCKCTL,
    ['--socket', process.env.AIRLOCK_SOCKET, 'info', `e2b-${sandbox.sandboxId}`]).toString()
  assert.match(shown, new RegExp(`^Labels: +suite=${metadata.suite}$`, 'm'))

  await sandbox.setTimeout(3_600_000)
  const info = await sandbox.getInfo()
  assert.equal(info.sandboxId, sandbox.sandboxId)
  const left = info.endAt.getTime() - Date.now()
  assert.ok(left > 3_500_000 && left <= 3_600_000, `endAt is ${left} ms away`)
  assert.equal(await sandbox.isRunning(), true)
})

test('getMetrics reads CPU, memory and disk in the guest', async () => {
  const [metric] = await sandbox.getMetrics()
  assert.ok(metric.timestamp instanceof Date)
  assert.ok(metric.cpuCount >= 1, JSON.stringify(metric))
  assert.ok(metric.cpuUsedPct >= 0 && metric.cpuUsedPct <= 100, JSON.stringify(metric))
  assert.ok(metric.memTotal > 0 && metric.memUsed > 0 && metric.memUsed <= metric.memTotal,
    JSON.stringify(metric))
  const [again] = await Sandbox.getMetrics(sandbox.sandboxId)
  assert.ok(again.memTotal === metric.memTotal, JSON.stringify(again))
})

test('a wrong API key is refused with AuthenticationError', async () => {
  await assert.rejects(Sandbox.create({ apiKey: 'e2b_not_the_key' }), AuthenticationError)
  await assert.rejects(Sandbox.list({ apiKey: 'e2b_not_the_key' }).nextItems(), AuthenticationError)
})

test('a wrong envd access token reaches nothing', async () => {
  // What another sandbox's token (or none) gets: 401, and the file is not written.
  for (const token of ['e2bt_wrong', undefined]) {
    const response = await fetch(`${process.env.E2B_SANDBOX_URL}/files?path=/tmp/intruder`, {
      method: 'POST',
      headers: {
        'E2b-Sandbox-Id': sandbox.sandboxId,
        'Content-Type': 'application/octet-stream',
        ...(token ? { 'X-Access-Token': token } : {}),
      },
      body: 'nope',
    })
    assert.equal(response.status, 401)
  }
  assert.equal(await sandbox.files.exists('/tmp/intruder'), false)
})

test('network.allowOut becomes the Airlock policy; IP ranges are refused', async () => {
  await assert.rejects(Sandbox.create({ network: { allowOut: ['10.0.0.0/8'] } }), (error) => {
    assert.match(error.message, /IP addresses and CIDR ranges cannot be allowed/)
    return true
  })
  const other = await Sandbox.create({
    network: { allowOut: ['pkg.test', '*.example.test'] },
    metadata: { suite: `${metadata.suite}-other` },
    ...slow,
  })
  try {
    const policy = JSON.parse(execFileSync(process.env.AIRLOCK_AIRLOCKCTL,
      ['--socket', process.env.AIRLOCK_SOCKET, 'policy', 'get', `e2b-${other.sandboxId}`]))
    assert.deepEqual(policy.rules.map((r) => [r.host, r.ports]),
      [['pkg.test', [80, 443]], ['*.example.test', [80, 443]]])
    assert.deepEqual((await other.getInfo()).network.allowOut, ['pkg.test', '*.example.test'])
    // updateNetwork replaces the policy (policy.set); what it leaves out is denied.
    await other.updateNetwork({ allowOut: ['updated.test'] })
    const updated = JSON.parse(execFileSync(process.env.AIRLOCK_AIRLOCKCTL,
      ['--socket', process.env.AIRLOCK_SOCKET, 'policy', 'get', `e2b-${other.sandboxId}`]))
    assert.deepEqual(updated.rules.map((r) => [r.host, r.ports]), [['updated.test', [80, 443]]])
    await assert.rejects(other.updateNetwork({ allowOut: ['10.0.0.0/8'] }), /CIDR/)

    // Two sandboxes, one page each.
    const pages = Sandbox.list({ limit: 1 })
    const first = await pages.nextItems()
    assert.equal(first.length, 1)
    assert.equal(pages.hasNext, true)
    const second = await pages.nextItems()
    assert.equal(second.length, 1)
    assert.equal(pages.hasNext, false)
    assert.deepEqual([first[0].sandboxId, second[0].sandboxId].sort(),
      [sandbox.sandboxId, other.sandboxId].sort())

    // One sandbox's envd token does not open another sandbox.
    const response = await fetch(`${process.env.E2B_SANDBOX_URL}/process.Process/List`, {
      method: 'POST',
      headers: {
        'E2b-Sandbox-Id': sandbox.sandboxId,
        'X-Access-Token': other.envdAccessToken,
        'Content-Type': 'application/json',
        'Connect-Protocol-Version': '1',
      },
      body: '{}',
    })
    assert.equal(response.status, 401)
    assert.equal((await response.json()).code, 'unauthenticated')

    // setTimeout: the sandbox is killed when its time is up.
    await other.setTimeout(1000)
    await waitFor(async () => (await Sandbox.list({ query: { metadata: { suite: `${metadata.suite}-other` } } }).nextItems()).length === 0,
      60_000, 'the expired sandbox to go')
    assert.equal(await Sandbox.kill(other.sandboxId), false)
  } finally {
    await Sandbox.kill(other.sandboxId)
  }
})

test('createSnapshot, a sandbox from it, fork, deleteSnapshot', async () => {
  await sandbox.files.write('/tmp/snap.txt', 'in the snapshot\n')
  const snapshot = await sandbox.createSnapshot()
  assert.match(snapshot.snapshotId, /^[0-9a-f]{16}$/)
  const listed = await sandbox.listSnapshots().nextItems()
  assert.deepEqual(listed.map((s) => s.snapshotId), [snapshot.snapshotId])
  const everyone = await Sandbox.listSnapshots().nextItems()
  assert.ok(everyone.some((s) => s.snapshotId === snapshot.snapshotId))
  const own = { suite: 'from-snapshot' }
  const fromSnapshot = await Sandbox.create(snapshot.snapshotId, { ...slow, metadata: own })
  try {
    assert.notEqual(fromSnapshot.sandboxId, sandbox.sandboxId)
    assert.equal(await fromSnapshot.files.read('/tmp/snap.txt'), 'in the snapshot\n')
    // Its own metadata, also in airlockd (the window, airlockctl), not the snapshot's sandbox's.
    assert.deepEqual((await fromSnapshot.getInfo()).metadata, own)
    const shown = execFileSync(process.env.AIRLOCK_AIRLOCKCTL,
      ['--socket', process.env.AIRLOCK_SOCKET, 'info', `e2b-${fromSnapshot.sandboxId}`]).toString()
    assert.match(shown, /^Labels: +suite=from-snapshot$/m)
  } finally {
    await fromSnapshot.kill()
  }
  const [fork] = await sandbox.fork({ count: 1, ...slow })
  assert.ok(!(fork instanceof Error), String(fork))
  try {
    assert.equal((await fork.commands.run('cat /tmp/snap.txt')).stdout, 'in the snapshot\n')
    assert.equal((await fork.getInfo()).metadata.suite, metadata.suite)
  } finally {
    await fork.kill()
  }
  assert.equal(await Sandbox.deleteSnapshot(snapshot.snapshotId), true)
  assert.equal(await Sandbox.deleteSnapshot(snapshot.snapshotId), false)
})

test('pause, then connect brings the sandbox back with its files', async () => {
  await sandbox.files.write('/tmp/kept.txt', 'kept across a pause\n')
  assert.equal(await sandbox.pause(), true)
  assert.equal((await sandbox.getInfo()).state, 'paused')
  assert.equal(await sandbox.isRunning(), false)
  const resumed = await Sandbox.connect(sandbox.sandboxId, slow)
  assert.equal(resumed.sandboxId, sandbox.sandboxId)
  assert.equal((await resumed.getInfo()).state, 'running')
  assert.equal(await resumed.files.read('/tmp/kept.txt'), 'kept across a pause\n')
  assert.equal((await resumed.commands.run('echo back')).stdout, 'back\n')
})

test('kill removes the sandbox', async () => {
  const id = sandbox.sandboxId
  await sandbox.kill()
  sandbox = undefined
  const left = await Sandbox.list({ query: { metadata } }).nextItems()
  assert.deepEqual(left, [])
  assert.equal(await Sandbox.kill(id), false)
})

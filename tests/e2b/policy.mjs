// tst_e2bpolicy's SDK half: a sandbox whose E2B network.allowOut names pkg.test reaches it with
// curl and does not reach evil.test (both local test servers behind the real gateway).
//   node policy.mjs run    prints {"sandbox": id} after both requests
//   node policy.mjs kill ID
import assert from 'node:assert/strict'

import { Sandbox, CommandExitError } from 'e2b'

if (process.argv[2] === 'run') {
  const sandbox = await Sandbox.create({ network: { allowOut: ['pkg.test'] }, requestTimeoutMs: 240_000 })
  const allowed = await sandbox.commands.run('curl -sS --max-time 60 https://pkg.test/hello')
  assert.match(allowed.stdout, /^hello pkg\.test \/hello/)
  await assert.rejects(sandbox.commands.run('curl -sS --max-time 30 https://evil.test/'), (error) => {
    assert.ok(error instanceof CommandExitError, `not a CommandExitError: ${error}`)
    assert.notEqual(error.exitCode, 0)
    return true
  })
  console.log(JSON.stringify({ sandbox: sandbox.sandboxId }))
} else if (process.argv[2] === 'kill') {
  assert.equal(await Sandbox.kill(process.argv[3]), true)
} else {
  throw new Error('usage: policy.mjs run | kill ID')
}

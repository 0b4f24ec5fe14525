// tst_e2bsdk's SSH case (airlock-e2b --host): one sandbox through the SDK, a command and a file.
import assert from 'node:assert/strict'

import { Sandbox } from 'e2b'

const sandbox = await Sandbox.create({ requestTimeoutMs: 240_000 })
try {
  assert.equal((await sandbox.commands.run('echo over ssh')).stdout, 'over ssh\n')
  await sandbox.files.write('/tmp/ssh.txt', 'through the tunnel\n')
  assert.equal(await sandbox.files.read('/tmp/ssh.txt'), 'through the tunnel\n')
} finally {
  await sandbox.kill()
}

// tst_e2bsdk's restart case, in two steps around an airlock-e2b restart (docs/e2b.md):
//   node lifetime.mjs create        two sandboxes, one that ends in 10 s and one that lives on;
//                                   prints {"short": id, "shortEndAt": ms, "long": id}
//   node lifetime.mjs check LONG    after the restart: LONG still answers with its old token
//                                   (Sandbox.connect), is the only one listed, then is killed.
import assert from 'node:assert/strict'

import { Sandbox } from 'e2b'

const slow = { requestTimeoutMs: 240_000 }
const metadata = { suite: `airlock-lifetime-${process.ppid}` }

if (process.argv[2] === 'create') {
  const long = await Sandbox.create({ timeoutMs: 600_000, metadata, ...slow })
  await long.files.write('/tmp/before-restart.txt', 'still here\n')
  // Last, so that its 10 s run out after airlock-e2b was stopped.
  const short = await Sandbox.create({ timeoutMs: 10_000, metadata, ...slow })
  const info = await short.getInfo()
  console.log(JSON.stringify({ short: short.sandboxId, shortEndAt: info.endAt.getTime(), long: long.sandboxId }))
} else if (process.argv[2] === 'check') {
  const id = process.argv[3]
  const listed = await Sandbox.list({ query: { metadata } }).nextItems()
  assert.deepEqual(listed.map((s) => s.sandboxId), [id])
  const sandbox = await Sandbox.connect(id, slow)
  assert.equal(await sandbox.files.read('/tmp/before-restart.txt'), 'still here\n')
  assert.equal((await sandbox.commands.run('echo alive')).stdout, 'alive\n')
  await sandbox.kill()
} else {
  throw new Error('usage: lifetime.mjs create | check ID')
}

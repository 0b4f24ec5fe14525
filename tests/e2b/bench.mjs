// tests/bench/bench_e2b's SDK half: Sandbox.create() to the first commands.run result, then
// commands.run('true') round trips, through the pinned e2b SDK against airlock-e2b. Prints one
// JSON line: {"createMs": [...], "runMs": [...]}. BENCH_CREATES and BENCH_RUNS set the counts.
import { Sandbox } from 'e2b'

const creates = Number(process.env.BENCH_CREATES ?? 3)
const runs = Number(process.env.BENCH_RUNS ?? 50)
const slow = { requestTimeoutMs: 240_000 }
const createMs = []
const runMs = []
for (let i = 0; i < creates; i++) {
  const start = performance.now()
  const sandbox = await Sandbox.create(slow)
  await sandbox.commands.run('true')
  createMs.push(performance.now() - start)
  if (i === creates - 1) {
    for (let j = 0; j < runs; j++) {
      const t = performance.now()
      await sandbox.commands.run('true')
      runMs.push(performance.now() - t)
    }
  }
  await sandbox.kill()
}
console.log(JSON.stringify({ createMs, runMs }))

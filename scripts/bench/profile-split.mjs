// Splits a V8 CPU profile (`BENCH_PROFILE=1` of scripts/bench/realtime.ts writes them, one per server process) into where
// the server's busy time went: each sample counted once, under the first function of the
// application or a library that its stack reaches from the event loop (the loop's own frames,
// timers, microtasks and stream plumbing skipped), and the time in socket writes by what wrote:
// WebSocket frames, PostgreSQL statements, the commit guard's Sync, Redis, HTTP answers.
//
// Usage: node scripts/bench/profile-split.mjs CPU.<…>.cpuprofile [top rows, 25]
import { readFileSync } from 'node:fs'

const [file, topArg] = process.argv.slice(2)
if (!file) {
  console.error('usage: node scripts/bench/profile-split.mjs <file.cpuprofile> [top]')
  process.exit(2)
}
const top = Number(topArg ?? 25)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id)
const self = new Map()
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))

const where = (n) => {
  const f = n.callFrame
  return `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|src|scripts)\//, '$1/')}:${f.lineNumber + 1}`
}
const LOOP =
  /^(\(root\)|processTicksAndRejections|runMicrotasks|runMicrotask|listOnTimeout|processTimers|processImmediate|runNextTicks|emit|onStreamRead|Readable.push|readableAddChunk|readableAddChunkPushByteMode|addChunk|afterWrite|afterWriteTick|onWriteComplete|topLevelDomainCallback)$/
const WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString'])
const WRITER = [
  ['WebSocket frames', /src\/realtime\/connection\.ts|ws\/lib\/sender\.js/],
  ["PostgreSQL: the commit guard's Sync", /sync node_modules\/pg\/lib\/connection\.js/],
  ['PostgreSQL: statements', /node_modules\/pg\//],
  ['Redis', /node_modules\/ioredis\//],
  ['HTTP answers', /_http_outgoing|node_modules\/fastify\//],
]

const stackOf = (id) => {
  const chain = []
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) chain.push(nodes.get(cur))
  return chain // leaf first
}
let busy = 0
const roots = new Map()
const writes = new Map()
for (const [id, time] of self) {
  const leaf = nodes.get(id)
  if (leaf.callFrame.functionName === '(idle)') continue
  busy += time
  const stack = stackOf(id)
  const first = [...stack].reverse().find((n) => n.callFrame.url && !LOOP.test(n.callFrame.functionName))
  const root = first ? where(first) : where(leaf)
  roots.set(root, (roots.get(root) ?? 0) + time)
  if (WRITES.has(leaf.callFrame.functionName)) {
    const text = stack.map(where).join(' < ')
    const writer = WRITER.find(([, pattern]) => pattern.test(text))?.[0] ?? 'other'
    writes.set(writer, (writes.get(writer) ?? 0) + time)
  }
}
const s = (us) => `${(us / 1e6).toFixed(2)} s`
console.log(`busy ${s(busy)}`)
console.log('\nby the first function reached from the event loop:')
for (const [name, time] of [...roots].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${s(time).padStart(9)}  ${name}`)
console.log('\nsocket writes, by what wrote:')
for (const [name, time] of [...writes].sort((a, b) => b[1] - a[1])) console.log(`${s(time).padStart(9)}  ${name}`)

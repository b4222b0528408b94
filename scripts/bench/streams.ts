// Streaming messages under load (issue 25): STREAMS agents each stream one message into its own
// channel, appending RATE times a second for SECONDS, each channel watched by WATCHERS sockets.
// Every watcher rebuilds each text from the message_delta frames alone and must end with the
// exact final text; the latency of an append is from just before its HTTP request to the frame
// that carries it at a watcher (same process, same clock). Reports p50/p99, the server's CPU per
// delta frame delivered beside the load generator's, and PostgreSQL's.
//
//   npm run bench:streams                                   (100 × 20/s × 30 s, 20 watchers each)
//   BENCH_STREAMS=5 BENCH_WATCHERS=3 BENCH_SECONDS=5 npm run bench:streams   (a smoke run)
//   BENCH_REDIS=1: the server uses Redis (as a cluster would); BENCH_DATABASE_URL, BENCH_REDIS_URL.
//   BENCH_APPEND_VIA=ws: appends as `stream_append` frames on one socket per author, answered by
//   `stream_ack` (default http: one POST …/stream each). At the full scale (2,000 appends/s)
//   the HTTP client's own cost in this one process weighs on the latency it measures; the socket
//   is the cheaper way in for both sides. BENCH_POOL_SIZE: the server's DATABASE_POOL_SIZE (20).
//   The full run opens STREAMS × (WATCHERS + 1) sockets: check `ulimit -n` first.
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { spawn, type ChildProcess } from 'node:child_process'
import pg from 'pg'
import WebSocket from 'ws'
import { applyMigrations } from '../../src/db/migrate.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { API_KEY_PREFIX, maskSecret, newSecret, sha256Hex } from '../../src/lib/tokens.ts'
import { adminQuery, cpuMeter, databaseUrl, freePort, machine, percentile, startFlags } from './lib.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const STREAMS = Number(process.env.BENCH_STREAMS ?? 100)
const RATE = Number(process.env.BENCH_RATE ?? 20)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30)
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 20)
const REDIS = process.env.BENCH_REDIS === '1'
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const APPEND_VIA = process.env.BENCH_APPEND_VIA === 'ws' ? 'ws' : 'http'
const POOL_SIZE = process.env.BENCH_POOL_SIZE ?? '20'

interface Seeded {
  streams: { channelId: string; authorKey: string }[]
  watcherKeys: string[][]
}

async function seed(url: string): Promise<Seeded> {
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  // One channel's agents (its author and watchers), their keys and memberships in three statements:
  // the full run seeds 2,100 agents.
  const agents = async (channelId: string, names: string[]): Promise<string[]> => {
    const ids = names.map(() => uuidv7())
    const keys = names.map(() => newSecret(API_KEY_PREFIX))
    await pool.query('INSERT INTO agents (id, name, display_name) SELECT * FROM unnest($1::uuid[], $2::text[], $2::text[])', [ids, names])
    await pool.query(
      "INSERT INTO api_keys (id, agent_id, name, key_hash, masked_key) SELECT k.id, k.agent_id, 'bench', k.hash, k.masked FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) AS k(id, agent_id, hash, masked)",
      [ids.map(() => uuidv7()), ids, keys.map((k) => sha256Hex(k)), keys.map((k) => maskSecret(k, API_KEY_PREFIX))],
    )
    await pool.query("INSERT INTO channel_members (channel_id, member_id, member_type) SELECT $1, id, 'AGENT' FROM unnest($2::uuid[]) AS id", [channelId, ids])
    return keys
  }
  await pool.query('INSERT INTO instance (id, loop_guard_enabled) VALUES ($1, false)', [uuidv7()])
  const seeded: Seeded = { streams: [], watcherKeys: [] }
  for (let s = 0; s < STREAMS; s++) {
    const channelId = uuidv7()
    await pool.query("INSERT INTO channels (id, name, description) VALUES ($1, $2, '')", [channelId, `stream-${s}`])
    const [authorKey, ...keys] = await agents(channelId, [`author-${s}`, ...Array.from({ length: WATCHERS }, (_, w) => `watcher-${s}-${w}`)])
    seeded.streams.push({ channelId, authorKey: authorKey! })
    seeded.watcherKeys.push(keys)
  }
  await pool.end()
  return seeded
}

async function startServer(env: Record<string, string>): Promise<{ proc: ChildProcess; base: string }> {
  const port = await freePort()
  const proc = spawn(process.execPath, [...startFlags(ROOT), 'src/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const base = `127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(`http://${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { proc, base }
    if (proc.exitCode !== null) break
    await sleep(100)
  }
  proc.kill('SIGKILL')
  throw new Error('server did not start')
}

/** One watcher socket: rebuilds each message's text from its deltas, timing each append it carries. */
class Watcher {
  readonly texts = new Map<string, string>()
  readonly lastSeq = new Map<string, number>()
  readonly finals = new Map<string, string>()
  deltas = 0
  gaps = 0
  constructor(
    readonly ws: WebSocket,
    private readonly onLatency: (messageId: string, fromSeq: number, toSeq: number, at: number) => void,
  ) {
    ws.on('message', (data: Buffer) => {
      const at = performance.now()
      const f = JSON.parse(data.toString()) as { type: string; message_id?: string; seq?: number; offset?: number; text?: string; message?: { id: string; text: string } }
      if (f.type === 'message_stream_started') this.texts.set(f.message!.id, f.message!.text)
      else if (f.type === 'message_delta') {
        this.deltas++
        const id = f.message_id!
        const text = this.texts.get(id) ?? ''
        if (f.offset! > text.length) this.gaps++
        this.texts.set(id, text.slice(0, f.offset) + f.text)
        this.onLatency(id, (this.lastSeq.get(id) ?? 0) + 1, f.seq!, at)
        this.lastSeq.set(id, f.seq!)
      } else if (f.type === 'new_message') this.finals.set(f.message!.id, f.message!.text)
    })
  }
}

async function openWatcher(base: string, key: string, onLatency: ConstructorParameters<typeof Watcher>[1]): Promise<Watcher> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${base}/ws?token=${encodeURIComponent(key)}`, { perMessageDeflate: false })
    ws.once('error', reject)
    const ready = (data: Buffer): void => {
      if (!data.includes('"type":"ready"')) return
      ws.off('message', ready)
      resolve(new Watcher(ws, onLatency))
    }
    ws.on('message', ready)
  })
}

/** An author's socket for BENCH_APPEND_VIA=ws: each append a `stream_append` frame, settled by its `stream_ack` (or `error`). */
async function openAppender(base: string, key: string): Promise<{ ws: WebSocket; append: (channelId: string, messageId: string, text: string) => Promise<void> }> {
  const ws = await new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(`ws://${base}/ws?token=${encodeURIComponent(key)}`, { perMessageDeflate: false })
    socket.once('error', reject)
    const ready = (data: Buffer): void => {
      if (!data.includes('"type":"ready"')) return
      socket.off('message', ready)
      resolve(socket)
    }
    socket.on('message', ready)
  })
  const pending = new Map<string, { resolve: () => void; reject: (error: Error) => void }>()
  ws.on('message', (data: Buffer) => {
    const f = JSON.parse(data.toString()) as { type: string; id?: string; code?: string; error?: string }
    const waiter = f.id ? pending.get(f.id) : undefined
    if (!waiter) return
    pending.delete(f.id!)
    if (f.type === 'stream_ack') waiter.resolve()
    else if (f.type === 'error') waiter.reject(new Error(`stream_append: ${f.code} ${f.error}`))
  })
  let n = 0
  const append = (channelId: string, messageId: string, text: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const id = `a${++n}`
      pending.set(id, { resolve, reject })
      ws.send(JSON.stringify({ type: 'stream_append', id, channel_id: channelId, message_id: messageId, append: text }))
    })
  return { ws, append }
}

async function main(): Promise<void> {
  console.log(`# streams benchmark on ${machine()}`)
  console.log(`# ${STREAMS} streams × ${RATE} appends/s × ${SECONDS} s, ${WATCHERS} watchers each, appends over ${APPEND_VIA}${REDIS ? ', Redis' : ''}`)
  const name = `ams_bench_streams_${Date.now().toString(36)}`
  await adminQuery(`CREATE DATABASE "${name}"`)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-'))
  let server: { proc: ChildProcess; base: string } | null = null
  const sockets: WebSocket[] = []
  try {
    await applyMigrations(databaseUrl(name))
    const seeded = await seed(databaseUrl(name))
    server = await startServer({
      DATABASE_URL: databaseUrl(name),
      DATABASE_POOL_SIZE: POOL_SIZE,
      DATA_DIR: dataDir,
      MIGRATE_ON_START: 'false',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-00',
      ...(REDIS ? { REDIS_URL, REDIS_PREFIX: `ams:bench:${randomUUID()}:` } : {}),
    })
    const base = server.base
    const sentAt = new Map<string, number[]>() // message id → send time per seq (index seq)
    const latencies: number[] = []
    const onLatency = (id: string, from: number, to: number, at: number): void => {
      const times = sentAt.get(id)
      if (!times) return
      for (let s = from; s <= to; s++) if (times[s] !== undefined) latencies.push(at - times[s]!)
    }
    const watchers: Watcher[][] = []
    for (const keys of seeded.watcherKeys) {
      const group = await Promise.all(keys.map((k) => openWatcher(base, k, onLatency)))
      group.forEach((w) => sockets.push(w.ws))
      watchers.push(group)
    }
    // node:http with keep-alive: fetch cost this one process about twice as much per request,
    // which its own latency figures then carried.
    const [host, port] = base.split(':')
    const agent = new http.Agent({ keepAlive: true, maxSockets: STREAMS })
    const call = (key: string, url: string, body: unknown): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        const payload = JSON.stringify(body)
        const req = http.request(
          { agent, host, port: Number(port), path: url, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
          (res) => {
            const chunks: Buffer[] = []
            res.on('data', (c: Buffer) => chunks.push(c))
            res.on('end', () => {
              const json = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>
              if (res.statusCode! >= 300) reject(new Error(`${url}: ${res.statusCode} ${JSON.stringify(json)}`))
              else resolve(json)
            })
          },
        )
        req.on('error', reject)
        req.end(payload)
      })
    const messages = await Promise.all(seeded.streams.map((s) => call(s.authorKey, `/api/v1/channels/${s.channelId}/messages`, { stream: true, text: '' })))
    const ids = messages.map((m) => String(m.id))
    ids.forEach((id) => sentAt.set(id, []))
    const appenders = APPEND_VIA === 'ws' ? await Promise.all(seeded.streams.map((s) => openAppender(base, s.authorKey))) : []
    appenders.forEach((a) => sockets.push(a.ws))
    const append = (i: number, text: string): Promise<unknown> => {
      const s = seeded.streams[i]!
      return APPEND_VIA === 'ws' ? appenders[i]!.append(s.channelId, ids[i]!, text) : call(s.authorKey, `/api/v1/channels/${s.channelId}/messages/${ids[i]}/stream`, { append: text })
    }
    await sleep(500)

    const meter = cpuMeter([server.proc.pid!])
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    const expected = ids.map(() => '')
    let appended = 0
    let appendErrors = 0
    const appendTimes: number[] = []
    await Promise.all(
      seeded.streams.map(async (s, i) => {
        const id = ids[i]!
        const times = sentAt.get(id)!
        for (let seq = 1; ; seq++) {
          const due = t0 + (seq - 1) * (1000 / RATE)
          if (due > t0 + SECONDS * 1000) break
          const wait = due - performance.now()
          if (wait > 0) await sleep(wait)
          const text = `w${seq} `
          const start = performance.now()
          times[seq] = start
          try {
            await append(i, text)
            expected[i] += text
            appended++
            appendTimes.push(performance.now() - start)
          } catch (error) {
            appendErrors++
            console.error(String(error))
            break // the numbering would no longer match: stop this stream's appends
          }
        }
      }),
    )
    const elapsed = (performance.now() - t0) / 1000
    await sleep(300) // the last coalesced frames
    const busy = meter()
    const cpu = process.cpuUsage(cpu0)
    const finals = await Promise.all(seeded.streams.map((s, i) => call(s.authorKey, `/api/v1/channels/${s.channelId}/messages/${ids[i]}/stream/finish`, {})))
    const deadline = performance.now() + 15_000
    while (performance.now() < deadline && !watchers.every((g, i) => g.every((w) => w.finals.has(ids[i]!)))) await sleep(100)

    let exact = 0
    let wrong = 0
    let gaps = 0
    let deltas = 0
    watchers.forEach((group, i) =>
      group.forEach((w) => {
        const ok = w.texts.get(ids[i]!) === expected[i] && w.finals.get(ids[i]!) === expected[i] && String(finals[i]!.text) === expected[i]
        if (ok) exact++
        else wrong++
        gaps += w.gaps
        deltas += w.deltas
      }),
    )
    latencies.sort((a, b) => a - b)
    appendTimes.sort((a, b) => a - b)
    const loadCpu = ((cpu.user + cpu.system) / 1e6 / elapsed) * 100
    const perDelta = (pct: number): number => +((((pct / 100) * elapsed) / Math.max(1, deltas)) * 1e6).toFixed(1)
    const result = {
      streams: STREAMS,
      appendVia: APPEND_VIA,
      watchersPerStream: WATCHERS,
      appendsPerSecondPerStream: RATE,
      seconds: +elapsed.toFixed(1),
      appended,
      appendErrors,
      appendsPerSecond: Math.round(appended / elapsed),
      deltaFramesDelivered: deltas,
      deltaFramesPerSecondPerWatcher: +(deltas / (STREAMS * WATCHERS) / elapsed).toFixed(1),
      watchersWithExactText: exact,
      watchersWithWrongText: wrong,
      gaps,
      appendToWatcherP50Ms: +percentile(latencies, 50).toFixed(1),
      appendToWatcherP99Ms: +percentile(latencies, 99).toFixed(1),
      appendToWatcherMaxMs: +(latencies.at(-1) ?? NaN).toFixed(1),
      appendRequestP50Ms: +percentile(appendTimes, 50).toFixed(1),
      appendRequestP99Ms: +percentile(appendTimes, 99).toFixed(1),
      cpuPercent: { server: busy.server, postgres: busy.postgres, redis: busy.redis, loadGenerator: Math.round(loadCpu) },
      cpuMicrosecondsPerDeltaFrame: { server: perDelta(busy.server), postgres: perDelta(busy.postgres), loadGenerator: perDelta(loadCpu) },
      cpuMicrosecondsPerAppend: {
        server: +((((busy.server / 100) * elapsed) / Math.max(1, appended)) * 1e6).toFixed(1),
        postgres: +((((busy.postgres / 100) * elapsed) / Math.max(1, appended)) * 1e6).toFixed(1),
      },
    }
    console.log(JSON.stringify(result, null, 2))
    if (wrong || appendErrors) process.exitCode = 1
  } finally {
    for (const ws of sockets) ws.terminate()
    if (server) {
      const exited = new Promise((resolve) => server!.proc.once('exit', resolve))
      server.proc.kill('SIGTERM')
      await Promise.race([exited, sleep(15_000).then(() => server!.proc.kill('SIGKILL'))])
    }
    await rm(dataDir, { recursive: true, force: true })
    await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  }
}

await main()

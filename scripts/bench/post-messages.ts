// How fast can agents post messages? POST /api/v1/channels/{id}/messages over loopback HTTP.
//
// Creates a scratch database next to BENCH_DATABASE_URL, seeds a workspace (agents with API keys,
// one channel they all belong to), starts the real server (`src/server.ts`) as a child process,
// and runs CONCURRENCY keep-alive clients posting back to back for SECONDS per phase (after a
// short warm-up), each client with its own agent key:
//   1. plain       — JSON `{text}` posts into one shared channel (the hot path: concurrent posts
//                    share one batched INSERT), with the loop guard off.
//   2. guard on    — the same with the loop guard on at its defaults (20 turns in 60 s): the
//                    admission runs inside the batched INSERT (docs/loops.md); the agents listen
//                    to nothing, so it refuses none.
//   3. idempotent  — plain JSON with a fresh `Idempotency-Key` per post, guard off: the key is
//                    looked up and remembered by the same batched INSERT.
//   4. idempotent, guard on — both: the default configuration of an agent that sends keys.
// The guard phases go to a second server whose database has the guard on (the first has it off),
// so that the four phases can alternate in short slices: BENCH_ROUNDS rounds (default 8) of
// BENCH_SECONDS each, one phase after the other in each round, so that the drift of a shared
// machine's load falls on all of them alike; each line adds up its rounds.
// Then the ratios to plain: issue 28 asks guard on >= 0.95x and idempotent >= 0.90x.
// Then, without HTTP, the two ways of storing a message with its outbox event, in this process
// against the same database (why the hot path is raw SQL; docs/decisions.md, Conversations):
//   4. insert: raw CTE     — the service's single statement through pg (src/modules/messages/repo.ts).
//   5. insert: Prisma      — prisma.$transaction: message.create + outboxEvent.create.
// Prints messages/s and latency p50/p99/max per phase; the database and data dir are removed.
// Usage: npx tsx scripts/bench/post-messages.ts
//   BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres), BENCH_SECONDS (2 per round), BENCH_ROUNDS (8),
//   BENCH_CONCURRENCY (16), BENCH_POOL (database pool size of the server, 10), BENCH_SERVER_ENV ("NAME=value …").
import { toMessageDto } from '../../src/schemas/message.ts'
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { createDatabase, type Prisma } from '../../src/db/client.ts'
import { applyMigrations } from '../../src/db/migrate.ts'
import { newEvent, outboxRow } from '../../src/events/bus.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { API_KEY_PREFIX, maskSecret, newSecret, sha256Hex } from '../../src/lib/tokens.ts'
import { adminQuery as admin, databaseUrl as urlOf, freePort, machine, percentile as pct, SERVER_ENV, startFlags } from './lib.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const POOL = process.env.BENCH_POOL ?? '10'
const WARMUP_MS = 2_000
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8)

const ms = (n: number): number => Math.round(n * 100) / 100

const dbName = `ams_bench_posts_${process.pid}`
const databaseUrl = urlOf(dbName)
// The guard phases post to a second server with a database of its own where the guard is on, so
// that plain and guarded slices can alternate every few seconds without a settings change.
const guardDbName = `${dbName}_guard`
const guardDatabaseUrl = urlOf(guardDbName)

/** Owner, CONCURRENCY agents with keys, one channel with all of them as members. */
async function seed(url: string, guard: boolean): Promise<{ keys: string[]; channelId: string; ownChannels: string[] }> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    // The loop guard off, or on at its defaults.
    await client.query('INSERT INTO instance (id, loop_guard_enabled) VALUES ($1, $2)', [uuidv7(), guard])
    const ownerId = uuidv7()
    await client.query(`INSERT INTO users (id, email, display_name, role, is_owner) VALUES ($1, 'owner@example.com', 'owner', 'admin', true)`, [ownerId])
    const channelId = uuidv7()
    await client.query(`INSERT INTO channels (id, name, type, created_by_id) VALUES ($1, 'bench', 'channel', $2)`, [channelId, ownerId])
    const keys: string[] = []
    const ownChannels: string[] = []
    for (let i = 0; i < CONCURRENCY; i++) {
      const agentId = uuidv7()
      const key = newSecret(API_KEY_PREFIX)
      await client.query('INSERT INTO agents (id, name, display_name, owner_id) VALUES ($1, $2, $2, $3)', [agentId, `bench-agent-${i}`, ownerId])
      await client.query(`INSERT INTO api_keys (id, agent_id, name, key_hash, masked_key) VALUES ($1, $2, 'bench', $3, $4)`, [uuidv7(), agentId, sha256Hex(key), maskSecret(key, API_KEY_PREFIX)])
      await client.query(`INSERT INTO channel_members (channel_id, member_id, member_type) VALUES ($1, $2, 'AGENT')`, [channelId, agentId])
      // Each agent's own channel too: the loop guard phases post there (below).
      const own = uuidv7()
      await client.query(`INSERT INTO channels (id, name, type, created_by_id) VALUES ($1, $2, 'channel', $3)`, [own, `bench-${i}`, ownerId])
      await client.query(`INSERT INTO channel_members (channel_id, member_id, member_type) VALUES ($1, $2, 'AGENT')`, [own, agentId])
      ownChannels.push(own)
      keys.push(key)
    }
    return { keys, channelId, ownChannels }
  } finally {
    await client.end()
  }
}

interface Phase {
  name: string
  idempotent: boolean
  /** The loop guard on at its defaults; these agents take no turns, so it admits every post: what it costs. */
  loopGuard: boolean
  /** Each client posts in its own channel (16 busy channels) instead of all in one. */
  ownChannels?: boolean
}

async function runPhase(port: number, channelFor: (client: number) => string, keys: string[], phase: Phase, durationMs: number, record: boolean) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const latencies: number[] = []
  let errors = 0
  let seq = 0
  const deadline = Date.now() + durationMs
  const postOne = (key: string, channelId: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ text: `benchmark message ${seq++} from a busy agent` })
      const headers: Record<string, string | number> = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
      if (phase.idempotent) headers['idempotency-key'] = `bench-${process.pid}-${seq}`
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/api/v1/channels/${channelId}/messages`, agent, headers }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', reject)
      req.end(body)
    })
  const started = Date.now()
  const cpu0 = process.cpuUsage()
  await Promise.all(
    keys.map(async (key, client) => {
      while (Date.now() < deadline) {
        const t0 = performance.now()
        const status = await postOne(key, channelFor(client)).catch(() => 0)
        const took = performance.now() - t0
        if (status !== 201) errors++
        else if (record) latencies.push(took)
      }
    }),
  )
  const elapsed = (Date.now() - started) / 1000
  const cpu = process.cpuUsage(cpu0)
  agent.destroy()
  // The load generator's CPU (this process), in seconds: the day's speed of the machine shows here.
  return { phase: phase.name, latencies, elapsed, errors, generatorCpu: (cpu.user + cpu.system) / 1e6 }
}

/** One line of the table: the rounds of a phase together. */
function summary(runs: Awaited<ReturnType<typeof runPhase>>[]) {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b)
  const elapsed = runs.reduce((n, r) => n + r.elapsed, 0)
  return {
    phase: runs[0]!.phase,
    perSecond: Math.round(latencies.length / elapsed),
    rounds: runs.map((r) => Math.round(r.latencies.length / r.elapsed)),
    p50: ms(pct(latencies, 50)),
    p99: ms(pct(latencies, 99)),
    max: ms(latencies.at(-1) ?? 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    generatorCpuPercent: Math.round((runs.reduce((n, r) => n + r.generatorCpu, 0) / elapsed) * 100),
    generatorMicrosPerPost: Math.round((runs.reduce((n, r) => n + r.generatorCpu, 0) * 1e6) / Math.max(1, latencies.length)),
  }
}

/** Stores messages back to back from CONCURRENCY loops for `durationMs`; returns inserts/s. */
async function insertLoop(insert: (i: number) => Promise<unknown>, durationMs: number): Promise<number> {
  let done = 0
  const deadline = Date.now() + durationMs
  const started = Date.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < deadline) {
        await insert(done)
        done++
      }
    }),
  )
  return Math.round(done / ((Date.now() - started) / 1000))
}

/** The payload of message.created for a row the benchmark inserts itself. */
function benchMessage(id: string, channelId: string, authorId: string, text: string) {
  // The service's own mapping, so the bench's message has exactly the API's shape.
  return toMessageDto({ id, channelId, authorId, authorName: 'bench', authorType: 'AGENT', text, createdAt: new Date(), editedAt: null, inReplyToEvent: null, chainDepth: 1 }, '')
}

async function compareInserts(channelId: string): Promise<{ raw: number; prisma: number }> {
  const db = createDatabase(databaseUrl, Number(POOL))
  try {
    const { rows } = await db.pool.query<{ member_id: string }>('SELECT member_id FROM channel_members WHERE channel_id = $1 LIMIT 1', [channelId])
    const authorId = rows[0]!.member_id
    const sql = `WITH msg AS (
        INSERT INTO messages (id, channel_id, author_id, author_type, author_name, text, created_at)
        SELECT $1, $2, $3, 'AGENT'::actor_type, 'bench', $4, $5
         WHERE EXISTS (SELECT 1 FROM channel_members WHERE channel_id = $2 AND member_id = $3)
        RETURNING id
      ), ob AS (
        INSERT INTO outbox_events (event_id, type, channel_id, payload, occurred_at)
        SELECT $6, $7, $8, $9::jsonb, $10 FROM msg RETURNING 1
      ) SELECT count(*)::int AS inserted FROM msg`
    const raw = async (i: number) => {
      const id = uuidv7()
      const text = `raw insert ${i}`
      const event = newEvent('message.created', channelId, { message: benchMessage(id, channelId, authorId, text) })
      await db.pool.query({ name: 'bench-raw', text: sql, values: [id, channelId, authorId, text, new Date(), ...outboxRow(event)] })
    }
    const viaPrisma = async (i: number) => {
      const id = uuidv7()
      const text = `prisma insert ${i}`
      const event = newEvent('message.created', channelId, { message: benchMessage(id, channelId, authorId, text) })
      await db.prisma.$transaction(async (tx) => {
        await tx.message.create({ data: { id, channelId, authorId, authorType: 'AGENT', authorName: 'bench', text } })
        await tx.outboxEvent.create({ data: { eventId: event.id, type: event.type, channelId, payload: event.payload as unknown as Prisma.InputJsonValue, occurredAt: new Date(event.occurredAt) } })
      })
    }
    await insertLoop(raw, WARMUP_MS)
    const rawRate = await insertLoop(raw, SECONDS * 1000)
    await insertLoop(viaPrisma, WARMUP_MS)
    const prismaRate = await insertLoop(viaPrisma, SECONDS * 1000)
    return { raw: rawRate, prisma: prismaRate }
  } finally {
    await db.close()
  }
}

/** Starts the real server on `url`; resolves once it answers /health. */
async function startServer(url: string, dataDir: string): Promise<{ port: number; proc: ReturnType<typeof spawn> }> {
  await mkdir(dataDir, { recursive: true })
  const port = await freePort()
  const proc = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []), ...startFlags(ROOT), 'src/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DATABASE_URL: url,
      DATABASE_POOL_SIZE: POOL,
      MIGRATE_ON_START: 'false',
      JWT_SECRET: 'bench-secret-'.padEnd(40, 'x'),
      ...SERVER_ENV,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  for (let i = 0; ; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (i > 600) throw new Error('server did not start')
    await sleep(100)
  }
  return { port, proc }
}

await admin(`CREATE DATABASE "${dbName}"`)
await admin(`CREATE DATABASE "${guardDbName}"`)
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-'))
const servers: ReturnType<typeof spawn>[] = []
try {
  await applyMigrations(databaseUrl)
  await applyMigrations(guardDatabaseUrl)
  const { keys, channelId, ownChannels } = await seed(databaseUrl, false)
  const guardSeed = await seed(guardDatabaseUrl, true)
  const plainServer = await startServer(databaseUrl, path.join(dataDir, 'plain'))
  const guardServer = await startServer(guardDatabaseUrl, path.join(dataDir, 'guard'))
  servers.push(plainServer.proc, guardServer.proc)

  const runs: Awaited<ReturnType<typeof runPhase>>[][] = []
  const phases: Phase[] = [
    { name: 'plain', idempotent: false, loopGuard: false },
    { name: 'guard on', idempotent: false, loopGuard: true },
    { name: 'idempotent', idempotent: true, loopGuard: false },
    { name: 'idempotent, guard on', idempotent: true, loopGuard: true },
    ...(process.env.BENCH_OWN_CHANNELS ? [{ name: 'plain, 16 channels', idempotent: false, loopGuard: false, ownChannels: true }] : []),
  ]
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, phase] of phases.entries()) {
      const target = phase.loopGuard ? { port: guardServer.port, ...guardSeed } : { port: plainServer.port, keys, channelId, ownChannels }
      const channelFor = (client: number): string => (phase.ownChannels ? target.ownChannels[client]! : target.channelId)
      await runPhase(target.port, channelFor, target.keys, phase, round === 0 ? WARMUP_MS : WARMUP_MS / 4, false)
      ;(runs[i] ??= []).push(await runPhase(target.port, channelFor, target.keys, phase, SECONDS * 1000, true))
    }
  }
  const results = runs.map(summary)
  // The servers are idle now; stop them so the insert comparison has the machine to itself.
  for (const proc of servers.splice(0)) {
    proc.kill('SIGTERM')
    await new Promise((resolve) => proc.once('exit', resolve))
  }
  console.log(`\nPOST /api/v1/channels/{id}/messages — ${CONCURRENCY} keep-alive clients, ${ROUNDS} rounds of ${SECONDS} s per phase, server pool ${POOL}`)
  console.log(`machine: ${machine()}, load generator on the same machine\n`)
  console.log('| phase | messages/s | per round | p50 ms | p99 ms | max ms | errors | load generator CPU (µs per post) |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const r of results)
    console.log(`| ${r.phase} | ${r.perSecond} | ${r.rounds.join(', ')} | ${r.p50} | ${r.p99} | ${r.max} | ${r.errors} | ${r.generatorCpuPercent} % (${r.generatorMicrosPerPost}) |`)
  const rate = (name: string) => results.find((r) => r.phase === name)!.perSecond
  const ratio = (name: string) => (rate(name) / rate('plain')).toFixed(2)
  console.log(`\nagainst plain (${rate('plain')}/s): guard on ${ratio('guard on')}×, idempotent ${ratio('idempotent')}×, idempotent + guard on ${ratio('idempotent, guard on')}×`)
  // After the table: on a loaded machine Prisma's interactive transactions can time out (P2028),
  // and that must not lose the figures above.
  try {
    const inserts = await compareInserts(channelId)
    console.log(
      `\nstoring a message + its outbox event, no HTTP, ${CONCURRENCY} loops: raw CTE ${inserts.raw}/s, Prisma transaction ${inserts.prisma}/s (${(inserts.raw / inserts.prisma).toFixed(1)}×)`,
    )
  } catch (error) {
    console.log(`\nstoring a message + its outbox event, no HTTP: not measured (${error instanceof Error ? error.message.split('\n').at(-1) : String(error)})`)
  }
} finally {
  for (const proc of servers) {
    if (proc.exitCode !== null) continue
    proc.kill('SIGTERM')
    await new Promise((resolve) => proc.once('exit', resolve))
  }
  await rm(dataDir, { recursive: true, force: true })
  await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)
  await admin(`DROP DATABASE IF EXISTS "${guardDbName}" WITH (FORCE)`)
}

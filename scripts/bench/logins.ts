// Another person's login while anonymous loops guess the owner's password (issue 29, item 5).
//
// Starts the real server (`node <flags of npm start> --import tsx src/server.ts`) on a scratch
// database next to BENCH_DATABASE_URL with an owner and a member (bcrypt cost 12), then:
//   1. quiet  — the member logs in BENCH_LOGINS times, one after another: the baseline.
//   2. flood  — BENCH_FLOOD (12) loops POST wrong passwords for the owner's e-mail back to back,
//               each sending its next guess as soon as the last one is answered (a shed guess,
//               503, is retried at once: an attacker does not honour Retry-After); after a
//               warm-up of 2 s the member logs in BENCH_LOGINS times, one after another.
// It prints the member's login latency (p50, p90, max), what the flood got (401 checked, 503
// shed, 429), and the machine's load. Every client is on 127.0.0.1, like the member: the queue can
// only tell them apart by account (src/lib/fair-queue.ts), the harder case.
// The failure limit (429 after LOGIN_FAILURES_PER_ACCOUNT failures) would stop this flood after
// ten guesses; it is set out of the way so that the bcrypt queue is what is measured.
//
// Usage: npm run bench:logins   (through /work/bin/testslot on a shared machine)
//   BENCH_FLOOD (12) BENCH_LOGINS (20) BENCH_DATABASE_URL (postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_SERVER_ENV ("NAME=value NAME=value") BENCH_LOG_LEVEL (warn)
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { applyMigrations } from '../../src/db/migrate.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { BCRYPT_COST, hashPassword } from '../../src/lib/password.ts'
import { adminQuery, databaseUrl, freePort, machine, percentile, SERVER_ENV, startFlags } from './lib.ts'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const FLOOD = Number(process.env.BENCH_FLOOD ?? 12)
const LOGINS = Number(process.env.BENCH_LOGINS ?? 20)
const DB_NAME = `ams_bench_logins_${process.pid}`
const PASSWORD = 'bench password of the member'
const OWNER = 'owner@bench.example'
const MEMBER = 'member@bench.example'

async function seed(url: string): Promise<void> {
  const hash = await hashPassword(PASSWORD, BCRYPT_COST)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('INSERT INTO instance (id) VALUES ($1)', [uuidv7()])
    for (const [email, isOwner] of [
      [OWNER, true],
      [MEMBER, false],
    ] as const) {
      await client.query(`INSERT INTO users (id, email, display_name, password_hash, role, is_owner, status) VALUES ($1, $2, $3, $4, $5, $6, 'active')`, [
        uuidv7(),
        email,
        email.split('@')[0],
        hash,
        isOwner ? 'admin' : 'member',
        isOwner,
      ])
    }
  } finally {
    await client.end()
  }
}

async function startServer(url: string, dataDir: string): Promise<{ proc: ChildProcess; base: string }> {
  const port = await freePort()
  const proc = spawn(process.execPath, [...startFlags(ROOT), 'src/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      DATABASE_URL: url,
      DATA_DIR: dataDir,
      MIGRATE_ON_START: 'false',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-00',
      LOGIN_FAILURES_PER_ACCOUNT: '100000000',
      LOGIN_FAILURES_PER_ADDRESS: '100000000',
      ...SERVER_ENV,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline && proc.exitCode === null) {
    if (
      await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { proc, base }
    await sleep(100)
  }
  proc.kill('SIGKILL')
  throw new Error('the server did not start')
}

async function stopServer(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  proc.kill('SIGTERM')
  await Promise.race([exited, sleep(15_000).then(() => proc.kill('SIGKILL'))])
}

async function login(base: string, email: string, password: string): Promise<number> {
  const res = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })
  await res.arrayBuffer()
  return res.status
}

/** The member's logins, one after another: latencies in ms. */
async function memberLogins(base: string): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < LOGINS; i++) {
    const t0 = performance.now()
    const status = await login(base, MEMBER, PASSWORD)
    times.push(performance.now() - t0)
    if (status !== 200) throw new Error(`the member's login answered ${status}`)
  }
  return times.sort((a, b) => a - b)
}

const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')
const row = (phase: string, times: number[], flood: string): string =>
  `| ${phase} | ${times.length} | ${Math.round(percentile(times, 50))} | ${Math.round(percentile(times, 90))} | ${Math.round(times.at(-1) ?? NaN)} | ${flood} | ${load()} |`

async function main(): Promise<void> {
  const url = databaseUrl(DB_NAME)
  console.log(`# ${machine()}; ${FLOOD} guessing loops on the owner's account, ${LOGINS} logins of another person`)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-logins-'))
  let server: { proc: ChildProcess; base: string } | undefined
  try {
    await adminQuery(`CREATE DATABASE "${DB_NAME}"`)
    await applyMigrations(url)
    await seed(url)
    server = await startServer(url, dataDir)
    const { base } = server
    await login(base, MEMBER, PASSWORD) // warm-up: the first login starts the bcrypt worker
    console.log("| phase | member's logins | p50 ms | p90 ms | max ms | the flood's answers | load (1/5/15 min) |")
    console.log('|---|---|---|---|---|---|---|')
    console.log(row('quiet', await memberLogins(base), '-'))

    const counts = new Map<number, number>()
    let stop = false
    const loops = Array.from({ length: FLOOD }, async (_, i) => {
      for (let n = 0; !stop; n++) {
        const status = await login(base, OWNER, `guess ${i}-${n} of the owner password`).catch(() => 0)
        counts.set(status, (counts.get(status) ?? 0) + 1)
      }
    })
    await sleep(2000)
    counts.clear()
    const t0 = performance.now()
    const times = await memberLogins(base)
    const seconds = (performance.now() - t0) / 1000
    const flood = [...counts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}: ${(n / seconds).toFixed(0)}/s`)
      .join(', ')
    stop = true
    await Promise.all(loops)
    console.log(row(`${FLOOD} guessing loops`, times, flood))
    console.log(
      JSON.stringify({
        machine: machine(),
        flood: FLOOD,
        memberP50: percentile(times, 50),
        memberP90: percentile(times, 90),
        memberMax: times.at(-1),
        floodPerSecond: Object.fromEntries([...counts].map(([s, n]) => [s, n / seconds])),
      }),
    )
  } finally {
    if (server) await stopServer(server.proc)
    await rm(dataDir, { recursive: true, force: true })
    await adminQuery(`DROP DATABASE IF EXISTS "${DB_NAME}" WITH (FORCE)`).catch(() => {})
  }
}

await main()

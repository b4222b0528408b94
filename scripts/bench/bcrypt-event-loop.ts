// Does bcrypt (cost 12) on login stall the event loop for other requests?
//
// Starts the real server on a loopback port against a scratch database, then for each phase
// probes GET /health every PROBE_INTERVAL_MS over HTTP and samples the event-loop delay
// (perf_hooks.monitorEventLoopDelay) inside the server process:
//   1. idle          — no logins: the baseline.
//   2. logins        — CONCURRENCY clients run POST /api/v1/auth/login back to back (bcrypt on
//                      the worker-thread pool of src/lib/bcrypt-pool.ts, as the service does).
//   3. contrast      — CONCURRENCY loops of bcryptjs's own async compare in the server thread
//                      (what the service did before the pool: bcryptjs yields only every 100 ms).
//   4. contrast      — bcrypt.compareSync in the server thread (a fully blocking hash).
// Usage: npx tsx scripts/bench/bcrypt-event-loop.ts
//   BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres: a scratch database
//   is created next to it and dropped afterwards), BENCH_SECONDS (default 6), BENCH_CONCURRENCY (4).
import os from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import bcrypt from 'bcryptjs'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { applyMigrations } from '../../src/db/migrate.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { BCRYPT_COST, hashPassword } from '../../src/lib/password.ts'
import { adminQuery, databaseUrl as urlOf, machine, percentile as pct } from './lib.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4)
const PROBE_INTERVAL_MS = 10
const PASSWORD = 'bench-password-123'

interface PhaseResult {
  phase: string
  probes: number
  probeP50: number
  probeP99: number
  probeMax: number
  loopP50: number
  loopP99: number
  loopMax: number
  logins: number
  loginsPerSecond: number
}

const ms = (n: number): number => Math.round(n * 10) / 10

const dbName = `ams_bench_${process.pid}`
const databaseUrl = urlOf(dbName)

await adminQuery(`CREATE DATABASE "${dbName}"`)
try {
  await applyMigrations(databaseUrl)
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, PORT: '0', DATA_DIR: os.tmpdir() })
  const app = await buildApp({ ...config, databaseUrl, jwtSecret: 'bench-secret-'.padEnd(40, 'x') })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`

  await app.db.prisma.instance.create({ data: { id: uuidv7() } })
  const passwordHash = await hashPassword(PASSWORD, BCRYPT_COST)
  await app.db.prisma.user.create({ data: { id: uuidv7(), email: 'bench@example.com', displayName: 'bench', passwordHash, role: 'admin', isOwner: true } })

  const login = async (): Promise<void> => {
    const res = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', password: PASSWORD }),
    })
    if (res.status !== 200) throw new Error(`login answered ${res.status}`)
    await res.arrayBuffer()
  }

  // Warm up (connections, JIT, the dummy hash).
  for (let i = 0; i < 3; i++) {
    await login()
    await (await fetch(`${base}/health`)).arrayBuffer()
  }

  async function phase(name: string, load: (until: number) => Promise<number>): Promise<PhaseResult> {
    const histogram = monitorEventLoopDelay({ resolution: 1 })
    const latencies: number[] = []
    const until = Date.now() + SECONDS * 1000
    histogram.enable()
    const probing = (async () => {
      while (Date.now() < until) {
        const started = performance.now()
        const res = await fetch(`${base}/health`)
        await res.arrayBuffer()
        latencies.push(performance.now() - started)
        await sleep(PROBE_INTERVAL_MS)
      }
    })()
    const [logins] = await Promise.all([load(until), probing])
    histogram.disable()
    latencies.sort((a, b) => a - b)
    return {
      phase: name,
      probes: latencies.length,
      probeP50: ms(pct(latencies, 50)),
      probeP99: ms(pct(latencies, 99)),
      probeMax: ms(latencies.at(-1) ?? 0),
      loopP50: ms(histogram.percentile(50) / 1e6),
      loopP99: ms(histogram.percentile(99) / 1e6),
      loopMax: ms(histogram.max / 1e6),
      logins,
      loginsPerSecond: Math.round((logins / SECONDS) * 10) / 10,
    }
  }

  const results: PhaseResult[] = []
  results.push(await phase('idle', async () => 0))
  results.push(
    await phase(`${CONCURRENCY} concurrent logins (bcrypt on worker threads)`, async (until) => {
      let count = 0
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (Date.now() < until) {
            await login()
            count++
          }
        }),
      )
      return count
    }),
  )
  results.push(
    await phase(`contrast: ${CONCURRENCY} loops of bcryptjs async compare in the server thread`, async (until) => {
      let count = 0
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (Date.now() < until) {
            await bcrypt.compare(PASSWORD, passwordHash)
            count++
          }
        }),
      )
      return count
    }),
  )
  results.push(
    await phase('contrast: bcrypt.compareSync in the server thread', async (until) => {
      let count = 0
      while (Date.now() < until) {
        bcrypt.compareSync(PASSWORD, passwordHash)
        count++
        await new Promise((resolve) => setImmediate(resolve))
      }
      return count
    }),
  )

  await app.close()

  console.log(`\nbcrypt cost 12, ${SECONDS}s per phase, /health probed every ${PROBE_INTERVAL_MS} ms`)
  console.log(`machine: ${machine()}\n`)
  console.log('| phase | logins/s | /health p50 | p99 | max | event-loop delay p50 | p99 | max |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const r of results) {
    console.log(`| ${r.phase} | ${r.loginsPerSecond} | ${r.probeP50} ms | ${r.probeP99} ms | ${r.probeMax} ms | ${r.loopP50} ms | ${r.loopP99} ms | ${r.loopMax} ms |`)
  }
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)
}

// How fast are webhook deliveries? Messages are posted through the real service (app.inject),
// every message fans out to WEBHOOKS agent webhooks, and a local HTTP receiver on 127.0.0.1
// measures, per delivery, the time from the event (occurred_at) to its arrival.
//   1. steady — RATE messages/s for SECONDS: latency event → receipt, p50/p99/max.
//   2. burst  — BURST messages posted at once: deliveries/s until the backlog is drained.
// Single node (in-process queue) and, with BENCH_REDIS_URL reachable, the Redis Streams path.
// Usage: npx tsx scripts/bench/webhooks.ts
//   BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL
//   (redis://127.0.0.1:6379; "off" to skip), BENCH_WEBHOOKS (5), BENCH_RATE (50), BENCH_SECONDS (10),
//   BENCH_BURST (1000), BENCH_CONCURRENCY (WEBHOOK_CONCURRENCY, 16), BENCH_ONLY=isolation (only 3.),
//   BENCH_ISOLATION_MESSAGES (40).
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { applyMigrations } from '../../src/db/migrate.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { API_KEY_PREFIX, maskSecret, newSecret, sha256Hex } from '../../src/lib/tokens.ts'
import { adminQuery as admin, cpuMeter, databaseUrl, machine, percentile as pct } from './lib.ts'

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 5)
const RATE = Number(process.env.BENCH_RATE ?? 50)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const BURST = Number(process.env.BENCH_BURST ?? 1000)
const CONCURRENCY = process.env.BENCH_CONCURRENCY ?? '16'

// Receiver: records the delay between each event's occurred_at and its arrival.
const latencies: number[] = []
let received = 0
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const now = Date.now()
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { occurred_at: string }
    latencies.push(now - Date.parse(body.occurred_at))
    received++
    res.writeHead(204).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

/** The one agent that posts in a run, with its key; the loop guard (docs/loops.md) would stop
 * its back-to-back posts, so it is off. */
async function seedBenchAgent(app: Awaited<ReturnType<typeof buildApp>>): Promise<{ agentId: string; headers: { authorization: string } }> {
  await app.db.prisma.instance.create({ data: { id: uuidv7(), loopGuardEnabled: false } })
  const key = newSecret(API_KEY_PREFIX)
  const agentId = uuidv7()
  await app.db.prisma.agent.create({
    data: { id: agentId, name: 'bench-agent', displayName: 'bench', apiKeys: { create: { id: uuidv7(), name: 'k', keyHash: sha256Hex(key), maskedKey: maskSecret(key, API_KEY_PREFIX) } } },
  })
  return { agentId, headers: { authorization: `Bearer ${key}` } }
}

/** CPU per delivery over a phase: this process (the server, and the receiver and poster beside it), PostgreSQL, Redis. */
function cpuPerDelivery(meter: () => { server: number; postgres: number; redis: number }, seconds: number, deliveries: number): string {
  const used = meter()
  const us = (percent: number): number => Math.round(((percent / 100) * seconds * 1e6) / deliveries)
  return `CPU ${used.server} % of a core (server + receiver), PostgreSQL ${used.postgres} %, Redis ${used.redis} %; per delivery ${us(used.server)} µs + ${us(used.postgres)} µs PostgreSQL + ${us(used.redis)} µs Redis`
}

async function waitFor(n: number, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (received < n) {
    if (Date.now() > deadline) throw new Error(`only ${received} of ${n} deliveries arrived`)
    await sleep(5)
  }
}

async function run(mode: 'single node' | 'redis'): Promise<void> {
  const dbName = `ams_bench_webhooks_${process.pid}_${mode === 'redis' ? 'r' : 's'}`
  const url = databaseUrl(dbName)
  await admin(`DROP DATABASE IF EXISTS ${dbName}`)
  await admin(`CREATE DATABASE ${dbName}`)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-'))
  try {
    await applyMigrations(url)
    const config = loadConfig({
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DATABASE_URL: url,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_CONCURRENCY: CONCURRENCY,
      ...(mode === 'redis' ? { REDIS_URL, REDIS_PREFIX: `ams:bench:${randomUUID()}:` } : {}),
    })
    const app = await buildApp({ ...config, databaseUrl: url, jwtSecret: 'x'.repeat(32) })
    await app.ready()
    try {
      const { agentId, headers } = await seedBenchAgent(app)
      for (let i = 0; i < WEBHOOKS; i++) {
        await app.inject({ method: 'POST', url: `/api/v1/agents/${agentId}/webhooks`, headers, payload: { url: receiverUrl, events: ['message.created'] } })
      }
      const channel = (await app.inject({ method: 'POST', url: '/api/v1/channels', headers, payload: { name: 'bench', description: '' } })).json().id as string
      const post = (text: string) => app.inject({ method: 'POST', url: `/api/v1/channels/${channel}/messages`, headers, payload: { text } })

      // 1. steady rate
      latencies.length = 0
      received = 0
      const total = RATE * SECONDS
      const steadyMeter = cpuMeter([process.pid])
      const started = Date.now()
      for (let i = 0; i < total; i++) {
        const due = started + (i * 1000) / RATE
        if (due > Date.now()) await sleep(due - Date.now())
        void post(`steady ${i}`)
      }
      await waitFor(total * WEBHOOKS)
      const steadyCpu = cpuPerDelivery(steadyMeter, (Date.now() - started) / 1000, total * WEBHOOKS)
      const steady = [...latencies].sort((a, b) => a - b)
      console.log(
        `${mode} steady: ${RATE} messages/s × ${WEBHOOKS} webhooks for ${SECONDS}s = ${steady.length} deliveries; event → receipt p50 ${pct(steady, 50)} ms, p99 ${pct(steady, 99)} ms, max ${steady.at(-1)} ms; ${steadyCpu}`,
      )

      // 2. burst
      latencies.length = 0
      received = 0
      const burstMeter = cpuMeter([process.pid])
      const t0 = Date.now()
      const posts: Promise<unknown>[] = []
      for (let i = 0; i < BURST; i++) {
        posts.push(post(`burst ${i}`))
        if (posts.length >= 32) await Promise.all(posts.splice(0))
      }
      await Promise.all(posts)
      const postedMs = Date.now() - t0
      await waitFor(BURST * WEBHOOKS)
      const elapsed = (Date.now() - t0) / 1000
      const burstCpu = cpuPerDelivery(burstMeter, elapsed, BURST * WEBHOOKS)
      const burst = [...latencies].sort((a, b) => a - b)
      console.log(
        `${mode} burst: ${BURST} messages posted in ${postedMs} ms → ${BURST * WEBHOOKS} deliveries in ${elapsed.toFixed(1)} s = ${Math.round((BURST * WEBHOOKS) / elapsed)} deliveries/s; event → receipt p50 ${pct(burst, 50)} ms, p99 ${pct(burst, 99)} ms; ${burstCpu}`,
      )
    } finally {
      await app.close()
    }
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {})
    await rm(dataDir, { recursive: true, force: true })
  }
}

// 3. isolation — one healthy endpoint alone, then the same while a second endpoint never answers
//    and a third answers 500: the healthy endpoint's latency, and the failing endpoint's first
//    retry against the schedule (10 s ± 20 %). Single node, default delivery settings.
async function isolation(): Promise<void> {
  const MESSAGES = Number(process.env.BENCH_ISOLATION_MESSAGES ?? 40)
  const ISO_RATE = 10
  const healthy: number[] = []
  const attemptsAt = new Map<string, number[]>()
  const servers = [
    http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        healthy.push(Date.now() - Date.parse((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { occurred_at: string }).occurred_at))
        res.writeHead(204).end()
      })
    }),
    http.createServer(() => {}), // hangs: never answers
    http.createServer((req, res) => {
      const id = String(req.headers['x-webhook-delivery-id'])
      attemptsAt.set(id, [...(attemptsAt.get(id) ?? []), Date.now()])
      req.resume()
      res.writeHead(500).end('failing')
    }),
  ]
  const urls: string[] = []
  for (const server of servers) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)
  }
  const dbName = `ams_bench_webhooks_${process.pid}_i`
  const url = databaseUrl(dbName)
  await admin(`DROP DATABASE IF EXISTS ${dbName}`)
  await admin(`CREATE DATABASE ${dbName}`)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-'))
  try {
    await applyMigrations(url)
    const config = loadConfig({ LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: CONCURRENCY })
    const app = await buildApp({ ...config, databaseUrl: url, jwtSecret: 'x'.repeat(32) })
    await app.ready()
    try {
      const { agentId, headers } = await seedBenchAgent(app)
      const hook = (target: string) => app.inject({ method: 'POST', url: `/api/v1/agents/${agentId}/webhooks`, headers, payload: { url: target, events: ['message.created'] } })
      await hook(urls[0]!)
      const channel = (await app.inject({ method: 'POST', url: '/api/v1/channels', headers, payload: { name: 'iso', description: '' } })).json().id as string
      const burst = async (label: string): Promise<void> => {
        healthy.length = 0
        const started = Date.now()
        for (let i = 0; i < MESSAGES; i++) {
          const due = started + (i * 1000) / ISO_RATE
          if (due > Date.now()) await sleep(due - Date.now())
          void app.inject({ method: 'POST', url: `/api/v1/channels/${channel}/messages`, headers, payload: { text: `${label} ${i}` } })
        }
        const deadline = Date.now() + 120_000
        while (healthy.length < MESSAGES && Date.now() < deadline) await sleep(20)
        const sorted = [...healthy].sort((a, b) => a - b)
        console.log(`isolation, ${label}: ${sorted.length}/${MESSAGES} to the healthy endpoint; event → receipt p50 ${pct(sorted, 50)} ms, p99 ${pct(sorted, 99)} ms, max ${sorted.at(-1)} ms`)
      }
      await burst('healthy endpoint alone')
      await hook(urls[1]!)
      await hook(urls[2]!)
      await burst('while another endpoint hangs and a third fails')
      // The failing endpoint's first retries (schedule: 10 s ± 20 %).
      const deadline = Date.now() + 60_000
      while (Date.now() < deadline && [...attemptsAt.values()].filter((a) => a.length >= 2).length < Math.min(attemptsAt.size, MESSAGES)) await sleep(200)
      const gaps = [...attemptsAt.values()]
        .filter((a) => a.length >= 2)
        .map((a) => (a[1]! - a[0]!) / 1000)
        .sort((a, b) => a - b)
      console.log(
        `isolation, failing endpoint: ${attemptsAt.size} deliveries attempted, ${gaps.length} retried; first retry after ${gaps.length ? `${gaps[0]!.toFixed(1)}–${gaps.at(-1)!.toFixed(1)} s (p50 ${pct(gaps, 50).toFixed(1)} s)` : 'n/a'} against the schedule's 8–12 s; its circuit breaker opens after ${config.webhookBreakerFailures} failures in a row, so later deliveries wait ${config.webhookBreakerCooldownMs / 1000} s for the probe`,
      )
    } finally {
      await app.close()
    }
  } finally {
    for (const server of servers) {
      server.closeAllConnections()
      server.close()
    }
    await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {})
    await rm(dataDir, { recursive: true, force: true })
  }
}

console.log(`machine: ${machine()}`)
const ONLY = process.env.BENCH_ONLY // 'isolation' runs only the isolation scenario
if (ONLY !== 'isolation') {
  await run('single node')
  if (REDIS_URL !== 'off') await run('redis')
}
if (ONLY === undefined || ONLY === 'isolation') await isolation()
receiver.close()

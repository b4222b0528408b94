// Two echo agents (issue 16): agents A and B share a channel (with a human, silent at first); each has a webhook to its own local HTTP
// receiver that answers at once and then posts a reply to every message it is delivered (naming
// the delivery's event as `in_reply_to_event`). One kick-off message starts the exchange.
//   1. unguarded — the loop guard off (loop_guard_enabled false): how many
//      messages the pair exchanges in SECONDS (the runaway the issue measured: 92 in 3 s).
//   2. defaults  — the workspace defaults (20 turns per conversation per 60 s, chain depth 20):
//      how many messages are stored before the guard stops the pair (answering oneself takes no
//      turn: the chain cap bounds those), and how long that takes; then a human message, and the
//      same again.
// Each agent receives its own messages too (include_own_messages true, the spec's default), and
// replies to those as well, as a naive echo bot would.
// Usage: npx tsx scripts/bench/echo-agents.ts
//   BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/postgres), BENCH_SECONDS (3).
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { applyMigrations } from '../../src/db/migrate.ts'
import { uuidv7 } from '../../src/lib/ids.ts'
import { API_KEY_PREFIX, maskSecret, newSecret, sha256Hex } from '../../src/lib/tokens.ts'
import { forgetWorkspaceSettings } from '../../src/modules/workspace/settings.ts'
import { adminQuery as admin, databaseUrl, machine } from './lib.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)

interface Stats {
  created: number
  refused: number
  inFlight: number
}

/** A receiver that replies, as `key`, to every message.created it is delivered. */
async function echoReceiver(app: FastifyInstance, key: string, channel: () => string, stats: Stats, stopped: () => boolean): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      res.writeHead(200).end()
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event_id: string; event_type: string; payload: { message: { text: string } } }
      if (body.event_type !== 'message.created' || stopped()) return
      stats.inFlight++
      void app
        .inject({
          method: 'POST',
          url: `/api/v1/channels/${channel()}/messages`,
          headers: { authorization: `Bearer ${key}` },
          payload: { text: `echo: ${body.payload.message.text}`.slice(0, 80), in_reply_to_event: body.event_id },
        })
        .then((r) => {
          if (r.statusCode === 201) stats.created++
          else if (r.statusCode === 429) stats.refused++
          else console.error(`reply answered ${r.statusCode}: ${r.body}`)
        })
        .finally(() => stats.inFlight--)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => server.close() }
}

async function agent(app: FastifyInstance, name: string): Promise<{ id: string; key: string }> {
  const key = newSecret(API_KEY_PREFIX)
  const id = uuidv7()
  await app.db.prisma.agent.create({
    data: { id, name, displayName: name, apiKeys: { create: { id: uuidv7(), name: 'k', keyHash: sha256Hex(key), maskedKey: maskSecret(key, API_KEY_PREFIX) } } },
  })
  return { id, key }
}

const dbName = `ams_bench_echo_${process.pid}`
const url = databaseUrl(dbName)
await admin(`DROP DATABASE IF EXISTS ${dbName}`)
await admin(`CREATE DATABASE ${dbName}`)
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ams-bench-'))
try {
  await applyMigrations(url)
  const config = loadConfig({ LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0' })
  const app = await buildApp({ ...config, databaseUrl: url, jwtSecret: 'x'.repeat(32) })
  await app.ready()
  try {
    await app.db.prisma.instance.create({ data: { id: uuidv7() } })
    const ownerId = uuidv7()
    await app.db.prisma.user.create({ data: { id: ownerId, email: 'owner@example.com', displayName: 'owner', role: 'admin', isOwner: true } })
    const token = app.signUserToken(ownerId)
    const a = await agent(app, 'echo-a')
    const b = await agent(app, 'echo-b')
    const stats: Stats = { created: 0, refused: 0, inFlight: 0 }
    let channelId = ''
    let stop = false
    const receivers = []
    for (const who of [a, b]) {
      const rx = await echoReceiver(
        app,
        who.key,
        () => channelId,
        stats,
        () => stop,
      )
      receivers.push(rx)
      await app.inject({ method: 'POST', url: `/api/v1/agents/${who.id}/webhooks`, headers: { authorization: `Bearer ${who.key}` }, payload: { url: rx.url, events: ['message.created'] } })
    }
    const setGuard = async (patch: Record<string, number | boolean>) => {
      await app.inject({ method: 'PATCH', url: '/api/v1/workspace', headers: { authorization: `Bearer ${token}` }, payload: patch })
      forgetWorkspaceSettings(app.ctx)
    }
    const newConversation = async () => {
      // A fresh conversation per phase: a channel the owner adds both agents to (so a human can speak in it).
      const created = await app.inject({ method: 'POST', url: '/api/v1/channels', headers: { authorization: `Bearer ${token}` }, payload: { name: `echo-${Date.now()}`, description: '' } })
      channelId = created.json().id
      for (const who of [a, b]) await app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/members`, headers: { authorization: `Bearer ${token}` }, payload: { user_id: who.id } })
    }
    const kickoff = () => app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { authorization: `Bearer ${a.key}` }, payload: { text: 'ping' } })
    const quiet = async () => {
      // Over when nothing is in flight and every event was planned and delivered.
      for (let idle = 0; idle < 10;) {
        const pending = await app.db.pool.query<{ n: number }>(`SELECT (SELECT count(*) FROM outbox_events WHERE planned_at IS NULL) + (SELECT count(*) FROM deliveries WHERE status = 'pending') AS n`)
        idle = stats.inFlight === 0 && Number(pending.rows[0]!.n) === 0 ? idle + 1 : 0
        await sleep(50)
      }
    }
    const count = async () => app.db.prisma.message.count({ where: { channelId } })

    // 1. unguarded
    await setGuard({ loop_guard_enabled: false })
    await newConversation()
    let t0 = Date.now()
    await kickoff()
    await sleep(SECONDS * 1000)
    const runaway = await count()
    const elapsed = (Date.now() - t0) / 1000
    stop = true
    await quiet()
    console.log(
      `\ntwo echo agents, one conversation — machine: ${machine()}, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    )
    console.log(`unguarded: ${runaway} messages in ${elapsed.toFixed(1)} s and still going (stopped by the benchmark)`)

    // 2. defaults
    stop = false
    stats.created = 0
    stats.refused = 0
    await setGuard({ loop_guard_enabled: true, loop_guard_max_turns: 20, loop_guard_window_seconds: 60, loop_guard_max_depth: 20 })
    await newConversation()
    t0 = Date.now()
    await kickoff()
    await quiet()
    const stoppedAfter = Date.now() - t0
    const guarded = await count()
    console.log(
      `defaults: stopped at ${guarded} messages (the kick-off and ${stats.created} replies; ${stats.refused} replies refused with 429 LOOP_DETECTED), quiet ${(stoppedAfter / 1000).toFixed(1)} s after the kick-off`,
    )
    await app.inject({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: { authorization: `Bearer ${token}` }, payload: { text: 'a human speaks' } })
    await quiet()
    console.log(`after one human message: ${(await count()) - guarded - 1} more agent messages, then stopped again`)
    for (const rx of receivers) rx.close()
  } finally {
    await app.close()
  }
} finally {
  await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {})
  await rm(dataDir, { recursive: true, force: true })
}

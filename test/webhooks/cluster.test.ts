// Several instances sharing PostgreSQL and Redis: work is shared through the Redis stream's
// consumer group, each delivery attempt is made by one instance, and killing an instance in the
// middle of deliveries loses none of them and never sends one event under two delivery ids.
import t from 'tap'
import { needsRedis } from '../setup/services.ts'
import { build, testConfig } from '../helper.ts'
import { createWebhook, eventually, FAST_ENV, heldReceiver, receiver, startServer, verifySignature } from './helpers.ts'
import { bearer, createChannelId, disableLoopGuard, post, seedWorkspace } from '../support/index.ts'

t.test('two instances with Redis: exactly one delivery per event', { skip: needsRedis() }, async (t) => {
  const one = await build(t, { redis: true, env: FAST_ENV })
  const two = await build(t, { redis: true, databaseUrl: one.config.databaseUrl, redisPrefix: one.config.redisPrefix, env: FAST_ENV })
  const ws = await seedWorkspace(one.app)
  await disableLoopGuard(one.app) // 40 agent messages in a row: not what this tests
  const agent = ws.agents[0]!
  const rx = await receiver(t)
  const hook = await createWebhook(one.api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(one.api, agent.key, 'cluster')
  const N = 40
  for (let i = 0; i < N; i++) await post(i % 2 ? two.api : one.api, agent.key, channel, `message ${i}`)

  await rx.waitFor(N)
  const all = await eventually(async () => {
    const rows = await one.app.db.prisma.delivery.findMany()
    return rows.length === N && rows.every((d) => d.status === 'succeeded') ? rows : null
  }, 'every delivery to succeed')
  t.equal(rx.requests.length, N, 'no event delivered twice')
  t.same(
    all.map((d) => d.attempts),
    new Array(N).fill(1),
    'one attempt each',
  )
  t.equal(new Set(rx.requests.map((r) => r.headers['x-webhook-delivery-id'])).size, N)
  t.same(new Set(rx.requests.map((r) => JSON.parse(r.body).payload.message.text)), new Set(Array.from({ length: N }, (_, i) => `message ${i}`)))
  for (const r of rx.requests) t.ok(verifySignature(hook.secret, r.body, r.headers['x-webhook-signature']))

  const key = `${one.config.redisPrefix}deliveries`
  const consumers = (await one.app.redis!.xinfo('CONSUMERS', key, 'delivery-workers')) as unknown[]
  t.equal(consumers.length, 2, 'both instances read the shared consumer group')
  t.equal(await one.app.redis!.xlen(key), 0, 'acknowledged entries are removed from the stream')
  const pending = (await one.app.redis!.xpending(key, 'delivery-workers')) as [number, ...unknown[]]
  t.equal(pending[0], 0, 'nothing left pending')
})

t.test('an instance killed mid-delivery: every delivery completes, none under two ids', { skip: needsRedis() }, async (t) => {
  const config = await testConfig(t, { redis: true })
  const { app, api } = await build(t, { redis: true, databaseUrl: config.databaseUrl, redisPrefix: config.redisPrefix, background: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!

  const { rx, release } = await heldReceiver(t)
  const hook = await createWebhook(api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(api, agent.key, 'crash')

  const env = {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1',
    WEBHOOK_TIMEOUT_MS: '10000',
    WEBHOOK_CLAIM_TIMEOUT_MS: '2000',
    WEBHOOK_CONCURRENCY: '3',
  }
  const a = await startServer(t, config, env)
  const b = await startServer(t, config, env)

  const N = 20
  for (let i = 0; i < N; i++) {
    const res = await fetch(`${i % 2 ? b.http : a.http}/api/v1/channels/${channel}/messages`, {
      method: 'POST',
      headers: { ...bearer(agent.key), 'content-type': 'application/json' },
      body: JSON.stringify({ text: `crash ${i}` }),
    })
    t.equal(res.status, 201)
  }
  // Both instances are busy (3 attempts each in flight, held by the receiver): kill one.
  await rx.waitFor(6)
  a.proc.kill('SIGKILL')
  await a.exited
  release()

  const rows = await eventually(async () => {
    const all = await app.db.prisma.delivery.findMany()
    return all.length === N && all.every((d) => d.status === 'succeeded') ? all : null
  }, 'every delivery to succeed after the crash')
  t.equal(rows.length, N)

  const idsByEvent = new Map<string, Set<string>>()
  const bodyById = new Map<string, Set<string>>()
  for (const r of rx.requests) {
    const body = JSON.parse(r.body)
    const id = r.headers['x-webhook-delivery-id'] as string
    if (!idsByEvent.has(body.event_id)) idsByEvent.set(body.event_id, new Set())
    idsByEvent.get(body.event_id)!.add(id)
    if (!bodyById.has(id)) bodyById.set(id, new Set())
    bodyById.get(id)!.add(r.body)
    t.ok(verifySignature(hook.secret, r.body, r.headers['x-webhook-signature']))
  }
  t.equal(idsByEvent.size, N, 'every event reached the receiver')
  t.ok(
    [...idsByEvent.values()].every((ids) => ids.size === 1),
    'each event under one delivery id',
  )
  t.ok(
    [...bodyById.values()].every((bodies) => bodies.size === 1),
    'each delivery with one body',
  )
  const resent = rows.filter((d) => d.attempts > 1)
  t.ok(resent.length >= 1, `the killed instance's attempts were made again by the survivor (${resent.length})`)
  t.ok(rx.requests.length >= N)
  t.equal(b.proc.exitCode, null, 'the survivor is still running')
})

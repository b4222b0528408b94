// Deliveries survive restarts: events committed while no worker ran are planned by the next
// start, and a delivery waiting for its retry when the server stops is sent by the next one,
// with the same id and body.
import t from 'tap'
import { build } from '../helper.ts'
import { createWebhook, eventually, FAST_ENV, heldReceiver, receiver } from './helpers.ts'
import { createChannelId, post, seedWorkspace } from '../support/index.ts'

t.test('events committed with no worker running are delivered after a restart', async (t) => {
  const first = await build(t, { background: false, env: FAST_ENV })
  const ws = await seedWorkspace(first.app)
  const agent = ws.agents[0]!
  const rx = await receiver(t)
  await createWebhook(first.api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(first.api, agent.key, 'offline')
  await post(first.api, agent.key, channel, 'while nobody delivers')
  // The event sits in the outbox, unplanned: the process "died" before planning it.
  const unplanned = await first.app.db.pool.query("SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL AND type = 'message.created'")
  t.equal(unplanned.rows[0].n, 1)
  await first.app.close()

  await build(t, { databaseUrl: first.config.databaseUrl, env: FAST_ENV })
  const [req] = await rx.waitFor(1)
  t.equal(JSON.parse(req!.body).payload.message.text, 'while nobody delivers')
})

t.test('a delivery waiting for a retry when the server stops is sent by the next start', async (t) => {
  let status = 500
  const rx = await receiver(t, () => status)
  const first = await build(t, { env: { ...FAST_ENV, WEBHOOK_RETRY_SCHEDULE: '3600' } })
  const ws = await seedWorkspace(first.app)
  const agent = ws.agents[0]!
  await createWebhook(first.api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(first.api, agent.key, 'restart')
  await post(first.api, agent.key, channel, 'survive me')
  await rx.waitFor(1)
  const failedOnce = await eventually(async () => {
    const d = await first.app.db.prisma.delivery.findFirst()
    return d?.lastStatusCode === 500 ? d : null
  }, 'the first failure to be recorded')
  t.equal(failedOnce.status, 'pending')
  t.ok(failedOnce.nextAttemptAt! > new Date(Date.now() + 1_000_000), 'next attempt an hour away')
  await first.app.close()

  // The receiver recovers; a new server (with a short schedule) takes over when the retry is due.
  status = 200
  const second = await build(t, { databaseUrl: first.config.databaseUrl, env: FAST_ENV })
  await second.app.db.pool.query("UPDATE deliveries SET next_attempt_at = now() WHERE status = 'pending'") // the hour has passed
  const reqs = await rx.waitFor(2)
  t.equal(reqs[1]!.headers['x-webhook-delivery-id'], reqs[0]!.headers['x-webhook-delivery-id'], 'same delivery id')
  t.equal(reqs[1]!.body, reqs[0]!.body, 'same body')
  t.equal(reqs[1]!.headers['x-webhook-attempt'], '2')
  const done = await eventually(async () => {
    const d = await second.app.db.prisma.delivery.findFirst()
    return d?.status === 'succeeded' ? d : null
  }, 'success after the restart')
  t.equal(done.attempts, 2)
})

t.test('a graceful stop hands back claimed deliveries it had not started', async (t) => {
  const { rx, release } = await heldReceiver(t)
  const env = { ...FAST_ENV, WEBHOOK_CONCURRENCY: '1', WEBHOOK_CLAIM_TIMEOUT_MS: '600000', WEBHOOK_TIMEOUT_MS: '60000' }
  const first = await build(t, { env })
  const ws = await seedWorkspace(first.app)
  const agent = ws.agents[0]!
  await createWebhook(first.api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(first.api, agent.key, 'handback')
  for (const text of ['a', 'b', 'c']) await post(first.api, agent.key, channel, text)
  await eventually(async () => rx.requests.length === 1 && (await first.app.db.prisma.delivery.count()) === 3, 'one attempt in flight, three deliveries')
  const closing = first.app.close()
  release() // the attempt in flight finishes during the close
  await closing
  // Without the hand-back the other two would wait for their 10-minute claim to expire.
  const second = await build(t, { databaseUrl: first.config.databaseUrl, env })
  await rx.waitFor(3)
  const all = await eventually(async () => {
    const rows = await second.app.db.prisma.delivery.findMany()
    return rows.every((d) => d.status === 'succeeded') ? rows : null
  }, 'all delivered')
  t.same(
    all.map((d) => d.attempts),
    [1, 1, 1],
    'each sent once',
  )
  t.equal(new Set(rx.requests.map((r) => r.headers['x-webhook-delivery-id'])).size, 3)
})

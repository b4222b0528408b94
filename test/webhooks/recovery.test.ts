// A server killed with SIGKILL in the middle of a burst of deliveries: with the default claim
// timeout, the next start sends what the dead one had claimed well within the 30 s safety
// deadline of `eventually` (with the old 60 s lease this test timed out), at least once and
// under one delivery id per event.
import t from 'tap'
import { build, testConfig } from '../helper.ts'
import { createWebhook, eventually, heldReceiver, startServer } from './helpers.ts'
import { bearer, createChannelId, seedWorkspace } from '../support/index.ts'

t.test('SIGKILL mid-burst: the restarted server resumes the dead one’s deliveries promptly', async (t) => {
  const config = await testConfig(t)
  const { app, api } = await build(t, { databaseUrl: config.databaseUrl, background: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!

  // The receiver holds every request until the first server is dead.
  const { rx, release } = await heldReceiver(t)
  await createWebhook(api, agent.key, agent.id, rx.url())
  const channel = await createChannelId(api, agent.key, 'burst')

  // Production defaults for the lease (WEBHOOK_CLAIM_TIMEOUT_MS and WEBHOOK_TIMEOUT_MS unset).
  const env = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_INTERVAL_MS: '100', WEBHOOK_CONCURRENCY: '4' }
  const first = await startServer(t, config, env)
  const N = 12
  for (let i = 0; i < N; i++) {
    const res = await fetch(`${first.http}/api/v1/channels/${channel}/messages`, {
      method: 'POST',
      headers: { ...bearer(agent.key), 'content-type': 'application/json' },
      body: JSON.stringify({ text: `burst ${i}` }),
    })
    t.equal(res.status, 201)
  }
  await eventually(async () => rx.requests.length >= 4, 'four attempts in flight')
  first.proc.kill('SIGKILL')
  await first.exited
  release()

  await startServer(t, config, env)
  const rows = await eventually(async () => {
    const all = await app.db.prisma.delivery.findMany()
    return all.length === N && all.every((d) => d.status === 'succeeded') ? all : null
  }, 'every delivery to succeed after the restart')
  t.equal(rows.length, N)
  const idsByEvent = new Map<string, Set<string>>()
  for (const r of rx.requests) {
    const eventId = JSON.parse(r.body).event_id as string
    if (!idsByEvent.has(eventId)) idsByEvent.set(eventId, new Set())
    idsByEvent.get(eventId)!.add(r.headers['x-webhook-delivery-id'] as string)
  }
  t.equal(idsByEvent.size, N, 'every event reached the receiver')
  t.ok(
    [...idsByEvent.values()].every((ids) => ids.size === 1),
    'one delivery id per event (de-duplicate on it)',
  )
})

// A subscription starts at its creation: a webhook or an integration created after an event
// occurred (but before the planner got to that event) does not receive it; the next event it
// does.
import t from 'tap'
import { build } from '../helper.ts'
import { createWebhook, eventually, FAST_ENV, receiver } from './helpers.ts'
import { bearer, createChannelId, post, seedWorkspace } from '../support/index.ts'

t.test('a webhook and an integration get only events that occurred after their creation', async (t) => {
  // No background work in the first app: the post's event waits in the outbox, unplanned, as it
  // would for the few milliseconds before the planner runs.
  const first = await build(t, { background: false, env: FAST_ENV })
  const ws = await seedWorkspace(first.app)
  const agent = ws.agents[0]!
  const channel = await createChannelId(first.api, agent.key, 'before')
  await post(first.api, agent.key, channel, 'before the subscriptions')
  // created_at has millisecond precision: make sure the creations are strictly later.
  await new Promise((resolve) => setTimeout(resolve, 5))

  const hookRx = await receiver(t)
  const integrationRx = await receiver(t)
  await createWebhook(first.api, agent.key, agent.id, hookRx.url())
  const integration = await first.api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(ws.owner.token),
    payload: { name: 'late', webhook_url: integrationRx.url(), events: ['message.created'] },
  })
  t.equal(integration.statusCode, 201)
  await first.app.close()

  // A running server plans the old event and the next one.
  const second = await build(t, { databaseUrl: first.config.databaseUrl, env: FAST_ENV })
  await eventually(async () => {
    const { rows } = await second.app.db.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')
    return rows[0].n === 0
  }, 'the old event to be planned')
  await post(second.api, agent.key, channel, 'after the subscriptions')
  await hookRx.waitFor(1, (r) => JSON.parse(r.body).payload.message.text === 'after the subscriptions')
  await integrationRx.waitFor(1, (r) => JSON.parse(r.body).payload.text === 'after the subscriptions')

  const deliveries = await eventually(async () => {
    const rows = await second.app.db.prisma.delivery.findMany()
    return rows.every((d) => d.status === 'succeeded') ? rows : null
  }, 'every delivery to complete')
  t.equal(deliveries.length, 2, 'no delivery was planned for the event before the subscriptions')
  t.same(
    hookRx.requests.map((r) => JSON.parse(r.body).payload.message.text),
    ['after the subscriptions'],
  )
  t.same(
    integrationRx.requests.map((r) => JSON.parse(r.body).payload.text),
    ['after the subscriptions'],
  )
})

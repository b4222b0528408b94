// The outbox's published mark: the webhook planner, which updates every outbox row anyway, sets
// it in the same row update for the events this process has relayed; the relay marks the rest
// itself (src/realtime/relay.ts, docs/decisions.md).
import t from 'tap'
import { build } from '../helper.ts'
import { seedWorkspace } from '../fixtures.ts'
import { createChannel, post } from './helpers.ts'

interface Marks {
  published_at: Date | null
  planned_at: Date | null
}

async function marksOf(app: Awaited<ReturnType<typeof build>>['app'], eventId: string): Promise<Marks> {
  const { rows } = await app.db.pool.query<Marks>('SELECT published_at, planned_at FROM outbox_events WHERE event_id = $1', [eventId])
  return rows[0]!
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function eventIdOf(app: Awaited<ReturnType<typeof build>>['app'], messageId: string): Promise<string> {
  const { rows } = await app.db.pool.query<{ event_id: string }>("SELECT event_id::text FROM outbox_events WHERE type = 'message.created' AND payload->'message'->>'id' = $1", [messageId])
  return rows[0]!.event_id
}

t.test('the planner sets the published mark of events this process relayed, in the same row update', async (t) => {
  // No periodic planning run: only the run kicked by the commit, which follows the publish.
  const { app, api } = await build(t, { env: { WEBHOOK_POLL_INTERVAL_MS: '600000' } })
  const ws = await seedWorkspace(app)
  const channel = await createChannel(api, ws.primary.key, 'marks')
  const message = await post(api, ws.primary.key, channel, 'marked once')
  const eventId = await eventIdOf(app, message.id)
  await eventually(async () => (await marksOf(app, eventId)).planned_at !== null, 'planning')
  const marks = await marksOf(app, eventId)
  t.ok(marks.published_at, 'published')
  // Both come from now() of one transaction: the planner's update set both.
  t.equal(marks.published_at!.getTime(), marks.planned_at!.getTime(), 'one update set both marks')
  t.notOk(app.realtime.relay.pending().includes(eventId), 'the relay no longer holds the mark')
})

t.test('without a planner the relay marks the events it published itself', async (t) => {
  const { app, api } = await build(t, { background: false })
  const ws = await seedWorkspace(app)
  const channel = await createChannel(api, ws.primary.key, 'marks')
  const message = await post(api, ws.primary.key, channel, 'marked by the relay')
  const eventId = await eventIdOf(app, message.id)
  await eventually(async () => (await marksOf(app, eventId)).published_at !== null, 'the published mark')
  const marks = await marksOf(app, eventId)
  t.equal(marks.planned_at, null, 'nothing planned it')
  t.same(app.realtime.relay.pending(), [], 'nothing left to mark')
})

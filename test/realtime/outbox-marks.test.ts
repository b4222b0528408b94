// The outbox's published mark: the webhook planner, which updates every outbox row anyway, sets
// it in the same row update for the events this process has relayed; the relay marks the rest
// itself (src/realtime/relay.ts, docs/decisions.md).
import t from 'tap'
import { build, type BuildTestOptions } from '../helper.ts'
import { eventually } from '../webhooks/helpers.ts'
import { createChannelId, post, seedWorkspace } from '../support/index.ts'

interface Marks {
  published_at: Date | null
  planned_at: Date | null
}

/** Posts one message on a fresh server; returns the app and a reader of its event's marks. */
async function postOne(t: Parameters<typeof build>[0], options: BuildTestOptions) {
  const { app, api } = await build(t, options)
  const ws = await seedWorkspace(app)
  const channel = await createChannelId(api, ws.primary.key, 'marks')
  const message = await post(api, ws.primary.key, channel, 'marked')
  const { rows } = await app.db.pool.query<{ event_id: string }>("SELECT event_id::text FROM outbox_events WHERE type = 'message.created' AND payload->'message'->>'id' = $1", [message.id])
  const eventId = rows[0]!.event_id
  const marks = async (): Promise<Marks> => (await app.db.pool.query<Marks>('SELECT published_at, planned_at FROM outbox_events WHERE event_id = $1', [eventId])).rows[0]!
  return { app, eventId, marks }
}

t.test('the planner sets the published mark of events this process relayed, in the same row update', async (t) => {
  // No periodic planning run: only the run kicked by the commit, which follows the publish.
  const { app, eventId, marks } = await postOne(t, { env: { WEBHOOK_POLL_INTERVAL_MS: '600000' } })
  const row = await eventually(async () => {
    const m = await marks()
    return m.planned_at ? m : null
  }, 'planning')
  t.ok(row.published_at, 'published')
  // Both come from now() of one transaction: the planner's update set both.
  t.equal(row.published_at!.getTime(), row.planned_at!.getTime(), 'one update set both marks')
  t.notOk(app.realtime.relay.pending().includes(eventId), 'the relay no longer holds the mark')
})

t.test('without a planner the relay marks the events it published itself', async (t) => {
  const { app, marks } = await postOne(t, { background: false })
  const row = await eventually(async () => {
    const m = await marks()
    return m.published_at ? m : null
  }, 'the published mark')
  t.equal(row.planned_at, null, 'nothing planned it')
  t.same(app.realtime.relay.pending(), [], 'nothing left to mark')
})

// The outbox's published mark: the webhook planner, which updates every outbox row anyway, sets
// it in the same row update for the events this process has relayed; the relay marks the rest
// itself (src/realtime/relay.ts, docs/decisions.md). And the planner's first pass, which marks in
// one statement the events it has nothing to do for (src/workers/repo.ts markIdleEvents).
import t from 'tap'
import { build, type BuildTestOptions } from '../helper.ts'
import { markIdleEvents } from '../../src/workers/repo.ts'
import { createWebhook, eventually, receiver } from '../webhooks/helpers.ts'
import { createChannelId, post, seedWorkspace } from '../support/index.ts'
import { openDm } from './addressed-scenario.ts'

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
  // No periodic planning run: only the runs kicked by the commits. A commit kicks the planner and
  // the relay's publish together; the planner marks the events whose publish came first (nearly
  // all; under heavy load a planning run can overtake a publish, and the relay marks that one
  // itself). Of ten events, at least one must carry both marks from one update, and all must be
  // marked published in the end.
  const { app, api } = await build(t, { env: { WEBHOOK_POLL_INTERVAL_MS: '600000' } })
  const ws = await seedWorkspace(app)
  const channel = await createChannelId(api, ws.primary.key, 'marks')
  const ids: string[] = []
  for (let i = 0; i < 10; i++) {
    const message = await post(api, ws.primary.key, channel, `marked ${i}`)
    const { rows } = await app.db.pool.query<{ event_id: string }>("SELECT event_id::text FROM outbox_events WHERE type = 'message.created' AND payload->'message'->>'id' = $1", [message.id])
    ids.push(rows[0]!.event_id)
  }
  // A planning run skips a row the relay holds locked while it marks it published, and with the
  // periodic run off nothing else plans that row (a full run of the suite timed out here once, on a
  // loaded machine). The test kicks the planner as the periodic run would; the events planned by
  // the commits' own runs are the ones that can carry both marks.
  const rows = await eventually(async () => {
    await app.deliveries!.planner.kick()
    const { rows } = await app.db.pool.query<Marks>('SELECT published_at, planned_at FROM outbox_events WHERE event_id = ANY($1::uuid[])', [ids])
    return rows.length === ids.length && rows.every((r) => r.published_at && r.planned_at) ? rows : null
  }, 'planning and publishing')
  // Both come from now() of one transaction when the planner's update set both.
  const together = rows.filter((r) => r.published_at!.getTime() === r.planned_at!.getTime()).length
  t.ok(together >= 1, `the planner set both marks in one update (${together} of ${ids.length})`)
  await eventually(async () => (ids.some((id) => app.realtime.relay.pending().includes(id)) ? null : true), 'the relay holding no mark')
  t.pass('the relay no longer holds the marks')
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

t.test('events planning has nothing to do for are marked planned in one statement; the others are left to the planning transaction', async (t) => {
  // No planner running: the statement is called directly on what three posts left in the outbox.
  const { app, api } = await build(t, { background: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } })
  const ws = await seedWorkspace(app)
  const [me, other] = [ws.agents[0]!, ws.agents[1]!]
  const room = await createChannelId(api, ws.primary.key, 'idle-room')
  const chatter = await post(api, ws.primary.key, room, 'nobody is addressed and nothing subscribes')
  const dm = await openDm(api, other.key, me.id)
  const direct = await post(api, other.key, dm, 'a direct message: an inbox item for me')
  const eventsOf = async (messageId: string) =>
    (await app.db.pool.query<{ event_id: string; type: string }>("SELECT event_id::text, type FROM outbox_events WHERE payload->'message'->>'id' = $1", [messageId])).rows
  const chatterEvents = await eventsOf(chatter.id)
  const directEvents = await eventsOf(direct.id)
  t.ok(chatterEvents.length >= 1 && directEvents.length >= 1)
  const before = (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')).rows[0]!.n
  const published = chatterEvents.map((e) => e.event_id)

  // The relay marks what it published itself a moment after a post (no planner here), and the
  // statement skips rows locked meanwhile (SKIP LOCKED): a loaded run met that once. It is called
  // again, as the planner's next run would, until it has claimed the chatter.
  const first = { idle: 0, markedPublished: [] as string[], rest: false }
  await eventually(async () => {
    const pass = await markIdleEvents(app.db.pool, 200, 0n, published)
    first.idle += pass.idle
    first.markedPublished.push(...pass.markedPublished)
    first.rest = pass.rest
    return published.every((id) => first.markedPublished.includes(id)) ? true : null
  }, 'the chatter claimed')
  t.equal(first.rest, true, 'an event with an inbox item is waiting for the planning transaction')
  t.same(first.markedPublished.sort(), [...published].sort(), 'the relayed events it marked are also marked published')
  const state = async (ids: string[]) =>
    (
      await app.db.pool.query<{ planned: boolean; published: boolean }>(
        'SELECT planned_at IS NOT NULL AS planned, published_at IS NOT NULL AS published FROM outbox_events WHERE event_id = ANY($1::uuid[])',
        [ids],
      )
    ).rows
  t.ok(
    (await state(published)).every((r) => r.planned && r.published),
    'the chatter is planned and published',
  )
  const direct_ = await state(directEvents.filter((e) => e.type === 'message.created').map((e) => e.event_id))
  t.same(direct_, [{ planned: false, published: direct_[0]!.published }], 'the direct message is not planned by it')
  const after = (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')).rows[0]!.n
  t.equal(before - after, first.idle, 'it counts what it marked')

  // A subscription to the type makes the same kind of event a planning matter.
  const rx = await receiver(t)
  await createWebhook(api, me.key, me.id, rx.url(), ['message.created'])
  const subscribed = await post(api, ws.primary.key, room, 'now a webhook wants message.created')
  const second = await markIdleEvents(app.db.pool, 200, 0n, [])
  t.equal(second.rest, true)
  const created = (await eventsOf(subscribed.id)).filter((e) => e.type === 'message.created')
  // Not planned; its published mark is the relay's (it may have set it by now).
  t.same(
    (await state(created.map((e) => e.event_id))).map((r) => r.planned),
    [false],
    'an event a webhook subscribes to is left to the planner',
  )
  t.equal(second.idle, 0, 'nothing else was idle')
})

// The outbox scans' floor (src/events/outbox-floor.ts): the planner and the sweeper scan only
// above a floor that trails the id sequence, and find what a floor passes by (a transaction that
// took its id long before it committed) with a periodic full scan.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { ScanFloor } from '../../src/events/outbox-floor.ts'
import { build } from '../helper.ts'
import { eventually } from '../webhooks/helpers.ts'
import { createChannelId, post, seedWorkspace } from '../support/index.ts'

/** A floor on a hand-driven clock and sequence. */
function floorAt(lagMs: number, fullPassMs: number) {
  const clock = { now: 1_000_000, seq: 0n, reads: 0 }
  const floor = new ScanFloor(
    async () => {
      clock.reads++
      return clock.seq
    },
    { lagMs, fullPassMs },
    () => clock.now,
  )
  return { clock, floor }
}

t.test('the floor trails the sequence by the lag, and only complete runs move it', async (t) => {
  const { clock, floor } = floorAt(5_000, 30_000)
  clock.seq = 100n
  const first = await floor.begin()
  t.same(first, { fromId: 0n, startedAt: clock.now, full: true }, 'the first run is a full pass')
  floor.complete(first)
  t.equal(floor.value, 0n, 'a reading younger than the lag does not become the floor')

  clock.now += 2_000
  clock.seq = 250n
  const early = await floor.begin()
  t.equal(clock.reads, 1, 'the sequence is read again only after half a lag')
  t.same(early, { fromId: 0n, startedAt: clock.now, full: false }, 'later runs start from the floor')

  clock.now += 3_500
  clock.seq = 400n
  await floor.begin()
  t.equal(clock.reads, 2, 'half a lag after the last reading, the sequence is read again')
  clock.now += 1
  floor.complete(await floor.begin())
  t.equal(floor.value, 100n, 'a complete run a lag after the first reading moves the floor to it')

  clock.now += 5_000
  const next = await floor.begin()
  t.equal(next.fromId, 100n, 'the next run scans above the floor')
  floor.complete(next)
  t.equal(floor.value, 400n, 'then the second reading, once it is a lag old')

  clock.seq = 50n
  clock.now += 10_000
  floor.complete(await floor.begin())
  clock.now += 10_000
  floor.complete(await floor.begin())
  t.equal(floor.value, 400n, 'the floor never goes back')
})

t.test('a run that does not complete leaves the floor where it was', async (t) => {
  const { clock, floor } = floorAt(1_000, 60_000)
  clock.seq = 10n
  floor.complete(await floor.begin())
  clock.now += 2_000
  clock.seq = 20n
  await floor.begin() // a failed run: never completed
  t.equal(floor.value, 0n)
  clock.now += 2_000
  floor.complete(await floor.begin())
  t.equal(floor.value, 20n, 'the next complete run moves it to every reading a lag old')
})

t.test('a full pass comes back every fullPassMs, counted from the last complete one', async (t) => {
  const { clock, floor } = floorAt(1_000, 10_000)
  const first = await floor.begin()
  t.ok(first.full)
  // The first full pass fails: the next run is a full pass again.
  clock.now += 100
  const retry = await floor.begin()
  t.ok(retry.full, 'a full pass that did not complete is retried')
  floor.complete(retry)
  clock.now += 9_000
  t.notOk((await floor.begin()).full, '9 s later: a floor run')
  clock.now += 1_100
  const due = await floor.begin()
  t.same([due.full, due.fromId], [true, 0n], '10 s after the last full pass: from id 0 again')
})

const FLOOR_ENV = {
  OUTBOX_SCAN_LAG_MS: '0',
  OUTBOX_RELAY_INTERVAL_MS: '50',
  OUTBOX_RELAY_DELAY_MS: '0',
  WEBHOOK_POLL_INTERVAL_MS: '50',
}

/**
 * Takes an outbox id now and commits a row with it only once both scans' floors have passed it:
 * a transaction that was open longer than OUTBOX_SCAN_LAG_MS.
 */
async function straggler(t: Parameters<typeof build>[0], env: Record<string, string>) {
  const { app, api } = await build(t, { env: { ...FLOOR_ENV, ...env } })
  const ws = await seedWorkspace(app)
  const channel = await createChannelId(api, ws.primary.key, 'floor')
  const { pool } = app.db
  const reserved = BigInt((await pool.query<{ id: string }>("SELECT nextval('outbox_events_id_seq')::text AS id")).rows[0]!.id)
  await eventually(
    async () => {
      await post(api, ws.primary.key, channel, 'moves the floors')
      return app.deliveries!.unplanned.value > reserved && app.realtime.relay.unpublished.value > reserved
    },
    'both floors to pass the reserved id',
    50,
  )
  const eventId = randomUUID()
  await pool.query(
    `INSERT INTO outbox_events (id, event_id, type, channel_id, payload, occurred_at)
     SELECT $1, $2, type, channel_id, payload, occurred_at FROM outbox_events WHERE type = 'message.created' LIMIT 1`,
    [reserved.toString(), eventId],
  )
  const marks = async () => (await pool.query<{ planned_at: Date | null; published_at: Date | null }>('SELECT planned_at, published_at FROM outbox_events WHERE event_id = $1', [eventId])).rows[0]!
  return { app, marks }
}

t.test('a row committed below the floors is planned and relayed by the next full scan', async (t) => {
  const { marks } = await straggler(t, { OUTBOX_FULL_SCAN_MS: '1000' })
  const row = await eventually(async () => {
    const m = await marks()
    return m.planned_at && m.published_at ? m : null
  }, 'the full scans to find the row')
  t.ok(row.planned_at, 'planned')
  t.ok(row.published_at, 'relayed')
})

t.test('between full scans the planner and the sweeper do not look below their floors', async (t) => {
  const { app, marks } = await straggler(t, { OUTBOX_FULL_SCAN_MS: '600000' })
  await app.deliveries!.planner.kick()
  await app.realtime.relay.sweep()
  t.same(await marks(), { planned_at: null, published_at: null }, 'the row waits for the full scan')
})

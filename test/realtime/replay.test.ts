// Replay after reconnect (?since=), the explicit resync_required, and the same log over REST,
// in single-node mode and through Redis.
import t from 'tap'
import { needsRedis } from '../setup/services.ts'
import { build } from '../helper.ts'
import { connect, listen, untilLogged } from './helpers.ts'
import { eventually } from '../support/wait.ts'
import { bearer, createChannelId, CURSOR_RE, disableLoopGuard, post, seedWorkspace } from '../support/index.ts'

for (const redis of [false, true]) {
  const mode = redis ? 'Redis' : 'single-node'

  t.test(`${mode}: a client reconnecting with since gets what it missed, then live, nothing twice`, { skip: redis && needsRedis() }, async (t) => {
    const { app, api } = await build(t, { redis })
    const ws = await seedWorkspace(app)
    await listen(app)
    const [a1] = ws.agents
    const channel = await createChannelId(api, ws.primary.key, 'replay', [a1!.id])
    const hidden = await createChannelId(api, ws.primary.key, 'hidden')

    const first = await connect(app, a1!.key)
    const m1 = await post(api, ws.primary.key, channel, 'm1')
    const f1 = await first.client.type('new_message')
    t.equal(f1.message.id, m1.id)
    await first.client.close()

    // Missed while away: two messages here, one in a channel the agent is not in.
    const m2 = await post(api, ws.primary.key, channel, 'm2')
    await post(api, ws.primary.key, hidden, 'not for a1')
    const m3 = await post(api, ws.primary.key, channel, 'm3')
    await untilLogged(api, a1!.key, f1.cursor, m3.id)

    const again = await connect(app, a1!.key, { since: f1.cursor })
    t.equal(again.ready.replayed, 2)
    const replayed = again.client.events()
    t.same(
      replayed.map((f) => f.message?.id),
      [m2.id, m3.id],
      'the missed events, in order, before ready',
    )
    t.ok(again.client.frames.indexOf(again.ready) === 2, 'ready follows the replay')
    t.equal(again.ready.cursor, replayed[1]!.cursor)

    const m4 = await post(api, ws.primary.key, channel, 'm4')
    t.equal((await again.client.type('new_message', (f) => f.message.id === m4.id)).message.text, 'm4')
    const ids = again.client.events().map((f) => f.event_id)
    t.equal(new Set(ids).size, ids.length)
    t.notOk(again.client.frames.some((f) => f.channel_id === hidden))
    await again.client.close()
  })

  t.test(`${mode}: replay and live hand over without gap or duplicate while messages keep coming`, { skip: redis && needsRedis() }, async (t) => {
    const { app, api } = await build(t, { redis })
    const ws = await seedWorkspace(app)
    await disableLoopGuard(app) // many agent messages in a row: not what this tests
    await listen(app)
    const [a1] = ws.agents
    const channel = await createChannelId(api, ws.primary.key, 'busy', [a1!.id])
    const probe = await connect(app, a1!.key)
    const since = probe.ready.cursor as string
    await probe.client.close()

    const posted: string[] = []
    const posting = (async () => {
      for (let i = 0; i < 40; i++) posted.push((await post(api, ws.primary.key, channel, `n${i}`)).id)
    })()
    // Connect while the posts are in flight.
    const { client } = await connect(app, a1!.key, { since })
    await posting
    const last = posted[posted.length - 1]
    await client.type('new_message', (f) => f.message.id === last)
    const received = client
      .events()
      .filter((f) => f.type === 'new_message')
      .map((f) => f.message.id)
    t.same(received, posted, 'every message exactly once, in order')
    await client.close()
  })

  t.test(`${mode}: a cursor the log does not hold gets resync_required, then live events`, { skip: redis && needsRedis() }, async (t) => {
    const { app, api } = await build(t, { redis })
    const ws = await seedWorkspace(app)
    await listen(app)
    const channel = await createChannelId(api, ws.primary.key, 'resync')
    const future = await connect(app, ws.primary.key, { since: '99999999999999-0' })
    const resync = future.client.frames[0]!
    t.same(Object.keys(resync).sort(), ['cursor', 'error', 'type'])
    t.equal(resync.type, 'resync_required')
    t.match(resync.cursor, CURSOR_RE)
    t.equal(future.ready.cursor, resync.cursor)
    t.equal(future.ready.replayed, 0)
    const m = await post(api, ws.primary.key, channel, 'live after resync')
    t.equal((await future.client.type('new_message')).message.id, m.id)
    await future.client.close()
  })
}

t.test('since may be a bare integer N, read as the cursor N-0; garbage is still a 400', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const channel = await createChannelId(api, ws.primary.key, 'bare')
  for (let i = 0; i < 3; i++) await post(api, ws.primary.key, channel, `b${i}`)
  const log = (await api({ method: 'GET', url: '/api/v1/events', headers: bearer(ws.primary.key) })).json()
  const ms = (log.events[1].cursor as string).split('-')[0]!
  const bare = await api({ method: 'GET', url: `/api/v1/events?since=${ms}`, headers: bearer(ws.primary.key) })
  t.equal(bare.statusCode, 200)
  t.same(bare.json(), (await api({ method: 'GET', url: `/api/v1/events?since=${ms}-0`, headers: bearer(ws.primary.key) })).json(), `since=${ms} is since=${ms}-0`)

  // The in-process log begins at this process's start: 0 is before it.
  const zero = await api({ method: 'GET', url: '/api/v1/events?since=0', headers: bearer(ws.primary.key) })
  t.same(zero.json(), { events: [], next_cursor: log.next_cursor, has_more: false, resync_required: true })
  const socket = await connect(app, ws.primary.key, { since: '0' })
  t.match(socket.client.frames[0], { type: 'resync_required', cursor: log.next_cursor })
  t.match(socket.ready, { cursor: log.next_cursor, replayed: 0 })
  await socket.client.close()

  for (const since of ['abc', '-1', '1.5', '1-', '1-2-3', '']) {
    const bad = await api({ method: 'GET', url: `/api/v1/events?since=${since}`, headers: bearer(ws.primary.key) })
    t.equal(bad.statusCode, 400, `since=${since}`)
    t.equal(bad.json().code, 'VALIDATION_ERROR')
  }
})

t.test('Redis: since=0 replays the whole log while it is complete, resync_required once it was trimmed', { skip: needsRedis() }, async (t) => {
  const { app, api } = await build(t, { redis: true, env: { EVENT_RETENTION: '100' } })
  const ws = await seedWorkspace(app)
  await disableLoopGuard(app) // many agent messages in a row: not what this tests
  await listen(app)
  const channel = await createChannelId(api, ws.primary.key, 'from-zero')
  const m1 = await post(api, ws.primary.key, channel, 'z1')

  const all = (await api({ method: 'GET', url: '/api/v1/events', headers: bearer(ws.primary.key) })).json()
  const zero = (await api({ method: 'GET', url: '/api/v1/events?since=0', headers: bearer(ws.primary.key) })).json()
  t.equal(zero.resync_required, false, 'nothing was trimmed: 0 is within the history')
  t.same(zero, all, 'since=0 reads what no since reads: the whole log')
  const replay = await connect(app, ws.primary.key, { since: '0' })
  t.same(
    replay.client.events().map((f) => f.event_id),
    all.events.map((e: { event_id: string }) => e.event_id),
    'the whole visible log, before ready',
  )
  t.equal(replay.ready.replayed, all.events.length)
  t.ok(replay.client.events().some((f) => f.message?.id === m1.id))
  await replay.client.close()

  // Approximate MAXLEN drops whole stream nodes (100 entries each): go well past two of them.
  for (let i = 0; i < 230; i++) await post(api, ws.primary.key, channel, `fill ${i}`)
  // A post answers once committed; the relay appends its event a moment later. Read the log's
  // end once every event is in it (the relay marks a row published after appending it): a run in
  // a fresh clone read it while the last events were still on their way.
  await eventually(
    async () => ((await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL')).rows[0]!.n === 0 ? true : null),
    'every event appended to the log',
  )
  const info = await app.realtime.broker.info()
  t.not(info.floor, '0-0', 'the log was trimmed')
  const late = (await api({ method: 'GET', url: '/api/v1/events?since=0', headers: bearer(ws.primary.key) })).json()
  t.same(late, { events: [], next_cursor: info.newest, has_more: false, resync_required: true })
  const resync = await connect(app, ws.primary.key, { since: '0' })
  t.match(resync.client.frames[0], { type: 'resync_required', cursor: info.newest })
  t.equal(resync.client.events().length, 0, 'no partial replay')
  await resync.client.close()
  // The same for a real cursor whose successors were trimmed (MAXLEN does not move Redis's own
  // max-deleted-entry-id, so the broker derives the floor from the first retained entry).
  const m1Cursor = all.events.find((e: { message?: { id: string } }) => e.message?.id === m1.id).cursor as string
  const stale = (await api({ method: 'GET', url: `/api/v1/events?since=${m1Cursor}`, headers: bearer(ws.primary.key) })).json()
  t.equal(stale.resync_required, true, 'a trimmed cursor is reported, not silently skipped')
  const kept = (await api({ method: 'GET', url: '/api/v1/events?limit=1', headers: bearer(ws.primary.key) })).json()
  t.equal(kept.resync_required, false)
  t.match(kept.events[0].message.text, /^fill /, 'reading from the floor starts at the first retained event')
  const fromKept = (await api({ method: 'GET', url: `/api/v1/events?since=${kept.events[0].cursor}&limit=1`, headers: bearer(ws.primary.key) })).json()
  t.equal(fromKept.resync_required, false, 'a retained cursor still replays')
})

t.test('single-node: a cursor older than the retained history gets resync_required', async (t) => {
  const { app, api } = await build(t, { env: { EVENT_RETENTION: '100' } })
  const ws = await seedWorkspace(app)
  await disableLoopGuard(app) // many agent messages in a row: not what this tests
  await listen(app)
  // Before this process started: the in-process log cannot hold it.
  const old = await connect(app, ws.primary.key, { since: '1-0' })
  t.equal(old.client.frames[0]!.type, 'resync_required')
  await old.client.close()

  const channel = await createChannelId(api, ws.primary.key, 'trimmed')
  const start = await connect(app, ws.primary.key)
  const since = start.ready.cursor as string
  await start.client.close()
  for (let i = 0; i < 110; i++) await post(api, ws.primary.key, channel, `t${i}`)
  const late = await connect(app, ws.primary.key, { since })
  t.equal(late.client.frames[0]!.type, 'resync_required', 'the first missed events were dropped from the log')
  t.equal(late.client.events().length, 0, 'no partial replay')
  await late.client.close()

  const rest = await api({ method: 'GET', url: `/api/v1/events?since=${since}`, headers: bearer(ws.primary.key) })
  t.equal(rest.statusCode, 200)
  t.match(rest.json(), { events: [], resync_required: true, has_more: false, next_cursor: CURSOR_RE })
})

t.test('GET /api/v1/events: the same filtered log over REST, paged by cursor', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1, a2] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'polled', [a1!.id])
  const { client } = await connect(app, a1!.key)
  const messages: Awaited<ReturnType<typeof post>>[] = []
  for (let i = 0; i < 5; i++) messages.push(await post(api, ws.primary.key, channel, `p${i}`))
  await client.type('new_message', (f) => f.message.id === messages[4]!.id)
  const pushed = client.events()

  const all = await api({ method: 'GET', url: '/api/v1/events', headers: bearer(a1!.key) })
  t.equal(all.statusCode, 200)
  const body = all.json()
  t.same(Object.keys(body).sort(), ['events', 'has_more', 'next_cursor', 'resync_required'])
  t.equal(body.resync_required, false)
  t.equal(body.has_more, false)
  const fromLog = body.events.filter((e: { channel_id: string; type: string }) => e.channel_id === channel && e.type === 'new_message')
  t.same(fromLog, pushed, 'identical frames, cursors and event ids as the WebSocket pushed')
  t.equal(body.next_cursor, body.events[body.events.length - 1].cursor)

  // Paging: two at a time from the first message's cursor.
  let since = pushed.find((f) => f.type === 'new_message')!.cursor as string
  const paged: string[] = []
  for (let guard = 0; guard < 10; guard++) {
    const page = (await api({ method: 'GET', url: `/api/v1/events?since=${since}&limit=2`, headers: bearer(a1!.key) })).json()
    t.ok(page.events.length <= 2)
    paged.push(...page.events.map((e: { message: { id: string } }) => e.message.id))
    since = page.next_cursor
    if (!page.has_more) break
  }
  t.same(
    paged,
    messages.slice(1).map((m) => m.id),
  )
  const empty = (await api({ method: 'GET', url: `/api/v1/events?since=${since}`, headers: bearer(a1!.key) })).json()
  t.same(empty, { events: [], next_cursor: since, has_more: false, resync_required: false }, 'at the end: nothing, same cursor')

  const outsider = (await api({ method: 'GET', url: '/api/v1/events', headers: bearer(a2!.key) })).json()
  t.notOk(
    outsider.events.some((e: { channel_id: string }) => e.channel_id === channel),
    'non-members see none of it',
  )
  const human = await api({ method: 'GET', url: '/api/v1/events?limit=1', headers: bearer(ws.member.token) })
  t.equal(human.statusCode, 200, 'humans may read their log too')

  t.equal((await api({ method: 'GET', url: '/api/v1/events' })).statusCode, 401)
  const bad = await api({ method: 'GET', url: '/api/v1/events?since=yesterday', headers: bearer(a1!.key) })
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().code, 'VALIDATION_ERROR')
  for (const limit of ['0', '501', 'x']) t.equal((await api({ method: 'GET', url: `/api/v1/events?limit=${limit}`, headers: bearer(a1!.key) })).statusCode, 400)
  t.equal((await api({ method: 'GET', url: '/api/v1/events?since=99999999999999-0', headers: bearer(a1!.key) })).json().resync_required, true)
  await client.close()
})

// GET /api/v1/events/stream over real HTTP: live events, keep-alive comments, resuming with
// Last-Event-ID (or since) without gap or duplicate, resync_required, the membership rules.
// Credentials, limits and shutdown: sse-access.test.ts; two instances: sse-cluster.test.ts.
import t from 'tap'
import { build } from '../helper.ts'
import { connect, listen } from './helpers.ts'
import { baseUrl, openStream } from './sse-client.ts'
import { addMember, bearer, createChannelId, CURSOR_RE, disableLoopGuard, post, removeMember, seedWorkspace } from '../support/index.ts'

t.test('live events arrive as id/event/data, after ready, with keep-alive comments', async (t) => {
  const { app, api } = await build(t, { env: { SSE_KEEPALIVE_MS: '100' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const [a1] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'sse-live', [a1!.id])

  const { stream, ready } = await openStream(base, a1!.key)
  t.equal(stream.response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  t.equal(stream.response.headers.get('cache-control'), 'no-cache, no-transform')
  t.match(stream.response.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
  t.same(ready, { type: 'ready', cursor: ready.cursor, replayed: 0, principal: { id: a1!.id, type: 'AGENT', name: a1!.name } })
  t.match(ready.cursor, CURSOR_RE)
  t.equal(stream.events[0]!.id, ready.cursor, 'ready carries its cursor as the event id')

  const socket = await connect(app, a1!.key)
  const message = await post(api, ws.primary.key, channel, 'hello over SSE')
  const event = await stream.next((e) => e.event === 'new_message')
  t.same(event.data.message, message, 'data is the REST message object inside the frame')
  t.equal(event.id, event.data.cursor)
  const frame = await socket.client.type('new_message')
  t.same(event.data, frame, 'the same JSON as the WebSocket frame')
  const page = (await api({ method: 'GET', url: `/api/v1/events?since=${ready.cursor}`, headers: bearer(a1!.key) })).json()
  t.same(page.events, [frame], 'and as the REST event entry')

  await stream.comment()
  t.ok(stream.comments.includes('keep-alive'), 'a keep-alive comment arrived')
  t.same(stream.violations, [])
  await socket.client.close()
  await stream.close()
})

t.test('Last-Event-ID resumes without gap or duplicate while messages keep coming; since does the same; the header wins', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await disableLoopGuard(app) // 40 agent messages in a row: not what this tests
  await listen(app)
  const base = baseUrl(app)
  const [a1] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'sse-resume', [a1!.id])
  const hidden = await createChannelId(api, ws.primary.key, 'sse-hidden')

  const first = await openStream(base, a1!.key)
  const m1 = await post(api, ws.primary.key, channel, 'm1')
  const e1 = await first.stream.next((e) => e.data.message?.id === m1.id)
  await first.stream.close()

  // Missed while away, one of them in a channel the agent is not in.
  const m2 = await post(api, ws.primary.key, channel, 'm2')
  await post(api, ws.primary.key, hidden, 'not for a1')
  const m3 = await post(api, ws.primary.key, channel, 'm3')

  const again = await openStream(base, a1!.key, { lastEventId: e1.id, since: '0' })
  t.equal(again.ready.replayed, 2, 'Last-Event-ID wins over since (since=0 would ask for a resync)')
  t.same(
    again.stream.logEvents().map((f) => f.message?.id),
    [m2.id, m3.id],
    'the missed events, in order, before ready',
  )
  t.equal(again.ready.cursor, again.stream.logEvents()[1]!.cursor)
  await again.stream.close()

  const bySince = await openStream(base, a1!.key, { since: e1.id })
  t.same(
    bySince.stream.logEvents().map((f) => f.message?.id),
    [m2.id, m3.id],
    '?since= replays the same',
  )
  await bySince.stream.close()

  // Reconnect while posts are in flight: every message exactly once, in order.
  const probe = await openStream(base, a1!.key)
  const since = probe.ready.cursor as string
  await probe.stream.close()
  const posted: string[] = []
  const posting = (async () => {
    for (let i = 0; i < 40; i++) posted.push((await post(api, ws.primary.key, channel, `n${i}`)).id)
  })()
  const { stream } = await openStream(base, a1!.key, { lastEventId: since })
  await posting
  await stream.type('new_message', (f) => f.message.id === posted[posted.length - 1])
  t.same(
    stream.logEvents().map((f) => f.message.id),
    posted,
    'replay and live hand over without gap or duplicate',
  )
  t.notOk(stream.events.some((e) => e.data.channel_id === hidden))
  t.same(stream.violations, [])
  await stream.close()
})

t.test('a cursor the log does not hold gets resync_required (id = the newest cursor), then ready and live events', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const channel = await createChannelId(api, ws.primary.key, 'sse-resync')

  // In single-node mode the log starts at this process's start: 0 is older than it.
  for (const params of [{ since: '0' }, { lastEventId: '99999999999999-0' }]) {
    const newest = (await api({ method: 'GET', url: '/api/v1/events', headers: bearer(ws.primary.key) })).json().next_cursor as string
    const { stream, ready } = await openStream(base, ws.primary.key, params)
    const resync = stream.events[0]!
    t.equal(resync.event, 'resync_required', JSON.stringify(params))
    t.same(Object.keys(resync.data).sort(), ['cursor', 'error', 'type'])
    t.equal(resync.data.cursor, newest)
    t.equal(resync.id, newest, 'a reconnect after it resumes from the newest cursor')
    t.match(ready, { type: 'ready', cursor: newest, replayed: 0 })
    const m = await post(api, ws.primary.key, channel, `live after resync ${JSON.stringify(params)}`)
    t.equal((await stream.type('new_message')).message.id, m.id)
    t.equal(stream.logEvents().length, 1, 'no partial replay')
    await stream.close()
  }
})

t.test('a non-member sees nothing of a channel; added, it starts seeing it; removed, it stops', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const [a1, a2] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'sse-members', [a1!.id])

  const outsider = await openStream(base, a2!.key)
  const insider = await openStream(base, a1!.key)
  const before = await post(api, ws.primary.key, channel, 'before a2 joins')
  await insider.stream.type('new_message', (f) => f.message.id === before.id)

  await addMember(api, ws.primary.key, channel, a2!.id)
  const joined = await outsider.stream.type('member_joined')
  t.match(joined, { channel_id: channel, member_id: a2!.id, member_type: 'AGENT' })
  const during = await post(api, ws.primary.key, channel, 'while a2 is a member')
  t.equal((await outsider.stream.type('new_message')).message.id, during.id)

  await removeMember(api, ws.primary.key, channel, a2!.id)
  t.match(await outsider.stream.type('member_left'), { channel_id: channel, member_id: a2!.id })
  const after = await post(api, ws.primary.key, channel, 'after a2 left')
  await insider.stream.type('new_message', (f) => f.message.id === after.id)
  // A marker in a channel a2 still sees: everything before it has been delivered.
  const own = await createChannelId(api, a2!.key, 'a2-own')
  const marker = await post(api, a2!.key, own, 'marker')
  await outsider.stream.type('new_message', (f) => f.message.id === marker.id)

  const seen = outsider.stream.logEvents().filter((f) => f.channel_id === channel)
  t.same(
    seen.map((f) => f.type),
    ['member_joined', 'new_message', 'member_left'],
    'nothing before joining, nothing after leaving',
  )
  t.notOk(outsider.stream.events.some((e) => e.data.message?.id === before.id || e.data.message?.id === after.id))

  // Replay obeys the same rule: the history after a2's first event shows only what it may see now.
  const replay = await openStream(base, a2!.key, { lastEventId: outsider.ready.cursor })
  t.notOk(
    replay.stream.logEvents().some((f) => f.channel_id === channel && f.type === 'new_message'),
    'no message of the channel it left',
  )
  t.same(outsider.stream.violations, [])
  for (const s of [outsider.stream, insider.stream, replay.stream]) await s.close()
})

// One filter vocabulary on every transport (docs/realtime.md, "Filters"): `only=addressed`
// delivers a mention, a DM, a reply in the caller's thread and a reaction to its message, and
// nothing from its own posts, from chatter, from a channel it is not in, or from a channel it has
// left; `include_own_messages=false` leaves its own posts out; `since=now` skips the history.
// Over GET /api/v1/events (plain and long poll), the SSE stream, /ws and MCP wait_for_events.
import t from 'tap'
import { connectClient, call, structured } from '../mcp/helpers.ts'
import { bearer, build, seedWorkspace } from '../support/index.ts'
import { brief, expectedAddressed, playScenario, scenarioChannels } from './addressed-scenario.ts'
import { connect, listen, refusedUpgrade, wsUrl } from './helpers.ts'
import { baseUrl, SseClient, streamUrl } from './sse-client.ts'

t.test('only=addressed and include_own_messages=false over the REST log, SSE, WebSocket and MCP', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const channels = await scenarioChannels(api, ws)
  const me = ws.agents[0]!
  const start = (await api({ method: 'GET', url: '/api/v1/events?since=now', headers: bearer(me.key) })).json().next_cursor as string
  const s = await playScenario(api, ws, channels)
  const expected = expectedAddressed(s)

  // REST log.
  const addressed = await api({ method: 'GET', url: `/api/v1/events?since=${start}&only=addressed`, headers: bearer(me.key) })
  t.equal(addressed.statusCode, 200)
  t.same(addressed.json().events.map(brief), expected, 'REST: the addressed events only, in order')
  const noOwn = (await api({ method: 'GET', url: `/api/v1/events?since=${start}&include_own_messages=false`, headers: bearer(me.key) })).json()
  const ownIds = new Set([s.own.id])
  t.notOk(
    noOwn.events.some((e: any) => e.type === 'new_message' && ownIds.has(e.message.id)),
    'REST: no own message',
  )
  t.ok(
    noOwn.events.some((e: any) => e.type === 'new_message' && e.message.text === 'hello everyone'),
    'REST: chatter stays without only',
  )
  t.notOk(
    noOwn.events.some((e: any) => e.message?.id === s.afterLeaving.id),
    'REST: nothing from the channel it left',
  )
  const mentions = (await api({ method: 'GET', url: `/api/v1/events?since=${start}&only=mentions`, headers: bearer(me.key) })).json()
  t.same(mentions.events.map(brief), [['message_mentioned', s.mention.id]], 'REST: only=mentions')

  // Long poll: the same page (the events are there already).
  const polled = await api({ method: 'GET', url: `/api/v1/events?since=${start}&only=addressed&include_own_messages=false&wait=5`, headers: bearer(me.key) })
  t.same(polled.json().events.map(brief), expected, 'long poll: the same')

  // SSE replay from the cursor.
  const sse = await SseClient.open(streamUrl(baseUrl(app), { since: start, only: 'addressed' }), bearer(me.key))
  const ready = await sse.type('ready')
  t.equal(ready.replayed, expected.length)
  t.same(sse.logEvents().map(brief), expected, 'SSE: the same')
  await sse.close()

  // WebSocket replay from the cursor.
  const { client, ready: wsReady } = await connect(app, me.key, { since: start, only: 'addressed' })
  t.equal(wsReady.replayed, expected.length)
  t.same(client.events().map(brief), expected, 'WebSocket: the same')
  await client.close()

  // MCP.
  const mcp = await connectClient(t, baseUrl(app), me.key)
  const waited = structured(await call(mcp.client, 'wait_for_events', { cursor: start, only: 'addressed', timeout_seconds: 0 }))
  t.same(waited.events.map(brief), expected, 'MCP wait_for_events: the same')
})

t.test('since=now skips the history on every transport, and live addressed events follow', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const channels = await scenarioChannels(api, ws)
  const me = ws.agents[0]!
  await playScenario(api, ws, channels) // history

  const newest = (await api({ method: 'GET', url: '/api/v1/events', headers: bearer(me.key) })).json()
  const now = await api({ method: 'GET', url: '/api/v1/events?since=now', headers: bearer(me.key) })
  t.equal(now.statusCode, 200)
  t.same(now.json(), { events: [], next_cursor: now.json().next_cursor, has_more: false, resync_required: false })
  t.ok(now.json().next_cursor >= newest.next_cursor, 'the current cursor')

  const sse = await SseClient.open(streamUrl(baseUrl(app), { since: 'now', only: 'addressed' }), bearer(me.key))
  const sseReady = await sse.type('ready')
  t.equal(sseReady.replayed, 0)
  const { client, ready } = await connect(app, me.key, { since: 'now', only: 'addressed' })
  t.equal(ready.replayed, 0)
  const mcp = await connectClient(t, baseUrl(app), me.key)
  const mcpWait = call(mcp.client, 'wait_for_events', { cursor: 'now', only: 'addressed', timeout_seconds: 30 })
  const polled = api({ method: 'GET', url: '/api/v1/events?since=now&only=addressed&wait=30', headers: bearer(me.key) })
  for (let i = 0; i < 500 && (app.eventStreams.open.polls < 1 || app.mcp.inbox.size < 1); i++) await new Promise((r) => setTimeout(r, 10))

  // Chatter first (must not wake anyone), then a mention.
  const chatter = await api({ method: 'POST', url: `/api/v1/channels/${channels.room}/messages`, headers: bearer(ws.primary.key), payload: { text: 'chatter' } })
  t.equal(chatter.statusCode, 201)
  const mention = (await api({ method: 'POST', url: `/api/v1/channels/${channels.room}/messages`, headers: bearer(ws.primary.key), payload: { text: `@${me.name} live` } })).json()
  t.same(brief(await sse.type('new_message')), ['new_message', mention.id], 'SSE: live mention, not the chatter')
  t.same(brief(await client.type('new_message')), ['new_message', mention.id], 'WS: live mention, not the chatter')
  t.same((await polled).json().events.map(brief), [['new_message', mention.id]], 'long poll: the mention')
  t.same(structured(await mcpWait).events.map(brief), [['new_message', mention.id]], 'MCP: the mention')
  t.same(sse.logEvents().map(brief), [['new_message', mention.id]])
  t.same(client.events().map(brief), [['new_message', mention.id]])
  await sse.close()
  await client.close()
})

t.test('invalid filters and cursors answer 400 {error, code}', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  for (const params of [{ only: 'everything' }, { since: 'later' }, { include_own_messages: 'maybe' }]) {
    const refused = await refusedUpgrade(wsUrl(app, { token: ws.primary.key, ...params }))
    t.equal(refused.status, 400, `/ws ${JSON.stringify(params)}`)
    t.same(Object.keys(refused.body as object).sort(), ['code', 'error'])
  }
  const mcp = await connectClient(t, baseUrl(app), ws.primary.key)
  for (const args of [{ only: 'everything' }, { cursor: 'later' }, { include_own_messages: 'no' }]) {
    const res = await call(mcp.client, 'wait_for_events', { ...args, timeout_seconds: 0 })
    t.equal(res.isError, true, `MCP ${JSON.stringify(args)}`)
    t.equal(structured(res).code, 'VALIDATION_ERROR')
  }
  for (const query of ['only=everything', 'include_own_messages=maybe', 'since=later', 'since=now-1']) {
    for (const path of ['/api/v1/events', '/api/v1/events/stream']) {
      const res = await api({ method: 'GET', url: `${path}?${query}`, headers: bearer(ws.primary.key) })
      t.equal(res.statusCode, 400, `${path}?${query}`)
      t.same(Object.keys(res.json()).sort(), ['code', 'error'])
    }
  }
})

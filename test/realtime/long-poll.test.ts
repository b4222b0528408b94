// GET /api/v1/events?wait=: long polling over real HTTP. The request answers as soon as an event
// the caller may see arrives (an event it may not see does not wake it), or with an empty page
// and the same cursor at the deadline; bounded per caller; answered at once on shutdown; 401 when
// the credential is revoked while waiting.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build } from '../helper.ts'
import { listen } from './helpers.ts'
import { buildBehindProxy } from '../pg-proxy.ts'
import { assertDocumented, baseUrl } from './sse-client.ts'
import { addMember, bearer, createChannelId, post, seedWorkspace } from '../support/index.ts'

interface Answer {
  status: number
  headers: Headers

  body: any
}

/** A GET over real HTTP, checked against the OpenAPI document. */
async function get(url: string, token: string): Promise<Answer> {
  const res = await fetch(url, { headers: bearer(token) })
  const text = await res.text()
  assertDocumented('GET', url, res, text)
  return { status: res.status, headers: res.headers, body: JSON.parse(text) }
}

/** Where the log ends now, read over real HTTP (so the OpenAPI example captured is the long poll's). */
async function newest(app: FastifyInstance, token: string): Promise<string> {
  return (await get(`${baseUrl(app)}/api/v1/events`, token)).body.next_cursor as string
}

/** Resolves once `n` requests are parked on this instance (they then wait for an event). */
async function parked(app: { eventStreams: { open: { polls: number } } }, n: number): Promise<void> {
  for (let i = 0; i < 2_000 && app.eventStreams.open.polls < n; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  if (app.eventStreams.open.polls < n) throw new Error(`${n} long poll(s) never parked`)
}

t.test('a waiting request answers with the first event the caller may see, not with one it may not', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const [a1] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'poll-live', [a1!.id])
  const hidden = await createChannelId(api, ws.primary.key, 'poll-hidden')
  const since = await newest(app, a1!.key)

  // 30 s: answered only because the event woke it (at the deadline the page would be empty).
  const waiting = get(`${base}/api/v1/events?since=${since}&wait=30`, a1!.key)
  await parked(app, 1)
  await post(api, ws.primary.key, hidden, 'not for a1')
  const message = await post(api, ws.primary.key, channel, 'wake up')
  const answer = await waiting
  t.equal(answer.status, 200)
  t.same(
    answer.body.events.map((e: { message?: { id: string } }) => e.message?.id),
    [message.id],
    'only the visible event',
  )
  t.same(answer.body.events[0].message, message)
  t.equal(answer.body.next_cursor, answer.body.events[0].cursor)
  t.same([answer.body.has_more, answer.body.resync_required], [false, false])
  t.equal(app.eventStreams.open.polls, 0, 'the waiter is released')

  // Events already there: answered at once, exactly like without wait.
  const plain = (await get(`${base}/api/v1/events?since=${since}`, a1!.key)).body
  t.same((await api({ method: 'GET', url: `/api/v1/events?since=${since}&wait=30`, headers: bearer(a1!.key) })).json(), plain)
})

t.test('nothing visible before the deadline: an empty page, its cursor where the log was read', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const [a1] = ws.agents
  const hidden = await createChannelId(api, ws.primary.key, 'poll-quiet')
  const since = await newest(app, a1!.key)

  const quiet = await get(`${base}/api/v1/events?since=${since}&wait=0.5`, a1!.key)
  t.equal(quiet.status, 200)
  t.same(quiet.body, { events: [], next_cursor: since, has_more: false, resync_required: false })

  // An event the caller may not see, while it waits: still the empty page at the deadline. Its
  // next_cursor is where the log was read up to (docs/realtime.md): the since given, or past the
  // hidden event when the request's read after parking came after that event was logged (a race
  // a full run lost once).
  const waiting = get(`${base}/api/v1/events?since=${since}&wait=1`, a1!.key)
  await parked(app, 1)
  const message = await post(api, ws.primary.key, hidden, 'not for a1')
  const answer = (await waiting).body
  t.same([answer.events, answer.has_more, answer.resync_required], [[], false, false], 'nothing shown')
  const seen = (await get(`${base}/api/v1/events?since=${since}`, ws.primary.key)).body
  const hiddenCursor = seen.events.find((e: { type: string; message?: { id: string } }) => e.type === 'new_message' && e.message?.id === message.id)?.cursor
  t.ok(hiddenCursor, 'the hidden event is in the log')
  t.ok([since, hiddenCursor].includes(answer.next_cursor), `next_cursor ${answer.next_cursor} is the since given or the hidden event's`)
})

t.test('being added to a channel wakes the waiting request with member_joined', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1] = ws.agents
  const channel = await createChannelId(api, ws.primary.key, 'poll-join')
  const since = await newest(app, a1!.key)
  const waiting = get(`${baseUrl(app)}/api/v1/events?since=${since}&wait=30`, a1!.key)
  await parked(app, 1)
  await addMember(api, ws.primary.key, channel, a1!.id)
  const answer = await waiting
  t.match(answer.body.events, [{ type: 'member_joined', channel_id: channel, member_id: a1!.id }])
})

t.test('wait is 0-30 seconds; resync_required answers at once', async (t) => {
  const { app } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  for (const wait of ['31', '-1', 'soon']) {
    const bad = await get(`${baseUrl(app)}/api/v1/events?wait=${wait}`, ws.primary.key)
    t.equal(bad.status, 400, `wait=${wait}`)
    t.equal(bad.body.code, 'VALIDATION_ERROR')
  }
  const resync = await get(`${baseUrl(app)}/api/v1/events?since=0&wait=30`, ws.primary.key)
  t.equal(resync.body.resync_required, true)
})

t.test('at most EVENTS_MAX_WAITS_PER_CALLER waiting requests per caller: one more gets 429 with Retry-After', async (t) => {
  const { app, api } = await build(t, { env: { EVENTS_MAX_WAITS_PER_CALLER: '1' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const channel = await createChannelId(api, ws.primary.key, 'poll-limit', [ws.agents[0]!.id])
  const since = await newest(app, ws.primary.key)
  const first = get(`${base}/api/v1/events?since=${since}&wait=30`, ws.primary.key)
  await parked(app, 1)
  const second = await get(`${base}/api/v1/events?since=${since}&wait=30`, ws.primary.key)
  t.equal(second.status, 429)
  t.equal(second.headers.get('retry-after'), '1')
  t.equal(second.body.code, 'RATE_LIMITED')
  t.equal((await get(`${base}/api/v1/events?since=${since}`, ws.primary.key)).status, 200, 'a request without wait is not limited')
  const other = get(`${base}/api/v1/events?since=${since}&wait=30`, ws.agents[0]!.key)
  await parked(app, 2)
  t.pass('another caller may wait at the same time')
  const m = await post(api, ws.primary.key, channel, 'release both')
  t.equal((await first).body.events[0].message.id, m.id)
  t.equal((await other).body.events.at(-1).message.id, m.id)

  // A client that gives up frees its slot at once, not at its deadline.
  const now = (await get(`${base}/api/v1/events`, ws.primary.key)).body.next_cursor as string
  const gone = new AbortController()
  const abandoned = fetch(`${base}/api/v1/events?since=${now}&wait=30`, { headers: bearer(ws.primary.key), signal: gone.signal }).catch((error: Error) => error.name)
  await parked(app, 1)
  gone.abort()
  t.equal(await abandoned, 'AbortError')
  for (let i = 0; i < 500 && app.eventStreams.open.polls > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(app.eventStreams.open.polls, 0, 'the abandoned wait was released')
  const again = await get(`${base}/api/v1/events?since=${now}&wait=0.2`, ws.primary.key)
  t.same(again.body, { events: [], next_cursor: now, has_more: false, resync_required: false }, 'and the caller may wait again')
})

t.test('a revoked key answers its waiting request 401', async (t) => {
  const { app, api } = await build(t, { env: { WS_AUTH_RECHECK_MS: '100' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1] = ws.agents
  const since = await newest(app, a1!.key)
  const waiting = get(`${baseUrl(app)}/api/v1/events?since=${since}&wait=30`, a1!.key)
  await parked(app, 1)
  const revoke = await api({ method: 'DELETE', url: `/api/v1/agents/${a1!.id}/keys/${a1!.keyId}`, headers: bearer(ws.owner.token) })
  t.equal(revoke.statusCode, 204)
  const answer = await waiting
  t.equal(answer.status, 401)
  t.equal(answer.body.code, 'UNAUTHORIZED')
})

t.test('shutdown answers waiting requests at once with the empty page and Connection: close', async (t) => {
  const { app } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const since = await newest(app, ws.primary.key)
  const waiting = get(`${baseUrl(app)}/api/v1/events?since=${since}&wait=30`, ws.primary.key)
  await parked(app, 1)
  await app.close()
  const answer = await waiting
  t.equal(answer.status, 200)
  t.same(answer.body, { events: [], next_cursor: since, has_more: false, resync_required: false })
  t.equal(answer.headers.get('connection'), 'close')
})

t.test('a client that leaves before its waiting request is handled frees its slot at once, not at the deadline', async (t) => {
  // The database frozen while the request's key is looked up: the client gives up meanwhile, so
  // the request reaches its handler with the connection already closed.
  const { app, proxy } = await buildBehindProxy(t, { env: { EVENTS_MAX_WAITS_PER_CALLER: '1' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const agent = ws.agents[1]!
  const since = await newest(app, ws.primary.key)
  // Watches the request reach its wait (a spy on the parking, nothing else changed).
  let parkedAt = 0
  const park = app.eventStreams.park.bind(app.eventStreams)
  app.eventStreams.park = (...args) => {
    parkedAt = Date.now()
    return park(...args)
  }

  proxy.freeze()
  const gone = new AbortController()
  const abandoned = fetch(`${base}/api/v1/events?since=${since}&wait=30`, { headers: bearer(agent.key), signal: gone.signal }).catch((error: Error) => error.name)
  await new Promise((resolve) => setTimeout(resolve, 300))
  gone.abort()
  t.equal(await abandoned, 'AbortError')
  await proxy.restore()

  for (let i = 0; i < 1_000 && (!parkedAt || app.eventStreams.open.polls > 0); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.ok(parkedAt, 'the request was handled after its client left')
  t.equal(app.eventStreams.open.polls, 0, 'and let go of its waiting slot within seconds, not at its 30 s deadline')
  const again = await get(`${base}/api/v1/events?since=${since}&wait=0.2`, agent.key)
  t.equal(again.status, 200, 'the caller may wait again at once')
})

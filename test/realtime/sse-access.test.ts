// GET /api/v1/events/stream: the credential (401, revoked while streaming), the per-caller bound
// and shutdown, over real HTTP.
import t from 'tap'
import { build } from '../helper.ts'
import { buildBehindProxy } from '../pg-proxy.ts'
import { listen } from './helpers.ts'
import { assertDocumented, baseUrl, openStream, streamUrl } from './sse-client.ts'
import { bearer, createChannelId, seedWorkspace } from '../support/index.ts'

t.test('credentials: 401 without or with a bad one, 400 for a malformed Last-Event-ID', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const url = streamUrl(baseUrl(app))

  const none = await api({ method: 'GET', url: '/api/v1/events/stream' })
  t.equal(none.statusCode, 401)
  t.equal(none.json().code, 'UNAUTHORIZED')
  for (const headers of [{}, { authorization: 'Bearer svc_nope' }, { authorization: 'Bearer not.a.jwt' }] as Record<string, string>[]) {
    const res = await fetch(url, { headers })
    const body = await res.text()
    t.equal(res.status, 401, JSON.stringify(headers))
    t.equal(JSON.parse(body).code, 'UNAUTHORIZED')
    assertDocumented('GET', url, res, body)
  }
  for (const lastEventId of ['abc', '1-2-3']) {
    const bad = await api({ method: 'GET', url: '/api/v1/events/stream', headers: { ...bearer(ws.primary.key), 'last-event-id': lastEventId } })
    t.equal(bad.statusCode, 400, lastEventId)
    t.equal(bad.json().code, 'VALIDATION_ERROR')
  }
  const badSince = await api({ method: 'GET', url: '/api/v1/events/stream?since=later', headers: bearer(ws.primary.key) })
  t.equal(badSince.statusCode, 400)
  // HEAD would open a stream whose body is never sent: there is no HEAD route, so a known path
  // asked with a method it does not serve: 405 with Allow.
  const head = await app.inject({ method: 'HEAD', url: '/api/v1/events/stream', headers: bearer(ws.primary.key) })
  t.equal(head.statusCode, 405)
  t.equal(head.headers.allow, 'GET')
  t.equal(app.eventStreams.open.streams, 0, 'no stream was opened')
})

t.test('a revoked key, a deleted agent and an expired JWT end their streams with an UNAUTHORIZED error event', async (t) => {
  const { app, api } = await build(t, { env: { WS_AUTH_RECHECK_MS: '100' } })
  const ws = await seedWorkspace(app, 3)
  await listen(app)
  const base = baseUrl(app)
  const [a1, a2, a3] = ws.agents
  const shortJwt = app.jwt.sign({ sub: ws.member.id, typ: 'human' }, { expiresIn: '5s' })
  const expiring = await openStream(base, shortJwt)
  const revoked = await openStream(base, a1!.key)
  const deleted = await openStream(base, a2!.key)
  const kept = await openStream(base, a3!.key)

  const revoke = await api({ method: 'DELETE', url: `/api/v1/agents/${a1!.id}/keys/${a1!.keyId}`, headers: bearer(ws.owner.token) })
  t.equal(revoke.statusCode, 204)
  await app.db.prisma.agent.delete({ where: { id: a2!.id } })
  for (const { stream } of [revoked, deleted, expiring]) {
    await stream.ended
    const last = stream.events.at(-1)!
    t.same(last, { id: undefined, event: 'error', data: { type: 'error', id: null, code: 'UNAUTHORIZED', error: 'credential revoked or expired' } })
  }
  const again = await fetch(streamUrl(base), { headers: bearer(a1!.key) })
  t.equal(again.status, 401, 'reconnecting with the revoked key is refused')
  await again.body?.cancel()
  t.equal(app.eventStreams.open.streams, 1, 'only the valid stream is left')
  const channel = await createChannelId(api, a3!.key, 'still-live')
  t.equal((await kept.stream.type('channel_created')).channel_id, channel, 'a valid key keeps streaming')
  await kept.stream.close()
})

t.test('at most SSE_MAX_STREAMS_PER_CALLER streams per caller: one more gets 429 with Retry-After', async (t) => {
  const { app } = await build(t, { env: { SSE_MAX_STREAMS_PER_CALLER: '2' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const url = streamUrl(base)
  const one = await openStream(base, ws.primary.key)
  const two = await openStream(base, ws.primary.key)
  const third = await fetch(url, { headers: bearer(ws.primary.key) })
  const body = await third.text()
  t.equal(third.status, 429)
  t.equal(third.headers.get('retry-after'), '1')
  t.equal(JSON.parse(body).code, 'RATE_LIMITED')
  assertDocumented('GET', url, third, body)
  const other = await openStream(base, ws.agents[0]!.key)
  t.ok(other.ready, 'another caller is not affected')

  await one.stream.close()
  // The server learns of the close asynchronously: the slot is free once it has.
  while (app.eventStreams.open.streams > 2) await new Promise((resolve) => setTimeout(resolve, 10))
  const replacement = await openStream(base, ws.primary.key)
  t.ok(replacement.ready, 'a closed stream frees its slot')
  for (const s of [two.stream, other.stream, replacement.stream]) await s.close()
})

t.test('shutdown ends open streams cleanly with a comment', async (t) => {
  const { app } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const { stream } = await openStream(baseUrl(app), ws.primary.key)
  await app.close()
  await stream.ended
  t.match(stream.comments.at(-1), /server shutting down/)
  t.equal(app.eventStreams.open.streams, 0)
})

t.test('a stream still being prepared gets no keep-alive, shutdown or revocation bytes before its event-stream head', async (t) => {
  // Its database frozen while the stream loads the caller's channels: keep-alive ticks (every
  // 50 ms) pass meanwhile. Bytes written then would go out under an implicit 200 without
  // `content-type: text/event-stream`, and the real head could no longer be sent.
  const { app, proxy } = await buildBehindProxy(t, { env: { SSE_KEEPALIVE_MS: '50' } })
  const ws = await seedWorkspace(app)
  await listen(app)
  const base = baseUrl(app)
  const agent = ws.agents[1]!
  t.equal((await fetch(`${base}/api/v1/channels`, { headers: bearer(agent.key) })).status, 200, 'the key is looked up (and cached) before the freeze')

  proxy.freeze()
  const opening = openStream(base, agent.key)
  await new Promise((resolve) => setTimeout(resolve, 400))
  t.equal(app.eventStreams.open.streams, 0, 'not yet counted as open while it is prepared')
  await proxy.restore()
  const { stream, ready } = await opening
  t.equal(stream.response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  t.equal(ready.type, 'ready')
  t.equal(stream.events[0]!.event, 'ready', 'ready is the first event')
  await stream.comment()
  t.same(stream.violations, [])
  await stream.close()
})

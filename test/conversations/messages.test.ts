import t from 'tap'
import { setup } from './fixtures/support.ts'
import { addMember, bearer, createChannel, ISO_RE, MESSAGE_KEYS, MISSING, post, UUID_RE } from '../support/index.ts'

t.test('post JSON: 201 with the message object; message.created after commit, in the outbox', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'general')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  c.events.length = 0
  const res = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.a1), payload: { text: 'Hello, world' } })
  t.equal(res.statusCode, 201)
  const m = res.json()
  t.same(Object.keys(m).sort(), MESSAGE_KEYS)
  t.same(m.mentions, [])
  t.match(m.id, UUID_RE)
  t.equal(m.channel_id, ch.id)
  t.equal(m.author_id, c.ws.agents[0]!.id)
  t.equal(m.author_name, 'agent-1')
  t.equal(m.author_type, 'AGENT')
  t.equal(m.text, 'Hello, world')
  t.match(m.created_at, ISO_RE)
  t.equal(m.edited_at, null)
  t.equal(m.in_reply_to_event, null)
  t.equal(m.chain_depth, 1, 'an agent message that names no cause starts a chain')
  t.same(
    c.events.map((e) => [e.type, e.channelId, e.payload]),
    [['message.created', ch.id, { message: m }]],
  )
  const outbox = await c.app.db.prisma.outboxEvent.findFirst({ where: { eventId: c.events[0]!.id } })
  t.same(outbox?.payload, { message: m }, 'the outbox row carries the same message object')

  const human = await post(c.api, c.tok.member, ch.id, 'hi from a human')
  t.equal(human.author_type, 'HUMAN')
  t.equal(human.author_name, 'member')
  const got = await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.member) })
  t.same(got.json(), m)
})

t.test('text rules: blank → 400, longer than MAX_MESSAGE_LENGTH → 400, exactly the maximum → 201; nothing stored on 400', async (t) => {
  const c = await setup(t, { MAX_MESSAGE_LENGTH: '50' })
  const ch = await createChannel(c.api, c.tok.a1, 'rules')
  const url = `/api/v1/channels/${ch.id}/messages`
  for (const payload of [{ text: '' }, { text: '   \n' }, {}, { text: 'x'.repeat(51) }, { text: 'ok', extra: true }, { text: {} }]) {
    const res = await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 40))
    t.equal(res.json().code, 'VALIDATION_ERROR')
  }
  const notJson = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), 'content-type': 'application/json' }, payload: '{"text":' })
  t.equal(notJson.statusCode, 400)
  t.equal(notJson.json().code, 'INVALID_JSON')
  t.equal(await c.app.db.prisma.message.count(), 0)
  t.equal(await c.app.db.prisma.outboxEvent.count({ where: { type: 'message.created' } }), 0)
  t.equal((await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload: { text: 'x'.repeat(50) } })).statusCode, 201)
  t.equal((await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload: { text: '🙂'.repeat(50) } })).statusCode, 201, 'the limit counts characters, not UTF-16 units')
})

t.test('401 on every message route without a credential', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'x')
  const m = await post(c.api, c.tok.a1, ch.id, 'hi')
  for (const [method, url] of [
    ['POST', `/api/v1/channels/${ch.id}/messages`],
    ['GET', `/api/v1/channels/${ch.id}/messages`],
    ['GET', `/api/v1/channels/${ch.id}/messages/${m.id}`],
    ['PATCH', `/api/v1/channels/${ch.id}/messages/${m.id}`],
    ['DELETE', `/api/v1/channels/${ch.id}/messages/${m.id}`],
    ['GET', '/api/v1/messages/search?q=hi'],
    ['GET', `/api/v1/attachments/${MISSING}`],
  ]) {
    const res = await c.api({ method: method, url: url!, payload: method === 'POST' || method === 'PATCH' ? { text: 'x' } : undefined })
    t.equal(res.statusCode, 401, `${method} ${url}`)
    t.equal(res.json().code, 'UNAUTHORIZED')
  }
})

t.test('a non-member gets 404 on read, post, edit, delete, members and search; nothing changes', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'private')
  const m = await post(c.api, c.tok.a1, ch.id, 'secret plans')
  const base = `/api/v1/channels/${ch.id}`
  for (const token of [c.tok.a2, c.tok.member, c.tok.observer, c.tok.primary]) {
    const cases: [string, string, unknown][] = [
      ['GET', `${base}/messages`, undefined],
      ['GET', `${base}/messages/${m.id}`, undefined],
      ['POST', `${base}/messages`, { text: 'intrude' }],
      ['PATCH', `${base}/messages/${m.id}`, { text: 'changed' }],
      ['DELETE', `${base}/messages/${m.id}`, undefined],
      ['GET', `${base}/members`, undefined],
      ['GET', `/api/v1/messages/search?q=secret&channel_id=${ch.id}`, undefined],
    ]
    for (const [method, url, payload] of cases) {
      const res = await c.api({ method: method, url, headers: bearer(token), payload: payload as object })
      t.equal(res.statusCode, 404, `${method} ${url}`)
      t.equal(res.json().code, 'NOT_FOUND')
    }
    const search = await c.api({ method: 'GET', url: '/api/v1/messages/search?q=secret', headers: bearer(token) })
    t.same(search.json(), { results: [] }, 'search without a filter finds nothing in channels one is not in')
  }
  t.equal(await c.app.db.prisma.message.count(), 1)
  const still = await c.app.db.prisma.message.findUnique({ where: { id: m.id } })
  t.equal(still?.text, 'secret plans')
  t.equal(still?.editedAt, null)
  // Unknown channel and unknown message: the same 404.
  t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${MISSING}/messages`, headers: bearer(c.tok.a1), payload: { text: 'x' } })).statusCode, 404)
  t.equal((await c.api({ method: 'GET', url: `${base}/messages/${MISSING}`, headers: bearer(c.tok.a1) })).statusCode, 404)
})

t.test('observers read but get 403 on post; the owner reads any channel and joins it by posting', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'watched')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.observer.id)
  const m = await post(c.api, c.tok.a1, ch.id, 'hello observers')
  const url = `/api/v1/channels/${ch.id}/messages`
  const read = await c.api({ method: 'GET', url, headers: bearer(c.tok.observer) })
  t.equal(read.statusCode, 200)
  t.same(
    read.json().messages.map((x: any) => x.id),
    [m.id],
  )
  const denied = await c.api({ method: 'POST', url, headers: bearer(c.tok.observer), payload: { text: 'may I?' } })
  t.equal(denied.statusCode, 403)
  t.equal(denied.json().code, 'FORBIDDEN')
  const ownerRead = await c.api({ method: 'GET', url, headers: bearer(c.tok.owner) })
  t.equal(ownerRead.statusCode, 200)
  t.equal(await c.app.db.prisma.channelMember.count({ where: { channelId: ch.id, memberId: c.ws.owner.id } }), 0, 'reading does not join')
  c.events.length = 0
  const ownerPost = await c.api({ method: 'POST', url, headers: bearer(c.tok.owner), payload: { text: 'owner here' } })
  t.equal(ownerPost.statusCode, 201)
  t.equal(ownerPost.json().author_id, c.ws.owner.id)
  t.same(
    c.events.map((e) => e.type),
    ['member.joined', 'message.created'],
    'the first post joins the channel',
  )
  t.equal(await c.app.db.prisma.channelMember.count({ where: { channelId: ch.id, memberId: c.ws.owner.id } }), 1)
  c.events.length = 0
  t.equal((await c.api({ method: 'POST', url, headers: bearer(c.tok.owner), payload: { text: 'again' } })).statusCode, 201)
  t.same(
    c.events.map((e) => e.type),
    ['message.created'],
  )
  // Not in the DMs of others.
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.agents[1]!.id } })).json()
  t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${dm.id}/messages`, headers: bearer(c.tok.owner), payload: { text: 'x' } })).statusCode, 404)
})

t.test('edit: only the author (403 for others), edited_at set, message.updated; bad input 400', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'edits')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.owner.id)
  const m = await post(c.api, c.tok.a1, ch.id, 'frist')
  const url = `/api/v1/channels/${ch.id}/messages/${m.id}`
  t.equal((await c.api({ method: 'PATCH', url, headers: bearer(c.tok.a2), payload: { text: 'hijack' } })).statusCode, 403)
  t.equal((await c.api({ method: 'PATCH', url, headers: bearer(c.tok.owner), payload: { text: 'admin edit' } })).statusCode, 403, 'not even an admin edits')
  for (const payload of [{ text: '' }, {}, { text: 'x', more: 1 }]) {
    t.equal((await c.api({ method: 'PATCH', url, headers: bearer(c.tok.a1), payload })).statusCode, 400)
  }
  c.events.length = 0
  const res = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.a1), payload: { text: 'first' } })
  t.equal(res.statusCode, 200)
  const edited = res.json()
  t.equal(edited.text, 'first')
  t.match(edited.edited_at, ISO_RE)
  t.equal(edited.created_at, m.created_at)
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [['message.updated', { message: edited }]],
  )
  // In another channel's path the message does not exist.
  const other = await createChannel(c.api, c.tok.a1, 'other')
  t.equal((await c.api({ method: 'PATCH', url: `/api/v1/channels/${other.id}/messages/${m.id}`, headers: bearer(c.tok.a1), payload: { text: 'x' } })).statusCode, 404)
})

t.test('delete: the author or an admin; others 403; message.deleted', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'deletes')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.primary.id)
  const a = await post(c.api, c.tok.a1, ch.id, 'one')
  const b = await post(c.api, c.tok.a1, ch.id, 'two')
  const d = await post(c.api, c.tok.a1, ch.id, 'three')
  const url = (id: string): string => `/api/v1/channels/${ch.id}/messages/${id}`
  t.equal((await c.api({ method: 'DELETE', url: url(a.id), headers: bearer(c.tok.a2) })).statusCode, 403)
  c.events.length = 0
  const own = await c.api({ method: 'DELETE', url: url(a.id), headers: bearer(c.tok.a1) })
  t.equal(own.statusCode, 204)
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [['message.deleted', { message_id: a.id, channel_id: ch.id, thread_id: null }]],
  )
  t.equal((await c.api({ method: 'DELETE', url: url(a.id), headers: bearer(c.tok.a1) })).statusCode, 404, 'already gone')
  t.equal((await c.api({ method: 'DELETE', url: url(b.id), headers: bearer(c.tok.owner) })).statusCode, 204, 'the owner (admin) deletes, even without joining')
  t.equal((await c.api({ method: 'DELETE', url: url(d.id), headers: bearer(c.tok.primary) })).statusCode, 204, 'the primary agent is an admin')
  t.equal(await c.app.db.prisma.message.count(), 0)
})

t.test('Idempotency-Key: a retry returns the original response and creates one message; another body 409', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'idem')
  const url = `/api/v1/channels/${ch.id}/messages`
  const headers = { ...bearer(c.tok.a1), 'idempotency-key': 'retry-1' }
  const first = await c.api({ method: 'POST', url, headers, payload: { text: 'exactly once' } })
  c.events.length = 0
  const second = await c.api({ method: 'POST', url, headers, payload: { text: 'exactly once' } })
  t.equal(first.statusCode, 201)
  t.equal(second.statusCode, 201)
  t.same(second.json(), first.json())
  t.same(c.events, [], 'no second event')
  t.equal(await c.app.db.prisma.message.count(), 1)
  const other = await c.api({ method: 'POST', url, headers, payload: { text: 'something else' } })
  t.equal(other.statusCode, 409)
  t.equal(other.json().code, 'IDEMPOTENCY_KEY_REUSED')
  // Keys are per caller: another agent may use the same key.
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  const otherCaller = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a2), 'idempotency-key': 'retry-1' }, payload: { text: 'exactly once' } })
  t.equal(otherCaller.statusCode, 201)
  t.not(otherCaller.json().id, first.json().id)
  // Concurrent retries with one key: still one message.
  const burst = await Promise.all(Array.from({ length: 8 }, () => c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), 'idempotency-key': 'burst' }, payload: { text: 'burst' } })))
  t.same([...new Set(burst.map((r) => r.statusCode))], [201])
  t.equal(new Set(burst.map((r) => r.json().id)).size, 1)
  t.equal(await c.app.db.prisma.message.count({ where: { text: 'burst' } }), 1)
  // A failed request is not remembered: after joining, the same key works.
  const outsider = { ...bearer(c.tok.member), 'idempotency-key': 'later' }
  t.equal((await c.api({ method: 'POST', url, headers: outsider, payload: { text: 'hi' } })).statusCode, 404)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  t.equal((await c.api({ method: 'POST', url, headers: outsider, payload: { text: 'hi' } })).statusCode, 201)
  const badKey = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), 'idempotency-key': 'x'.repeat(256) }, payload: { text: 'hi' } })
  t.equal(badKey.statusCode, 400)
})

t.test('postMessage service (WebSocket / integrations) applies the same rules', async (t) => {
  const { postMessage } = await import('../../src/modules/messages/service.ts')
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'svc')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.observer.id)
  const agent = { kind: 'agent' as const, id: c.ws.agents[0]!.id, name: 'agent-1', displayName: 'agent-1', keyId: '' }
  const m = await postMessage(c.app.ctx, agent, ch.id, { text: 'via service' })
  t.equal(m.author_id, agent.id)
  const list = await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.a1) })
  t.same(list.json().messages[0], m)
  const stranger = { ...agent, id: c.ws.agents[1]!.id, name: 'agent-2', displayName: 'agent-2' }
  await t.rejects(postMessage(c.app.ctx, stranger, ch.id, { text: 'x' }), { code: 'NOT_FOUND' })
  const observer = { kind: 'human' as const, id: c.ws.observer.id, email: 'observer@example.com', displayName: 'observer', role: 'observer' as const, isOwner: false }
  await t.rejects(postMessage(c.app.ctx, observer, ch.id, { text: 'x' }), { code: 'FORBIDDEN' })
  await t.rejects(postMessage(c.app.ctx, agent, ch.id, { text: ' ' }), { code: 'VALIDATION_ERROR' })
})

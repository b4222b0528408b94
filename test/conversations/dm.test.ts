import t from 'tap'
import { setup } from './fixtures/support.ts'
import { bearer, ISO_RE, MISSING, post } from '../support/index.ts'

t.test('POST /dm: 201 creates, 200 returns the same DM in either order; events; messages through the channel endpoints', async (t) => {
  const c = await setup(t)
  const a1 = c.ws.agents[0]!.id
  const member = c.ws.member.id
  c.events.length = 0
  const created = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: member } })
  t.equal(created.statusCode, 201)
  const dm = created.json()
  t.equal(dm.type, 'dm')
  t.same(dm.participants, [a1, member].sort())
  t.same(dm.participant, { id: member, name: 'member', type: 'HUMAN' })
  t.match(dm.created_at, ISO_RE)
  t.same(
    c.events.map((e) => e.type),
    ['channel.created', 'member.joined', 'member.joined'],
  )
  t.match(c.events[0]!.payload, { channel: { id: dm.id, type: 'dm' }, creator_id: a1, creator_type: 'AGENT' })

  const again = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: member } })
  t.equal(again.statusCode, 200)
  t.same(again.json(), dm)
  const reverse = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.member), payload: { participant_id: a1 } })
  t.equal(reverse.statusCode, 200)
  t.equal(reverse.json().id, dm.id)
  t.same(reverse.json().participant, { id: a1, name: 'agent-1', type: 'AGENT' })
  t.equal(await c.app.db.prisma.channel.count({ where: { type: 'dm' } }), 1)

  const m = await post(c.api, c.tok.member, dm.id, 'psst')
  t.equal(m.channel_id, dm.id)
  const read = await c.api({ method: 'GET', url: `/api/v1/channels/${dm.id}/messages`, headers: bearer(c.tok.a1) })
  t.same(
    read.json().messages.map((x: any) => x.text),
    ['psst'],
  )
  // Only the two participants see it, not even the owner.
  for (const token of [c.tok.a2, c.tok.owner, c.tok.observer]) {
    t.equal((await c.api({ method: 'GET', url: `/api/v1/channels/${dm.id}/messages`, headers: bearer(token) })).statusCode, 404)
    t.equal((await c.api({ method: 'GET', url: `/api/v1/channels/${dm.id}`, headers: bearer(token) })).statusCode, 404)
    t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${dm.id}/messages`, headers: bearer(token), payload: { text: 'x' } })).statusCode, 404)
  }
  const detail = await c.api({ method: 'GET', url: `/api/v1/channels/${dm.id}`, headers: bearer(c.tok.member) })
  t.same(detail.json().participants, dm.participants)
  // A DM keeps its two participants and cannot be renamed or deleted.
  t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${dm.id}/members`, headers: bearer(c.tok.a1), payload: { user_id: c.ws.agents[1]!.id } })).statusCode, 403)
  t.equal((await c.api({ method: 'DELETE', url: `/api/v1/channels/${dm.id}/members/${member}`, headers: bearer(c.tok.a1) })).statusCode, 403)
  t.equal((await c.api({ method: 'PATCH', url: `/api/v1/channels/${dm.id}`, headers: bearer(c.tok.a1), payload: { name: 'x' } })).statusCode, 403)
  t.equal((await c.api({ method: 'DELETE', url: `/api/v1/channels/${dm.id}`, headers: bearer(c.tok.a1) })).statusCode, 403)
})

t.test('POST /dm: self 400 SELF_DM, unknown 404, bad input 400, observer 403, no credential 401; nothing stored', async (t) => {
  const c = await setup(t)
  const self = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.agents[0]!.id } })
  t.equal(self.statusCode, 400)
  t.equal(self.json().code, 'SELF_DM')
  const unknown = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: MISSING } })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().code, 'NOT_FOUND')
  const malformed = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: 'abc' } })
  t.same([malformed.statusCode, malformed.json().code], [404, 'NOT_FOUND'], 'an id that is not a UUID is an unknown id')
  for (const payload of [{}, { participant_id: {} }, { participant_id: MISSING, x: 1 }]) {
    t.equal((await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload })).statusCode, 400)
  }
  t.equal((await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.observer), payload: { participant_id: c.ws.member.id } })).statusCode, 403)
  t.equal((await c.api({ method: 'POST', url: '/api/v1/dm', payload: { participant_id: c.ws.member.id } })).statusCode, 401)
  t.equal((await c.api({ method: 'GET', url: '/api/v1/dm' })).statusCode, 401)
  t.equal(await c.app.db.prisma.channel.count(), 0)
})

t.test('concurrent DM creation for one pair (both directions) makes exactly one DM: one 201, the rest 200', async (t) => {
  const c = await setup(t)
  const a1 = c.ws.agents[0]!.id
  const a2 = c.ws.agents[1]!.id
  const calls = Array.from({ length: 10 }, (_, i) =>
    i % 2 === 0
      ? c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: a2 } })
      : c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a2), payload: { participant_id: a1 } }),
  )
  const results = await Promise.all(calls)
  t.same(results.map((r) => r.statusCode).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201])
  t.equal(new Set(results.map((r) => r.json().id)).size, 1)
  t.equal(await c.app.db.prisma.channel.count({ where: { type: 'dm' } }), 1)
  t.equal(await c.app.db.prisma.channelMember.count(), 2)
})

t.test("GET /dm lists the caller's DMs with the other participant", async (t) => {
  const c = await setup(t)
  const one = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.member.id } })).json()
  const two = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a2), payload: { participant_id: c.ws.agents[0]!.id } })).json()
  await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a2), payload: { participant_id: c.ws.member.id } })
  const res = await c.api({ method: 'GET', url: '/api/v1/dm', headers: bearer(c.tok.a1) })
  t.equal(res.statusCode, 200)
  t.same(
    res.json().map((d: any) => [d.id, d.participant]),
    [
      [one.id, { id: c.ws.member.id, name: 'member', type: 'HUMAN' }],
      [two.id, { id: c.ws.agents[1]!.id, name: 'agent-2', type: 'AGENT' }],
    ],
  )
  t.same((await c.api({ method: 'GET', url: '/api/v1/dm', headers: bearer(c.tok.observer) })).json(), [])
  t.same((await c.api({ method: 'GET', url: '/api/v1/dm', headers: bearer(c.tok.owner) })).json(), [], 'the owner does not see the DMs of others')
})

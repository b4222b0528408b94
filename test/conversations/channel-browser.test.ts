// The channel browser (issue 24): public channels are listed to everyone and anyone may join
// them; private channels and DMs are never listed and answer 404 to a stranger's join, exactly
// like an unknown id.
import t, { type Test } from 'tap'
import { setup } from './fixtures/support.ts'
import { bearer, post } from '../support/index.ts'

// Asserts in the calling test: an assertion on the file's top-level `t` can land after the run
// has ended in a grouped process (test/groups/groups.ts), which tap counts as a failed file.
const create = async (t: Test, c: Awaited<ReturnType<typeof setup>>, token: string, payload: Record<string, unknown>) => {
  const res = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(token), payload })
  t.equal(res.statusCode, 201, res.body)
  return res.json()
}

t.test('browse lists public channels only, by name, with member_count and is_member; q filters', async (t) => {
  const c = await setup(t)
  const zeta = await create(t, c, c.tok.a1, { name: 'Zeta', description: 'last', topic: 'z' })
  const alpha = await create(t, c, c.tok.member, { name: 'alpha', private: false })
  const hidden = await create(t, c, c.tok.a1, { name: 'hidden', private: true })
  t.equal(zeta.private, false, 'public by default')
  t.equal(hidden.private, true)
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.member.id } })).json()

  for (const token of [c.tok.member, c.tok.observer, c.tok.a2, c.tok.owner]) {
    const res = await c.api({ method: 'GET', url: '/api/v1/channels/browse', headers: bearer(token) })
    t.equal(res.statusCode, 200, res.body)
    t.same(
      res.json().map((x: { id: string }) => x.id),
      [alpha.id, zeta.id],
      'public channels by name ignoring case; never the private one or a DM',
    )
  }
  const asMember = (await c.api({ method: 'GET', url: '/api/v1/channels/browse', headers: bearer(c.tok.member) })).json()
  t.same(asMember, [
    { id: alpha.id, name: 'alpha', description: '', topic: null, created_at: alpha.created_at, member_count: 1, is_member: true },
    { id: zeta.id, name: 'Zeta', description: 'last', topic: 'z', created_at: zeta.created_at, member_count: 1, is_member: false },
  ])
  t.notMatch(JSON.stringify(asMember), new RegExp(`${hidden.id}|${dm.id}`))

  const filtered = await c.api({ method: 'GET', url: '/api/v1/channels/browse?q=ZE', headers: bearer(c.tok.member) })
  t.same(
    filtered.json().map((x: { name: string }) => x.name),
    ['Zeta'],
  )
  const bad = await c.api({ method: 'GET', url: '/api/v1/channels/browse?q=', headers: bearer(c.tok.member) })
  t.same([bad.statusCode, bad.json().code], [400, 'VALIDATION_ERROR'])
  t.equal((await c.api({ method: 'GET', url: '/api/v1/channels/browse' })).statusCode, 401)

  // Made private by its creator: gone from the browser; public again: back.
  const patched = await c.api({ method: 'PATCH', url: `/api/v1/channels/${zeta.id}`, headers: bearer(c.tok.a1), payload: { private: true } })
  t.equal(patched.statusCode, 200)
  t.equal(patched.json().private, true)
  t.same(
    (await c.api({ method: 'GET', url: '/api/v1/channels/browse', headers: bearer(c.tok.member) })).json().map((x: { id: string }) => x.id),
    [alpha.id],
  )
  const listed = (await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.a1) })).json()
  t.same(
    listed.map((x: { name: string; private: boolean }) => [x.name, x.private]),
    [
      ['Zeta', true],
      ['hidden', true],
      ['member', true],
    ],
    'the channel list says which are private (a DM always is)',
  )
})

t.test('join: a public channel 201 with member_joined, then it reads and posts; again 409', async (t) => {
  const c = await setup(t)
  const open = await create(t, c, c.tok.a1, { name: 'open' })
  const before = await post(c.api, c.tok.a1, open.id, 'history before joining')
  c.events.length = 0
  const res = await c.api({ method: 'POST', url: `/api/v1/channels/${open.id}/join`, headers: bearer(c.tok.member) })
  t.equal(res.statusCode, 201, res.body)
  t.same({ ...res.json(), joined_at: undefined }, { channel_id: open.id, id: c.ws.member.id, user_id: c.ws.member.id, type: 'HUMAN', name: 'member', joined_at: undefined })
  t.same(
    c.events.map((e) => [e.type, e.channelId, (e.payload as { member_id: string }).member_id]),
    [['member.joined', open.id, c.ws.member.id]],
  )
  const history = await c.api({ method: 'GET', url: `/api/v1/channels/${open.id}/messages`, headers: bearer(c.tok.member) })
  t.equal(history.statusCode, 200)
  t.ok(
    history.json().messages.some((m: { id: string }) => m.id === before.id),
    'the history is readable once joined',
  )
  t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${open.id}/messages`, headers: bearer(c.tok.member), payload: { text: 'hi' } })).statusCode, 201)
  const again = await c.api({ method: 'POST', url: `/api/v1/channels/${open.id}/join`, headers: bearer(c.tok.member) })
  t.same([again.statusCode, again.json().code], [409, 'ALREADY_MEMBER'])

  // An agent joins too; an observer joins to read and still cannot post.
  t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${open.id}/join`, headers: bearer(c.tok.a2) })).statusCode, 201)
  t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${open.id}/join`, headers: bearer(c.tok.observer) })).statusCode, 201)
  const refused = await c.api({ method: 'POST', url: `/api/v1/channels/${open.id}/messages`, headers: bearer(c.tok.observer), payload: { text: 'x' } })
  t.equal(refused.statusCode, 403)
})

t.test('join: a private channel, a DM and an unknown id all answer 404 and change nothing; the owner may join a private one', async (t) => {
  const c = await setup(t)
  const secret = await create(t, c, c.tok.a1, { name: 'secret', private: true })
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.agents[1]!.id } })).json()
  const unknown = '01900000-0000-7000-8000-000000000000'
  const count = () => c.app.db.prisma.channelMember.count()
  const members = await count()
  for (const id of [secret.id, dm.id, unknown]) {
    const res = await c.api({ method: 'POST', url: `/api/v1/channels/${id}/join`, headers: bearer(c.tok.member) })
    t.same([res.statusCode, res.json().code], [404, 'NOT_FOUND'], id)
  }
  const owner = await c.api({ method: 'POST', url: `/api/v1/channels/${dm.id}/join`, headers: bearer(c.tok.owner) })
  t.same([owner.statusCode, owner.json().code], [404, 'NOT_FOUND'], "not even the owner joins others' DMs")
  t.equal(await count(), members, 'nothing stored')
  const malformed = await c.api({ method: 'POST', url: '/api/v1/channels/not-an-id/join', headers: bearer(c.tok.member) })
  t.same([malformed.statusCode, malformed.json().code], [404, 'NOT_FOUND'], 'a malformed id is no channel either')
  t.equal((await c.api({ method: 'POST', url: `/api/v1/channels/${secret.id}/join` })).statusCode, 401)

  const joined = await c.api({ method: 'POST', url: `/api/v1/channels/${secret.id}/join`, headers: bearer(c.tok.owner) })
  t.equal(joined.statusCode, 201, 'the owner reads every regular channel, so it may join one')
})

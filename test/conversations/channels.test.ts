import t from 'tap'
import { setup } from './fixtures/support.ts'
import { addMember, bearer, createChannel, ISO_RE, MISSING, post, UUID_RE } from '../support/index.ts'

t.test('create a channel: 201 with the spec fields; the creator is its first member; events', async (t) => {
  const c = await setup(t)
  const res = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.a1), payload: { name: 'Project X-1', description: 'about x' } })
  t.equal(res.statusCode, 201)
  const ch = res.json()
  t.match(ch.id, UUID_RE)
  t.equal(ch.name, 'Project X-1')
  t.equal(ch.description, 'about x')
  t.equal(ch.type, 'channel')
  t.match(ch.created_at, ISO_RE)
  t.equal(ch.member_count, 1)
  t.equal(ch.is_member, true)
  t.equal(ch.created_by, c.ws.agents[0]!.id)
  const members = await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/members`, headers: bearer(c.tok.a1) })
  t.same(
    members.json().map((m: any) => [m.id, m.type]),
    [[c.ws.agents[0]!.id, 'AGENT']],
  )
  t.same(
    c.events.map((e) => e.type),
    ['channel.created', 'member.joined'],
  )
  t.same(c.events[0]!.payload, {
    channel: { id: ch.id, name: 'Project X-1', description: 'about x', topic: null, type: 'channel', created_at: ch.created_at },
    creator_id: c.ws.agents[0]!.id,
    creator_type: 'AGENT',
  })
  t.equal(c.events[0]!.channelId, ch.id)
  t.same(c.events[1]!.payload, { channel_id: ch.id, member_id: c.ws.agents[0]!.id, member_type: 'AGENT', member_name: 'agent-1', channel: (c.events[0]!.payload as { channel: unknown }).channel })
  const outbox = await c.app.db.prisma.outboxEvent.count({ where: { channelId: ch.id } })
  t.equal(outbox, 2, 'events are in the outbox too')
})

t.test('channel names: spec rules (400, nothing stored), trimmed, unique ignoring case (409)', async (t) => {
  const c = await setup(t)
  for (const name of ['', ' ', 'a'.repeat(101), 'bad_name', 'emoji 🙂', 'semi;colon', 'tab\tname']) {
    const res = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.member), payload: { name } })
    t.equal(res.statusCode, 400, `name ${JSON.stringify(name)}`)
    t.equal(res.json().code, 'VALIDATION_ERROR')
  }
  for (const payload of [{}, { name: 'ok', extra: 1 }, { name: {} }, { name: 'ok', description: 'x'.repeat(1001) }]) {
    const res = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.member), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 60))
  }
  t.equal(await c.app.db.prisma.channel.count(), 0, 'nothing stored')
  const ok = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.member), payload: { name: '  a'.repeat(1) + 'b-9 Z  ' } })
  t.equal(ok.statusCode, 201)
  t.equal(ok.json().name, 'ab-9 Z')
  t.equal(ok.json().description, '')
  const max = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.member), payload: { name: 'n'.repeat(100) } })
  t.equal(max.statusCode, 201)
  const dup = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.a1), payload: { name: 'AB-9 z' } })
  t.equal(dup.statusCode, 409)
  t.equal(dup.json().code, 'NAME_TAKEN')
})

t.test('401 without or with a bad credential on every channel route', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'x')
  const routes: [string, string][] = [
    ['POST', '/api/v1/channels'],
    ['GET', '/api/v1/channels'],
    ['GET', `/api/v1/channels/${ch.id}`],
    ['PATCH', `/api/v1/channels/${ch.id}`],
    ['DELETE', `/api/v1/channels/${ch.id}`],
    ['GET', `/api/v1/channels/${ch.id}/members`],
    ['POST', `/api/v1/channels/${ch.id}/members`],
    ['DELETE', `/api/v1/channels/${ch.id}/members/${c.ws.agents[0]!.id}`],
  ]
  for (const [method, url] of routes) {
    for (const headers of [{}, bearer('svc_nope'), bearer('a.b.c')]) {
      const res = await c.api({ method: method, url, headers, payload: method === 'POST' || method === 'PATCH' ? { name: 'y' } : undefined })
      t.equal(res.statusCode, 401, `${method} ${url}`)
      t.equal(res.json().code, 'UNAUTHORIZED')
    }
  }
})

t.test('list: a DM is named after the other participant, a person or an agent, as each side sees it', async (t) => {
  const c = await setup(t)
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.member.id } })).json()
  const stored = await c.app.db.prisma.channel.findUniqueOrThrow({ where: { id: dm.id } })
  t.not(stored.name, 'member', 'the stored name is not what the list shows')
  const namesOf = async (token: string) =>
    (await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(token) }))
      .json()
      .filter((x: any) => x.type === 'dm')
      .map((x: any) => [x.id, x.name])
  t.same(await namesOf(c.tok.a1), [[dm.id, 'member']], "the agent sees the person's display name")
  t.same(await namesOf(c.tok.member), [[dm.id, 'agent-1']], "the person sees the agent's display name")
  await c.app.db.prisma.user.update({ where: { id: c.ws.member.id }, data: { displayName: 'Mem Ber' } })
  t.same(await namesOf(c.tok.a1), [[dm.id, 'Mem Ber']], 'the current display name')
})

t.test("list: a plain array of {id, name, type, description} of the caller's channels; the owner sees all regular ones", async (t) => {
  const c = await setup(t)
  const a = await createChannel(c.api, c.tok.a1, 'alpha')
  const b = await createChannel(c.api, c.tok.a2, 'beta')
  await addMember(c.api, c.tok.a2, b.id, c.ws.member.id)
  const dm = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.agents[1]!.id } })
  const mine = await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.a1) })
  t.equal(mine.statusCode, 200)
  t.same(mine.json(), [
    { id: a.id, name: 'alpha', type: 'channel', description: 'alpha channel', private: false, unread_count: 0, last_read_message_id: null, is_member: true, last_message_at: null },
    { id: dm.json().id, name: 'agent-2', type: 'dm', description: '', private: true, unread_count: 0, last_read_message_id: null, is_member: true, last_message_at: null },
  ])
  const member = await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.member) })
  t.same(
    member.json().map((x: any) => x.id),
    [b.id],
  )
  const none = await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.observer) })
  t.same(none.json(), [])
  const owner = await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.owner) })
  t.same(
    owner.json().map((x: any) => x.id),
    [a.id, b.id],
    'all regular channels, not the DMs of others',
  )
  t.same(
    owner.json().map((x: any) => x.is_member),
    [false, false],
    'the owner reads them without being a member',
  )
  // last_message_at: the newest message's time, to the millisecond.
  const posted = (await c.api({ method: 'POST', url: `/api/v1/channels/${a.id}/messages`, headers: bearer(c.tok.a1), payload: { text: 'hi' } })).json()
  const after = (await c.api({ method: 'GET', url: '/api/v1/channels', headers: bearer(c.tok.a1) })).json()
  t.equal(after.find((x: any) => x.id === a.id).last_message_at, posted.created_at)
})

t.test('get: members and the owner; others, unknown and malformed ids 404', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'gamma', { topic: 'tea' })
  const got = await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}`, headers: bearer(c.tok.a1) })
  t.equal(got.statusCode, 200)
  t.same({ ...got.json(), updated_at: undefined }, { ...ch, topic: 'tea', updated_at: undefined })
  const owner = await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}`, headers: bearer(c.tok.owner) })
  t.equal(owner.statusCode, 200)
  t.equal(owner.json().is_member, false)
  for (const token of [c.tok.a2, c.tok.member, c.tok.observer, c.tok.primary]) {
    const res = await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}`, headers: bearer(token) })
    t.equal(res.statusCode, 404)
    t.same(res.json(), { error: 'channel not found', code: 'NOT_FOUND' })
  }
  const unknown = await c.api({ method: 'GET', url: `/api/v1/channels/${MISSING}`, headers: bearer(c.tok.a1) })
  t.same(unknown.json(), { error: 'channel not found', code: 'NOT_FOUND' }, 'same answer as for a channel one cannot see')
  const bad = await c.api({ method: 'GET', url: '/api/v1/channels/not-a-uuid', headers: bearer(c.tok.a1) })
  t.same([bad.statusCode, bad.json().code], [404, 'NOT_FOUND'], 'ids are opaque: one that is not a UUID names nothing')
})

t.test('patch: creator or admin; other members 403; non-members 404; bad input 400; rename unique', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'delta')
  await createChannel(c.api, c.tok.a1, 'taken')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.observer.id)
  const url = `/api/v1/channels/${ch.id}`
  const other = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.a2), payload: { name: 'x' } })
  t.equal(other.statusCode, 403)
  t.equal(other.json().code, 'FORBIDDEN')
  const obs = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.observer), payload: { name: 'x' } })
  t.equal(obs.statusCode, 403)
  const stranger = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.member), payload: { name: 'x' } })
  t.equal(stranger.statusCode, 404)
  for (const payload of [{}, { name: 'bad!' }, { nope: 1 }, { topic: {} }]) {
    const res = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.a1), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
  }
  const taken = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.a1), payload: { name: 'TAKEN' } })
  t.equal(taken.statusCode, 409)
  t.equal(taken.json().code, 'NAME_TAKEN')
  c.events.length = 0
  const ok = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.a1), payload: { name: 'delta 2', description: 'new', topic: 'fresh' } })
  t.equal(ok.statusCode, 200)
  t.match(ok.json(), { id: ch.id, name: 'delta 2', description: 'new', topic: 'fresh', type: 'channel' })
  t.same(
    c.events.map((e) => e.type),
    ['channel.updated'],
  )
  t.same(c.events[0]!.payload, { channel: { id: ch.id, name: 'delta 2', description: 'new', topic: 'fresh', type: 'channel', created_at: ch.created_at } })
  const same = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.a1), payload: { name: 'Delta 2' } })
  t.equal(same.statusCode, 200, 'a channel may change the case of its own name')
  const admin = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.owner), payload: { topic: null } })
  t.equal(admin.statusCode, 200, 'the owner (admin) may change any regular channel')
  t.equal(admin.json().topic, null)
  const primary = await c.api({ method: 'PATCH', url, headers: bearer(c.tok.primary), payload: { topic: 'p' } })
  t.equal(primary.statusCode, 404, 'the primary agent is an admin but must see the channel first')
})

t.test('members: add (201, events), already a member 409, unknown id 404, rights, remove takes access away at once', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'eps')
  const url = `/api/v1/channels/${ch.id}/members`
  c.events.length = 0
  const add = await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload: { user_id: c.ws.member.id } })
  t.equal(add.statusCode, 201)
  t.match(add.json(), { channel_id: ch.id, id: c.ws.member.id, type: 'HUMAN', name: 'member' })
  t.match(add.json().joined_at, ISO_RE)
  t.equal(add.json().user_id, c.ws.member.id, 'the id comes back under the name it was sent with too')
  const listed = (await c.api({ method: 'GET', url, headers: bearer(c.tok.a1) })).json()
  t.same(
    listed.map((m: { id: string; user_id: string }) => m.user_id),
    listed.map((m: { id: string }) => m.id),
  )
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [
      [
        'member.joined',
        {
          channel_id: ch.id,
          member_id: c.ws.member.id,
          member_type: 'HUMAN',
          member_name: 'member',
          channel: { id: ch.id, name: ch.name, description: ch.description, topic: ch.topic, type: 'channel', created_at: ch.created_at },
        },
      ],
    ],
  )
  const again = await c.api({ method: 'POST', url, headers: bearer(c.tok.member), payload: { user_id: c.ws.member.id } })
  t.equal(again.statusCode, 409)
  t.equal(again.json().code, 'ALREADY_MEMBER')
  const unknown = await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload: { user_id: MISSING } })
  t.equal(unknown.statusCode, 404)
  const malformed = await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload: { user_id: 'x' } })
  t.same([malformed.statusCode, malformed.json().code], [404, 'NOT_FOUND'], 'a user_id that is not a UUID is an unknown id')
  for (const payload of [{}, { user_id: {} }, { user_id: c.ws.member.id, more: 1 }]) {
    const res = await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload })
    t.equal(res.statusCode, 400)
  }
  const byStranger = await c.api({ method: 'POST', url, headers: bearer(c.tok.a2), payload: { user_id: c.ws.agents[1]!.id } })
  t.equal(byStranger.statusCode, 404, 'a non-member cannot see the channel')
  await addMember(c.api, c.tok.member, ch.id, c.ws.observer.id)
  const byObserver = await c.api({ method: 'POST', url, headers: bearer(c.tok.observer), payload: { user_id: c.ws.agents[1]!.id } })
  t.equal(byObserver.statusCode, 403)
  const byOwner = await c.api({ method: 'POST', url, headers: bearer(c.tok.owner), payload: { user_id: c.ws.owner.id } })
  t.equal(byOwner.statusCode, 201, 'the owner (admin) may join any regular channel')

  const list = await c.api({ method: 'GET', url, headers: bearer(c.tok.observer) })
  t.equal(list.statusCode, 200)
  t.same(
    list.json().map((m: any) => m.id),
    [c.ws.agents[0]!.id, c.ws.member.id, c.ws.observer.id, c.ws.owner.id],
  )
  t.equal(await c.app.db.prisma.channelMember.count({ where: { channelId: ch.id } }), 4)
  const strangerList = await c.api({ method: 'GET', url, headers: bearer(c.tok.a2) })
  t.equal(strangerList.statusCode, 404)

  // Removing someone else: the creator or an admin; a member may leave.
  const notAllowed = await c.api({ method: 'DELETE', url: `${url}/${c.ws.observer.id}`, headers: bearer(c.tok.member) })
  t.equal(notAllowed.statusCode, 403)
  const notMember = await c.api({ method: 'DELETE', url: `${url}/${c.ws.agents[1]!.id}`, headers: bearer(c.tok.a1) })
  t.equal(notMember.statusCode, 404)
  await post(c.api, c.tok.member, ch.id, 'before removal')
  c.events.length = 0
  const removed = await c.api({ method: 'DELETE', url: `${url}/${c.ws.member.id}`, headers: bearer(c.tok.a1) })
  t.equal(removed.statusCode, 204)
  t.equal(removed.body, '')
  t.same(
    c.events.map((e) => [e.type, e.payload, e.audience]),
    [['member.left', { channel_id: ch.id, member_id: c.ws.member.id, member_type: 'HUMAN' }, [c.ws.member.id]]],
  )
  for (const [method, path] of [
    ['GET', ''],
    ['GET', '/messages'],
    ['POST', '/messages'],
    ['GET', '/members'],
  ]) {
    const res = await c.api({ method: method, url: `/api/v1/channels/${ch.id}${path}`, headers: bearer(c.tok.member), payload: method === 'POST' ? { text: 'hi' } : undefined })
    t.equal(res.statusCode, 404, `removed member: ${method} ${path}`)
  }
  const leave = await c.api({ method: 'DELETE', url: `${url}/${c.ws.observer.id}`, headers: bearer(c.tok.observer) })
  t.equal(leave.statusCode, 204, 'anyone may leave, observers too')
})

t.test('delete: creator or admin; deletes messages; others 403/404; events to the former members', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'zeta')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  await post(c.api, c.tok.a2, ch.id, 'one')
  await post(c.api, c.tok.a1, ch.id, 'two')
  const url = `/api/v1/channels/${ch.id}`
  t.equal((await c.api({ method: 'DELETE', url, headers: bearer(c.tok.a2) })).statusCode, 403)
  t.equal((await c.api({ method: 'DELETE', url, headers: bearer(c.tok.member) })).statusCode, 404)
  t.equal((await c.api({ method: 'DELETE', url: `/api/v1/channels/${MISSING}`, headers: bearer(c.tok.a1) })).statusCode, 404)
  c.events.length = 0
  const res = await c.api({ method: 'DELETE', url, headers: bearer(c.tok.a1) })
  t.equal(res.statusCode, 204)
  t.equal(await c.app.db.prisma.message.count({ where: { channelId: ch.id } }), 0)
  t.equal(await c.app.db.prisma.channelMember.count({ where: { channelId: ch.id } }), 0)
  t.same(
    c.events.map((e) => [e.type, e.payload]),
    [['channel.deleted', { channel_id: ch.id }]],
  )
  t.same([...c.events[0]!.audience!].sort(), [c.ws.agents[0]!.id, c.ws.agents[1]!.id].sort())
  t.equal((await c.api({ method: 'GET', url, headers: bearer(c.tok.a1) })).statusCode, 404)

  const other = await createChannel(c.api, c.tok.member, 'eta')
  t.equal((await c.api({ method: 'DELETE', url: `/api/v1/channels/${other.id}`, headers: bearer(c.tok.owner) })).statusCode, 204, 'the owner deletes any regular channel')
})

t.test('observers read but cannot create channels', async (t) => {
  const c = await setup(t)
  const res = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.observer), payload: { name: 'nope' } })
  t.equal(res.statusCode, 403)
  t.equal(res.json().code, 'FORBIDDEN')
  t.equal(await c.app.db.prisma.channel.count(), 0)
})

t.test('Idempotency-Key on channel creation: one channel; another body 409', async (t) => {
  const c = await setup(t)
  const headers = { ...bearer(c.tok.a1), 'idempotency-key': 'create-theta' }
  const first = await c.api({ method: 'POST', url: '/api/v1/channels', headers, payload: { name: 'theta' } })
  const second = await c.api({ method: 'POST', url: '/api/v1/channels', headers, payload: { name: 'theta' } })
  t.equal(first.statusCode, 201)
  t.equal(second.statusCode, 201)
  t.same(second.json(), first.json())
  t.equal(await c.app.db.prisma.channel.count(), 1)
  const other = await c.api({ method: 'POST', url: '/api/v1/channels', headers, payload: { name: 'iota' } })
  t.equal(other.statusCode, 409)
  t.equal(other.json().code, 'IDEMPOTENCY_KEY_REUSED')
  const bad = await c.api({ method: 'POST', url: '/api/v1/channels', headers: { ...bearer(c.tok.a1), 'idempotency-key': 'has space' }, payload: { name: 'kappa' } })
  t.equal(bad.statusCode, 400)
  t.equal(await c.app.db.prisma.channel.count(), 1)
})

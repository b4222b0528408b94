// Read markers: `PUT /channels/{id}/read {message_id}` and the unread counts of the channel and
// DM lists. Kept on the server per member, so they follow a person across devices.
import t from 'tap'
import { setup } from './fixtures/support.ts'
import { addMember, bearer, createChannel, MISSING, post } from '../support/index.ts'
import { seedMessages } from '../web/seed.ts'

const unread = async (c: Awaited<ReturnType<typeof setup>>, token: string, url = '/api/v1/channels') => {
  const res = await c.api({ method: 'GET', url, headers: bearer(token) })
  return Object.fromEntries(res.json().map((x: any) => [x.id, [x.unread_count, x.last_read_message_id]]))
}

t.test('unread counts rise with others’ messages and clear up to the marker', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'general')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  t.same((await unread(c, c.tok.member))[ch.id], [0, null])
  const m1 = await post(c.api, c.tok.a1, ch.id, 'one')
  const m2 = await post(c.api, c.tok.a1, ch.id, 'two')
  await post(c.api, c.tok.member, ch.id, 'my own message does not count')
  const m3 = await post(c.api, c.tok.a1, ch.id, 'three')
  t.same((await unread(c, c.tok.member))[ch.id], [3, null])
  t.same((await unread(c, c.tok.a1))[ch.id], [1, null], 'each member has its own count')

  const read = await c.api({ method: 'PUT', url: `/api/v1/channels/${ch.id}/read`, headers: bearer(c.tok.member), payload: { message_id: m2.id } })
  t.equal(read.statusCode, 200)
  t.same(read.json(), { channel_id: ch.id, last_read_message_id: m2.id, unread_count: 1 })
  t.same((await unread(c, c.tok.member))[ch.id], [1, m2.id])
  // never backwards
  const back = await c.api({ method: 'PUT', url: `/api/v1/channels/${ch.id}/read`, headers: bearer(c.tok.member), payload: { message_id: m1.id } })
  t.same(back.json(), { channel_id: ch.id, last_read_message_id: m2.id, unread_count: 1 })
  const all = await c.api({ method: 'PUT', url: `/api/v1/channels/${ch.id}/read`, headers: bearer(c.tok.member), payload: { message_id: m3.id } })
  t.same(all.json(), { channel_id: ch.id, last_read_message_id: m3.id, unread_count: 0 })
  t.same((await unread(c, c.tok.member))[ch.id], [0, m3.id])
  // agents keep markers too
  const agent = await c.api({ method: 'PUT', url: `/api/v1/channels/${ch.id}/read`, headers: bearer(c.tok.a1), payload: { message_id: m3.id } })
  t.same(agent.json(), { channel_id: ch.id, last_read_message_id: m3.id, unread_count: 0 })
})

t.test('unread counts stop at 100: exact below, 100 means 100 or more', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'busy')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  const a1 = { id: c.ws.agents[0]!.id, name: c.ws.agents[0]!.name, type: 'AGENT' as const }
  const ids = await seedMessages(c.app, ch.id, 130, (i) => ({ author: a1, text: `m${i}` }))
  t.same((await unread(c, c.tok.member))[ch.id], [100, null], '130 unread: the list says 100 (the UI shows 99+)')
  const markAt = async (index: number) =>
    (await c.api({ method: 'PUT', url: `/api/v1/channels/${ch.id}/read`, headers: bearer(c.tok.member), payload: { message_id: ids[index] } })).json().unread_count
  t.equal(await markAt(20), 100, '109 after the marker: still the cap')
  t.equal(await markAt(29), 100, 'exactly 100 after the marker')
  t.equal(await markAt(30), 99, 'below the cap the count is exact')
  t.equal(await markAt(128), 1)
  t.same((await unread(c, c.tok.member))[ch.id], [1, ids[128]])
})

t.test('DM list carries the same unread state', async (t) => {
  const c = await setup(t)
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.member.id } })).json()
  const m = await post(c.api, c.tok.a1, dm.id, 'psst')
  t.same((await unread(c, c.tok.member, '/api/v1/dm'))[dm.id], [1, null])
  await c.api({ method: 'PUT', url: `/api/v1/channels/${dm.id}/read`, headers: bearer(c.tok.member), payload: { message_id: m.id } })
  t.same((await unread(c, c.tok.member, '/api/v1/dm'))[dm.id], [0, m.id])
})

t.test('no credential 401, not visible 404, owner not a member 403, bad input 400; nothing stored', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'general')
  const other = await createChannel(c.api, c.tok.a1, 'other')
  const m = await post(c.api, c.tok.a1, ch.id, 'hello')
  const elsewhere = await post(c.api, c.tok.a1, other.id, 'elsewhere')
  const put = (token: string | null, id: string, payload: unknown) => c.api({ method: 'PUT', url: `/api/v1/channels/${id}/read`, headers: token ? bearer(token) : {}, payload: payload as object })
  const none = await put(null, ch.id, { message_id: m.id })
  t.equal(none.statusCode, 401)
  t.equal(none.json().code, 'UNAUTHORIZED')
  const stranger = await put(c.tok.member, ch.id, { message_id: m.id })
  t.equal(stranger.statusCode, 404, 'a channel the caller cannot see')
  t.equal((await put(c.tok.a1, MISSING, { message_id: m.id })).statusCode, 404)
  const owner = await put(c.tok.owner, ch.id, { message_id: m.id })
  t.equal(owner.statusCode, 403, 'the owner sees the channel but is no member')
  t.equal(owner.json().code, 'FORBIDDEN')
  const foreign = await put(c.tok.a1, ch.id, { message_id: elsewhere.id })
  t.equal(foreign.statusCode, 404, 'a message of another channel')
  t.equal((await put(c.tok.a1, ch.id, { message_id: MISSING })).statusCode, 404)
  for (const body of [{}, { message_id: 'nope' }, { message_id: m.id, extra: 1 }]) {
    const res = await put(c.tok.a1, ch.id, body)
    t.equal(res.statusCode, 400, JSON.stringify(body))
    t.equal(res.json().code, 'VALIDATION_ERROR')
  }
  const { rows } = await c.app.db.pool.query('SELECT count(*)::int AS n FROM channel_members WHERE last_read_message_id IS NOT NULL')
  t.equal(rows[0].n, 0, 'no marker stored by any refused call')
})

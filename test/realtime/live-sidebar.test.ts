// What a sidebar needs arrives as events (issue 24): the workspace owner, who reads every regular
// channel, receives their events live (a channel a member creates, a message in a channel it has
// not joined), never the DMs of others; member_joined carries the channel it joined; the channel
// list carries is_member and last_message_at.
import t from 'tap'
import { addMember, bearer, build, createChannelId, post, removeMember, seedWorkspace } from '../support/index.ts'
import { connect, listen } from './helpers.ts'

t.test('the owner gets live events of every regular channel, joined or not, and none of the DMs of others', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const [a1, a2] = ws.agents
  const before = await createChannelId(api, ws.primary.key, 'before', [a1!.id])
  const { client: owner } = await connect(app, ws.owner.token)
  t.teardown(() => owner.close().then(() => {}))

  // A channel that existed when the socket opened (like #general right after bootstrap).
  const first = await post(api, a1!.key, before, 'in a channel the owner has not joined')
  t.equal((await owner.type('new_message')).message.id, first.id)

  // A channel a member creates appears at once, with its creator's member_joined.
  const created = await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(ws.member.token), payload: { name: 'member-made' } })
  t.equal(created.statusCode, 201)
  const id = created.json().id
  t.match(await owner.type('channel_created'), { channel_id: id, channel: { id, name: 'member-made', type: 'channel' }, creator_id: ws.member.id })
  t.match(await owner.type('member_joined', (f) => f.channel_id === id), { member_id: ws.member.id, channel: { id, name: 'member-made' } })
  const inNew = await post(api, ws.member.token, id, 'hello')
  t.equal((await owner.type('new_message', (f) => f.channel_id === id)).message.id, inNew.id)

  // A DM between two others never reaches the owner; the marker after it proves the order.
  const dm = (await api({ method: 'POST', url: '/api/v1/dm', headers: bearer(a1!.key), payload: { participant_id: a2!.id } })).json()
  await post(api, a1!.key, dm.id, 'private')
  const marker = await post(api, a1!.key, before, 'marker')
  await owner.type('new_message', (f) => f.message.id === marker.id)
  t.notOk(
    owner.frames.some((f) => f.channel_id === dm.id),
    'nothing of a DM between others',
  )

  // The owner still reads a channel it joined and left.
  await addMember(api, ws.owner.token, before, ws.owner.id)
  await removeMember(api, ws.owner.token, before, ws.owner.id)
  await owner.type('member_left', (f) => f.member_id === ws.owner.id)
  const later = await post(api, a1!.key, before, 'after the owner left')
  t.equal((await owner.type('new_message', (f) => f.message.id === later.id)).channel_id, before)

  // The REST event log agrees with the socket.
  const log = (await api({ method: 'GET', url: '/api/v1/events?limit=500', headers: bearer(ws.owner.token) })).json()
  const ids = log.events.filter((f: { type: string }) => f.type === 'new_message').map((f: { message: { id: string } }) => f.message.id)
  t.ok(ids.includes(first.id) && ids.includes(later.id), 'GET /events shows the same messages')
  t.notOk(
    log.events.some((f: { channel_id: string }) => f.channel_id === dm.id),
    'and no DM of others',
  )
})

t.test('a member added to a channel gets member_joined with the channel, enough to list it without a request', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await listen(app)
  const { client: member } = await connect(app, ws.member.token)
  t.teardown(() => member.close().then(() => {}))
  const res = await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(ws.agents[0]!.key), payload: { name: 'ops', description: 'on call', topic: 'pager' } })
  const channel = res.json()
  await addMember(api, ws.agents[0]!.key, channel.id, ws.member.id)
  const joined = await member.type('member_joined')
  t.same(joined.channel, { id: channel.id, name: 'ops', description: 'on call', topic: 'pager', type: 'channel', created_at: channel.created_at })
  t.equal(joined.member_id, ws.member.id)
  t.notOk(
    member.frames.some((f) => f.type === 'channel_created'),
    'the channel_created before the member joined is not theirs',
  )
  // A new message carries what the sidebar moves: channel id, author, time.
  const m = await post(api, ws.agents[0]!.key, channel.id, 'page')
  const frame = await member.type('new_message')
  t.match(frame, { channel_id: channel.id, message: { id: m.id, author_id: ws.agents[0]!.id, created_at: m.created_at } })
  const listed = (await api({ method: 'GET', url: '/api/v1/channels', headers: bearer(ws.member.token) })).json()
  t.match(
    listed.find((c: { id: string }) => c.id === channel.id),
    { unread_count: 1, is_member: true, last_message_at: m.created_at },
  )
})

// The inbox (docs/realtime.md, "The inbox"): GET /api/v1/inbox lists what is addressed to the
// caller and not acknowledged, counts first, oldest first, only in channels it belongs to now;
// POST /api/v1/inbox/ack {up_to} or {ids} records what it handled, for good: across a restart and
// from another instance (two apps sharing PostgreSQL and Redis); `wait` answers as soon as one
// item is there; humans have the same inbox; bad input is 400 and changes nothing.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { needsRedis } from '../setup/services.ts'
import { bearer, build, disableLoopGuard, removeMember, seedWorkspace, testConfig, untilPlanned, type Api } from '../support/index.ts'
import { expectedAddressed, playScenario, postIn, react, scenarioChannels } from './addressed-scenario.ts'

/** Plans what was committed (the planner writes the inbox) and waits for it. */
const planned = (app: FastifyInstance): Promise<void> => untilPlanned(app)

async function inbox(api: Api, token: string, query = ''): Promise<any> {
  const res = await api({ method: 'GET', url: `/api/v1/inbox${query}`, headers: bearer(token) })
  if (res.statusCode !== 200) throw new Error(`inbox: ${res.statusCode} ${res.body}`)
  return res.json()
}

async function ack(api: Api, token: string, payload: unknown) {
  return api({ method: 'POST', url: '/api/v1/inbox/ack', headers: bearer(token), payload: payload as Record<string, unknown> })
}

const itemBrief = (i: any): [string, string] => [i.kind, i.message?.id ?? i.reaction?.message_id]

t.test('the inbox lists the addressed items, counts first, oldest first; acknowledged ones never return', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const channels = await scenarioChannels(api, ws)
  const s = await playScenario(api, ws, channels)
  await planned(app)

  const res = await api({ method: 'GET', url: '/api/v1/inbox', headers: bearer(s.me.key) })
  t.equal(res.statusCode, 200)
  t.ok(res.body.indexOf('"counts"') < res.body.indexOf('"items"'), 'counts come before the items')
  const page = res.json()
  t.same(page.counts, {
    total: 4,
    by_kind: { mention: 1, dm: 1, thread_reply: 1, reaction: 1, approval: 0, stop: 0 },
    by_channel: [
      { channel_id: s.room, name: 'room', type: 'channel', count: 3 },
      { channel_id: s.dm, name: page.counts.by_channel[1].name, type: 'dm', count: 1 },
    ],
  })
  t.same(page.items.map(itemBrief), [
    ['mention', s.mention.id],
    ['dm', s.direct.id],
    ['thread_reply', s.reply.id],
    ['reaction', s.own.id],
  ])
  t.same(
    page.items.map((i: any) => i.event_type),
    expectedAddressed(s).map(([type]) => type),
  )
  t.same(page.items[0].message, s.mention, 'the message as posted')
  t.same(page.items[3].reaction, { message_id: s.own.id, emoji: '👍', member_id: s.boss.id, member_type: 'AGENT', member_name: s.boss.name })
  t.equal(page.next_cursor, page.items[3].id)
  t.equal(page.has_more, false)

  // Pages: limit and after, without acknowledging.
  const first = await inbox(api, s.me.key, '?limit=2')
  t.same(first.items.map(itemBrief), page.items.slice(0, 2).map(itemBrief))
  t.equal(first.has_more, true)
  const second = await inbox(api, s.me.key, `?limit=2&after=${first.next_cursor}`)
  t.same(second.items.map(itemBrief), page.items.slice(2).map(itemBrief))
  t.equal(second.has_more, false)
  t.equal(second.counts.total, 4, 'reading acknowledges nothing')

  // Acknowledge the first page, then one item by id.
  const acked = await ack(api, s.me.key, { up_to: first.next_cursor })
  t.equal(acked.statusCode, 200)
  t.equal(acked.json().acknowledged, 2)
  t.equal(acked.json().counts.total, 2)
  t.same((await inbox(api, s.me.key)).items.map(itemBrief), page.items.slice(2).map(itemBrief))
  const byId = await ack(api, s.me.key, { ids: [page.items[3].id, page.items[0].id] })
  t.equal(byId.json().acknowledged, 1, 'an item acknowledged before is not counted again')
  t.same((await inbox(api, s.me.key)).items.map(itemBrief), [['thread_reply', s.reply.id]])

  // Someone else's ids change nothing.
  const other = await ack(api, ws.agents[1]!.key, { ids: [page.items[2].id] })
  t.equal(other.json().acknowledged, 0)
  t.equal((await inbox(api, s.me.key)).counts.total, 1)

  // Planning the same events again brings nothing back.
  await app.db.pool.query('UPDATE outbox_events SET planned_at = NULL')
  await planned(app)
  t.same((await inbox(api, s.me.key)).items.map(itemBrief), [['thread_reply', s.reply.id]])

  // Access: leaving the channel hides its items (and the one addressed after leaving never came).
  await removeMember(api, ws.primary.key, s.room, s.me.id)
  const after = await inbox(api, s.me.key)
  t.same(after.items, [])
  t.same(after.counts, { total: 0, by_kind: { mention: 0, dm: 0, thread_reply: 0, reaction: 0, approval: 0, stop: 0 }, by_channel: [] })
})

t.test('humans have the same inbox', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const human = ws.owner
  const room = (await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(human.token), payload: { name: 'humans' } })).json().id as string
  await api({ method: 'POST', url: `/api/v1/channels/${room}/members`, headers: bearer(human.token), payload: { user_id: ws.primary.id } })
  const handle = human.email.split('@')[0]
  const mention = await postIn(api, ws.primary.key, room, `@${handle} your call`)
  await planned(app)
  const page = await inbox(api, human.token)
  t.same(page.items.map(itemBrief), [['mention', mention.id]])
  t.equal(page.counts.by_kind.mention, 1)
})

t.test('a person reading a conversation acknowledges its mentions and DM messages up to the marker; an agent does not', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  await disableLoopGuard(app)
  const human = ws.owner
  const handle = human.email.split('@')[0]
  const read = (token: string, channelId: string, messageId: string) => api({ method: 'PUT', url: `/api/v1/channels/${channelId}/read`, headers: bearer(token), payload: { message_id: messageId } })
  const room = (await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(human.token), payload: { name: 'reading' } })).json().id as string
  await api({ method: 'POST', url: `/api/v1/channels/${room}/members`, headers: bearer(human.token), payload: { user_id: ws.primary.id } })
  await api({ method: 'POST', url: `/api/v1/channels/${room}/members`, headers: bearer(human.token), payload: { user_id: ws.agents[0]!.id } })
  const first = await postIn(api, ws.primary.key, room, `@${handle} first`)
  const second = await postIn(api, ws.primary.key, room, `@${handle} second`)
  const own = await postIn(api, human.token, room, 'my own words')
  await react(api, ws.primary.key, room, own.id, '👍')
  const dm = (await api({ method: 'POST', url: '/api/v1/dm', headers: bearer(ws.primary.key), payload: { participant_id: human.id } })).json().id as string
  const direct = await postIn(api, ws.primary.key, dm, 'just for you')
  await planned(app)
  t.same((await inbox(api, human.token)).counts.by_kind, { mention: 2, dm: 1, thread_reply: 0, reaction: 1, approval: 0, stop: 0 })

  t.equal((await read(human.token, room, first.id)).statusCode, 200)
  t.same(
    (await inbox(api, human.token)).items.map(itemBrief),
    [
      ['mention', second.id],
      ['reaction', own.id],
      ['dm', direct.id],
    ],
    'the first mention is read',
  )
  t.equal((await read(human.token, room, own.id)).statusCode, 200)
  t.equal((await read(human.token, dm, direct.id)).statusCode, 200)
  t.same((await inbox(api, human.token)).items.map(itemBrief), [['reaction', own.id]], 'a reaction stays: reading the channel does not show it')

  // Read before the planner wrote the item, or after: either way it is acknowledged.
  const third = await postIn(api, ws.primary.key, room, `@${handle} third`)
  t.equal((await read(human.token, room, third.id)).statusCode, 200)
  await planned(app)
  t.equal((await inbox(api, human.token)).counts.by_kind.mention, 0, 'read at once: not in the inbox')

  // An agent's read marker and its inbox stay independent.
  const agentMention = await postIn(api, ws.primary.key, room, '@agent-1 for you')
  await planned(app)
  t.equal((await read(ws.agents[0]!.key, room, agentMention.id)).statusCode, 200)
  await planned(app)
  t.same((await inbox(api, ws.agents[0]!.key)).items.map(itemBrief), [['mention', agentMention.id]])
})

t.test('wait: answers as soon as an item is there, with all that accumulated', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const channels = await scenarioChannels(api, ws)
  const me = ws.agents[0]!

  const empty = await api({ method: 'GET', url: '/api/v1/inbox?wait=0.2', headers: bearer(me.key) })
  t.same(empty.json().items, [], 'an empty page at the deadline')

  const waiting = api({ method: 'GET', url: '/api/v1/inbox?wait=30', headers: bearer(me.key) })
  for (let i = 0; i < 500 && app.inboxBell.waiting < 1; i++) await new Promise((r) => setTimeout(r, 10))
  t.equal(app.inboxBell.waiting, 1)
  await postIn(api, ws.primary.key, channels.room, 'chatter does not wake it')
  const dm = await postIn(api, ws.primary.key, channels.dm, 'wake up')
  const answer = (await waiting).json()
  t.same(answer.items.map(itemBrief), [['dm', dm.id]])
  t.equal(app.inboxBell.waiting, 0)

  // Accumulated while nobody asked: one answer carries them all.
  const more = [await postIn(api, ws.primary.key, channels.dm, 'one'), await postIn(api, ws.primary.key, channels.room, `@${me.name} two`)]
  await planned(app)
  const all = (await api({ method: 'GET', url: '/api/v1/inbox?wait=30', headers: bearer(me.key) })).json()
  t.same(all.items.map(itemBrief), [
    ['dm', dm.id],
    ['dm', more[0]!.id],
    ['mention', more[1]!.id],
  ])
})

t.test('invalid queries and ack bodies: 400 {error, code}, nothing acknowledged', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const channels = await scenarioChannels(api, ws)
  const s = await playScenario(api, ws, channels)
  await planned(app)
  const before = await inbox(api, s.me.key)
  const id = before.items[0].id as string
  for (const query of ['?limit=0', '?limit=101', '?after=nope', '?wait=31', '?wait=-1', '?only=addressed']) {
    const res = await api({ method: 'GET', url: `/api/v1/inbox${query}`, headers: bearer(s.me.key) })
    t.equal(res.statusCode, 400, query)
    t.same(Object.keys(res.json()).sort(), ['code', 'error'])
  }
  for (const body of [{}, { up_to: 'nope' }, { up_to: id, ids: [id] }, { ids: [] }, { ids: ['nope'] }, { ids: [id, id] }, { up_to: id, extra: true }, { up_to: 5 }]) {
    const res = await ack(api, s.me.key, body)
    t.equal(res.statusCode, 400, JSON.stringify(body))
    t.same(Object.keys(res.json()).sort(), ['code', 'error'])
  }
  t.same(await inbox(api, s.me.key), before, 'nothing changed')
  const anonymous = await api({ method: 'GET', url: '/api/v1/inbox' })
  t.equal(anonymous.statusCode, 401)
})

t.test('acknowledged items never come back: from another instance and after a restart (PostgreSQL + Redis)', { skip: needsRedis() }, async (t) => {
  const config = await testConfig(t, { redis: true })
  const shared = { databaseUrl: config.databaseUrl, redis: true, redisPrefix: config.redisPrefix }
  const one = await build(t, shared)
  const ws = await seedWorkspace(one.app)
  const channels = await scenarioChannels(one.api, ws)
  const two = await build(t, shared)
  const s = await playScenario(one.api, ws, channels)
  await planned(one.app)

  // Read and acknowledge on instance two.
  const page = await inbox(two.api, s.me.key)
  t.same(
    page.items.map(itemBrief).map(([kind]: [string, string]) => kind),
    ['mention', 'dm', 'thread_reply', 'reaction'],
  )
  t.equal((await ack(two.api, s.me.key, { up_to: page.items[2].id })).json().acknowledged, 3)
  t.same((await inbox(one.api, s.me.key)).items.map(itemBrief), [['reaction', s.own.id]], 'instance one agrees')

  // A wait on instance two is woken by an item planned on either instance.
  const waiting = inbox(two.api, s.me.key, `?wait=30&after=${page.items[3].id}`)
  for (let i = 0; i < 500 && two.app.inboxBell.waiting < 1; i++) await new Promise((r) => setTimeout(r, 10))
  const dm = await postIn(one.api, ws.primary.key, s.dm, 'across instances')
  t.same((await waiting).items.map(itemBrief), [['dm', dm.id]])

  // Restart: a fresh instance on the same database sees the same inbox.
  await one.app.close()
  const three = await build(t, shared)
  t.same((await inbox(three.api, s.me.key)).items.map(itemBrief), [
    ['reaction', s.own.id],
    ['dm', dm.id],
  ])
})

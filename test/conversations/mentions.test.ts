// Mentions over REST and the WebSocket (docs/decisions.md, "Mentions"): `@name` tokens and
// explicit ids resolve to channel members only, in order without repeats; a name or id outside
// the channel is dropped without a trace (nothing stored, no event, the same answer whether it
// exists or not); edits resolve again and notify only the newly mentioned; GET /api/v1/mentions
// pages the caller's mentions in the channels it can still read; a socket with `only=mentions`
// gets message_mentioned frames and nothing else.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { uuidv7 } from '../../src/lib/ids.ts'
import { connect, listen, type Frame, type WsClient } from '../realtime/helpers.ts'
import { addMember, bearer, build, createChannelId, removeMember, seedWorkspace, type Api, type Workspace } from '../support/index.ts'

async function setup(t: Test) {
  const built = await build(t)
  const ws = await seedWorkspace(built.app)
  return { ...built, ws }
}

async function post(api: Api, token: string, channelId: string, payload: Record<string, unknown>) {
  return api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(token), payload })
}

async function mentionEvents(app: FastifyInstance, channelId: string): Promise<{ message_id: string; mentioned_ids: string[]; mentioned_agent_ids: string[] }[]> {
  const { rows } = await app.db.pool.query<{ payload: { message: { id: string }; mentioned_ids: string[]; mentioned_agent_ids: string[] } }>(
    `SELECT payload FROM outbox_events WHERE type = 'message.mentioned' AND channel_id = $1 ORDER BY id`,
    [channelId],
  )
  return rows.map((r) => ({ message_id: r.payload.message.id, mentioned_ids: r.payload.mentioned_ids, mentioned_agent_ids: r.payload.mentioned_agent_ids }))
}

/** A human whose display name has spaces (the fixtures' humans are named after their e-mail). */
async function seedNamedHuman(app: FastifyInstance, displayName: string, email: string): Promise<{ id: string; token: string }> {
  const user = await app.db.prisma.user.create({ data: { id: uuidv7(), email, displayName, passwordHash: null, role: 'member', status: 'active' } })
  return { id: user.id, token: app.signUserToken(user.id) }
}

t.test('@name tokens resolve to members, in order, without repeats; non-members are dropped', async (t) => {
  const { app, api, ws } = await setup(t)
  const [a1, a2] = ws.agents as [Workspace['agents'][0], Workspace['agents'][0]]
  const ada = await seedNamedHuman(app, 'Ada Lovelace', 'ada@example.com')
  const ch = await createChannelId(api, ws.owner.token, 'general', [ws.member.id, a1.id, a2.id, ada.id])

  const res = await post(api, ws.owner.token, ch, {
    text: 'hi @AGENT-2 and @ada-lovelace, then @agent-1. again @agent-2; mail bob@agent-1.com; @primary-agent is not here, @nobody exists not',
  })
  t.equal(res.statusCode, 201)
  const message = res.json()
  t.same(message.mentions, [a2.id, ada.id, a1.id], 'order of first appearance, case-insensitive, e-mail addresses are not mentions')

  const got = await api({ method: 'GET', url: `/api/v1/channels/${ch}/messages/${message.id}`, headers: bearer(ws.member.token) })
  t.same(got.json().mentions, message.mentions, 'stored with the message')
  const page = await api({ method: 'GET', url: `/api/v1/channels/${ch}/messages`, headers: bearer(ws.member.token) })
  t.same(page.json().messages[0].mentions, message.mentions, 'history carries them')

  t.same(await mentionEvents(app, ch), [{ message_id: message.id, mentioned_ids: [a2.id, ada.id, a1.id], mentioned_agent_ids: [a2.id, a1.id] }], 'one message.mentioned event')

  const plain = await post(api, ws.owner.token, ch, { text: 'no mentions here' })
  t.same(plain.json().mentions, [], 'a message without mentions has an empty list')

  const self = await post(api, ws.member.token, ch, { text: 'note to @member: me' })
  t.same(self.json().mentions, [ws.member.id], 'a self-mention is stored')
  t.equal((await mentionEvents(app, ch)).length, 1, 'but notifies no one')
})

t.test('a human handle that two members share resolves to no one; an agent name wins over a human handle', async (t) => {
  const { app, api, ws } = await setup(t)
  const [a1] = ws.agents
  const one = await seedNamedHuman(app, 'Ada Lovelace', 'ada1@example.com')
  const two = await seedNamedHuman(app, 'ada  LOVELACE', 'ada2@example.com')
  const impostor = await seedNamedHuman(app, 'Agent 1', 'agent1@example.com')
  const ch = await createChannelId(api, ws.owner.token, 'adas', [one.id, two.id, a1!.id, impostor.id])
  const res = await post(api, ws.owner.token, ch, { text: '@ada-lovelace and @agent-1' })
  t.same(res.json().mentions, [a1!.id])
  const explicit = await post(api, ws.owner.token, ch, { text: '@ada-lovelace', mentions: [two.id] })
  t.same(explicit.json().mentions, [two.id], 'explicit ids address one of them')
})

t.test('explicit ids: deduplicated after the text tokens; non-members ignored the same whether they exist or not', async (t) => {
  const { app, api, ws } = await setup(t)
  const [a1, a2] = ws.agents as [Workspace['agents'][0], Workspace['agents'][0]]
  const ch = await createChannelId(api, ws.owner.token, 'explicit', [ws.member.id, a1.id, a2.id])

  const res = await post(api, ws.member.token, ch, { text: 'ping @agent-1', mentions: [a2.id, a1.id, a2.id, ws.owner.id] })
  t.equal(res.statusCode, 201)
  t.same(res.json().mentions, [a1.id, a2.id, ws.owner.id])

  // ws.primary exists but is not a member; the other id exists nowhere: same answer, nothing kept.
  const existing = await post(api, ws.member.token, ch, { text: 'x', mentions: [ws.primary.id] })
  const unknown = await post(api, ws.member.token, ch, { text: 'x', mentions: [uuidv7()] })
  t.equal(existing.statusCode, 201)
  t.equal(unknown.statusCode, 201)
  t.same(existing.json().mentions, [])
  t.same(unknown.json().mentions, [])
  t.same(Object.keys(existing.json()).sort(), Object.keys(unknown.json()).sort(), 'the same shape either way')
  const byName = await post(api, ws.member.token, ch, { text: 'hello @primary-agent and @no-such-agent' })
  t.same(byName.json().mentions, [])
  const events = await mentionEvents(app, ch)
  t.equal(events.length, 1, 'only the first post notified anyone')
  t.same(events[0]!.mentioned_ids, [a1.id, a2.id, ws.owner.id])
  const stored = await app.db.pool.query(`SELECT count(*)::int AS n FROM messages WHERE $1::uuid = ANY(mentions)`, [ws.primary.id])
  t.equal(stored.rows[0].n, 0, 'the non-member is stored nowhere')

  const before = await app.db.prisma.message.count({ where: { channelId: ch } })
  const bad = await post(api, ws.member.token, ch, { text: 'x', mentions: ['not-a-uuid'] })
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().code, 'VALIDATION_ERROR')
  const tooMany = await post(api, ws.member.token, ch, { text: 'x', mentions: Array.from({ length: 101 }, () => uuidv7()) })
  t.equal(tooMany.statusCode, 400)
  t.equal(await app.db.prisma.message.count({ where: { channelId: ch } }), before, 'nothing stored')
})

t.test('multipart posts take a comma-separated mentions field', async (t) => {
  const { api, ws } = await setup(t)
  const [a1, a2] = ws.agents as [Workspace['agents'][0], Workspace['agents'][0]]
  const ch = await createChannelId(api, ws.owner.token, 'files', [a1.id, a2.id])
  const boundary = '----mentions'
  const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  const body = part('text', 'see @agent-2') + part('mentions', `${a1.id}, ${ws.primary.id}`) + part('mentions', a2.id) + `--${boundary}--\r\n`
  const res = await api({
    method: 'POST',
    url: `/api/v1/channels/${ch}/messages`,
    headers: { ...bearer(ws.owner.token), 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: body,
  })
  t.equal(res.statusCode, 201, res.body)
  t.same(res.json().mentions, [a2.id, a1.id])
  const bad = await api({
    method: 'POST',
    url: `/api/v1/channels/${ch}/messages`,
    headers: { ...bearer(ws.owner.token), 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: part('text', 'x') + part('mentions', 'nope') + `--${boundary}--\r\n`,
  })
  t.equal(bad.statusCode, 400)
})

t.test('editing resolves mentions again and notifies only the newly mentioned', async (t) => {
  const { app, api, ws } = await setup(t)
  const [a1, a2] = ws.agents as [Workspace['agents'][0], Workspace['agents'][0]]
  const ch = await createChannelId(api, ws.owner.token, 'edits', [ws.member.id, a1.id, a2.id])
  const m = (await post(api, ws.member.token, ch, { text: 'hi @agent-1', mentions: [ws.owner.id] })).json()
  t.same(m.mentions, [a1.id, ws.owner.id])

  const edit = (payload: Record<string, unknown>) => api({ method: 'PATCH', url: `/api/v1/channels/${ch}/messages/${m.id}`, headers: bearer(ws.member.token), payload })
  const first = await edit({ text: 'hi @agent-1 and @agent-2' })
  t.equal(first.statusCode, 200)
  t.same(first.json().mentions, [a1.id, a2.id, ws.owner.id], 'explicit ids of the post are kept when the edit gives none')
  const second = await edit({ text: 'hi @agent-2 only' })
  t.same(second.json().mentions, [a2.id, ws.owner.id], 'a name taken out of the text is no longer mentioned')
  const third = await edit({ text: 'hi @agent-2 and @agent-1 again', mentions: [] })
  t.same(third.json().mentions, [a2.id, a1.id], 'explicit ids replaced by the edit')

  const events = await mentionEvents(app, ch)
  t.same(
    events.map((e) => e.mentioned_ids),
    [[a1.id, ws.owner.id], [a2.id], [a1.id]],
    'post: everyone; first edit: agent-2 only; second: no one new; third: agent-1 again (it had been dropped)',
  )
  const updated = await app.db.pool.query(`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'message.updated' AND channel_id = $1`, [ch])
  t.equal(updated.rows[0].n, 3)

  const stranger = await api({ method: 'PATCH', url: `/api/v1/channels/${ch}/messages/${m.id}`, headers: bearer(ws.member.token), payload: { text: 'x', mentions: ['bad'] } })
  t.equal(stranger.statusCode, 400)
})

t.test('GET /api/v1/mentions: newest first, cursor pages, since, and only channels one can still read', async (t) => {
  const { api, ws } = await setup(t)
  const [a1] = ws.agents
  const one = await createChannelId(api, ws.owner.token, 'one', [ws.member.id, a1!.id])
  const two = await createChannelId(api, ws.owner.token, 'two', [ws.member.id, a1!.id])
  const ids: string[] = []
  ids.push((await post(api, a1!.key, one, { text: 'first @member' })).json().id)
  await post(api, a1!.key, one, { text: 'not about anyone' })
  ids.push((await post(api, a1!.key, two, { text: 'second', mentions: [ws.member.id] })).json().id)
  ids.push((await post(api, a1!.key, one, { text: '@member third' })).json().id)
  await post(api, ws.member.token, one, { text: '@agent-1 for the agent' })

  const list = (token: string, qs = '') => api({ method: 'GET', url: `/api/v1/mentions${qs}`, headers: bearer(token) })
  const all = await list(ws.member.token)
  t.equal(all.statusCode, 200)
  t.same(
    all.json().messages.map((m: { id: string }) => m.id),
    [...ids].reverse(),
  )
  t.equal(all.json().has_more, false)
  t.equal(all.json().next_cursor, ids[0])

  const p1 = (await list(ws.member.token, '?limit=2')).json()
  t.same(
    p1.messages.map((m: { id: string }) => m.id),
    [ids[2], ids[1]],
  )
  t.equal(p1.has_more, true)
  t.equal(p1.next_cursor, ids[1])
  const p2 = (await list(ws.member.token, `?limit=2&cursor=${p1.next_cursor}`)).json()
  t.same(
    p2.messages.map((m: { id: string }) => m.id),
    [ids[0]],
  )
  t.equal(p2.has_more, false)

  const second = (await api({ method: 'GET', url: `/api/v1/channels/${two}/messages`, headers: bearer(ws.member.token) })).json().messages[0]
  const since = (await list(ws.member.token, `?since=${encodeURIComponent(second.created_at)}`)).json()
  t.same(
    since.messages.map((m: { id: string }) => m.id),
    [ids[2]],
    'since: posted after that time',
  )

  const agentView = (await list(a1!.key)).json()
  t.equal(agentView.messages.length, 1, "an agent lists its own mentions, not others'")

  await removeMember(api, ws.owner.token, two, ws.member.id)
  const after = (await list(ws.member.token)).json()
  t.same(
    after.messages.map((m: { id: string }) => m.id),
    [ids[2], ids[0]],
    'a channel one was removed from no longer counts',
  )

  t.same((await list(ws.observer.token)).json(), { messages: [], has_more: false, next_cursor: null })
  t.equal((await api({ method: 'GET', url: '/api/v1/mentions' })).statusCode, 401)
  const tooBig = await list(ws.member.token, '?limit=101')
  t.equal(tooBig.statusCode, 400)
  t.equal((await list(ws.member.token, '?cursor=nope')).statusCode, 400)
})

t.test('WebSocket: send_message takes mentions; only=mentions gets message_mentioned frames and nothing else', async (t) => {
  const { app, api, ws } = await setup(t)
  await listen(app)
  const [a1, a2] = ws.agents as [Workspace['agents'][0], Workspace['agents'][0]]
  const ch = await createChannelId(api, ws.owner.token, 'live', [ws.member.id, a1.id, a2.id])

  const { client: onlyMentions, ready: start } = await connectWith(app, a1.key, { only: 'mentions' })
  const { client: everything } = await connectWith(app, a2.key, {})
  const { client: sender } = await connectWith(app, ws.member.token, {})

  await post(api, ws.owner.token, ch, { text: 'plain' })
  const forA1 = (await post(api, ws.owner.token, ch, { text: 'hey @agent-1' })).json()
  const forA2 = (await post(api, ws.owner.token, ch, { text: 'hey @agent-2' })).json()
  sender.send({ type: 'send_message', id: 'm1', channel_id: ch, text: 'last one', mentions: [a1.id, ws.primary.id] })
  const ack = await sender.type('ack', (f) => f.id === 'm1')
  t.same(ack.message.mentions, [a1.id], 'send_message: explicit ids, non-members dropped')

  const last = await onlyMentions.type('message_mentioned', (f) => f.message.id === ack.message.id)
  t.same(last.mentioned_ids, [a1.id])
  t.same(last.mentioned_agent_ids, [a1.id])
  const got = onlyMentions.events()
  t.same(
    got.map((f: Frame) => [f.type, f.message.id]),
    [
      ['message_mentioned', forA1.id],
      ['message_mentioned', ack.message.id],
    ],
    'mentions only',
  )

  await everything.type('new_message', (f) => f.message.id === ack.message.id)
  const kinds = everything.events().map((f: Frame) => `${f.type}:${f.message?.text}`)
  t.same(
    kinds.filter((k) => k.startsWith('message_mentioned')),
    ['message_mentioned:hey @agent-2'],
    "a normal socket gets its own mentions too, not others'",
  )
  t.equal(kinds.filter((k) => k.startsWith('new_message')).length, 4)
  t.same(forA2.mentions, [a2.id])

  // Replay with since: the same filter.
  const { client: replayed, ready } = await connectWith(app, a1.key, { only: 'mentions', since: start.cursor })
  t.equal(ready.replayed, 2)
  t.same(
    replayed.events().map((f: Frame) => f.type),
    ['message_mentioned', 'message_mentioned'],
  )

  // The REST event log shows message_mentioned only to those it notifies.
  const log = async (token: string) =>
    (await api({ method: 'GET', url: `/api/v1/events?since=${start.cursor}`, headers: bearer(token) })).json().events.filter((e: Frame) => e.type === 'message_mentioned').length
  t.equal(await log(a1.key), 2)
  t.equal(await log(a2.key), 1)
  t.equal(await log(ws.member.token), 0)
  for (const c of [onlyMentions, everything, sender, replayed]) await c.close()
})

t.test('adding a member later makes them mentionable; removed members are not', async (t) => {
  const { api, ws } = await setup(t)
  const [a1] = ws.agents
  const ch = await createChannelId(api, ws.owner.token, 'later')
  t.same((await post(api, ws.owner.token, ch, { text: '@agent-1 ?' })).json().mentions, [])
  await addMember(api, ws.owner.token, ch, a1!.id)
  t.same((await post(api, ws.owner.token, ch, { text: '@agent-1 ?' })).json().mentions, [a1!.id])
  await removeMember(api, ws.owner.token, ch, a1!.id)
  t.same((await post(api, ws.owner.token, ch, { text: '@agent-1 ?', mentions: [a1!.id] })).json().mentions, [])
})

async function connectWith(app: FastifyInstance, token: string, params: Record<string, string>): Promise<{ client: WsClient; ready: Frame }> {
  return connect(app, token, params)
}

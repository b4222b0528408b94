// Reactions: PUT / DELETE /channels/{id}/messages/{message_id}/reactions/{emoji}, the `reactions`
// field of the message in every read path, and the reaction.added / reaction.removed events on the
// REST event log and the WebSocket.
import t, { type Test } from 'tap'
import { connect, listen } from '../realtime/helpers.ts'
import { baseUrl, openStream } from '../realtime/sse-client.ts'
import { setup, type Ctx } from './fixtures/support.ts'
import { addMember, bearer, createChannel, MISSING, post } from '../support/index.ts'

const EYES = '👀'
const DONE = '✅'
const url = (ch: string, m: string, emoji: string) => `/api/v1/channels/${ch}/messages/${m}/reactions/${encodeURIComponent(emoji)}`
const react = (c: Ctx, token: string, ch: string, m: string, emoji: string) => c.api({ method: 'PUT', url: url(ch, m, emoji), headers: bearer(token) })
const unreact = (c: Ctx, token: string, ch: string, m: string, emoji: string) => c.api({ method: 'DELETE', url: url(ch, m, emoji), headers: bearer(token) })
const reactionRows = (c: Ctx) => c.app.db.prisma.messageReaction.count()

async function world(t: Test) {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'work')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.observer.id)
  await addMember(c.api, c.tok.a1, ch.id, c.ws.agents[1]!.id)
  const m = await post(c.api, c.tok.member, ch.id, 'please deploy')
  return { c, ch, m }
}

t.test('PUT adds a reaction once, DELETE takes it back; exact shapes', async (t) => {
  const { c, ch, m } = await world(t)
  t.same(m.reactions, [], 'a new message has no reactions')

  const first = await react(c, c.tok.a1, ch.id, m.id, EYES)
  t.equal(first.statusCode, 200)
  t.same(first.json(), { channel_id: ch.id, message_id: m.id, reactions: [{ emoji: EYES, count: 1, reacted: true }] })
  const again = await react(c, c.tok.a1, ch.id, m.id, EYES)
  t.equal(again.statusCode, 200)
  t.same(again.json(), first.json(), 'PUT twice is one reaction')

  const other = await react(c, c.tok.member, ch.id, m.id, EYES)
  t.same(other.json().reactions, [{ emoji: EYES, count: 2, reacted: true }])
  await react(c, c.tok.a1, ch.id, m.id, ':shipit:')

  const list = (await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.a2) })).json()
  t.same(
    list.messages[0].reactions,
    [
      { emoji: EYES, count: 2, reacted: false },
      { emoji: ':shipit:', count: 1, reacted: false },
    ],
    'history: counts, and whether the caller reacted, in the order they were first added',
  )
  const one = (await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.member) })).json()
  t.same(one.reactions, [
    { emoji: EYES, count: 2, reacted: true },
    { emoji: ':shipit:', count: 1, reacted: false },
  ])
  const hits = (await c.api({ method: 'GET', url: '/api/v1/messages/search?q=deploy', headers: bearer(c.tok.a1) })).json().results
  t.same(
    hits[0].reactions,
    [
      { emoji: EYES, count: 2, reacted: true },
      { emoji: ':shipit:', count: 1, reacted: true },
    ],
    'a search hit carries them',
  )
  t.same(hits[0].message.reactions, hits[0].reactions)

  const gone = await unreact(c, c.tok.a1, ch.id, m.id, EYES)
  t.equal(gone.statusCode, 204)
  t.equal(gone.body, '')
  const absent = await unreact(c, c.tok.a1, ch.id, m.id, EYES)
  t.equal(absent.statusCode, 204, 'taking back an absent reaction is not an error')
  const after = (await c.api({ method: 'GET', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.a1) })).json()
  t.same(after.reactions, [
    { emoji: EYES, count: 1, reacted: false },
    { emoji: ':shipit:', count: 1, reacted: true },
  ])

  const edited = await c.api({ method: 'PATCH', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.member), payload: { text: 'please deploy now' } })
  t.same(
    edited.json().reactions,
    [
      { emoji: EYES, count: 1, reacted: true },
      { emoji: ':shipit:', count: 1, reacted: false },
    ],
    'an edit answers with the reactions as the editor sees them',
  )
  const updatedEvent = c.events.find((e) => e.type === 'message.updated')!
  t.same(
    (updatedEvent.payload as any).message.reactions,
    [
      { emoji: EYES, count: 1, reacted: false },
      { emoji: ':shipit:', count: 1, reacted: false },
    ],
    'message.updated: counts, reacted false',
  )

  await c.api({ method: 'DELETE', url: `/api/v1/channels/${ch.id}/messages/${m.id}`, headers: bearer(c.tok.member) })
  t.equal(await reactionRows(c), 0, 'reactions go with their message')
})

t.test('events: one per change, with the new count; none for a repeat', async (t) => {
  const { c, ch, m } = await world(t)
  const before = c.events.length
  await react(c, c.tok.a1, ch.id, m.id, DONE)
  await react(c, c.tok.a1, ch.id, m.id, DONE)
  await react(c, c.tok.a2, ch.id, m.id, DONE)
  await unreact(c, c.tok.a1, ch.id, m.id, DONE)
  await unreact(c, c.tok.a1, ch.id, m.id, DONE)
  const a1 = c.ws.agents[0]!
  const a2 = c.ws.agents[1]!
  const mine = c.events.slice(before).map((e) => [e.type, e.channelId, e.payload])
  t.same(mine, [
    ['reaction.added', ch.id, { channel_id: ch.id, message_id: m.id, emoji: DONE, member_id: a1.id, member_type: 'AGENT', member_name: a1.name, count: 1 }],
    ['reaction.added', ch.id, { channel_id: ch.id, message_id: m.id, emoji: DONE, member_id: a2.id, member_type: 'AGENT', member_name: a2.name, count: 2 }],
    ['reaction.removed', ch.id, { channel_id: ch.id, message_id: m.id, emoji: DONE, member_id: a1.id, member_type: 'AGENT', member_name: a1.name, count: 1 }],
  ])

  // The REST event log carries them as frames; a non-member's log does not.
  const log = async (token: string) => {
    for (;;) {
      const page = (await c.api({ method: 'GET', url: '/api/v1/events?limit=500', headers: bearer(token) })).json()
      const frames = page.events.filter((f: any) => f.type.startsWith('reaction_'))
      if (token !== c.tok.member || frames.length === 3) return frames
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  const frames = await log(c.tok.member)
  t.same(
    frames.map((f: any) => [f.type, f.channel_id, f.message_id, f.emoji, f.member_id, f.count]),
    [
      ['reaction_added', ch.id, m.id, DONE, a1.id, 1],
      ['reaction_added', ch.id, m.id, DONE, a2.id, 2],
      ['reaction_removed', ch.id, m.id, DONE, a1.id, 1],
    ],
  )
  t.same(Object.keys(frames[0]).sort(), ['channel_id', 'count', 'cursor', 'emoji', 'event_id', 'member_id', 'member_name', 'member_type', 'message_id', 'occurred_at', 'type'])
  t.same(await log(c.tok.primary), [], 'the primary agent is not a member of this channel: no reaction events')
})

t.test('WebSocket: members get reaction frames, non-members none', async (t) => {
  const { c, ch, m } = await world(t)
  await listen(c.app)
  const { client: member } = await connect(c.app, c.tok.member)
  const { client: stranger } = await connect(c.app, c.tok.primary)
  t.teardown(() => Promise.all([member.close(), stranger.close()]).then(() => {}))
  await react(c, c.tok.a1, ch.id, m.id, EYES)
  const added = await member.type('reaction_added')
  t.match(added, { channel_id: ch.id, message_id: m.id, emoji: EYES, member_id: c.ws.agents[0]!.id, member_type: 'AGENT', count: 1 })
  await unreact(c, c.tok.a1, ch.id, m.id, EYES)
  t.match(await member.type('reaction_removed'), { message_id: m.id, emoji: EYES, count: 0 })
  // A marker the stranger does get (its own DM) proves it would have had the reaction by now.
  const dm = (await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.a1), payload: { participant_id: c.ws.primary.id } })).json()
  await post(c.api, c.tok.a1, dm.id, 'marker')
  await stranger.type('new_message')
  t.same(
    stranger.frames.filter((f) => f.type.startsWith('reaction_')),
    [],
    'no reaction frames for a channel one is not in',
  )
})

t.test('SSE: the event stream carries reaction events', async (t) => {
  const { c, ch, m } = await world(t)
  await listen(c.app)
  const { stream } = await openStream(baseUrl(c.app), c.tok.member)
  t.teardown(() => stream.close())
  await react(c, c.tok.a1, ch.id, m.id, DONE)
  const frame = await stream.type('reaction_added')
  t.match(frame, { type: 'reaction_added', channel_id: ch.id, message_id: m.id, emoji: DONE, member_id: c.ws.agents[0]!.id, member_type: 'AGENT', count: 1 })
  await unreact(c, c.tok.a1, ch.id, m.id, DONE)
  t.match(await stream.type('reaction_removed'), { message_id: m.id, emoji: DONE, count: 0 })
})

t.test('who may react; bad emoji; nothing stored on refusal', async (t) => {
  const { c, ch, m } = await world(t)
  const none = await c.api({ method: 'PUT', url: url(ch.id, m.id, EYES) })
  t.equal(none.statusCode, 401)
  t.equal(none.json().code, 'UNAUTHORIZED')

  const observer = await react(c, c.tok.observer, ch.id, m.id, EYES)
  t.equal(observer.statusCode, 403, 'observers read but do not react')
  t.equal(observer.json().code, 'FORBIDDEN')
  t.equal((await unreact(c, c.tok.observer, ch.id, m.id, EYES)).statusCode, 403)

  const owner = await react(c, c.tok.owner, ch.id, m.id, EYES)
  t.equal(owner.statusCode, 403, 'the owner sees every channel but reacts only where it is a member')

  const other = await createChannel(c.api, c.tok.a2, 'private')
  const hidden = await post(c.api, c.tok.a2, other.id, 'secret')
  await react(c, c.tok.a2, other.id, hidden.id, EYES)
  for (const res of [await react(c, c.tok.member, other.id, hidden.id, EYES), await unreact(c, c.tok.member, other.id, hidden.id, EYES)]) {
    t.equal(res.statusCode, 404, 'a channel one cannot see is not found')
    t.equal(res.json().code, 'NOT_FOUND')
  }
  const peek = await c.api({ method: 'GET', url: `/api/v1/channels/${other.id}/messages/${hidden.id}`, headers: bearer(c.tok.member) })
  t.equal(peek.statusCode, 404, 'nor its reactions')
  t.equal((await react(c, c.tok.a1, ch.id, MISSING, EYES)).statusCode, 404, 'unknown message')
  t.equal((await react(c, c.tok.a1, ch.id, hidden.id, EYES)).statusCode, 404, 'a message of another channel')
  t.equal((await react(c, c.tok.a1, MISSING, m.id, EYES)).statusCode, 404, 'unknown channel')

  for (const bad of ['a', '👍👍', 'hello', ':Upper:', '::', ':a b:', '©', `:${'x'.repeat(33)}:`, '<b>', ' 👍']) {
    const res = await react(c, c.tok.a1, ch.id, m.id, bad)
    t.equal(res.statusCode, 400, `refused: ${JSON.stringify(bad)}`)
    t.equal(res.json().code, 'INVALID_EMOJI')
  }
  for (const good of ['👍🏽', '🇫🇷', '1️⃣', '👨‍👩‍👧‍👦', '❤️', ':+1:']) t.equal((await react(c, c.tok.a1, ch.id, m.id, good)).statusCode, 200, `accepted: ${good}`)
  t.equal(await c.app.db.prisma.messageReaction.count({ where: { memberId: { not: c.ws.agents[0]!.id } } }), 1, 'only a2’s reaction in the hidden channel besides a1’s')
  t.equal(await c.app.db.prisma.messageReaction.count({ where: { memberId: c.ws.agents[0]!.id } }), 6, 'refusals stored nothing')
})

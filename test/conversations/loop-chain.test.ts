// Loop protection (docs/loops.md), the chain cap: in_reply_to_event and chain_depth, and a human
// and an agent alternating 200 times under the strictest settings without ever being blocked.
import t from 'tap'
import { setup } from './fixtures/support.ts'
import { assertLoopDetected, count, LISTEN_ENV, listens, postAs, room, settings } from './fixtures/loops.ts'
import { bearer, MISSING, post } from '../support/index.ts'

t.test('chain depth: replies to agent messages deepen the chain up to the cap; a human starts over', async (t) => {
  const c = await setup(t)
  await settings(c, { loop_guard_max_turns: 1_000, loop_guard_max_depth: 3 })
  const channel = await room(c)
  const m1 = await post(c.api, c.tok.a1, channel, 'start')
  t.equal(m1.chain_depth, 1)
  t.equal(m1.in_reply_to_event, null)
  const r2 = await postAs(c.api, c.tok.a2, channel, { text: 'reply 2', in_reply_to_event: m1.id })
  t.equal(r2.statusCode, 201)
  t.match(r2.json(), { chain_depth: 2, in_reply_to_event: m1.id })
  const r3 = await postAs(c.api, c.tok.a1, channel, { text: 'reply 3', in_reply_to_event: r2.json().id })
  t.match(r3.json(), { chain_depth: 3 })
  const r4 = await postAs(c.api, c.tok.a2, channel, { text: 'reply 4', in_reply_to_event: r3.json().id })
  assertLoopDetected(t, r4, 60)
  t.match(r4.json().error, /message 4 of a chain of agent replies .* allows 3/)
  t.equal(await count(c, channel), 3)

  // The id of the message.created event is the message id (what webhook receivers see).
  const created = c.events.find((e) => e.type === 'message.created' && (e.payload.message as { id: string }).id === r3.json().id)
  t.equal(created?.id, r3.json().id)

  // An edit's event (message.updated) resolves to the edited message while the log keeps it.
  const edit = await c.api({ method: 'PATCH', url: `/api/v1/channels/${channel}/messages/${r3.json().id}`, headers: bearer(c.tok.a1), payload: { text: 'reply 3, edited' } })
  t.equal(edit.statusCode, 200)
  const updated = c.events.find((e) => e.type === 'message.updated')!
  assertLoopDetected(t, await postAs(c.api, c.tok.a2, channel, { text: 'to the edit', in_reply_to_event: updated.id }), 60)

  // A human's message is depth 0 whatever it replies to; an agent replying to it is depth 1.
  const human = await postAs(c.api, c.tok.member, channel, { text: 'human', in_reply_to_event: r3.json().id })
  t.match(human.json(), { chain_depth: 0, in_reply_to_event: r3.json().id, author_type: 'HUMAN' })
  t.match((await postAs(c.api, c.tok.a2, channel, { text: 'to the human', in_reply_to_event: human.json().id })).json(), { chain_depth: 1 })

  // Events that are not about a message, and unknown ids, start a chain.
  const joined = c.events.find((e) => e.type === 'member.joined')!
  t.match((await postAs(c.api, c.tok.a1, channel, { text: 'welcome', in_reply_to_event: joined.id })).json(), { chain_depth: 1, in_reply_to_event: joined.id })
  t.match((await postAs(c.api, c.tok.a1, channel, { text: 'unknown', in_reply_to_event: MISSING })).json(), { chain_depth: 1, in_reply_to_event: MISSING })

  // Listing shows the stored fields.
  const list = await c.api({ method: 'GET', url: `/api/v1/channels/${channel}/messages?limit=100`, headers: bearer(c.tok.a1) })
  t.same(
    list
      .json()
      .messages.map((m: { text: string; chain_depth: number }) => [m.text, m.chain_depth])
      .reverse(),
    [
      ['start', 1],
      ['reply 2', 2],
      ['reply 3, edited', 3],
      ['human', 0],
      ['to the human', 1],
      ['welcome', 1],
      ['unknown', 1],
    ],
  )

  // Bad input: 400, nothing stored.
  const before = await count(c, channel)
  for (const value of ['nope', 42, null, '']) {
    const res = await postAs(c.api, c.tok.a1, channel, { text: 'bad', in_reply_to_event: value })
    t.equal(res.statusCode, 400, JSON.stringify(value))
  }
  t.equal(await count(c, channel), before)

  // The cap off: any depth.
  await settings(c, { loop_guard_max_depth: 0 })
  t.match((await postAs(c.api, c.tok.a2, channel, { text: 'deep', in_reply_to_event: r3.json().id })).json(), { chain_depth: 4 })
})

t.test('a human and an agent alternating 200 times are never blocked, even with the strictest settings', async (t) => {
  const c = await setup(t)
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 86_400, loop_guard_max_depth: 1 })
  const dm = await c.api({ method: 'POST', url: '/api/v1/dm', headers: bearer(c.tok.member), payload: { participant_id: c.ws.agents[0]!.id } })
  const channel = dm.json().id as string
  const statuses: number[] = []
  let last: string | undefined
  for (let i = 0; i < 200; i++) {
    const human = await postAs(c.api, c.tok.member, channel, { text: `question ${i}`, ...(last ? { in_reply_to_event: last } : {}) })
    statuses.push(human.statusCode)
    const agent = await postAs(c.api, c.tok.a1, channel, { text: `answer ${i}`, in_reply_to_event: human.json().id })
    statuses.push(agent.statusCode)
    last = agent.json().id
  }
  t.equal(statuses.length, 400)
  t.same([...new Set(statuses)], [201], 'every one of the 400 posts was accepted')
  t.equal(await count(c, channel), 400)
  t.equal(await c.app.db.prisma.message.count({ where: { channelId: channel, authorType: 'AGENT', chainDepth: 1 } }), 200)
})

t.test('one agent answering itself (its webhook hears its own messages) takes no turns and is stopped by the chain cap', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 86_400, loop_guard_max_depth: 5 })
  await listens(t, c, 0)
  const channel = await room(c)
  let last = (await post(c.api, c.tok.a1, channel, 'I say something')).id
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    const res = await postAs(c.api, c.tok.a1, channel, { text: `I answer myself ${i}`, in_reply_to_event: last })
    statuses.push(res.statusCode)
    if (res.statusCode === 201) last = res.json().id
    else assertLoopDetected(t, res, 86_400)
  }
  t.same(statuses, [201, 201, 201, 201, 429, 429], 'depth 5 is the last admitted')
  t.equal(await count(c, channel), 5)
  // Posting without naming a cause is not a chain: one agent on its own is never refused.
  t.equal((await postAs(c.api, c.tok.a1, channel, { text: 'a fresh report' })).statusCode, 201)
})

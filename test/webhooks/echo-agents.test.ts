// The two-echo-agents scenario of issue 16 (docs/loops.md): two agents in one DM, each with a
// real webhook receiver (an HTTP server on port 0) that posts a reply to every message it is
// delivered, naming the delivery's event as `in_reply_to_event`. Without protection this never
// ends (92 messages in 3 s were measured); with it the exchange stops at the configured limit,
// exactly, and a human message lets it run to the limit once more.
//
// The exchange is over when every stored agent message has been delivered to every receiver that
// gets it and each of those deliveries' replies has been answered: replies are the only source
// of new messages, so nothing can follow. Tests wait for that state, never for time.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../helper.ts'
import { createWebhook, eventually, FAST_ENV, receiver, type Received } from './helpers.ts'
import { type Api, bearer, type SeededAgent, seedWorkspace } from '../support/index.ts'

interface EchoAgent {
  agent: SeededAgent
  /** Reply attempts: the status of each POST the receiver made. */
  replies: number[]
  /** Deliveries received (message.created). */
  heard: { authorId: string; eventId: string; messageId: string }[]
  url?: string
}

/**
 * A receiver that, for every message.created it is delivered, posts a reply as `agent`. Like a
 * well-behaved receiver it answers at once and works afterwards, and ignores a redelivery of a
 * delivery it already has (a slow answer on a loaded machine could be retried).
 */
async function echoAgent(t: Test, api: Api, agent: SeededAgent, channelId: () => string, includeOwn: boolean): Promise<EchoAgent> {
  const echo: EchoAgent = { agent, replies: [], heard: [] }
  const seen = new Set<string>()
  const reply = async (body: { event_id: string; payload: { message: { id: string; author_id: string; text: string } } }): Promise<void> => {
    const m = body.payload.message
    const res = await api({
      method: 'POST',
      url: `/api/v1/channels/${channelId()}/messages`,
      headers: bearer(agent.key),
      payload: { text: `${agent.name} echoes: ${m.text}`.slice(0, 200), in_reply_to_event: body.event_id },
    })
    if (res.statusCode !== 201 && !(res.statusCode === 429 && res.json().code === 'LOOP_DETECTED')) t.fail(`unexpected reply: ${res.statusCode} ${res.body}`)
    echo.replies.push(res.statusCode)
  }
  await receiver(t, (req: Received) => {
    const body = JSON.parse(req.body)
    const deliveryId = String(req.headers['x-webhook-delivery-id'])
    if (body.event_type !== 'message.created' || seen.has(deliveryId)) return 200
    seen.add(deliveryId)
    const m = body.payload.message
    echo.heard.push({ authorId: m.author_id, eventId: body.event_id, messageId: m.id })
    void reply(body)
    return 200
  }).then((rx) => (echo.url = rx.url()))
  const res = await api({
    method: 'POST',
    url: `/api/v1/agents/${agent.id}/webhooks`,
    headers: bearer(agent.key),
    payload: { url: echo.url, events: ['message.created'], include_own_messages: includeOwn },
  })
  if (res.statusCode !== 201) throw new Error(`webhook: ${res.statusCode} ${res.body}`)
  t.equal(res.json().include_own_messages, includeOwn)
  return echo
}

async function agentMessages(app: FastifyInstance, channelId: string): Promise<number> {
  return app.db.prisma.message.count({ where: { channelId, authorType: 'AGENT' } })
}

/**
 * Waits until the exchange is over (see the header) and returns the number of agent messages.
 * `deliveriesOf(authorId)`: to how many of the echo agents a message by that author is delivered.
 */
async function settled(app: FastifyInstance, channelId: string, echoes: EchoAgent[], deliveriesOf: (authorId: string) => number): Promise<number> {
  return eventually(async () => {
    const rows = await app.db.prisma.message.findMany({ where: { channelId }, select: { authorId: true } })
    const expected = rows.reduce((n, r) => n + deliveriesOf(r.authorId), 0)
    const heard = echoes.reduce((n, e) => n + e.heard.length, 0)
    const answered = echoes.reduce((n, e) => n + e.replies.length, 0)
    if (heard !== expected || answered !== expected) return null
    // Settled only if no message was stored meanwhile.
    const again = await app.db.prisma.message.count({ where: { channelId } })
    return again === rows.length ? agentMessages(app, channelId) : null
  }, 'the echo exchange to settle')
}

async function dmOf(api: Api, a: SeededAgent, b: SeededAgent): Promise<string> {
  const res = await api({ method: 'POST', url: '/api/v1/dm', headers: bearer(a.key), payload: { participant_id: b.id } })
  if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`dm: ${res.statusCode} ${res.body}`)
  return res.json().id
}

t.test('two agents that echo everything they hear (their own messages too) are stopped by the turn limit and the chain cap; a human message starts over', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const TURNS = 6
  const DEPTH = 5
  const patch = await api({
    method: 'PATCH',
    url: '/api/v1/workspace',
    headers: bearer(ws.owner.token),
    payload: { loop_guard_max_turns: TURNS, loop_guard_window_seconds: 3600, loop_guard_max_depth: DEPTH },
  })
  t.equal(patch.statusCode, 200)
  const [a, b] = ws.agents as [SeededAgent, SeededAgent]
  // A channel rather than their DM, so that a human can speak in it later.
  const created = await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(a.key), payload: { name: 'echo-room', description: 'two echo agents' } })
  const channelId = created.json().id as string
  for (const id of [b.id, ws.member.id]) {
    t.equal((await api({ method: 'POST', url: `/api/v1/channels/${channelId}/members`, headers: bearer(a.key), payload: { user_id: id } })).statusCode, 201)
  }
  const echoA = await echoAgent(t, api, a, () => channelId, true)
  const echoB = await echoAgent(t, api, b, () => channelId, true)
  const echoes = [echoA, echoB]
  // Each message reaches both agents (each hears itself), so every message asks for two replies.
  const toBoth = () => 2
  const turnsRecorded = async () => (await app.db.pool.query<{ n: number }>('SELECT coalesce(max(cardinality(stamps)), 0)::int AS n FROM loop_guards WHERE channel_id = $1', [channelId])).rows[0]!.n

  const kickoff = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(a.key), payload: { text: 'ping' } })
  t.equal(kickoff.statusCode, 201)
  const first = await settled(app, channelId, echoes, toBoth)
  // Answering oneself takes no turn; the chain cap bounds it (each message has two answers, so at
  // most 2^DEPTH - 1 messages), and the turns between the two stop at the limit.
  t.ok(first > 1 && first < 2 ** DEPTH, `the exchange stopped (${first} agent messages)`)
  t.ok((await turnsRecorded()) <= TURNS, 'no more turns than the limit were admitted')
  const replies = echoes.flatMap((e) => e.replies)
  t.equal(replies.filter((s) => s === 201).length, first - 1, 'every stored message but the kick-off is an admitted reply')
  t.ok(replies.filter((s) => s === 429).length > 0, 'the rest were refused')
  const depths = await app.db.prisma.message.findMany({ where: { channelId }, select: { chainDepth: true } })
  t.ok(
    depths.every((m) => m.chainDepth <= DEPTH),
    'no message deeper than the cap',
  )
  t.ok(
    echoA.heard.some((h) => h.authorId === a.id),
    'with include_own_messages true an agent hears itself (the spec default)',
  )
  // The delivery's event id is the message id: what in_reply_to_event resolved to.
  t.ok(echoes.every((e) => e.heard.every((h) => h.eventId === h.messageId)))

  // A human speaks: the agents answer it and each other, and are stopped again.
  const human = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(ws.member.token), payload: { text: 'humans here' } })
  t.equal(human.statusCode, 201)
  const second = await settled(app, channelId, echoes, toBoth)
  t.ok(second > first + 1 && second < first + 2 ** (DEPTH + 1), `more agent messages after the human one, then stopped again (${second - first})`)
  t.comment(`stored ${second} agent messages and 1 human message; ${echoes.flatMap((e) => e.replies).filter((s) => s === 429).length} replies refused`)
})

t.test('agents that opted out of their own messages form a linear exchange that stops at the turn limit in their DM', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const TURNS = 9
  await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.owner.token), payload: { loop_guard_max_turns: TURNS, loop_guard_window_seconds: 3600, loop_guard_max_depth: 0 } })
  const [a, b] = ws.agents as [SeededAgent, SeededAgent]
  const dm = await dmOf(api, a, b)
  const echoA = await echoAgent(t, api, a, () => dm, false)
  const echoB = await echoAgent(t, api, b, () => dm, false)
  const kickoff = await api({ method: 'POST', url: `/api/v1/channels/${dm}/messages`, headers: bearer(a.key), payload: { text: 'ping' } })
  t.equal(kickoff.statusCode, 201)
  // The kick-off is no turn; each reply is one.
  t.equal(await settled(app, dm, [echoA, echoB], () => 1), TURNS + 1, `exactly ${TURNS} turns after the kick-off in the DM`)
  t.notOk(
    echoA.heard.some((h) => h.authorId === a.id),
    'agent A never heard itself',
  )
  t.notOk(
    echoB.heard.some((h) => h.authorId === b.id),
    'agent B never heard itself',
  )
  t.same([...echoA.replies, ...echoB.replies].sort(), [...Array(TURNS).fill(201), 429].sort(), 'one reply each, the last one refused')
  // The chain: 1, 2, 3… in posting order.
  const depths = (await app.db.prisma.message.findMany({ where: { channelId: dm }, orderBy: { id: 'asc' }, select: { chainDepth: true } })).map((m) => m.chainDepth)
  t.same(
    depths,
    Array.from({ length: TURNS + 1 }, (_, i) => i + 1),
  )
})

t.test('the chain cap stops an echo that the turn limit lets through', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const DEPTH = 4
  await api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(ws.owner.token), payload: { loop_guard_max_turns: 1_000, loop_guard_max_depth: DEPTH } })
  const [a, b] = ws.agents as [SeededAgent, SeededAgent]
  const dm = await dmOf(api, a, b)
  const echoA = await echoAgent(t, api, a, () => dm, false)
  const echoB = await echoAgent(t, api, b, () => dm, false)
  await api({ method: 'POST', url: `/api/v1/channels/${dm}/messages`, headers: bearer(a.key), payload: { text: 'ping' } })
  t.equal(await settled(app, dm, [echoA, echoB], () => 1), DEPTH, `exactly ${DEPTH} messages: the chain's cap`)
  t.equal([...echoA.replies, ...echoB.replies].filter((s) => s === 429).length, 1)
})

t.test('webhook include_own_messages: set at creation, changed by PATCH, validated', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const rx = await receiver(t)
  const byDefault = await createWebhook(api, agent.key, agent.id, rx.url('/default'))
  const listed = await api({ method: 'GET', url: `/api/v1/agents/${agent.id}/webhooks`, headers: bearer(agent.key) })
  t.equal(listed.json().find((w: { id: string }) => w.id === byDefault.id).include_own_messages, true, "the spec's default: every message")

  const quiet = await api({
    method: 'POST',
    url: `/api/v1/agents/${agent.id}/webhooks`,
    headers: bearer(agent.key),
    payload: { url: rx.url('/quiet'), events: ['message.created', 'message.updated'], include_own_messages: false },
  })
  t.equal(quiet.statusCode, 201)
  t.equal(quiet.json().include_own_messages, false)
  for (const value of ['no', 0, null]) {
    const bad = await api({
      method: 'POST',
      url: `/api/v1/agents/${agent.id}/webhooks`,
      headers: bearer(agent.key),
      payload: { url: rx.url('/bad'), events: ['message.created'], include_own_messages: value },
    })
    t.equal(bad.statusCode, 400, JSON.stringify(value))
    const badPatch = await api({ method: 'PATCH', url: `/api/v1/agents/${agent.id}/webhooks/${quiet.json().id}`, headers: bearer(agent.key), payload: { include_own_messages: value } })
    t.equal(badPatch.statusCode, 400)
  }
  t.equal(await app.db.prisma.webhook.count(), 2, 'nothing created by the bad requests')

  const channel = await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(agent.key), payload: { name: 'mine', description: '' } })
  const channelId = channel.json().id
  await api({ method: 'POST', url: `/api/v1/channels/${channelId}/members`, headers: bearer(agent.key), payload: { user_id: ws.member.id } })
  const own = await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(agent.key), payload: { text: 'mine' } })
  await api({ method: 'PATCH', url: `/api/v1/channels/${channelId}/messages/${own.json().id}`, headers: bearer(agent.key), payload: { text: 'mine, edited' } })
  await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(ws.member.token), payload: { text: 'theirs' } })
  await rx.waitFor(1, (r) => r.url === '/quiet')
  await rx.waitFor(2, (r) => r.url === '/default')
  // The planner handles events in order: once the last event was planned, nothing else comes.
  await eventually(async () => (await app.db.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')).rows[0].n === 0, 'planning')
  await eventually(async () => (await app.db.prisma.delivery.count({ where: { status: 'pending' } })) === 0, 'deliveries')
  const texts = (path: string) => rx.requests.filter((r) => r.url === path).map((r) => JSON.parse(r.body).payload.message.text)
  t.same(texts('/quiet'), ['theirs'], 'opted out: neither its own message nor its own edit')
  t.same(texts('/default').sort(), ['mine', 'theirs'].sort(), 'by default: its own message too')

  const flip = await api({ method: 'PATCH', url: `/api/v1/agents/${agent.id}/webhooks/${quiet.json().id}`, headers: bearer(ws.owner.token), payload: { include_own_messages: true } })
  t.equal(flip.statusCode, 200)
  t.equal(flip.json().include_own_messages, true)
  await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(agent.key), payload: { text: 'mine again' } })
  await rx.waitFor(2, (r) => r.url === '/quiet')
  t.same(texts('/quiet'), ['theirs', 'mine again'])
})

t.test('integration include_own_messages: skips messages of the agents it acts for', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const [a, b] = ws.agents as [SeededAgent, SeededAgent]
  const rx = await receiver(t)
  const create = (path: string, extra: Record<string, unknown>) =>
    api({ method: 'POST', url: '/api/v1/integrations', headers: bearer(ws.owner.token), payload: { name: path, webhook_url: rx.url(path), events: ['message.created'], ...extra } })
  const forA = await create('/for-a', { agent_ids: [a.id], include_own_messages: false })
  t.equal(forA.statusCode, 201)
  t.equal(forA.json().include_own_messages, false)
  const forAll = await create('/for-all', { include_own_messages: false })
  const plain = await create('/plain', {})
  t.equal(plain.json().include_own_messages, true)
  t.equal((await create('/bad', { include_own_messages: 'false' })).statusCode, 400)
  t.equal(await app.db.prisma.integration.count(), 3)
  t.equal((await api({ method: 'PATCH', url: `/api/v1/integrations/${plain.json().id}`, headers: bearer(ws.owner.token), payload: { include_own_messages: 1 } })).statusCode, 400)
  t.equal((await api({ method: 'GET', url: `/api/v1/integrations/${plain.json().id}`, headers: bearer(ws.owner.token) })).json().include_own_messages, true)

  const ch = await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(a.key), payload: { name: 'bridge', description: '' } })
  const channelId = ch.json().id
  for (const id of [b.id, ws.member.id]) await api({ method: 'POST', url: `/api/v1/channels/${channelId}/members`, headers: bearer(a.key), payload: { user_id: id } })
  const inbound = await api({
    method: 'POST',
    url: `/api/v1/integrations/${forA.json().id}/inbound`,
    headers: bearer(forA.json().api_key),
    payload: { channel_id: channelId, agent_id: a.id, text: 'from A via the bridge' },
  })
  t.equal(inbound.statusCode, 201)
  await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(b.key), payload: { text: 'from B' } })
  await api({ method: 'POST', url: `/api/v1/channels/${channelId}/messages`, headers: bearer(ws.member.token), payload: { text: 'from a human' } })
  await rx.waitFor(3, (r) => r.url === '/plain')
  await eventually(async () => (await app.db.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')).rows[0].n === 0, 'planning')
  await eventually(async () => (await app.db.prisma.delivery.count({ where: { status: 'pending' } })) === 0, 'deliveries')
  const texts = (path: string) =>
    rx.requests
      .filter((r) => r.url === path)
      .map((r) => JSON.parse(r.body).payload.text)
      .sort()
  t.same(texts('/for-a'), ['from B', 'from a human'].sort(), 'not the messages of its own agent')
  t.same(texts('/for-all'), ['from a human'], 'acting for every agent: only humans')
  t.same(texts('/plain'), ['from A via the bridge', 'from B', 'from a human'].sort(), "the spec's default: every message")

  const flip = await api({ method: 'PATCH', url: `/api/v1/integrations/${forAll.json().id}`, headers: bearer(ws.owner.token), payload: { include_own_messages: true } })
  t.equal(flip.json().include_own_messages, true)
})

// Loop protection (docs/loops.md) on every other way an agent posts: WebSocket send_message (two
// sockets answering each other; one agent's 150-frame burst never refused), the integration
// inbound endpoint and MCP post_message; and a WebSocket opting out of its own messages.
import t from 'tap'
import { call, connectClient, setup as mcpSetup, structured } from '../mcp/helpers.ts'
import { connect, listen, openWs, refusedUpgrade, wsUrl } from '../realtime/helpers.ts'
import { setup } from './fixtures/support.ts'
import { assertLoopDetected, count, LISTEN_ENV, listens, postAs, room, settings, takeTurns, WORKSPACE } from './fixtures/loops.ts'
import { baseUrl, openStream } from '../realtime/sse-client.ts'
import { createWebhook, receiver } from '../webhooks/helpers.ts'
import { addMember, bearer, createChannel, post } from '../support/index.ts'

t.test('WebSocket send_message: two sockets answering each other are refused at the turn limit, as an error frame with retry_after', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  await settings(c, { loop_guard_max_turns: 2, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  const channel = await room(c)
  const a = await connect(c.app, c.tok.a1)
  const b = await connect(c.app, c.tok.a2)
  t.teardown(() => a.client.close())
  t.teardown(() => b.client.close())
  a.client.send({ type: 'send_message', id: 'a1', channel_id: channel, text: 'one' })
  const first = await a.client.type('ack', (f) => f.id === 'a1')
  t.match(first.message, { text: 'one', chain_depth: 1, in_reply_to_event: null })
  b.client.send({ type: 'send_message', id: 'b1', channel_id: channel, text: 'two', in_reply_to_event: first.message.id })
  t.match((await b.client.type('ack', (f) => f.id === 'b1')).message, { chain_depth: 2, in_reply_to_event: first.message.id })
  a.client.send({ type: 'send_message', id: 'a2', channel_id: channel, text: 'three' })
  await a.client.type('ack', (f) => f.id === 'a2')
  b.client.send({ type: 'send_message', id: 'b2', channel_id: channel, text: 'four' })
  const error = await b.client.type('error', (f) => f.id === 'b2')
  t.equal(error.code, 'LOOP_DETECTED')
  t.match(error.error, /^loop detected: /)
  t.ok(Number.isInteger(error.retry_after) && error.retry_after >= 1 && error.retry_after <= 600, 'retry_after in seconds')
  t.equal(await count(c, channel), 3)
  b.client.send({ type: 'send_message', id: 'b3', channel_id: channel, text: 'x', in_reply_to_event: 'not-an-id' })
  t.equal((await b.client.type('error', (f) => f.id === 'b3')).code, 'VALIDATION_ERROR')
  // The agent that spoke last is not answering anyone: its messages in a row go through.
  a.client.send({ type: 'send_message', id: 'a3', channel_id: channel, text: 'more from a' })
  t.equal((await a.client.type('ack', (f) => f.id === 'a3')).message.text, 'more from a')

  // A human over the socket resets it.
  const human = await connect(c.app, c.tok.member)
  t.teardown(() => human.client.close())
  human.client.send({ type: 'send_message', id: 'h1', channel_id: channel, text: 'human' })
  await human.client.type('ack', (f) => f.id === 'h1')
  b.client.send({ type: 'send_message', id: 'b4', channel_id: channel, text: 'after the human' })
  t.equal((await b.client.type('ack', (f) => f.id === 'b4')).message.text, 'after the human')
})

t.test('WebSocket: one agent sending 150 frames in one burst is never refused by the loop guard', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 86_400, loop_guard_max_depth: 20 })
  const channel = await room(c)
  await post(c.api, c.tok.a2, channel, 'another agent spoke first')
  const { client } = await connect(c.app, c.tok.a1)
  t.teardown(() => client.close())
  for (let i = 0; i < 150; i++) client.send({ type: 'send_message', id: `burst-${i}`, channel_id: channel, text: `burst ${i}` })
  const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => client.next((f) => (f.type === 'ack' || f.type === 'error') && f.id === `burst-${i}`)))
  const acks = answers.filter((f) => f.type === 'ack').length
  const codes = answers.filter((f) => f.type === 'error').map((f) => f.code)
  t.same(
    [...new Set(codes)].filter((code) => code !== 'RATE_LIMITED'),
    [],
    'only the frame budget (RATE_LIMITED) refuses, never LOOP_DETECTED',
  )
  t.equal(acks + codes.length, 150)
  t.ok(acks >= 100, `at least the per-second frame budget was stored (${acks})`)
  t.equal(await count(c, channel, 'AGENT'), acks + 1, 'every acknowledged frame was stored')
})

t.test('three listening agents posting on their own schedules (10 messages/s each, 30 s, WebSocket) are never refused', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  // The defaults: 20 turns of one pair within 60 s.
  await settings(c, { loop_guard_enabled: true, loop_guard_max_turns: 20, loop_guard_window_seconds: 60, loop_guard_max_depth: 20 })
  const channel = await room(c)
  const third = await c.api({ method: 'POST', url: `/api/v1/channels/${channel}/members`, headers: bearer(c.tok.a1), payload: { user_id: c.ws.primary.id } })
  t.equal(third.statusCode, 201)
  // Each agent has a socket open in the channel, so each hears every message: under a rule that
  // counted every change of author between listening agents, this is about 600 turns a minute.
  const sockets = await Promise.all([c.tok.a1, c.tok.a2, c.tok.primary].map((token) => connect(c.app, token)))
  for (const s of sockets) t.teardown(() => s.client.close())
  // A fixed pseudo-random schedule (the same every run): each agent sends at random moments,
  // 300 messages in 30 s, so the three interleave at random.
  let seed = 28
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
  const schedule = sockets.flatMap((s, k) => Array.from({ length: 300 }, (_, i) => ({ at: random() * 30_000, k, id: `s${k}-${i}` })))
  schedule.sort((x, y) => x.at - y.at)
  const answers: Promise<Record<string, unknown>>[] = []
  const start = Date.now()
  for (const { at, k, id } of schedule) {
    const wait = at - (Date.now() - start)
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    sockets[k]!.client.send({ type: 'send_message', id, channel_id: channel, text: `on my own schedule ${id}` })
    answers.push(sockets[k]!.client.next((f) => (f.type === 'ack' || f.type === 'error') && f.id === id, 'answer'))
  }
  const frames = await Promise.all(answers)
  const refused = frames.filter((f) => f.type === 'error')
  t.same(
    refused.map((f) => f.code),
    [],
    'all 900 acknowledged',
  )
  t.equal(await count(c, channel), 900)
})

t.test('an agent with an SSE stream open hears the channel: its REST answers to another agent are turns', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  await listen(c.app)
  await settings(c, { loop_guard_max_turns: 2, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  await listens(t, c, 1)
  const channel = await room(c)
  // Without a stream agent-1 listens to nothing: its posts after agent-2's are no turns; agent-2
  // (a webhook) answering agent-1 is one.
  t.same(await takeTurns(c.api, channel, [c.tok.a2, c.tok.a1, c.tok.a2, c.tok.a1, c.tok.a1]), [201, 201, 201, 201, 201])
  const { stream } = await openStream(baseUrl(c.app), c.tok.a1)
  t.teardown(() => stream.close())
  // agent-2 answering is the second turn; agent-1, now listening, answering back would be a third.
  t.same(await takeTurns(c.api, channel, [c.tok.a2]), [201])
  assertLoopDetected(t, await postAs(c.api, c.tok.a1, channel, { text: 'answering over REST while streaming' }), 600)
})

t.test('the integration inbound endpoint: an integration acting for an agent makes it a listener; same refusal, 429 with Retry-After', async (t) => {
  const c = await setup(t, LISTEN_ENV)
  await settings(c, { loop_guard_max_turns: 1, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  await listens(t, c, 1)
  const channel = await room(c)
  const created = await c.api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(c.tok.owner),
    payload: { name: 'bridge', webhook_url: 'http://127.0.0.1:9/hook', agent_ids: [c.ws.agents[0]!.id], events: ['message.created'] },
  })
  t.equal(created.statusCode, 201)
  const integration = created.json()
  const inbound = (payload: Record<string, unknown>) =>
    c.api({ method: 'POST', url: `/api/v1/integrations/${integration.id}/inbound`, headers: bearer(integration.api_key), payload: { channel_id: channel, agent_id: c.ws.agents[0]!.id, ...payload } })
  const first = await inbound({ text: 'one' })
  t.equal(first.statusCode, 201)
  const second = await inbound({ text: 'two', in_reply_to_event: first.json().id })
  t.match(second.json(), { chain_depth: 2, in_reply_to_event: first.json().id }, 'one agent in a row: no turn')
  t.equal((await postAs(c.api, c.tok.a2, channel, { text: 'agent 2 answers: the turn' })).statusCode, 201)
  assertLoopDetected(t, await inbound({ text: 'answering back' }), 600)
  t.equal((await inbound({ text: 'bad', in_reply_to_event: 'x' })).statusCode, 400)
  t.equal(await count(c, channel), 3)
  await post(c.api, c.tok.member, channel, 'human')
  t.equal((await inbound({ text: 'after the human' })).statusCode, 201)
})

t.test('MCP post_message: the same refusal, as a tool error with the REST code; posting on its own is never refused', async (t) => {
  const m = await mcpSetup(t, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } })
  const api = m.api
  const res = await api({ method: 'PATCH', url: WORKSPACE, headers: bearer(m.ws.owner.token), payload: { loop_guard_max_turns: 1, loop_guard_max_depth: 0 } })
  t.equal(res.statusCode, 200)
  const [a, b] = m.ws.agents as [(typeof m.ws.agents)[0], (typeof m.ws.agents)[0]]
  const rx = await receiver(t)
  await createWebhook(api, a.key, a.id, rx.url('/a'))
  await createWebhook(api, b.key, b.id, rx.url('/b'))
  const channel = (await createChannel(api, a.key, 'mcp-room')).id
  await addMember(api, a.key, channel, b.id)
  const { client } = await connectClient(t, m.base, a.key)
  for (let i = 0; i < 3; i++) t.notOk((await call(client, 'post_message', { channel, text: `mine ${i}` })).isError)
  await post(api, b.key, channel, 'b answers: the first turn')
  const refused = await call(client, 'post_message', { channel, text: 'answering b' })
  t.equal(refused.isError, true)
  t.equal(structured(refused).code, 'LOOP_DETECTED')
  t.equal(await m.app.db.prisma.message.count({ where: { channelId: channel } }), 4)
})

t.test('a WebSocket opts out of its own messages with include_own_messages=false', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  const channel = await room(c)
  const quiet = await openWs(wsUrl(c.app, { token: c.tok.a1, include_own_messages: 'false' }))
  const ready = await quiet.type('ready')
  const loud = await connect(c.app, c.tok.a1)
  t.teardown(() => quiet.close())
  t.teardown(() => loud.client.close())

  const own = await post(c.api, c.tok.a1, channel, 'mine over REST')
  quiet.send({ type: 'send_message', id: 'w1', channel_id: channel, text: 'mine over the socket' })
  t.equal((await quiet.type('ack', (f) => f.id === 'w1')).message.text, 'mine over the socket', 'the sender still gets its ack')
  const edit = await c.api({ method: 'PATCH', url: `/api/v1/channels/${channel}/messages/${own.id}`, headers: bearer(c.tok.a1), payload: { text: 'mine, edited' } })
  t.equal(edit.statusCode, 200)
  const theirs = await post(c.api, c.tok.a2, channel, 'theirs')
  const theirsEdited = await c.api({ method: 'PATCH', url: `/api/v1/channels/${channel}/messages/${theirs.id}`, headers: bearer(c.tok.a2), payload: { text: 'theirs, edited' } })
  t.equal(theirsEdited.statusCode, 200)
  // Frames arrive in log order: once the last one is in, nothing of the earlier ones is missing.
  await quiet.type('message_updated', (f) => f.message.id === theirs.id)
  const seen = (client: typeof quiet) => client.events().map((f) => `${f.type} ${f.message?.text ?? ''}`)
  t.same(seen(quiet), ['new_message theirs', 'message_updated theirs, edited'], "only the others' messages")
  await loud.client.type('message_updated', (f) => f.message.id === theirs.id)
  t.same(
    seen(loud.client),
    ['new_message mine over REST', 'new_message mine over the socket', 'message_updated mine, edited', 'new_message theirs', 'message_updated theirs, edited'],
    'the default socket gets everything',
  )

  // The replay after a reconnect leaves them out too.
  const again = await openWs(wsUrl(c.app, { token: c.tok.a1, include_own_messages: 'false', since: ready.cursor }))
  t.teardown(() => again.close())
  await again.type('ready')
  t.same(seen(again), ['new_message theirs', 'message_updated theirs, edited'])

  t.equal((await refusedUpgrade(wsUrl(c.app, { token: c.tok.a1, include_own_messages: 'maybe' }))).status, 400)
})

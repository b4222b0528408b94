// Loop protection (docs/loops.md) on every other way an agent posts: WebSocket send_message, the
// integration inbound endpoint and MCP post_message; and a WebSocket opting out of its own messages.
import t from 'tap'
import { call, connectClient, setup as mcpSetup, structured } from '../mcp/helpers.ts'
import { connect, listen, openWs, refusedUpgrade, wsUrl } from '../realtime/helpers.ts'
import { setup } from './fixtures/support.ts'
import { assertLoopDetected, count, postAs, room, settings, WORKSPACE } from './fixtures/loops.ts'
import { bearer, createChannel, post } from '../support/index.ts'

t.test('WebSocket send_message: the same guard, as an error frame with retry_after', async (t) => {
  const c = await setup(t)
  await listen(c.app)
  await settings(c, { loop_guard_max_messages: 2, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  const channel = await room(c)
  const { client } = await connect(c.app, c.tok.a1)
  t.teardown(() => client.close())
  client.send({ type: 'send_message', id: 'f1', channel_id: channel, text: 'one' })
  const first = await client.type('ack', (f) => f.id === 'f1')
  t.match(first.message, { text: 'one', chain_depth: 1, in_reply_to_event: null })
  client.send({ type: 'send_message', id: 'f2', channel_id: channel, text: 'two', in_reply_to_event: first.message.id })
  t.match((await client.type('ack', (f) => f.id === 'f2')).message, { chain_depth: 2, in_reply_to_event: first.message.id })
  client.send({ type: 'send_message', id: 'f3', channel_id: channel, text: 'three' })
  const error = await client.type('error', (f) => f.id === 'f3')
  t.equal(error.code, 'LOOP_DETECTED')
  t.match(error.error, /^loop detected: /)
  t.ok(Number.isInteger(error.retry_after) && error.retry_after >= 1 && error.retry_after <= 600, 'retry_after in seconds')
  t.equal(await count(c, channel), 2)
  client.send({ type: 'send_message', id: 'f4', channel_id: channel, text: 'x', in_reply_to_event: 'not-an-id' })
  t.equal((await client.type('error', (f) => f.id === 'f4')).code, 'VALIDATION_ERROR')

  // A human over the socket resets it.
  const human = await connect(c.app, c.tok.member)
  t.teardown(() => human.client.close())
  human.client.send({ type: 'send_message', id: 'h1', channel_id: channel, text: 'human' })
  await human.client.type('ack', (f) => f.id === 'h1')
  client.send({ type: 'send_message', id: 'f5', channel_id: channel, text: 'after the human' })
  t.equal((await client.type('ack', (f) => f.id === 'f5')).message.text, 'after the human')
})

t.test('the integration inbound endpoint: same guard, 429 with Retry-After; in_reply_to_event accepted', async (t) => {
  const c = await setup(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
  await settings(c, { loop_guard_max_messages: 2, loop_guard_window_seconds: 600, loop_guard_max_depth: 0 })
  const channel = await room(c)
  const created = await c.api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(c.tok.owner),
    payload: { name: 'bridge', webhook_url: 'http://127.0.0.1:9/hook', agent_ids: [c.ws.agents[0]!.id] },
  })
  t.equal(created.statusCode, 201)
  const integration = created.json()
  const inbound = (payload: Record<string, unknown>) =>
    c.api({ method: 'POST', url: `/api/v1/integrations/${integration.id}/inbound`, headers: bearer(integration.api_key), payload: { channel_id: channel, agent_id: c.ws.agents[0]!.id, ...payload } })
  const first = await inbound({ text: 'one' })
  t.equal(first.statusCode, 201)
  const second = await inbound({ text: 'two', in_reply_to_event: first.json().id })
  t.match(second.json(), { chain_depth: 2, in_reply_to_event: first.json().id })
  // The agent's own REST posts and its integration's posts share the conversation's count.
  assertLoopDetected(t, await postAs(c.api, c.tok.a1, channel, { text: 'three via REST' }), 600)
  assertLoopDetected(t, await inbound({ text: 'three' }), 600)
  t.equal((await inbound({ text: 'bad', in_reply_to_event: 'x' })).statusCode, 400)
  t.equal(await count(c, channel), 2)
  await post(c.api, c.tok.member, channel, 'human')
  t.equal((await inbound({ text: 'after the human' })).statusCode, 201)
})

t.test('MCP post_message: the same guard, as a tool error with the REST code', async (t) => {
  const m = await mcpSetup(t)
  const api = m.api
  const res = await api({ method: 'PATCH', url: WORKSPACE, headers: bearer(m.ws.owner.token), payload: { loop_guard_max_messages: 1, loop_guard_max_depth: 0 } })
  t.equal(res.statusCode, 200)
  const channel = (await createChannel(api, m.ws.agents[0]!.key, 'mcp-room')).id
  const { client } = await connectClient(t, m.base, m.ws.agents[0]!.key)
  const ok = await call(client, 'post_message', { channel, text: 'one' })
  t.notOk(ok.isError)
  t.equal(structured(ok).message.chain_depth, 1)
  const refused = await call(client, 'post_message', { channel, text: 'two', in_reply_to_event: structured(ok).message.id })
  t.equal(refused.isError, true)
  t.equal(structured(refused).code, 'LOOP_DETECTED')
  t.equal(await m.app.db.prisma.message.count({ where: { channelId: channel } }), 1)
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

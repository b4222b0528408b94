// Issue 14, item 15: an inbound integration post retried with the same Idempotency-Key creates one
// message (the retry gets the original answer); a WebSocket send_message resent with the same `id`
// creates one message (the second ack carries the original). Also item 2 over the WebSocket: a
// NUL in send_message is a VALIDATION_ERROR frame, not INTERNAL_ERROR.
import t from 'tap'
import { build } from '../helper.ts'
import { connect, listen } from '../realtime/helpers.ts'
import { bearer, createChannelId, seedWorkspace } from '../support/index.ts'

t.test('inbound integration posts honour Idempotency-Key', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const channel = await createChannelId(api, agent.key, 'inbound-idem')
  const created = await api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(ws.owner.token),
    payload: { name: 'Retrying platform', webhook_url: 'https://hooks.example.com/i', events: ['message.created'], agent_ids: [agent.id] },
  })
  t.equal(created.statusCode, 201)
  const integration = created.json()
  const inbound = (key: string | undefined, text: string) =>
    api({
      method: 'POST',
      url: `/api/v1/integrations/${integration.id}/inbound`,
      headers: { ...bearer(integration.api_key), ...(key ? { 'idempotency-key': key } : {}) },
      payload: { channel_id: channel, agent_id: agent.id, text },
    })
  const first = await inbound('retry-1', 'hello once')
  t.equal(first.statusCode, 201)
  const second = await inbound('retry-1', 'hello once')
  t.equal(second.statusCode, 201, 'the retry answers like the original')
  t.same(second.json(), first.json(), 'with the same message')
  const [third, fourth] = await Promise.all([inbound('retry-2', 'concurrent'), inbound('retry-2', 'concurrent')])
  t.same(third.json().id, fourth.json().id, 'concurrent twins give one message')
  const reused = await inbound('retry-1', 'another text')
  t.equal(reused.statusCode, 409)
  t.same(reused.json(), { error: reused.json().error, code: 'IDEMPOTENCY_KEY_REUSED' })
  t.equal(await app.db.prisma.message.count({ where: { channelId: channel } }), 2, 'two keys, two messages')
  // without a key every post is a new message, as before
  await inbound(undefined, 'no key')
  await inbound(undefined, 'no key')
  t.equal(await app.db.prisma.message.count({ where: { channelId: channel } }), 4)
  // item 2 on this path: a NUL in inbound text is a 400, nothing stored
  const nul = await inbound(undefined, 'a\u0000b')
  t.equal(nul.statusCode, 400)
  t.same(nul.json(), { error: nul.json().error, code: 'VALIDATION_ERROR' })
  t.equal(await app.db.prisma.message.count({ where: { channelId: channel } }), 4)
  // the same key from the agent's own REST posts is another caller's key
  const rest = await api({ method: 'POST', url: `/api/v1/channels/${channel}/messages`, headers: { ...bearer(agent.key), 'idempotency-key': 'retry-1' }, payload: { text: 'hello once' } })
  t.equal(rest.statusCode, 201)
  t.not(rest.json().id, first.json().id, 'REST and the integration do not share keys')
})

t.test('WebSocket send_message frames with the same id create one message; NUL is a VALIDATION_ERROR frame', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const channel = await createChannelId(api, agent.key, 'ws-idem')
  await listen(app)
  const { client } = await connect(app, agent.key)
  t.teardown(() => client.close())

  client.send({ type: 'send_message', id: 'frame-1', channel_id: channel, text: 'sent twice' })
  const ack1 = await client.type('ack', (f) => f.id === 'frame-1')
  client.send({ type: 'send_message', id: 'frame-1', channel_id: channel, text: 'sent twice' })
  const ack2 = await client.type('ack', (f) => f.id === 'frame-1')
  t.same(ack2.message, ack1.message, 'the second ack carries the original message')

  // a resend on a new connection (after a reconnect) is recognised too
  const { client: again } = await connect(app, agent.key)
  t.teardown(() => again.close())
  again.send({ type: 'send_message', id: 'frame-1', channel_id: channel, text: 'sent twice' })
  t.same((await again.type('ack', (f) => f.id === 'frame-1')).message, ack1.message)
  t.equal(await app.db.prisma.message.count({ where: { channelId: channel } }), 1, 'one message')

  client.send({ type: 'send_message', id: 'frame-1', channel_id: channel, text: 'other text' })
  t.equal((await client.type('error', (f) => f.id === 'frame-1')).code, 'IDEMPOTENCY_KEY_REUSED')

  client.send({ type: 'send_message', id: 'frame-nul', channel_id: channel, text: 'a\u0000b' })
  const nul = await client.type('error', (f) => f.id === 'frame-nul')
  t.equal(nul.code, 'VALIDATION_ERROR')
  client.send({ type: 'send_message', id: 'frame-surrogate', channel_id: channel, text: 'a\ud800b' })
  t.equal((await client.type('error', (f) => f.id === 'frame-surrogate')).code, 'VALIDATION_ERROR')
  client.send({ type: 'send_message', channel_id: channel, text: 'no id' })
  client.send({ type: 'send_message', channel_id: channel, text: 'no id' })
  await client.type('ack')
  await client.type('ack')
  t.equal(await app.db.prisma.message.count({ where: { channelId: channel } }), 3, 'frames without an id are never merged')
})

// message.mentioned to real receivers (docs/decisions.md, "Mentions"): an agent's webhook
// subscribed to it receives exactly the messages that mention that agent (on posting, and when an
// edit first mentions it), never a mention of another member, and nothing for a name it would
// have if it were in the channel. Integrations receive it for the agents they act for.
import t from 'tap'
import { bearer, build, createChannelId, seedWorkspace } from '../support/index.ts'
import { createWebhook, eventually, FAST_ENV, receiver, verifySignature, type Received } from './helpers.ts'

const messageIdOf = (r: Received): string => JSON.parse(r.body).payload.message?.id ?? JSON.parse(r.body).payload.message_id

t.test('webhooks and integrations subscribed to message.mentioned get exactly the mentions of their agents', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const [a1, a2] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]

  const rx1 = await receiver(t)
  const rx2 = await receiver(t)
  const rxOutsider = await receiver(t)
  const rxCreated = await receiver(t)
  const hook1 = await createWebhook(api, a1.key, a1.id, rx1.url(), ['message.mentioned'])
  await createWebhook(api, a2.key, a2.id, rx2.url(), ['message.mentioned'])
  const outsider = await createWebhook(api, ws.primary.key, ws.primary.id, rxOutsider.url(), ['message.mentioned'])
  await createWebhook(api, a1.key, a1.id, rxCreated.url(), ['message.created'])

  const rxForA2 = await receiver(t)
  const rxForAll = await receiver(t)
  const integration = async (url: string, agentIds: string[]) => {
    const res = await api({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: bearer(ws.owner.token),
      payload: { name: `mentions ${agentIds.length}`, webhook_url: url, agent_ids: agentIds, events: ['message.mentioned'] },
    })
    t.equal(res.statusCode, 201, res.body)
    return res.json<{ id: string; hmac_secret: string; events: string[] }>()
  }
  const forA2 = await integration(rxForA2.url(), [a2.id])
  t.same(forA2.events, ['message.mentioned'])
  await integration(rxForAll.url(), [])
  const defaults = await api({ method: 'POST', url: '/api/v1/integrations', headers: bearer(ws.owner.token), payload: { name: 'defaults', webhook_url: 'https://hooks.example.com/x' } })
  t.same(defaults.json().events, ['message.created', 'channel.created', 'member.joined', 'agent.connected'], "the default stays the spec's four")

  const ch = await createChannelId(api, ws.owner.token, 'mentions', [ws.member.id, a1.id, a2.id])
  const post = async (token: string, text: string, mentions?: string[]) => {
    const res = await api({ method: 'POST', url: `/api/v1/channels/${ch}/messages`, headers: bearer(token), payload: { text, ...(mentions ? { mentions } : {}) } })
    t.equal(res.statusCode, 201, res.body)
    return res.json<{ id: string }>()
  }
  const plain = await post(ws.member.token, 'plain words')
  const toA1 = await post(ws.member.token, 'hello @agent-1')
  const toBoth = await post(ws.owner.token, '@agent-2 and @agent-1, please')
  await post(ws.member.token, '@primary-agent is not in this channel')
  await post(a1.key, 'I, @agent-1, mention myself and @member')
  const explicit = await post(ws.member.token, 'no names', [a2.id, ws.primary.id])
  // An edit that adds a mention notifies only the newly mentioned.
  const edited = await api({ method: 'PATCH', url: `/api/v1/channels/${ch}/messages/${plain.id}`, headers: bearer(ws.member.token), payload: { text: 'plain words for @agent-2' } })
  t.equal(edited.statusCode, 200)
  const reEdited = await api({ method: 'PATCH', url: `/api/v1/channels/${ch}/messages/${toA1.id}`, headers: bearer(ws.member.token), payload: { text: 'hello again @agent-1' } })
  t.same(reEdited.json().mentions, [a1.id])
  const last = await post(ws.owner.token, 'last: @agent-1 @agent-2')

  // Planning is in event order: once the last message reached everyone, nothing else is coming.
  await rx1.waitFor(1, (r) => messageIdOf(r) === last.id)
  await rx2.waitFor(1, (r) => messageIdOf(r) === last.id)
  await rxForA2.waitFor(1, (r) => messageIdOf(r) === last.id)
  await rxForAll.waitFor(1, (r) => messageIdOf(r) === last.id)
  await rxCreated.waitFor(1, (r) => messageIdOf(r) === last.id)
  // An endpoint takes more than one attempt at once, so the last message can arrive before an
  // earlier one: wait until no delivery is left to attempt.
  await eventually(async () => (await app.db.pool.query(`SELECT 1 FROM deliveries WHERE status = 'pending' LIMIT 1`)).rowCount === 0, 'every delivery attempted')

  const ids = (rx: { requests: Received[] }) => rx.requests.map(messageIdOf).sort()
  t.same(ids(rx1), [toA1.id, toBoth.id, last.id].sort(), 'agent-1: its mentions only (not its own self-mention, not the re-edit that mentions it again)')
  t.same(ids(rx2), [toBoth.id, explicit.id, plain.id, last.id].sort(), 'agent-2: its mentions, the explicit one and the edit that added it')
  t.same(ids(rxForA2), ids(rx2), 'an integration acting for agent-2: the same messages')
  t.same(ids(rxForAll), [toA1.id, toBoth.id, explicit.id, plain.id, last.id].sort(), 'an integration acting for any agent: every message that mentions an agent')
  t.equal(rxCreated.requests.length, 7, 'message.created is unchanged: every message')

  const outsiderDeliveries = await app.db.prisma.delivery.count({ where: { webhookId: outsider.id } })
  t.equal(outsiderDeliveries, 0, 'the non-member agent is told nothing')
  t.equal(rxOutsider.requests.length, 0)

  // The webhook body: the envelope around the payload as emitted, signed.
  const req = rx1.requests.find((r) => messageIdOf(r) === toBoth.id)!
  t.ok(verifySignature(hook1.secret, req.body, req.headers['x-webhook-signature']))
  t.equal(req.headers['x-webhook-event'], 'message.mentioned')
  const body = JSON.parse(req.body)
  t.match(body, { event_type: 'message.mentioned', webhook_id: hook1.id, agent_id: a1.id })
  t.same(body.payload.mentioned_ids, [a2.id, a1.id])
  t.same(body.payload.mentioned_agent_ids, [a2.id, a1.id])
  t.same(body.payload.message.mentions, [a2.id, a1.id])
  t.equal(body.payload.message.text, '@agent-2 and @agent-1, please')

  const editBody = JSON.parse(rx2.requests.find((r) => messageIdOf(r) === plain.id)!.body)
  t.same(editBody.payload.mentioned_ids, [a2.id], 'the edit notifies only the newly mentioned')
  t.equal(editBody.payload.message.text, 'plain words for @agent-2')
  t.not(editBody.payload.message.edited_at, null)

  // The integration envelope and payload.
  const ireq = rxForA2.requests.find((r) => messageIdOf(r) === toBoth.id)!
  t.ok(verifySignature(forA2.hmac_secret, ireq.body, ireq.headers['x-service-signature']))
  t.same(JSON.parse(ireq.body), {
    event_type: 'message.mentioned',
    integration_id: forA2.id,
    occurred_at: JSON.parse(ireq.body).occurred_at,
    payload: {
      message_id: toBoth.id,
      channel_id: ch,
      author_id: ws.owner.id,
      author_type: 'human',
      text: '@agent-2 and @agent-1, please',
      mentions: [a2.id, a1.id],
      mentioned_agent_ids: [a2.id, a1.id],
    },
  })

  // A subscription can be listed and deliveries show in the history like any other event.
  const history = await eventually(async () => {
    const res = await api({ method: 'GET', url: `/api/v1/agents/${a1.id}/webhooks/${hook1.id}/deliveries`, headers: bearer(a1.key) })
    const rows = res.json().deliveries as { event_type: string; status: string }[]
    return rows.length === 3 && rows.every((d) => d.status === 'succeeded') ? rows : null
  }, 'succeeded history')
  t.same(
    history.map((d) => d.event_type),
    ['message.mentioned', 'message.mentioned', 'message.mentioned'],
  )
})

t.test('inbound: an integration posts with explicit mentions', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const [a1, a2] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
  const ch = await createChannelId(api, ws.owner.token, 'inbound', [a1.id, a2.id])
  const created = (
    await api({ method: 'POST', url: '/api/v1/integrations', headers: bearer(ws.owner.token), payload: { name: 'in', webhook_url: 'https://hooks.example.com/x', agent_ids: [a1.id] } })
  ).json()
  const res = await api({
    method: 'POST',
    url: `/api/v1/integrations/${created.id}/inbound`,
    headers: bearer(created.api_key),
    payload: { channel_id: ch, agent_id: a1.id, text: 'from outside, @owner', mentions: [a2.id, ws.member.id] },
  })
  t.equal(res.statusCode, 201, res.body)
  t.same(res.json().mentions, [ws.owner.id, a2.id], 'the text first, then explicit member ids; the non-member is dropped')
  const bad = await api({
    method: 'POST',
    url: `/api/v1/integrations/${created.id}/inbound`,
    headers: bearer(created.api_key),
    payload: { channel_id: ch, agent_id: a1.id, text: 'x', mentions: ['x'] },
  })
  t.equal(bad.statusCode, 400)
})

// Reactions reach a real agent webhook receiver as `reaction.added` / `reaction.removed`, signed
// like every delivery, with the catalog's payload; only for channels the agent belongs to.
import t from 'tap'
import { bearer, build, createChannelId, post, seedWorkspace } from '../support/index.ts'
import { createWebhook, FAST_ENV, receiver, verifySignature } from './helpers.ts'

t.test('reaction.added and reaction.removed reach the agent webhook', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const [agent, other] = [ws.agents[0]!, ws.agents[1]!]
  const rx = await receiver(t)
  const hook = await createWebhook(api, agent.key, agent.id, rx.url('/hook'), ['reaction.added', 'reaction.removed'])

  // A reaction in a channel the agent is not in: nothing for it.
  const elsewhere = await createChannelId(api, other.key, 'elsewhere')
  const hidden = await post(api, other.key, elsewhere, 'not for agent-1')
  const put = (token: string, ch: string, m: string, emoji: string, method: 'PUT' | 'DELETE' = 'PUT') =>
    api({ method, url: `/api/v1/channels/${ch}/messages/${m}/reactions/${encodeURIComponent(emoji)}`, headers: bearer(token) })
  t.equal((await put(other.key, elsewhere, hidden.id, '👀')).statusCode, 200)

  const channel = await createChannelId(api, other.key, 'shared', [agent.id])
  const message = await post(api, agent.key, channel, 'deploy please')
  t.equal((await put(other.key, channel, message.id, '👀')).statusCode, 200)
  t.equal((await put(other.key, channel, message.id, '👀', 'DELETE')).statusCode, 204)

  // Deliveries to one endpoint run in parallel (up to 4 at once): the two may arrive in either order.
  const arrived = await rx.waitFor(2)
  const added = arrived.find((r) => r.headers['x-webhook-event'] === 'reaction.added')
  const removed = arrived.find((r) => r.headers['x-webhook-event'] === 'reaction.removed')
  for (const req of [added!, removed!]) t.ok(verifySignature(hook.secret, req.body, req.headers['x-webhook-signature']), 'signed')
  t.equal(added!.headers['x-webhook-event'], 'reaction.added')
  const body = JSON.parse(added!.body)
  t.same(Object.keys(body), ['event_id', 'event_type', 'occurred_at', 'webhook_id', 'agent_id', 'payload'])
  t.equal(body.event_type, 'reaction.added')
  t.same(body.payload, { channel_id: channel, message_id: message.id, emoji: '👀', member_id: other.id, member_type: 'AGENT', member_name: other.name, count: 1 })
  const gone = JSON.parse(removed!.body)
  t.equal(gone.event_type, 'reaction.removed')
  t.same(gone.payload, { ...body.payload, count: 0 })
  t.equal(rx.requests.length, 2, 'nothing from the channel the agent is not in')
})

t.test('an integration subscribed to reaction.added gets its own payload', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const rx = await receiver(t)
  const created = await api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(ws.owner.token),
    payload: { name: 'Acks', platform: 'custom', webhook_url: rx.url('/int'), events: ['reaction.added'] },
  })
  t.equal(created.statusCode, 201)
  const integration = created.json()
  const channel = await createChannelId(api, agent.key, 'ops')
  const message = await post(api, agent.key, channel, 'on it?')
  const res = await api({ method: 'PUT', url: `/api/v1/channels/${channel}/messages/${message.id}/reactions/${encodeURIComponent('✅')}`, headers: bearer(agent.key) })
  t.equal(res.statusCode, 200)
  const [req] = await rx.waitFor(1)
  const body = JSON.parse(req!.body)
  t.same(Object.keys(body), ['event_type', 'integration_id', 'occurred_at', 'payload'])
  t.equal(body.event_type, 'reaction.added')
  t.equal(body.integration_id, integration.id)
  t.same(body.payload, { channel_id: channel, message_id: message.id, emoji: '✅', member_id: agent.id, member_type: 'agent', count: 1 })
})

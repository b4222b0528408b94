// The `addressed` subscription of webhooks and integrations (docs/realtime.md, "Filters"): with
// `only: "addressed"` an agent's webhook gets the mention, the DM, the reply in its thread and the
// reaction to its message, and nothing else it subscribed to (chatter, its own posts, a thread in a
// channel it has left); an integration acting for the agent the same. `only` is shown, patched and
// cleared; a bad value is 400 and changes nothing.
import t from 'tap'
import { bearer, build, seedWorkspace } from '../support/index.ts'
import { expectedAddressed, playScenario, scenarioChannels } from '../realtime/addressed-scenario.ts'
import { eventually, FAST_ENV, receiver } from './helpers.ts'

const EVENTS = ['message.created', 'message.mentioned', 'reaction.added']

/** (frame-like type, message id) of a delivery body, webhook or integration shape. */
function deliveryBrief(body: string): [string, string] {
  const d = JSON.parse(body)
  const type = d.event_type ?? d.event ?? d.type
  const payload = d.payload ?? d.data ?? {}
  const id = payload.message?.id ?? payload.message_id
  return [type === 'message.created' ? 'new_message' : type === 'reaction.added' ? 'reaction_added' : String(type), String(id)]
}

t.test('webhooks and integrations with only=addressed get exactly the addressed events', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const me = ws.agents[0]!
  const rx = await receiver(t)
  const hook = await api({ method: 'POST', url: `/api/v1/agents/${me.id}/webhooks`, headers: bearer(me.key), payload: { url: rx.url('/hook'), events: EVENTS, only: 'addressed' } })
  t.equal(hook.statusCode, 201)
  t.equal(hook.json().only, 'addressed')
  const integration = await api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(ws.owner.token),
    payload: { name: 'Inbox', webhook_url: rx.url('/integration'), events: EVENTS, agent_ids: [me.id], only: 'addressed' },
  })
  t.equal(integration.statusCode, 201)
  t.equal(integration.json().only, 'addressed')

  const channels = await scenarioChannels(api, ws)
  const s = await playScenario(api, ws, channels)
  const expected = expectedAddressed(s)
  // Deliveries run concurrently: compared in any order once all arrived (and nothing more is due).
  await eventually(
    async () => rx.requests.filter((r) => r.url === '/hook').length >= expected.length && rx.requests.filter((r) => r.url === '/integration').length >= expected.length,
    'the deliveries',
  )
  await app.deliveries!.planner.kick()
  await app.deliveries!.scheduler.kick()
  t.same(
    rx.requests
      .filter((r) => r.url === '/hook')
      .map((r) => deliveryBrief(r.body))
      .sort(),
    [...expected].sort(),
    'webhook: the addressed events only',
  )
  t.same(
    rx.requests
      .filter((r) => r.url === '/integration')
      .map((r) => deliveryBrief(r.body))
      .sort(),
    [...expected].sort(),
    'integration: the same',
  )
})

t.test('only: shown, patched, cleared; a bad value is 400 and changes nothing', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const me = ws.agents[0]!
  const created = (await api({ method: 'POST', url: `/api/v1/agents/${me.id}/webhooks`, headers: bearer(me.key), payload: { url: 'https://hooks.example.com/a', events: EVENTS } })).json()
  t.equal(created.only, null, 'every subscribed event by default')
  const url = `/api/v1/agents/${me.id}/webhooks/${created.id}`
  t.equal((await api({ method: 'PATCH', url, headers: bearer(me.key), payload: { only: 'mentions' } })).json().only, 'mentions')
  const bad = await api({ method: 'PATCH', url, headers: bearer(me.key), payload: { only: 'everything' } })
  t.equal(bad.statusCode, 400)
  t.same(Object.keys(bad.json()).sort(), ['code', 'error'])
  t.equal((await api({ method: 'GET', url, headers: bearer(me.key) })).json().only, 'mentions', 'unchanged')
  t.equal((await api({ method: 'PATCH', url, headers: bearer(me.key), payload: { only: null } })).json().only, null)
  const badCreate = await api({ method: 'POST', url: '/api/v1/integrations', headers: bearer(ws.owner.token), payload: { name: 'x', webhook_url: 'https://hooks.example.com/x', only: 'all' } })
  t.equal(badCreate.statusCode, 400)
  t.equal((await api({ method: 'GET', url: '/api/v1/integrations', headers: bearer(ws.owner.token) })).json().length, 0, 'nothing stored')
})

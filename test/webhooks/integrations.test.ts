// Integrations: management by the owner (401/403/404/400), keys and secrets shown once and
// rotated independently, deliveries with the spec's envelope and headers verified byte for
// byte, and the inbound endpoint (attribution, the same events, every refusal).
import { createHmac, randomUUID } from 'node:crypto'
import t from 'tap'
import WebSocket from 'ws'
import { build } from '../helper.ts'
import { createWebhook, eventually, FAST_ENV, receiver, verifySignature } from './helpers.ts'
import { bearer, createChannelId, post, seedWorkspace } from '../support/index.ts'

const KEY_RE = /^svc_int_[A-Za-z0-9+/]{43}=$/
const SECRET_RE = /^whsec_[A-Za-z0-9+/]{43}=$/

t.test('integration management', async (t) => {
  const { app, api } = await build(t, { background: false })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const count = () => app.db.prisma.integration.count()
  const create = (payload: object, token = ws.owner.token) => api({ method: 'POST', url: '/api/v1/integrations', headers: bearer(token), payload })

  const res = await create({ name: 'Zap', platform: 'zapier', webhook_url: 'https://hooks.example.com/zap', agent_ids: [agent.id] })
  t.equal(res.statusCode, 201)
  const created = res.json()
  t.match(created.api_key, KEY_RE)
  t.match(created.hmac_secret, SECRET_RE)
  t.match(created, {
    name: 'Zap',
    platform: 'zapier',
    webhook_url: 'https://hooks.example.com/zap',
    events: ['message.created', 'channel.created', 'member.joined', 'agent.connected'],
    agent_ids: [agent.id],
    active: true,
  })
  t.equal(created.masked_key, `svc_int_${created.api_key.slice(8, 12)}…${created.api_key.slice(-4)}`)
  const stored = await app.db.prisma.integration.findUnique({ where: { id: created.id } })
  t.not(stored!.keyHash, created.api_key, 'the key is stored hashed')
  t.equal(stored!.keyHash.length, 64)

  const list = await api({ method: 'GET', url: '/api/v1/integrations', headers: bearer(ws.owner.token) })
  t.equal(list.statusCode, 200)
  t.equal(list.json().length, 1)
  t.notOk(list.body.includes(created.api_key) || list.body.includes(created.hmac_secret), 'neither the key nor the secret is listed')
  t.notOk('api_key' in list.json()[0] || 'hmac_secret' in list.json()[0])
  const one = await api({ method: 'GET', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token) })
  t.same(one.json(), list.json()[0])

  t.test('patch', async (t) => {
    const patched = await api({
      method: 'PATCH',
      url: `/api/v1/integrations/${created.id}`,
      headers: bearer(ws.owner.token),
      payload: { name: 'Zap 2', events: ['message.created'], agent_ids: [ws.agents[1]!.id, agent.id], platform: 'n8n' },
    })
    t.equal(patched.statusCode, 200)
    t.match(patched.json(), { name: 'Zap 2', events: ['message.created'], platform: 'n8n' })
    t.same([...patched.json().agent_ids].sort(), [ws.agents[1]!.id, agent.id].sort())
    const paused = await api({ method: 'PATCH', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token), payload: { active: false } })
    t.match(paused.json(), { active: false, disabled_reason: 'disabled by the workspace owner' })
    const resumed = await api({ method: 'PATCH', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token), payload: { active: true, agent_ids: [agent.id] } })
    t.match(resumed.json(), { active: true, disabled_reason: null, disabled_at: null, agent_ids: [agent.id] })
  })

  t.test('no credential → 401, integration key → 401, not the owner → 403, unknown → 404', async (t) => {
    const before = await count()
    const id = created.id
    const routes: [string, string, object?][] = [
      ['POST', '/api/v1/integrations', { name: 'x', platform: 'custom', webhook_url: 'https://hooks.example.com/x' }],
      ['GET', '/api/v1/integrations'],
      ['GET', `/api/v1/integrations/${id}`],
      ['PATCH', `/api/v1/integrations/${id}`, { name: 'hacked' }],
      ['DELETE', `/api/v1/integrations/${id}`],
      ['POST', `/api/v1/integrations/${id}/rotate-key`],
      ['POST', `/api/v1/integrations/${id}/rotate-secret`],
      ['GET', `/api/v1/integrations/${id}/deliveries`],
      ['POST', `/api/v1/integrations/${id}/deliveries/${randomUUID()}/redeliver`],
    ]
    for (const [method, url, payload] of routes) {
      const p = payload ? { payload } : {}
      t.equal((await api({ method: method, url, ...p })).statusCode, 401, `${method} ${url} no credential`)
      t.equal((await api({ method: method, url, headers: bearer(created.api_key), ...p })).statusCode, 401, `${method} ${url} integration key`)
      for (const token of [agent.key, ws.primary.key, ws.member.token, ws.observer.token]) {
        const r = await api({ method: method, url, headers: bearer(token), ...p })
        t.equal(r.statusCode, 403, `${method} ${url} not the owner`)
        t.equal(r.json().code, 'FORBIDDEN')
      }
    }
    for (const [method, url, payload] of routes.slice(2)) {
      const r = await api({ method: method, url: url.replace(id, randomUUID()), headers: bearer(ws.owner.token), ...(payload ? { payload } : {}) })
      t.equal(r.statusCode, 404, `${method} unknown integration`)
    }
    t.equal(await count(), before)
    t.equal((await app.db.prisma.integration.findUnique({ where: { id } }))!.name, 'Zap 2', 'unchanged')
  })

  t.test('bad input → 400 and nothing stored', async (t) => {
    const before = await count()
    const good = { name: 'ok', platform: 'custom', webhook_url: 'https://hooks.example.com/x' }
    for (const [payload, code] of [
      [{ ...good, platform: 'skynet' }, 'VALIDATION_ERROR'],
      [{ ...good, name: '' }, 'VALIDATION_ERROR'],
      [{ ...good, events: ['message.deleted'] }, 'VALIDATION_ERROR'],
      [{ ...good, events: [] }, 'VALIDATION_ERROR'],
      [{ ...good, agent_ids: [randomUUID()] }, 'VALIDATION_ERROR'],
      [{ ...good, agent_ids: ['nope'] }, 'VALIDATION_ERROR'],
      [{ ...good, api_key: 'svc_int_mine' }, 'VALIDATION_ERROR'],
      [{ ...good, webhook_url: 'http://127.0.0.1/x' }, 'INVALID_URL'],
      [{ ...good, webhook_url: 'http://169.254.169.254/' }, 'INVALID_URL'],
      [{ name: 'ok', platform: 'custom' }, 'VALIDATION_ERROR'],
      [{ ...good, hmac_secret: 'x'.repeat(15) }, 'VALIDATION_ERROR'],
      [{ ...good, hmac_secret: 'x'.repeat(257) }, 'VALIDATION_ERROR'],
      [{ ...good, secret: 'x'.repeat(32) }, 'VALIDATION_ERROR'],
      [{ ...good, agent_id: 'nope' }, 'VALIDATION_ERROR'],
      [{ ...good, agent_id: randomUUID() }, 'VALIDATION_ERROR'],
      [{ ...good, platform: null }, 'VALIDATION_ERROR'],
    ] as const) {
      const r = await create(payload)
      t.equal(r.statusCode, 400, JSON.stringify(payload))
      t.equal(r.json().code, code)
    }
    for (const payload of [{}, { webhook_url: 'http://10.0.0.1/' }, { agent_ids: [randomUUID()] }, { platform: 'x' }]) {
      t.equal((await api({ method: 'PATCH', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token), payload })).statusCode, 400)
    }
    t.equal(await count(), before)
    const after = (await api({ method: 'GET', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token) })).json()
    t.same(after.agent_ids, [agent.id])
  })

  t.test('agent_id is shorthand for agent_ids; an empty list means any agent', async (t) => {
    const [first, second] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
    const channel = await createChannelId(api, first.key, 'alias', [second.id])
    const single = (await create({ name: 'Alias', webhook_url: 'https://hooks.example.com/a', agent_id: first.id })).json()
    t.same(single.agent_ids, [first.id])
    t.equal(single.platform, 'custom')
    const inbound = (agentId: string) =>
      api({ method: 'POST', url: `/api/v1/integrations/${single.id}/inbound`, headers: bearer(single.api_key), payload: { channel_id: channel, agent_id: agentId, text: 'hi' } })
    t.equal((await inbound(first.id)).statusCode, 201)
    t.equal((await inbound(second.id)).statusCode, 403, 'a non-empty list restricts')
    const both = (await create({ name: 'Both', webhook_url: 'https://hooks.example.com/b', agent_id: first.id, agent_ids: [second.id, first.id] })).json()
    t.same([...both.agent_ids].sort(), [first.id, second.id].sort(), 'the union, without duplicates')
    const cleared = await api({ method: 'PATCH', url: `/api/v1/integrations/${single.id}`, headers: bearer(ws.owner.token), payload: { agent_ids: [] } })
    t.same(cleared.json().agent_ids, [])
    t.equal((await inbound(second.id)).statusCode, 201, 'emptied: any agent')
    for (const id of [single.id, both.id]) await api({ method: 'DELETE', url: `/api/v1/integrations/${id}`, headers: bearer(ws.owner.token) })
  })

  t.test('rotating one key leaves others untouched; delete revokes', async (t) => {
    const channel = await createChannelId(api, agent.key, 'rotation')
    const second = (await create({ name: 'Other', platform: 'custom', webhook_url: 'https://hooks.example.com/o', agent_ids: [agent.id] })).json()
    const inbound = (id: string, key: string) =>
      api({ method: 'POST', url: `/api/v1/integrations/${id}/inbound`, headers: bearer(key), payload: { channel_id: channel, agent_id: agent.id, text: 'hi' } })
    t.equal((await inbound(created.id, created.api_key)).statusCode, 201)
    const rotated = await api({ method: 'POST', url: `/api/v1/integrations/${created.id}/rotate-key`, headers: bearer(ws.owner.token) })
    t.equal(rotated.statusCode, 200)
    t.match(rotated.json().api_key, KEY_RE)
    t.equal(rotated.json().masked_key, `svc_int_${rotated.json().api_key.slice(8, 12)}…${rotated.json().api_key.slice(-4)}`)
    t.equal((await inbound(created.id, created.api_key)).statusCode, 401, 'the old key is refused')
    t.equal((await inbound(created.id, rotated.json().api_key)).statusCode, 201, 'the new key works')
    t.equal((await inbound(second.id, second.api_key)).statusCode, 201, 'another integration is untouched')

    const secret = await api({ method: 'POST', url: `/api/v1/integrations/${created.id}/rotate-secret`, headers: bearer(ws.owner.token) })
    t.equal(secret.statusCode, 200)
    t.match(secret.json().hmac_secret, SECRET_RE)
    t.equal((await app.db.prisma.integration.findUnique({ where: { id: created.id } }))!.hmacSecret, secret.json().hmac_secret)

    t.equal((await api({ method: 'DELETE', url: `/api/v1/integrations/${second.id}`, headers: bearer(ws.owner.token) })).statusCode, 204)
    t.equal((await inbound(second.id, second.api_key)).statusCode, 401, "a deleted integration's key is refused")
    t.equal((await inbound(created.id, rotated.json().api_key)).statusCode, 201)
  })
})

t.test('deliveries: envelope, headers and payloads of all four events, byte for byte', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const [agent, peer] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
  const rx = await receiver(t)
  const created = (
    await api({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: bearer(ws.owner.token),
      payload: { name: 'Platform', platform: 'anthropic', webhook_url: rx.url('/events'), agent_ids: [agent.id] },
    })
  ).json()
  const peerHookRx = await receiver(t)
  const peerHook = await createWebhook(api, peer.key, peer.id, peerHookRx.url(), ['message.created'])

  const channelRes = await api({ method: 'POST', url: '/api/v1/channels', headers: bearer(agent.key), payload: { name: 'integrated', description: 'for the platform' } })
  const channel = channelRes.json()
  await api({ method: 'POST', url: `/api/v1/channels/${channel.id}/members`, headers: bearer(agent.key), payload: { user_id: peer.id } })

  // Inbound: the platform speaks as agent-1.
  const inbound = await api({
    method: 'POST',
    url: `/api/v1/integrations/${created.id}/inbound`,
    headers: bearer(created.api_key),
    payload: { channel_id: channel.id, agent_id: agent.id, text: 'from the platform' },
  })
  t.equal(inbound.statusCode, 201)
  const message = inbound.json()
  t.match(message, { channel_id: channel.id, author_id: agent.id, author_name: 'agent-1', author_type: 'AGENT', text: 'from the platform', edited_at: null })
  const listed = await api({ method: 'GET', url: `/api/v1/channels/${channel.id}/messages`, headers: bearer(peer.key) })
  t.same(listed.json().messages[0], message, 'the message is in the channel, attributed to the agent')

  // An agent connects over the WebSocket.
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const socket = new WebSocket(`${address.replace('http', 'ws')}/ws?token=${encodeURIComponent(agent.key)}`)
  t.teardown(() => socket.terminate())

  const reqs = await rx.waitFor(5)
  const byType = (type: string) => reqs.filter((r) => r.headers['x-service-event'] === type)
  for (const r of reqs) {
    t.equal(r.method, 'POST')
    t.equal(r.url, '/events')
    t.equal(r.headers['content-type'], 'application/json')
    t.equal(r.headers['x-service-integration-id'], created.id)
    const expected = `sha256=${createHmac('sha256', created.hmac_secret).update(r.body).digest('hex')}`
    t.equal(r.headers['x-service-signature'], expected, 'X-Service-Signature = sha256=<hex HMAC-SHA256 of the raw body>')
    t.ok(verifySignature(created.hmac_secret, `${r.headers['x-service-timestamp']}.${r.body}`, r.headers['x-service-timestamp-signature']))
    const body = JSON.parse(r.body)
    t.same(Object.keys(body), ['event_type', 'integration_id', 'occurred_at', 'payload'], 'the spec envelope, nothing else')
    t.equal(body.event_type, r.headers['x-service-event'])
    t.equal(body.integration_id, created.id)
    t.match(body.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  }
  const payloadOf = (type: string, i = 0) => JSON.parse(byType(type)[i]!.body).payload

  t.same(payloadOf('channel.created'), {
    channel_id: channel.id,
    name: 'integrated',
    description: 'for the platform',
    topic: null,
    type: 'channel',
    created_at: channel.created_at,
    creator_id: agent.id,
    creator_type: 'agent',
  })
  // Deliveries run concurrently, so the two joins may arrive in either order.
  const joins = byType('member.joined').map((r) => JSON.parse(r.body).payload)
  joins.sort((a, b) => (a.member_name < b.member_name ? -1 : 1))
  t.same(joins, [
    { channel_id: channel.id, member_id: agent.id, member_type: 'agent', member_name: 'agent-1' },
    { channel_id: channel.id, member_id: peer.id, member_type: 'agent', member_name: 'agent-2' },
  ])
  const msg = byType('message.created')[0]!
  t.equal(
    msg.body,
    JSON.stringify({
      event_type: 'message.created',
      integration_id: created.id,
      occurred_at: JSON.parse(msg.body).occurred_at,
      payload: { message_id: message.id, channel_id: channel.id, author_id: agent.id, author_type: 'agent', text: 'from the platform', thread_id: null },
    }),
    'message.created byte for byte',
  )

  const [connected] = await rx.waitFor(1, (r) => r.headers['x-service-event'] === 'agent.connected')
  const conn = JSON.parse(connected!.body).payload
  t.same(Object.keys(conn), ['agent_id', 'agent_name', 'connected_at'])
  t.equal(conn.agent_id, agent.id)
  t.equal(conn.agent_name, 'agent-1')
  t.match(conn.connected_at, /Z$/)

  // The inbound message fired the same events as any message: the peer's webhook got it.
  const [peerReq] = await peerHookRx.waitFor(1)
  const peerBody = JSON.parse(peerReq!.body)
  t.equal(peerBody.webhook_id, peerHook.id)
  t.same(peerBody.payload.message, message)

  // History of the integration.
  const hist = await eventually(async () => {
    const page = (await api({ method: 'GET', url: `/api/v1/integrations/${created.id}/deliveries`, headers: bearer(ws.owner.token) })).json()
    return page.deliveries.length === 5 && page.deliveries.every((d: { status: string }) => d.status === 'succeeded') ? page : null
  }, 'five succeeded deliveries')
  t.same(
    hist.deliveries.map((d: { event_type: string }) => d.event_type),
    ['agent.connected', 'message.created', 'member.joined', 'member.joined', 'channel.created'],
  )
  t.same(new Set(hist.deliveries.map((d: { id: string }) => d.id)), new Set(reqs.map((r) => r.headers['x-service-delivery-id'])).add(connected!.headers['x-service-delivery-id']))

  // Unsubscribed events are not sent; a paused integration gets nothing.
  await api({ method: 'PATCH', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token), payload: { events: ['channel.created'] } })
  await post(api, agent.key, channel.id, 'not subscribed')
  await createChannelId(api, agent.key, 'second')
  await rx.waitFor(6)
  t.equal(rx.requests.length, 6)
  t.equal(rx.requests[5]!.headers['x-service-event'], 'channel.created')
})

t.test('DMs reach an integration only when one of its agents takes part', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const rx = await receiver(t)
  await api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(ws.owner.token),
    payload: { name: 'dm', platform: 'custom', webhook_url: rx.url(), events: ['message.created'], agent_ids: [agent.id] },
  })
  const dm = async (token: string, peer: string) => (await api({ method: 'POST', url: '/api/v1/dm', headers: bearer(token), payload: { participant_id: peer } })).json().id as string
  const private_ = await dm(ws.member.token, ws.owner.id)
  const withAgent = await dm(ws.member.token, agent.id)
  await post(api, ws.member.token, private_, 'between humans')
  await post(api, ws.member.token, withAgent, 'to the agent')
  const [req] = await rx.waitFor(1)
  t.equal(JSON.parse(req!.body).payload.text, 'to the agent')
  await eventually(async () => (await app.db.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')).rows[0].n === 0, 'planning')
  t.equal(await app.db.prisma.delivery.count(), 1, 'no delivery for the DM between two humans')
})

t.test('inbound refusals: 401, 404, 403, 400 and nothing stored', async (t) => {
  const { app, api } = await build(t, { background: false })
  const ws = await seedWorkspace(app)
  const [agent, outsider] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
  const make = async (agentIds: string[]) =>
    (
      await api({
        method: 'POST',
        url: '/api/v1/integrations',
        headers: bearer(ws.owner.token),
        payload: { name: 'in', platform: 'openai', webhook_url: 'https://hooks.example.com/in', agent_ids: agentIds },
      })
    ).json()
  const mine = await make([agent.id, outsider.id])
  const theirs = await make([agent.id])
  const channel = await createChannelId(api, agent.key, 'inbound') // agent-1 is a member, agent-2 is not
  const notMine = await createChannelId(api, ws.primary.key, 'private') // agent-1 is not a member
  const messages = () => app.db.prisma.message.count()
  const before = await messages()
  const send = (key: string | undefined, id: string, payload: object) => api({ method: 'POST', url: `/api/v1/integrations/${id}/inbound`, ...(key ? { headers: bearer(key) } : {}), payload })
  const ok = { channel_id: channel, agent_id: agent.id, text: 'hello' }

  const cases: [string, string | undefined, string, object, number, string][] = [
    ['no credential', undefined, mine.id, ok, 401, 'UNAUTHORIZED'],
    ['an agent key', agent.key, mine.id, ok, 401, 'UNAUTHORIZED'],
    ['a human JWT', ws.owner.token, mine.id, ok, 401, 'UNAUTHORIZED'],
    ['a bogus integration key', 'svc_int_bogus', mine.id, ok, 401, 'UNAUTHORIZED'],
    ["another integration's key", theirs.api_key, mine.id, ok, 404, 'NOT_FOUND'],
    ['an unknown integration id', mine.api_key, randomUUID(), ok, 404, 'NOT_FOUND'],
    ['an agent it may not act for', theirs.api_key, theirs.id, { ...ok, agent_id: outsider.id }, 403, 'FORBIDDEN'],
    ['an unknown agent', mine.api_key, mine.id, { ...ok, agent_id: randomUUID() }, 403, 'FORBIDDEN'],
    ['an agent not in the channel', mine.api_key, mine.id, { ...ok, agent_id: outsider.id }, 404, 'NOT_FOUND'],
    ['a channel the agent is not in', mine.api_key, mine.id, { ...ok, channel_id: notMine }, 404, 'NOT_FOUND'],
    ['an unknown channel', mine.api_key, mine.id, { ...ok, channel_id: randomUUID() }, 404, 'NOT_FOUND'],
    ['empty text', mine.api_key, mine.id, { ...ok, text: '   ' }, 400, 'VALIDATION_ERROR'],
    ['missing text', mine.api_key, mine.id, { channel_id: channel, agent_id: agent.id }, 400, 'VALIDATION_ERROR'],
    ['an unknown field', mine.api_key, mine.id, { ...ok, author_id: outsider.id }, 400, 'VALIDATION_ERROR'],
    ['a channel id that is not a UUID (an unknown id)', mine.api_key, mine.id, { ...ok, channel_id: 'general' }, 404, 'NOT_FOUND'],
  ]
  for (const [what, key, id, payload, status, code] of cases) {
    const res = await send(key, id, payload)
    t.equal(res.statusCode, status, what)
    t.equal(res.json().code, code, what)
  }
  t.equal(await messages(), before, 'nothing stored')
  const good = await send(mine.api_key, mine.id, ok)
  t.equal(good.statusCode, 201)
  t.equal(await messages(), before + 1)
})

t.test('a black-box integration: no agent_ids, no platform, its own hmac_secret', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const [agent, outsider] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
  const rx = await receiver(t)
  const chosen = 'platform-shared-secret-0123456789'
  const res = await api({
    method: 'POST',
    url: '/api/v1/integrations',
    headers: bearer(ws.owner.token),
    payload: { name: 'Black box', webhook_url: rx.url('/bb'), events: ['message.created'], hmac_secret: chosen },
  })
  t.equal(res.statusCode, 201)
  const created = res.json()
  t.match(created, { name: 'Black box', platform: 'custom', events: ['message.created'], agent_ids: [], active: true })
  t.equal(created.hmac_secret, chosen, 'the chosen secret, returned once')
  t.match(created.api_key, KEY_RE)
  t.equal((await app.db.prisma.integration.findUnique({ where: { id: created.id } }))!.hmacSecret, chosen)
  const list = await api({ method: 'GET', url: '/api/v1/integrations', headers: bearer(ws.owner.token) })
  t.notOk(list.body.includes(chosen), 'never listed')
  t.notOk((await api({ method: 'GET', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token) })).body.includes(chosen))
  const other = (await api({ method: 'POST', url: '/api/v1/integrations', headers: bearer(ws.owner.token), payload: { name: 'Other', webhook_url: 'https://hooks.example.com/o' } })).json()
  t.same(other.agent_ids, [])
  t.match(other.hmac_secret, SECRET_RE, 'generated when not given')

  const channel = await createChannelId(api, agent.key, 'black-box') // agent-1 is a member, agent-2 is not
  const messages = () => app.db.prisma.message.count()
  const before = await messages()
  const send = (key: string, payload: object) => api({ method: 'POST', url: `/api/v1/integrations/${created.id}/inbound`, headers: bearer(key), payload })
  const ok = { channel_id: channel, agent_id: agent.id, text: 'from the black box' }
  for (const [what, key, payload, status, code] of [
    ['an agent not in the channel', created.api_key, { ...ok, agent_id: outsider.id }, 404, 'NOT_FOUND'],
    ['an unknown agent', created.api_key, { ...ok, agent_id: randomUUID() }, 404, 'NOT_FOUND'],
    ['a user id', created.api_key, { ...ok, agent_id: ws.member.id }, 404, 'NOT_FOUND'],
    ["another integration's key", other.api_key, ok, 404, 'NOT_FOUND'],
    ['an agent key', agent.key, ok, 401, 'UNAUTHORIZED'],
  ] as const) {
    const r = await send(key, payload)
    t.equal(r.statusCode, status, what)
    t.equal(r.json().code, code, what)
  }
  t.equal(await messages(), before, 'nothing stored')
  const posted = await send(created.api_key, ok)
  t.equal(posted.statusCode, 201, 'any agent that is a member of the channel')
  t.match(posted.json(), { channel_id: channel, author_id: agent.id, author_type: 'AGENT', text: 'from the black box' })

  // DMs: one between two humans never leaves the service; one with any agent does.
  const dm = async (token: string, peer: string) => (await api({ method: 'POST', url: '/api/v1/dm', headers: bearer(token), payload: { participant_id: peer } })).json().id as string
  const humans = await dm(ws.member.token, ws.owner.id)
  const withAgent = await dm(ws.member.token, outsider.id)
  await post(api, ws.member.token, humans, 'between humans')
  await post(api, ws.member.token, withAgent, 'to agent-2')
  const reply = await send(created.api_key, { channel_id: withAgent, agent_id: outsider.id, text: 'agent-2 answers' })
  t.equal(reply.statusCode, 201, 'it may act for an agent in its DM')

  const reqs = await rx.waitFor(3)
  for (const r of reqs) {
    t.equal(r.url, '/bb')
    t.equal(r.headers['x-service-integration-id'], created.id)
    t.ok(verifySignature(chosen, r.body, r.headers['x-service-signature']), 'X-Service-Signature is keyed with the chosen secret')
  }
  t.same(reqs.map((r) => JSON.parse(r.body).payload.text).sort(), ['agent-2 answers', 'from the black box', 'to agent-2'])
  await eventually(async () => (await app.db.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE planned_at IS NULL')).rows[0].n === 0, 'planning')
  t.equal(await app.db.prisma.delivery.count({ where: { integrationId: created.id } }), 3, 'no delivery for the DM between two humans')
})

t.test('deleting the last agent of a restricted integration leaves it acting for none, not for all', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const [kept, doomed] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
  const channel = await createChannelId(api, kept.key, 'restricted', [doomed.id])
  const created = (
    await api({ method: 'POST', url: '/api/v1/integrations', headers: bearer(ws.owner.token), payload: { name: 'Only one', webhook_url: 'https://hooks.example.com/r', agent_ids: [doomed.id] } })
  ).json()
  t.equal(created.all_agents, false)
  const open = (await api({ method: 'POST', url: '/api/v1/integrations', headers: bearer(ws.owner.token), payload: { name: 'Open', webhook_url: 'https://hooks.example.com/o' } })).json()
  t.equal(open.all_agents, true, 'no agent list: any agent')

  t.equal((await api({ method: 'DELETE', url: `/api/v1/agents/${doomed.id}`, headers: bearer(ws.owner.token) })).statusCode, 204)
  const after = (await api({ method: 'GET', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token) })).json()
  t.same([after.agent_ids, after.all_agents], [[], false])
  const inbound = await api({
    method: 'POST',
    url: `/api/v1/integrations/${created.id}/inbound`,
    headers: bearer(created.api_key),
    payload: { channel_id: channel, agent_id: kept.id, text: 'should not post' },
  })
  t.equal(inbound.statusCode, 403, 'the restriction outlives its last agent')
  t.equal(await app.db.prisma.message.count({ where: { text: 'should not post' } }), 0)

  const cleared = await api({ method: 'PATCH', url: `/api/v1/integrations/${created.id}`, headers: bearer(ws.owner.token), payload: { agent_ids: [] } })
  t.equal(cleared.json().all_agents, true, 'an explicit empty list lifts the restriction')
  const allowed = await api({
    method: 'POST',
    url: `/api/v1/integrations/${created.id}/inbound`,
    headers: bearer(created.api_key),
    payload: { channel_id: channel, agent_id: kept.id, text: 'now it may' },
  })
  t.equal(allowed.statusCode, 201)
})

t.test('a failed integration delivery is redelivered by the owner: same id, same body', async (t) => {
  const { app, api } = await build(t, { env: { ...FAST_ENV, WEBHOOK_RETRY_SCHEDULE: '0' } })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  let status = 500
  const rx = await receiver(t, () => status)
  const created = (
    await api({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: bearer(ws.owner.token),
      payload: { name: 'Flaky', platform: 'custom', webhook_url: rx.url('/events'), events: ['message.created'] },
    })
  ).json()
  const channel = await createChannelId(api, agent.key, 'flaky')
  await post(api, agent.key, channel, 'first try fails')
  const deliveries = `/api/v1/integrations/${created.id}/deliveries`
  const failed = await eventually(async () => {
    const d = (await api({ method: 'GET', url: deliveries, headers: bearer(ws.owner.token) })).json().deliveries[0]
    return d?.status === 'failed' ? d : null
  }, 'the delivery to fail')
  t.equal(failed.attempts, 2, 'the first attempt and one retry')

  status = 200
  const redeliver = (id: string, token = ws.owner.token) => api({ method: 'POST', url: `${deliveries}/${id}/redeliver`, headers: bearer(token) })
  const res = await redeliver(failed.id)
  t.equal(res.statusCode, 202)
  t.equal(res.json().status, 'pending')
  const [, , again] = await rx.waitFor(3)
  t.equal(again!.headers['x-service-event'], 'message.created')
  t.equal(again!.body, rx.requests[0]!.body, 'the same bytes, so the same signature')
  await eventually(async () => {
    const d = (await api({ method: 'GET', url: deliveries, headers: bearer(ws.owner.token) })).json().deliveries[0]
    return d?.status === 'succeeded' ? d : null
  }, 'the redelivery to succeed')

  t.equal((await redeliver(randomUUID())).statusCode, 404, 'an unknown delivery')
  t.equal((await redeliver(failed.id, agent.key)).statusCode, 403, 'only the owner manages integrations')
})

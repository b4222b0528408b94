// The webhook endpoints: who may manage an agent's webhooks (the agent, the owner; anyone else
// 404), validation (400 and nothing stored), secrets shown once, SSRF refusal at registration.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { build } from '../helper.ts'
import { FAST_ENV, receiver, verifySignature } from './helpers.ts'
import { bearer, createChannelId, post, seedWorkspace } from '../support/index.ts'

const SECRET_RE = /^whsec_[A-Za-z0-9+/]{43}=$/

t.test('webhook endpoints', async (t) => {
  const { app, api } = await build(t, { background: false })
  const ws = await seedWorkspace(app)
  const [agent, other] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
  const base = `/api/v1/agents/${agent.id}/webhooks`
  const count = () => app.db.prisma.webhook.count()

  t.test('the agent registers a webhook; the secret is shown once', async (t) => {
    const res = await api({ method: 'POST', url: base, headers: bearer(agent.key), payload: { url: 'https://hooks.example.com/agent-1', events: ['message.created', 'member.joined'] } })
    t.equal(res.statusCode, 201)
    const body = res.json()
    t.match(body, {
      agent_id: agent.id,
      url: 'https://hooks.example.com/agent-1',
      events: ['message.created', 'member.joined'],
      active: true,
      disabled_at: null,
      disabled_reason: null,
      consecutive_failures: 0,
      failing_since: null,
    })
    t.match(body.secret, SECRET_RE)
    const list = await api({ method: 'GET', url: base, headers: bearer(agent.key) })
    t.equal(list.statusCode, 200)
    t.equal(list.json().length, 1)
    t.notOk('secret' in list.json()[0], 'never listed')
    t.notOk(list.body.includes(body.secret))
    const one = await api({ method: 'GET', url: `${base}/${body.id}`, headers: bearer(ws.owner.token) })
    t.equal(one.statusCode, 200)
    t.notOk('secret' in one.json())
    t.equal(one.json().id, body.id)

    const rotated = await api({ method: 'POST', url: `${base}/${body.id}/rotate-secret`, headers: bearer(agent.key) })
    t.equal(rotated.statusCode, 200)
    t.match(rotated.json().secret, SECRET_RE)
    t.not(rotated.json().secret, body.secret)
    const stored = await app.db.prisma.webhook.findUnique({ where: { id: body.id } })
    t.equal(stored!.secret, rotated.json().secret)

    const patched = await api({ method: 'PATCH', url: `${base}/${body.id}`, headers: bearer(agent.key), payload: { events: ['message.created'], url: 'https://hooks.example.com/v2' } })
    t.equal(patched.statusCode, 200)
    t.same(patched.json().events, ['message.created'])
    t.equal(patched.json().url, 'https://hooks.example.com/v2')
    const paused = await api({ method: 'PATCH', url: `${base}/${body.id}`, headers: bearer(agent.key), payload: { active: false } })
    t.match(paused.json(), { active: false, disabled_reason: 'disabled by its owner' })
    t.ok(paused.json().disabled_at)

    const del = await api({ method: 'DELETE', url: `${base}/${body.id}`, headers: bearer(agent.key) })
    t.equal(del.statusCode, 204)
    t.equal(del.body, '')
    t.equal((await api({ method: 'DELETE', url: `${base}/${body.id}`, headers: bearer(agent.key) })).statusCode, 404)
  })

  t.test("the workspace owner manages any agent's webhooks", async (t) => {
    const res = await api({ method: 'POST', url: base, headers: bearer(ws.owner.token), payload: { url: 'https://hooks.example.com/by-owner', events: ['message.created'] } })
    t.equal(res.statusCode, 201)
    t.equal(res.json().agent_id, agent.id)
    const list = await api({ method: 'GET', url: base, headers: bearer(agent.key) })
    t.equal(list.json().length, 1, 'the agent sees it too')
    const hist = await api({ method: 'GET', url: `${base}/${res.json().id}/deliveries`, headers: bearer(ws.owner.token) })
    t.equal(hist.statusCode, 200)
    t.same(hist.json(), { deliveries: [], has_more: false, next_before: null })
  })

  t.test('no credential → 401; anyone else → 404', async (t) => {
    const hook = (await api({ method: 'GET', url: base, headers: bearer(agent.key) })).json()[0]
    const before = await count()
    const paths: [string, string, object?][] = [
      ['POST', base, { url: 'https://hooks.example.com/x', events: ['message.created'] }],
      ['GET', base],
      ['GET', `${base}/${hook.id}`],
      ['PATCH', `${base}/${hook.id}`, { active: false }],
      ['DELETE', `${base}/${hook.id}`],
      ['POST', `${base}/${hook.id}/rotate-secret`],
      ['GET', `${base}/${hook.id}/deliveries`],
      ['POST', `${base}/${hook.id}/deliveries/${randomUUID()}/redeliver`],
    ]
    for (const [method, url, payload] of paths) {
      const none = await api({ method: method, url, ...(payload ? { payload } : {}) })
      t.equal(none.statusCode, 401, `${method} ${url} without credential`)
      t.equal(none.json().code, 'UNAUTHORIZED')
      for (const [who, token] of [
        ['another agent', other.key],
        ['a member', ws.member.token],
        ['an observer', ws.observer.token],
      ] as const) {
        const res = await api({ method: method, url, headers: bearer(token), ...(payload ? { payload } : {}) })
        t.equal(res.statusCode, 404, `${method} ${url} by ${who}`)
        t.equal(res.json().code, 'NOT_FOUND')
      }
    }
    // An integration key is not a credential for these endpoints.
    const integration = await api({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: bearer(ws.owner.token),
      payload: { name: 'x', platform: 'custom', webhook_url: 'https://hooks.example.com/i' },
    })
    const intKey = integration.json().api_key
    t.equal((await api({ method: 'GET', url: base, headers: bearer(intKey) })).statusCode, 401)
    t.equal(await count(), before, 'nothing changed')
    const unchanged = (await api({ method: 'GET', url: `${base}/${hook.id}`, headers: bearer(agent.key) })).json()
    t.equal(unchanged.active, true)
    // Unknown agent, unknown webhook, someone else's webhook id under this agent.
    t.equal((await api({ method: 'GET', url: `/api/v1/agents/${randomUUID()}/webhooks`, headers: bearer(ws.owner.token) })).statusCode, 404)
    t.equal((await api({ method: 'GET', url: `${base}/${randomUUID()}`, headers: bearer(agent.key) })).statusCode, 404)
    const theirs = await api({ method: 'POST', url: `/api/v1/agents/${other.id}/webhooks`, headers: bearer(other.key), payload: { url: 'https://hooks.example.com/o', events: ['message.created'] } })
    t.equal((await api({ method: 'GET', url: `${base}/${theirs.json().id}`, headers: bearer(agent.key) })).statusCode, 404)
    t.equal((await api({ method: 'DELETE', url: `/api/v1/agents/${other.id}/webhooks/${theirs.json().id}`, headers: bearer(agent.key) })).statusCode, 404)
  })

  t.test('bad input → 400 and nothing stored', async (t) => {
    const before = await count()
    const bad: [object, string][] = [
      [{ url: 'https://hooks.example.com/x' }, 'VALIDATION_ERROR'],
      [{ events: ['message.created'] }, 'VALIDATION_ERROR'],
      [{ url: 'https://hooks.example.com/x', events: [] }, 'VALIDATION_ERROR'],
      [{ url: 'https://hooks.example.com/x', events: ['message.created', 'message.created'] }, 'VALIDATION_ERROR'],
      [{ url: 'https://hooks.example.com/x', events: ['message.exploded'] }, 'VALIDATION_ERROR'],
      [{ url: 'https://hooks.example.com/x', events: ['agent.connected'] }, 'VALIDATION_ERROR'],
      [{ url: 'https://hooks.example.com/x', events: ['message.created'], secret: 'mine' }, 'VALIDATION_ERROR'],
      [{ url: 'https://hooks.example.com/x', events: ['message.created'], secret: 'x'.repeat(15) }, 'VALIDATION_ERROR'],
      [{ url: 'https://hooks.example.com/x', events: ['message.created'], secret: 'x'.repeat(257) }, 'VALIDATION_ERROR'],
      [{ url: 'https://hooks.example.com/x', events: ['message.created'], secret: null }, 'VALIDATION_ERROR'],
      [{ url: 'ftp://hooks.example.com/x', events: ['message.created'] }, 'INVALID_URL'],
      [{ url: 'not a url', events: ['message.created'] }, 'INVALID_URL'],
      [{ url: 'http://127.0.0.1:8080/hook', events: ['message.created'] }, 'INVALID_URL'],
      [{ url: 'http://169.254.169.254/latest/meta-data', events: ['message.created'] }, 'INVALID_URL'],
      [{ url: 'http://10.0.0.5/hook', events: ['message.created'] }, 'INVALID_URL'],
      [{ url: 'http://[::1]/hook', events: ['message.created'] }, 'INVALID_URL'],
      [{ url: 'http://localhost/hook', events: ['message.created'] }, 'INVALID_URL'],
    ]
    for (const [payload, code] of bad) {
      const res = await api({ method: 'POST', url: base, headers: bearer(agent.key), payload })
      t.equal(res.statusCode, 400, JSON.stringify(payload))
      t.equal(res.json().code, code)
    }
    const hook = (await api({ method: 'GET', url: base, headers: bearer(agent.key) })).json()[0]
    for (const payload of [{}, { url: 'http://192.168.0.1/' }, { active: 'yes' }, { events: ['nope'] }]) {
      const res = await api({ method: 'PATCH', url: `${base}/${hook.id}`, headers: bearer(agent.key), payload })
      t.equal(res.statusCode, 400, `PATCH ${JSON.stringify(payload)}`)
    }
    t.equal((await api({ method: 'GET', url: `${base}/not-a-uuid`, headers: bearer(agent.key) })).statusCode, 404, 'an id that is not a UUID is an unknown id')
    t.equal(await count(), before, 'nothing stored')
    const after = (await api({ method: 'GET', url: `${base}/${hook.id}`, headers: bearer(agent.key) })).json()
    t.same(after, hook, 'nothing changed')
  })
})

t.test('WEBHOOK_ALLOW_PRIVATE and WEBHOOK_ALLOW_HOSTS let operators register internal receivers', async (t) => {
  const { app, api } = await build(t, { background: false, env: { WEBHOOK_ALLOW_HOSTS: '10.0.0.0/8,receiver.internal' } })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const post = (url: string) => api({ method: 'POST', url: `/api/v1/agents/${agent.id}/webhooks`, headers: bearer(agent.key), payload: { url, events: ['message.created'] } })
  t.equal((await post('http://10.1.2.3:8080/hook')).statusCode, 201)
  t.equal((await post('http://receiver.internal/hook')).statusCode, 201)
  t.equal((await post('http://192.168.1.1/hook')).statusCode, 400)

  const open = await build(t, { background: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } })
  const ws2 = await seedWorkspace(open.app)
  const res = await open.api({
    method: 'POST',
    url: `/api/v1/agents/${ws2.agents[0]!.id}/webhooks`,
    headers: bearer(ws2.agents[0]!.key),
    payload: { url: 'http://127.0.0.1:9/hook', events: ['message.created'] },
  })
  t.equal(res.statusCode, 201)
  const ftp = await open.api({
    method: 'POST',
    url: `/api/v1/agents/${ws2.agents[0]!.id}/webhooks`,
    headers: bearer(ws2.agents[0]!.key),
    payload: { url: 'gopher://127.0.0.1:9/', events: ['message.created'] },
  })
  t.equal(ftp.statusCode, 400, 'still http(s) only')
})

t.test('a caller-chosen secret is used to sign, shown once and never listed', async (t) => {
  const { app, api } = await build(t, { env: FAST_ENV })
  const ws = await seedWorkspace(app)
  const agent = ws.agents[0]!
  const rx = await receiver(t)
  const base = `/api/v1/agents/${agent.id}/webhooks`
  for (const secret of ['s'.repeat(16), 'é'.repeat(256)]) {
    const res = await api({ method: 'POST', url: base, headers: bearer(agent.key), payload: { url: 'https://hooks.example.com/edge', events: ['message.created'], secret } })
    t.equal(res.statusCode, 201, `${secret.length} characters`)
    t.equal(res.json().secret, secret)
    t.equal((await app.db.prisma.webhook.findUnique({ where: { id: res.json().id } }))!.secret, secret)
    await api({ method: 'DELETE', url: `${base}/${res.json().id}`, headers: bearer(agent.key) })
  }

  const chosen = 'my-own-webhook-secret-2026'
  const res = await api({ method: 'POST', url: base, headers: bearer(agent.key), payload: { url: rx.url('/mine'), events: ['message.created'], secret: chosen } })
  t.equal(res.statusCode, 201)
  t.equal(res.json().secret, chosen, 'returned in the creation response')
  const list = await api({ method: 'GET', url: base, headers: bearer(agent.key) })
  t.notOk(list.body.includes(chosen), 'never listed')
  t.notOk('secret' in list.json()[0])
  const one = await api({ method: 'GET', url: `${base}/${res.json().id}`, headers: bearer(ws.owner.token) })
  t.notOk(one.body.includes(chosen))

  const channel = await createChannelId(api, agent.key, 'chosen-secret')
  await post(api, agent.key, channel, 'signed with my secret')
  const [req] = await rx.waitFor(1)
  t.equal(req!.headers['x-webhook-id'], res.json().id)
  t.ok(verifySignature(chosen, req!.body, req!.headers['x-webhook-signature']), 'X-Webhook-Signature is keyed with the chosen secret')
  t.equal(JSON.parse(req!.body).payload.message.text, 'signed with my secret')
})

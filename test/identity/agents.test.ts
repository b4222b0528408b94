import t from 'tap'
import { sha256Hex } from '../../src/lib/tokens.ts'
import { build } from '../helper.ts'
import { API_KEY_RE, rowCounts } from './fixtures/support.ts'
import { bearer, seedWorkspace, UUID_RE } from '../support/index.ts'

const AGENT_KEYS = ['id', 'name', 'display_name', 'description', 'avatar_url', 'metadata', 'is_primary', 'created_at', 'updated_at', 'online', 'last_seen_at', 'status'].sort()

t.test('the owner creates an agent; others get 401/403 and nothing is stored', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const payload = { name: 'Research-Bot', description: 'Finds things' }
  const before = await rowCounts(app)

  t.equal((await api({ method: 'POST', url: '/api/v1/agents', payload })).statusCode, 401)
  for (const token of [ws.primary.key, ws.member.token, ws.observer.token]) {
    const res = await api({ method: 'POST', url: '/api/v1/agents', payload, headers: bearer(token) })
    t.equal(res.statusCode, 403)
    t.equal(res.json().code, 'FORBIDDEN')
  }
  t.same(await rowCounts(app), before)

  const res = await api({ method: 'POST', url: '/api/v1/agents', payload, headers: bearer(ws.owner.token) })
  t.equal(res.statusCode, 201, res.body)
  const agent = res.json()
  t.same(Object.keys(agent).sort(), AGENT_KEYS)
  t.match(agent.id, UUID_RE)
  t.equal(agent.name, 'Research-Bot')
  t.equal(agent.display_name, 'Research-Bot', 'display name defaults to the name')
  t.equal(agent.description, 'Finds things')
  t.equal(agent.is_primary, false)
  t.equal((await app.db.prisma.agent.findUniqueOrThrow({ where: { id: agent.id } })).ownerId, ws.owner.id)

  const full = await api({
    method: 'POST',
    url: '/api/v1/agents',
    headers: bearer(ws.owner.token),
    payload: { name: 'full-agent', display_name: 'Full Agent', avatar_url: 'https://x.example/a.png', metadata: { a: [1, 2] } },
  })
  t.equal(full.statusCode, 201)
  t.same(full.json().metadata, { a: [1, 2] })
  t.equal(full.json().avatar_url, 'https://x.example/a.png')
})

t.test('agent names: the character and length rules, and 409 NAME_TAKEN ignoring case', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const headers = bearer(ws.owner.token)
  const before = await rowCounts(app)
  for (const name of ['ab', 'a'.repeat(101), 'has space', 'under_score', 'émoji', 'dot.name', '']) {
    const res = await api({ method: 'POST', url: '/api/v1/agents', headers, payload: { name } })
    t.equal(res.statusCode, 400, JSON.stringify(name))
    t.equal(res.json().code, 'VALIDATION_ERROR')
  }
  for (const payload of [
    {},
    { name: 'okname', display_name: '' },
    { name: 'okname', display_name: 'x'.repeat(256) },
    { name: 'okname', extra: 1 },
    { name: 'okname', avatar_url: 'javascript:alert(1)' },
    { name: 'okname', metadata: [1] },
  ]) {
    const res = await api({ method: 'POST', url: '/api/v1/agents', headers, payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
  }
  for (const name of ['agent-1', 'AGENT-1', 'Primary-Agent']) {
    const res = await api({ method: 'POST', url: '/api/v1/agents', headers, payload: { name } })
    t.equal(res.statusCode, 409, name)
    t.equal(res.json().code, 'NAME_TAKEN')
  }
  t.same(await rowCounts(app), before)
  t.equal((await api({ method: 'POST', url: '/api/v1/agents', headers, payload: { name: 'a'.repeat(100), display_name: 'd'.repeat(255) } })).statusCode, 201)
  t.equal((await api({ method: 'POST', url: '/api/v1/agents', headers, payload: { name: 'x-9' } })).statusCode, 201)
})

t.test('two concurrent creations of names equal ignoring case: one 201, one 409', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const results = await Promise.all(['twin', 'TWIN'].map((name) => api({ method: 'POST', url: '/api/v1/agents', headers: bearer(ws.owner.token), payload: { name } })))
  t.same(results.map((r) => r.statusCode).sort(), [201, 409])
})

t.test('any authenticated caller lists and reads agents; unknown → 404', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  t.equal((await api({ method: 'GET', url: '/api/v1/agents' })).statusCode, 401)
  for (const token of [ws.owner.token, ws.member.token, ws.observer.token, ws.agents[0]!.key]) {
    const list = await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(token) })
    t.equal(list.statusCode, 200)
    t.same(
      list.json().map((a: { name: string }) => a.name),
      ['primary-agent', 'agent-1', 'agent-2'],
    )
    const one = await api({ method: 'GET', url: `/api/v1/agents/${ws.agents[1]!.id}`, headers: bearer(token) })
    t.equal(one.json().name, 'agent-2')
  }
  t.equal((await api({ method: 'GET', url: '/api/v1/agents', headers: bearer(ws.owner.token) })).json()[0].is_primary, true)
  const missing = await api({ method: 'GET', url: '/api/v1/agents/0190a000-0000-7000-8000-000000000000', headers: bearer(ws.owner.token) })
  t.equal(missing.statusCode, 404)
  t.equal(missing.json().code, 'NOT_FOUND')
  const bad = await api({ method: 'GET', url: '/api/v1/agents/not-a-uuid', headers: bearer(ws.owner.token) })
  t.same([bad.statusCode, bad.json().code], [404, 'NOT_FOUND'], 'an id that is not a UUID names no agent')

  const me = await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(ws.agents[0]!.key) })
  t.equal(me.statusCode, 200)
  t.equal(me.json().id, ws.agents[0]!.id)
  t.equal((await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(ws.owner.token) })).statusCode, 403)
})

t.test('PATCH: the owner changes anything; an agent its own profile but not its name; others 403', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const [a1, a2] = ws.agents as [(typeof ws.agents)[0], (typeof ws.agents)[0]]
  const url = `/api/v1/agents/${a1.id}`

  const owner = await api({ method: 'PATCH', url, headers: bearer(ws.owner.token), payload: { name: 'renamed-1', description: 'new', metadata: { k: 1 } } })
  t.equal(owner.statusCode, 200, owner.body)
  t.equal(owner.json().name, 'renamed-1')
  t.equal(owner.json().description, 'new')
  t.same(owner.json().metadata, { k: 1 })
  t.ok(owner.json().updated_at >= owner.json().created_at)

  const self = await api({ method: 'PATCH', url, headers: bearer(a1.key), payload: { display_name: 'Agent One', avatar_url: 'https://x.example/1.png' } })
  t.equal(self.statusCode, 200)
  t.equal(self.json().display_name, 'Agent One')
  const cleared = await api({ method: 'PATCH', url, headers: bearer(a1.key), payload: { description: null, metadata: null, avatar_url: null } })
  t.equal(cleared.statusCode, 200)
  t.equal(cleared.json().description, null)
  t.equal(cleared.json().metadata, null)
  t.equal(cleared.json().avatar_url, null)

  const selfRename = await api({ method: 'PATCH', url, headers: bearer(a1.key), payload: { name: 'sneaky' } })
  t.equal(selfRename.statusCode, 403)
  for (const token of [a2.key, ws.member.token, ws.observer.token]) {
    const res = await api({ method: 'PATCH', url, headers: bearer(token), payload: { description: 'hijack' } })
    t.equal(res.statusCode, 403)
    t.equal(res.json().code, 'FORBIDDEN')
  }
  t.equal((await api({ method: 'PATCH', url, payload: { description: 'x' } })).statusCode, 401)
  t.equal((await app.db.prisma.agent.findUniqueOrThrow({ where: { id: a1.id } })).description, null, 'unchanged by refused calls')

  const taken = await api({ method: 'PATCH', url, headers: bearer(ws.owner.token), payload: { name: 'AGENT-2' } })
  t.equal(taken.statusCode, 409)
  t.equal(taken.json().code, 'NAME_TAKEN')
  const sameName = await api({ method: 'PATCH', url, headers: bearer(ws.owner.token), payload: { name: 'Renamed-1' } })
  t.equal(sameName.statusCode, 200, 'changing only the case of its own name is allowed')
  for (const payload of [{}, { name: 'no' }, { display_name: '' }, { unknown: 1 }]) {
    const res = await api({ method: 'PATCH', url, headers: bearer(ws.owner.token), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
  }
  const missing = await api({ method: 'PATCH', url: '/api/v1/agents/0190a000-0000-7000-8000-000000000000', headers: bearer(ws.owner.token), payload: { description: 'x' } })
  t.equal(missing.statusCode, 404)
})

t.test('DELETE: owner only; revokes keys, removes memberships; the primary agent stays', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const a1 = ws.agents[0]!
  const channelId = '0190a000-0000-7000-8000-0000000000c1'
  await app.db.pool.query("INSERT INTO channels (id, name) VALUES ($1, 'ops')", [channelId])
  await app.db.pool.query("INSERT INTO channel_members (channel_id, member_id, member_type) VALUES ($1, $2, 'AGENT'), ($1, $3, 'HUMAN')", [channelId, a1.id, ws.member.id])

  t.equal((await api({ method: 'DELETE', url: `/api/v1/agents/${a1.id}` })).statusCode, 401)
  for (const token of [a1.key, ws.member.token]) {
    t.equal((await api({ method: 'DELETE', url: `/api/v1/agents/${a1.id}`, headers: bearer(token) })).statusCode, 403)
  }
  const primary = await api({ method: 'DELETE', url: `/api/v1/agents/${ws.primary.id}`, headers: bearer(ws.owner.token) })
  t.equal(primary.statusCode, 403)
  t.match(primary.json().error, /primary agent/)

  const del = await api({ method: 'DELETE', url: `/api/v1/agents/${a1.id}`, headers: bearer(ws.owner.token) })
  t.equal(del.statusCode, 204)
  t.equal(del.body, '')
  t.equal((await api({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(a1.key) })).statusCode, 401, 'its key no longer works')
  t.equal(await app.db.prisma.apiKey.count({ where: { agentId: a1.id } }), 0)
  t.same(
    (await app.db.prisma.channelMember.findMany({ where: { channelId } })).map((m) => m.memberId),
    [ws.member.id],
  )
  const left = await app.db.prisma.outboxEvent.findMany({ where: { type: 'member.left' } })
  t.same(
    left.map((e) => e.payload),
    [{ channel_id: channelId, member_id: a1.id, member_type: 'AGENT', __audience: [a1.id] }],
  )
  t.equal((await api({ method: 'DELETE', url: `/api/v1/agents/${a1.id}`, headers: bearer(ws.owner.token) })).statusCode, 404)
  t.equal((await api({ method: 'GET', url: `/api/v1/agents/${a1.id}`, headers: bearer(ws.owner.token) })).statusCode, 404)
})

t.test('keys: the owner creates and revokes; listing is masked; a revoked key gets 401', async (t) => {
  const { app, api } = await build(t)
  const ws = await seedWorkspace(app)
  const a1 = ws.agents[0]!
  const url = `/api/v1/agents/${a1.id}/keys`
  const before = await rowCounts(app)

  t.equal((await api({ method: 'POST', url, payload: { name: 'ci' } })).statusCode, 401)
  for (const token of [a1.key, ws.primary.key, ws.member.token]) {
    const res = await api({ method: 'POST', url, headers: bearer(token), payload: { name: 'ci' } })
    t.equal(res.statusCode, 403, 'API keys and non-owners may not create keys')
  }
  for (const payload of [{}, { name: '' }, { name: '  ' }, { name: 'x'.repeat(101) }, { name: 'ok', extra: 1 }]) {
    t.equal((await api({ method: 'POST', url, headers: bearer(ws.owner.token), payload })).statusCode, 400, JSON.stringify(payload))
  }
  const missingAgent = await api({ method: 'POST', url: '/api/v1/agents/0190a000-0000-7000-8000-000000000000/keys', headers: bearer(ws.owner.token), payload: { name: 'x' } })
  t.equal(missingAgent.statusCode, 404)
  t.same(await rowCounts(app), before)

  const created = await api({ method: 'POST', url, headers: bearer(ws.owner.token), payload: { name: 'ci' } })
  t.equal(created.statusCode, 201)
  const key = created.json()
  t.same(Object.keys(key).sort(), ['created_at', 'id', 'key', 'masked_key', 'name'])
  t.match(key.key, API_KEY_RE)
  t.equal(Buffer.from(key.key.slice(4), 'base64').length, 32)
  t.equal(key.masked_key, `svc_${key.key.slice(4, 8)}…${key.key.slice(-4)}`)
  const stored = await app.db.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } })
  t.equal(stored.keyHash, sha256Hex(key.key))
  const me = await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(key.key) })
  t.equal(me.json().id, a1.id, 'the new key authenticates as the agent')

  // listing: the owner and the agent itself; masked, never the key or its hash
  for (const token of [ws.owner.token, a1.key]) {
    const list = await api({ method: 'GET', url, headers: bearer(token) })
    t.equal(list.statusCode, 200)
    const items = list.json()
    t.same(
      items.map((k: { name: string }) => k.name),
      ['default', 'ci'],
    )
    t.same(Object.keys(items[1]).sort(), ['created_at', 'id', 'masked_key', 'name', 'revoked_at'])
    t.notOk(list.body.includes(key.key.slice(4, 20)), 'no plaintext key')
    t.notOk(list.body.includes(stored.keyHash), 'no hash')
  }
  for (const token of [ws.agents[1]!.key, ws.member.token]) {
    t.equal((await api({ method: 'GET', url, headers: bearer(token) })).statusCode, 403)
  }
  t.equal((await api({ method: 'GET', url })).statusCode, 401)
  t.equal((await api({ method: 'GET', url: '/api/v1/agents/0190a000-0000-7000-8000-000000000000/keys', headers: bearer(ws.owner.token) })).statusCode, 404)

  // revoking
  const revokeUrl = `${url}/${key.id}`
  t.equal((await api({ method: 'DELETE', url: revokeUrl })).statusCode, 401)
  for (const token of [key.key, a1.key, ws.member.token]) {
    t.equal((await api({ method: 'DELETE', url: revokeUrl, headers: bearer(token) })).statusCode, 403, 'API keys cannot revoke keys')
  }
  const otherAgentsKey = await api({ method: 'DELETE', url: `/api/v1/agents/${ws.agents[1]!.id}/keys/${key.id}`, headers: bearer(ws.owner.token) })
  t.equal(otherAgentsKey.statusCode, 404, "a key under another agent's path is not found")
  t.equal((await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(key.key) })).statusCode, 200, 'still valid')

  const revoked = await api({ method: 'DELETE', url: revokeUrl, headers: bearer(ws.owner.token) })
  t.equal(revoked.statusCode, 204)
  const after = await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(key.key) })
  t.equal(after.statusCode, 401, 'a revoked key gets 401 on its next request')
  t.equal(after.json().code, 'UNAUTHORIZED')
  t.equal((await api({ method: 'GET', url: '/api/v1/agents/me', headers: bearer(a1.key) })).statusCode, 200, 'the other key still works')
  t.equal((await api({ method: 'DELETE', url: revokeUrl, headers: bearer(ws.owner.token) })).statusCode, 204, 'revoking again is a no-op')
  const list = (await api({ method: 'GET', url, headers: bearer(ws.owner.token) })).json()
  t.ok(list.find((k: { id: string }) => k.id === key.id).revoked_at, 'listed as revoked')
  t.equal((await api({ method: 'DELETE', url: `${url}/0190a000-0000-7000-8000-000000000000`, headers: bearer(ws.owner.token) })).statusCode, 404)
})

// Issue 14, items 1-4: bodies are never type-coerced; no string that PostgreSQL cannot store (NUL,
// lone surrogates) reaches it by any path; deep JSON is refused before anything recurses; a
// multipart content type over a non-multipart body is a 400. Every refusal is 400 {error, code}
// and stores nothing.
import t, { type Test } from 'tap'
import { multipart, setup } from '../conversations/fixtures/support.ts'
import { addMember, bearer, createChannel } from '../support/index.ts'

const exactError = (t: Test, res: { statusCode: number; json: () => any }, status: number, code: string, what: string) => {
  t.equal(res.statusCode, status, what)
  t.same(Object.keys(res.json()).sort(), ['code', 'error'], `${what}: {error, code}`)
  t.equal(res.json().code, code, what)
}

t.test('item 1: JSON bodies are not coerced (numbers, booleans, arrays for strings; strings for numbers)', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'typed')
  const url = `/api/v1/channels/${ch.id}/messages`
  for (const text of [12345, true, ['array'], null]) {
    const res = await c.api({ method: 'POST', url, headers: bearer(c.tok.a1), payload: { text } })
    exactError(t, res, 400, 'VALIDATION_ERROR', `text ${JSON.stringify(text)}`)
  }
  t.equal(await c.app.db.prisma.message.count(), 0, 'no message stored')
  const channel = await c.api({ method: 'POST', url: '/api/v1/channels', headers: bearer(c.tok.a1), payload: { name: 4242 } })
  exactError(t, channel, 400, 'VALIDATION_ERROR', 'channel name 4242')
  t.equal(await c.app.db.prisma.channel.count({ where: { name: '4242' } }), 0, 'no channel "4242"')
  const workspace = await c.api({ method: 'PATCH', url: '/api/v1/workspace', headers: bearer(c.tok.owner), payload: { rate_limit_per_minute: '50' } })
  exactError(t, workspace, 400, 'VALIDATION_ERROR', 'a number given as a string')

  // query strings and path parameters are text: their numbers still parse
  const page = await c.api({ method: 'GET', url: `${url}?limit=5`, headers: bearer(c.tok.a1) })
  t.equal(page.statusCode, 200, '?limit=5 is still read as a number')
  // multipart fields are text too and keep working
  const form = multipart([{ name: 'text', value: '12345' }])
  const posted = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), ...form.headers }, payload: form.payload })
  t.equal(posted.statusCode, 201)
  t.equal(posted.json().text, '12345')
})

t.test('item 2: NUL and lone surrogates → 400 VALIDATION_ERROR on every path, nothing stored', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'nul')
  await addMember(c.api, c.tok.a1, ch.id, c.ws.member.id)
  const agentId = c.ws.agents[0]!.id
  const cases: Array<[string, string, string, Record<string, string>, unknown]> = [
    ['message text NUL', 'POST', `/api/v1/channels/${ch.id}/messages`, bearer(c.tok.a1), { text: 'a\u0000b' }],
    ['message text lone high surrogate', 'POST', `/api/v1/channels/${ch.id}/messages`, bearer(c.tok.a1), { text: 'a\ud800b' }],
    ['message text lone low surrogate', 'POST', `/api/v1/channels/${ch.id}/messages`, bearer(c.tok.a1), { text: '\udc00' }],
    ['channel description', 'POST', '/api/v1/channels', bearer(c.tok.a1), { name: 'nul2', description: 'x\u0000' }],
    ['agent description', 'PATCH', `/api/v1/agents/${agentId}`, bearer(c.tok.owner), { description: 'x\u0000' }],
    ['register display_name', 'POST', '/api/v1/auth/register', {}, { email: 'n@example.com', password: 'long enough password', display_name: 'N\u0000' }],
    ['login e-mail (no credential)', 'POST', '/api/v1/auth/login', {}, { email: 'owner@example.com\u0000', password: 'whatever password' }],
    ['webhook URL', 'POST', `/api/v1/agents/${agentId}/webhooks`, bearer(c.tok.a1), { url: 'https://hooks.example.com/\u0000', events: ['message.created'] }],
    ['key name', 'POST', `/api/v1/agents/${agentId}/keys`, bearer(c.tok.owner), { name: 'k\u0000' }],
    ['a property name', 'POST', '/api/v1/channels', bearer(c.tok.a1), { name: 'nul3', 'x\u0000': 1 }],
    ['agent metadata value', 'PATCH', `/api/v1/agents/${agentId}`, bearer(c.tok.owner), { metadata: { a: { b: ['\u0000'] } } }],
  ]
  for (const [what, method, url, headers, payload] of cases) {
    const res = await c.api({ method: method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
    exactError(t, res, 400, 'VALIDATION_ERROR', what)
  }
  const search = await c.api({ method: 'GET', url: `/api/v1/messages/search?q=${encodeURIComponent('a\u0000')}`, headers: bearer(c.tok.a1) })
  exactError(t, search, 400, 'VALIDATION_ERROR', 'search q')
  const form = multipart([{ name: 'text', value: 'a\u0000b' }])
  const multi = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: { ...bearer(c.tok.a1), ...form.headers }, payload: form.payload })
  exactError(t, multi, 400, 'VALIDATION_ERROR', 'multipart text field')

  t.equal(await c.app.db.prisma.message.count(), 0)
  t.equal(await c.app.db.prisma.channel.count(), 1)
  t.equal(await c.app.db.prisma.webhook.count(), 0)
  t.equal(await c.app.db.prisma.user.count({ where: { email: 'n@example.com' } }), 0)
  t.equal((await c.app.db.prisma.agent.findUnique({ where: { id: agentId } }))?.description ?? null, null)

  // valid astral characters (surrogate pairs) are fine
  const ok = await c.api({ method: 'POST', url: `/api/v1/channels/${ch.id}/messages`, headers: bearer(c.tok.a1), payload: { text: 'ok 🙂 \ud83d\ude42' } })
  t.equal(ok.statusCode, 201)
})

t.test('item 3: deep JSON is refused with 400 before anything recurses (4,000 and 100,000 levels)', async (t) => {
  const c = await setup(t)
  const agentId = c.ws.agents[0]!.id
  for (const depth of [4_000, 100_000]) {
    const payload = `{"metadata":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`
    const res = await c.api({ method: 'PATCH', url: `/api/v1/agents/${agentId}`, headers: { ...bearer(c.tok.owner), 'content-type': 'application/json' }, payload })
    exactError(t, res, 400, 'VALIDATION_ERROR', `metadata ${depth} levels deep`)
    t.match(res.json().error, /nested deeper than 32 levels/)
    const arrays = `{"metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`
    const res2 = await c.api({ method: 'PATCH', url: `/api/v1/agents/${agentId}`, headers: { ...bearer(c.tok.owner), 'content-type': 'application/json' }, payload: arrays })
    exactError(t, res2, 400, 'VALIDATION_ERROR', `arrays ${depth} levels deep`)
  }
  t.equal((await c.app.db.prisma.agent.findUnique({ where: { id: agentId } }))?.metadata ?? null, null, 'nothing stored')
  // too large as a whole (but shallow): a clear 400 too
  const wide = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, 'v'.repeat(10)]))
  const big = await c.api({ method: 'PATCH', url: `/api/v1/agents/${agentId}`, headers: bearer(c.tok.owner), payload: { metadata: wide } })
  exactError(t, big, 400, 'VALIDATION_ERROR', 'metadata larger than the bound')
  // reasonable metadata still works
  const nested = { a: { b: { c: { d: [1, 2, { e: 'f' }] } } } }
  const ok = await c.api({ method: 'PATCH', url: `/api/v1/agents/${agentId}`, headers: bearer(c.tok.owner), payload: { metadata: nested } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json().metadata, nested)
})

t.test('item 4: a multipart content type over a JSON body is 400, not 500; nothing stored', async (t) => {
  const c = await setup(t)
  const ch = await createChannel(c.api, c.tok.a1, 'mp')
  const url = `/api/v1/channels/${ch.id}/messages`
  for (const contentType of ['multipart/form-data; boundary=xyz', 'multipart/form-data']) {
    const res = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), 'content-type': contentType }, payload: '{"text":"hello"}' })
    t.not(res.statusCode, 500, contentType)
    t.ok(res.statusCode === 400 || res.statusCode === 415, `${contentType}: ${res.statusCode}`)
    t.same(Object.keys(res.json()).sort(), ['code', 'error'])
  }
  const res = await c.api({ method: 'POST', url, headers: { ...bearer(c.tok.a1), 'content-type': 'multipart/form-data; boundary=xyz' }, payload: '{"text":"hello"}' })
  exactError(t, res, 400, 'VALIDATION_ERROR', 'JSON body under a multipart boundary')
  t.equal(await c.app.db.prisma.message.count(), 0)
})
